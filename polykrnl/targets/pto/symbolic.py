"""Symbolic tile sizes: isl piecewise quasi-affine expressions, sympy, and maxima over tiles.

A tiled schedule runs its point band once per *tile*: one value of each tile loop
(the loops outside the point band). How many rows and columns one tile touches
depends on the tile loop values and the problem sizes (a partial tile at the
edge is smaller). This module derives those extents exactly with isl, converts
them to sympy, and computes the size to allocate for a temporary tile, the
maximum over all tiles, as a function of the problem sizes.

* :func:`pw_aff_to_sympy` / :func:`aff_to_sympy` / :func:`set_to_sympy` convert
  exactly: parameters and set dimensions become integer symbols named after the
  isl dimensions, integer divisions ``floor``, a div constraint ``e = m*floor(e/m)``
  ``Eq(Mod(e, m), 0)``. When the pieces are exactly a ``min``/``max`` of their
  expressions (checked by isl, not guessed) the result is written with
  ``Min``/``Max``. Outside the domain the value is ``outside`` (``nan`` by
  default); ``outside=None`` leaves the domain out (exact only inside it).
* :func:`max_over` / :func:`min_over`: isl's parametric integer maximum of an
  expression over some of its input dimensions (exact).
* :func:`tile_map`, :func:`tile_extents`, :func:`array_tile_extents`: the
  instances of one tile and the extent (max - min + 1) of each statement
  dimension, or of the box of array elements a tile accesses, per tile.
* :func:`max_over_tiles`: ``max over tiles of expr(extents of the tile)`` for a
  sympy expression of the extents (a tmp-size rule), see its docstring for what
  is guaranteed; :func:`max_over_tiles_at` is the same number for given sizes by
  enumerating the distinct extent tuples (exact for any expression).

Parameters keep their isl names (``A_d0`` for the size ``A.0`` of a memref
dimension); pass ``symbols`` to use other sympy symbols.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import islpy as isl
import sympy  # type: ignore[import-untyped]

from polykrnl.errors import PtoError
from polykrnl.poly import Statement
from polykrnl.transforms.core import Schedule, SLoop, SNode, SStmt

__all__ = [
    "SymbolicSize",
    "aff_to_sympy",
    "array_tile_extents",
    "default_tile_loops",
    "isl_symbol",
    "max_extent",
    "max_over",
    "max_over_tiles",
    "max_over_tiles_at",
    "min_over",
    "pw_aff_to_sympy",
    "set_to_sympy",
    "tile_extents",
    "tile_map",
    "with_default",
]

_DT = isl.dim_type
# Min/Max recognition tries subsets of the distinct piece expressions; beyond
# this many the search is not worth it and the Piecewise is kept.
_MAX_RECOGNIZED = 5
# max_over_tiles splits the tiles into at most this many cells before giving an upper bound.
_MAX_CELLS = 64


# ------------------------------------------------------------------ isl -> sympy


def isl_symbol(name: str) -> sympy.Symbol:
    """The sympy symbol for an isl dimension or parameter (integer-valued)."""
    return sympy.Symbol(name, integer=True)


def _sym(name: str | None, fallback: str, symbols: Mapping[str, sympy.Symbol] | None) -> Any:
    key = name if name else fallback
    if symbols is not None and key in symbols:
        return symbols[key]
    return isl_symbol(key)


def _val(v: isl.Val) -> sympy.Rational:
    assert v.is_rat(), f"not a rational value: {v}"
    return sympy.Rational(v.to_str())


def _linear(
    obj: isl.Aff | isl.Constraint,
    var_type: Any,
    symbols: Mapping[str, sympy.Symbol] | None,
) -> tuple[Any, list[tuple[Any, Any]]]:
    """(the part without divs, [(coefficient, div expression inside floor)])."""
    out: Any = _val(obj.get_constant_val())
    for k in range(obj.dim(_DT.param)):
        c = _val(obj.get_coefficient_val(_DT.param, k))
        if c:
            out += c * _sym(obj.get_dim_name(_DT.param, k), f"p{k}", symbols)
    for k in range(obj.dim(var_type)):
        c = _val(obj.get_coefficient_val(var_type, k))
        if c:
            out += c * _sym(obj.get_dim_name(var_type, k), f"x{k}", symbols)
    divs: list[tuple[Any, Any]] = []
    for k in range(obj.dim(_DT.div)):
        c = _val(obj.get_coefficient_val(_DT.div, k))
        if c:
            div = obj.get_div(k)
            assert not div.is_nan(), "a div without an explicit expression (call compute_divs)"
            divs.append((c, aff_to_sympy(div, symbols)))
    return out, divs


def _as_mod(rest: Any, c: Any, inner: Any) -> Any | None:
    """rest + c*floor(inner) written with Mod when that is shorter (an exact identity)."""
    num, den = sympy.fraction(sympy.together(inner))
    if not den.is_Integer or den <= 1:
        return None
    # inner = num/den: num - den*floor(num/den) = Mod(num, den), so
    # rest + c*floor(inner) = rest + (c/den)*num - (c/den)*Mod(num, den).
    k = c / den
    candidate = sympy.expand(rest + k * num) - k * sympy.Mod(num, den)
    plain = rest + c * sympy.floor(inner)
    return candidate if sympy.count_ops(candidate) < sympy.count_ops(plain) else None


def aff_to_sympy(aff: isl.Aff, symbols: Mapping[str, sympy.Symbol] | None = None) -> Any:
    """An isl quasi-affine expression as a sympy expression (exact)."""
    return _with_divs(*_linear(aff, _DT.in_, symbols))


def _with_divs(rest: Any, divs: Sequence[tuple[Any, Any]]) -> Any:
    """rest + sum(c * floor(inner)); x - m*floor(x/m) reads as Mod(x, m) (one div at a time)."""
    for c, inner in divs:
        modded = _as_mod(rest, c, inner)
        rest = modded if modded is not None else rest + c * sympy.floor(inner)
    return rest


def _constraint_to_sympy(c: isl.Constraint, symbols: Mapping[str, sympy.Symbol] | None) -> Any:
    rest, divs = _linear(c, _DT.set, symbols)
    if c.is_equality():
        # e = m*floor(e/m), i.e. e is a multiple of m: rest + cd*floor(D) = 0 with rest = -cd*D.
        for i, (cd, inner) in enumerate(divs):
            others = rest + sum(
                (cc * sympy.floor(d) for j, (cc, d) in enumerate(divs) if j != i), 0
            )
            if sympy.expand(others + cd * inner) == 0:
                num, den = sympy.fraction(sympy.together(inner))
                if den.is_Integer and den > 1:
                    return sympy.Eq(sympy.Mod(num, den), 0)
        return sympy.Eq(_with_divs(rest, divs), 0)
    return _inequality(_with_divs(rest, divs))


def _inequality(expr: Any) -> Any:
    """expr >= 0 with the negative terms moved to the right: `N - i - 1 >= 0` -> `N - 1 >= i`."""
    pos: Any = 0
    neg: Any = 0
    for term in sympy.Add.make_args(sympy.expand(expr)):
        coeff = term.as_coeff_Mul()[0]
        if term.is_Number:
            continue
        if coeff < 0:
            neg -= term
        else:
            pos += term
    const = sympy.expand(expr) - pos + neg
    if neg == 0:
        return sympy.Ge(pos, -const)
    if pos == 0:
        return sympy.Le(neg, const)
    return sympy.Ge(pos + const, neg)


def set_to_sympy(
    s: isl.Set | isl.BasicSet, symbols: Mapping[str, sympy.Symbol] | None = None
) -> Any:
    """An isl set as a sympy condition: Or over basic sets of And over constraints."""
    if isinstance(s, isl.BasicSet):
        s = isl.Set.from_basic_set(s)
    s = s.compute_divs().coalesce()
    if s.n_basic_set() > 1:
        # isl's pieces can split a convex set (dim_max does); one conjunction reads better.
        hull = isl.Set.from_basic_set(s.polyhedral_hull())
        if hull.is_equal(s):
            s = hull
    parts = []
    for bs in s.get_basic_sets():
        conds = [_constraint_to_sympy(c, symbols) for c in bs.get_constraints()]
        parts.append(sympy.And(*conds))
    return sympy.Or(*parts) if parts else sympy.false


def _is_universe(s: isl.Set) -> bool:
    return bool(s.is_equal(isl.Set.universe(s.get_space())))


def _simpler(dom: isl.Set, aff: isl.Aff) -> isl.Aff:
    """An expression without integer divisions equal to `aff` on `dom`, if there is one.

    isl's dim_max can write N as ``N - 32*(N mod 1)`` or as ``31 - (31 + 31N) mod
    32`` on 1 <= N <= 31. The affine hull of the piece's graph proposes an
    affine expression; isl checks that it is equal on the whole piece.
    """
    if aff.dim(_DT.div) == 0:
        return aff
    piece = isl.PwAff.alloc(dom, aff)
    try:
        hull: isl.Set | isl.Map
        if dom.is_params():
            hull = isl.Set.from_basic_set(isl.Set.from_pw_aff(piece).affine_hull())
        else:
            hull = isl.Map.from_basic_map(piece.as_map().affine_hull())
        found = hull.as_pw_multi_aff().get_pw_aff(0).get_pieces()
    except isl.Error:
        return aff
    for _, cand in found:
        if cand.dim(_DT.div) == 0 and isl.PwAff.alloc(dom, cand).is_equal(piece):
            return cand
    return aff


def _distinct_affs(pa: isl.PwAff) -> list[isl.Aff]:
    out: list[isl.Aff] = []
    for dom, aff in pa.get_pieces():
        # Within its piece an expression may be simpler; that form is exact there.
        aff = _simpler(dom, aff)
        if not any(aff.plain_is_equal(a) for a in out):
            out.append(aff)
    return out


def _recognize(pa: isl.PwAff, symbols: Mapping[str, sympy.Symbol] | None) -> Any | None:
    """A Min/Max/plain form equal to `pa` on its whole domain (checked by isl), or None."""
    affs = _distinct_affs(pa)
    if not affs or len(affs) > _MAX_RECOGNIZED:
        return None
    dom = pa.domain()
    on = [isl.PwAff.alloc(dom, a) for a in affs]
    sym = [aff_to_sympy(a, symbols) for a in affs]
    idx = range(len(affs))

    def combine(ks: Sequence[int], use_max: bool) -> tuple[isl.PwAff, Any]:
        p = on[ks[0]]
        for k in ks[1:]:
            p = p.max(on[k]) if use_max else p.min(on[k])
        args = [sym[k] for k in ks]
        return p, (sympy.Max(*args) if use_max else sympy.Min(*args))

    subsets = [ks for n in range(1, len(affs) + 1) for ks in itertools.combinations(idx, n)]
    for ks in subsets:
        for use_max in (False, True):
            p, e = combine(ks, use_max)
            if p.is_equal(pa):
                return e
    # One level of nesting: Max(a, Min(...)) / Min(a, Max(...)) (a clamp, as a
    # maximum extended by 0 where there is no tile).
    for a in idx:
        for ks in subsets:
            if a in ks or len(ks) < 2:
                continue
            for use_max in (False, True):
                inner, e = combine(ks, not use_max)
                p = inner.max(on[a]) if use_max else inner.min(on[a])
                if p.is_equal(pa):
                    return sympy.Max(sym[a], e) if use_max else sympy.Min(sym[a], e)
    return None


def pw_aff_to_sympy(
    pa: isl.PwAff | isl.Aff,
    symbols: Mapping[str, sympy.Symbol] | None = None,
    *,
    outside: Any = sympy.nan,
) -> Any:
    """An isl piecewise quasi-affine expression as an exact sympy expression.

    Inside the domain of `pa` the result equals `pa` at every integer point.
    Outside it the result is `outside` (default ``nan``, where isl's eval gives
    NaN). With ``outside=None`` the domain is left out: each piece's condition
    is simplified knowing the point is in the domain and the last piece applies
    otherwise, which reads best and is exact only inside the domain.
    """
    if isinstance(pa, isl.Aff):
        return aff_to_sympy(pa, symbols)
    pa = pa.coalesce()
    dom = pa.domain()
    if dom.is_empty():
        return sympy.nan if outside is None else outside
    whole = _is_universe(dom)

    def guarded(e: Any) -> Any:
        if whole or outside is None:
            return e
        return sympy.Piecewise((e, set_to_sympy(dom, symbols)), (outside, True))

    found = _recognize(pa, symbols)
    if found is not None:
        return guarded(found)
    pieces = list(pa.get_pieces())
    args: list[tuple[Any, Any]] = []
    for k, (s, aff) in enumerate(pieces):
        value = aff_to_sympy(_simpler(s, aff), symbols)
        if outside is None and k == len(pieces) - 1:
            args.append((value, True))
            break
        cond_set = s.gist(dom) if outside is None else s
        args.append((value, set_to_sympy(cond_set, symbols)))
    if outside is not None and not whole:
        args.append((outside, True))
    return sympy.Piecewise(*args)


# ------------------------------------------------------------------ isl maxima


def with_default(pa: isl.PwAff, value: int = 0) -> isl.PwAff:
    """`pa` extended by `value` outside its domain (a total function of its space)."""
    rest = pa.domain().complement()
    if rest.is_empty():
        return pa
    fill = isl.PwAff.val_on_domain(rest, isl.Val.int_from_si(pa.get_ctx(), value))
    return pa.union_add(fill).coalesce()


def _extreme_over(pa: isl.PwAff, dims: Iterable[str] | None, maximum: bool) -> isl.PwAff:
    m = pa.as_map()
    n = m.dim(_DT.in_)
    names = [m.get_dim_name(_DT.in_, k) for k in range(n)]
    if dims is None:
        drop = list(range(n))
    else:
        wanted = list(dims)
        unknown = [d for d in wanted if d not in names]
        assert not unknown, f"no input dims {unknown} in {pa}"
        drop = [k for k in range(n) if names[k] in wanted]
    if len(drop) == n:
        r = m.range()
        return (r.dim_max(0) if maximum else r.dim_min(0)).coalesce()
    for pos in sorted(drop, reverse=True):
        m = m.project_out(_DT.in_, pos, 1)
    pma = m.lexmax_pw_multi_aff() if maximum else m.lexmin_pw_multi_aff()
    return pma.get_pw_aff(0).coalesce()


def max_over(pa: isl.PwAff, dims: Iterable[str] | None = None) -> isl.PwAff:
    """The exact maximum of `pa` over its input dims `dims` (all if None).

    The result is a function of the other input dims and the parameters,
    defined where some point of `pa`'s domain exists (isl's parametric integer
    programming: exact on integer points, not a rational relaxation).
    """
    return _extreme_over(pa, dims, maximum=True)


def min_over(pa: isl.PwAff, dims: Iterable[str] | None = None) -> isl.PwAff:
    """The exact minimum of `pa` over its input dims `dims` (all if None)."""
    return _extreme_over(pa, dims, maximum=False)


# ------------------------------------------------------------------ sizes


@dataclass(frozen=True)
class SymbolicSize:
    """A size as a function of the problem sizes (isl parameter names).

    `expr` is the sympy expression; `pw` the same as an isl expression when it
    is quasi-affine (None for products such as tmp sizes). `exact` says whether
    `expr` is the exact maximum (True) or only an upper bound of it (see
    :func:`max_over_tiles`).
    """

    expr: Any
    params: tuple[str, ...]  # the parameters `expr` uses
    pw: isl.PwAff | None = field(default=None, compare=False)
    exact: bool = True

    @staticmethod
    def from_pw_aff(
        pa: isl.PwAff, symbols: Mapping[str, sympy.Symbol] | None = None
    ) -> SymbolicSize:
        """`pa` as a size: its parameters and input dims (e.g. tile loop values) are the inputs.

        ``evaluate`` raises a PtoError outside `pa`'s domain (e.g. at a value
        that is not the start of a tile).
        """
        expr = pw_aff_to_sympy(pa, symbols)
        space = pa.get_domain_space()
        names = [
            space.get_dim_name(tp, k) for tp in (_DT.param, _DT.set) for k in range(space.dim(tp))
        ]
        used = {s.name for s in expr.free_symbols}
        return SymbolicSize(expr, tuple(n for n in names if n is not None and n in used), pa)

    @cached_property
    def _symbols(self) -> dict[str, Any]:
        return {s.name: s for s in sorted(self.expr.free_symbols, key=lambda s: str(s.name))}

    def evaluate(self, **params: int) -> int:
        """The size for the given parameter values (every parameter `expr` uses)."""
        syms = self._symbols
        missing = [n for n in syms if n not in params]
        if missing:
            raise PtoError(
                f"size {self.expr} needs a value for parameter '{missing[0]}'",
                hint="pass every parameter by its isl name, e.g. evaluate("
                + ", ".join(f"{n}=..." for n in syms)
                + ")",
            )
        # xreplace with sympy Integers evaluates exactly (lambdify would print 1/3
        # as a float) and much faster than subs.
        value = self.expr.xreplace({s: sympy.Integer(params[n]) for n, s in syms.items()})
        if value is sympy.nan or not value.is_Integer:
            raise PtoError(
                f"size {self.expr} is not defined at {params} (value {value})",
                hint="the parameters are outside the expression's domain",
            )
        return int(value)


def _params_of(expr: Any, *pas: isl.PwAff) -> tuple[str, ...]:
    """The parameters of `pas` that `expr` uses, in isl's order."""
    used = {s.name for s in expr.free_symbols}
    out: list[str] = []
    for pa in pas:
        for k in range(pa.dim(_DT.param)):
            name = pa.get_dim_name(_DT.param, k)
            if name is not None and name not in out and name in used:
                out.append(name)
    return tuple(out)


def max_extent(pa: isl.PwAff, symbols: Mapping[str, sympy.Symbol] | None = None) -> SymbolicSize:
    """The maximum of `pa` over all its input dims (all tiles), 0 where there is none."""
    m = max_over(pa)
    total = with_default(m, 0)
    expr = pw_aff_to_sympy(m, symbols, outside=0)
    return SymbolicSize(expr, _params_of(expr, total), total)


# ------------------------------------------------------------------ tiles of a schedule


def _statement(sched: Schedule, stmt: str | Statement) -> Statement:
    name = stmt if isinstance(stmt, str) else stmt.name
    found = sched.statements.get(name)
    if found is None:
        raise PtoError(
            f"no statement '{name}' in the schedule of @{sched.program.function.name}",
            hint="its statements are: " + ", ".join(sched.statements),
        )
    return found


def _enclosing(sched: Schedule, stmt: str) -> list[str]:
    """The loops around `stmt` in the schedule, outermost first."""

    def go(nodes: Sequence[SNode], path: list[str]) -> list[str] | None:
        for n in nodes:
            if isinstance(n, SStmt) and n.name == stmt:
                return path
            if isinstance(n, SLoop):
                found = go(n.body, [*path, n.name])
                if found is not None:
                    return found
        return None

    found = go(sched.nodes, [])
    assert found is not None, f"{stmt} is not in the schedule tree"
    return found


def default_tile_loops(sched: Schedule, stmt: str | Statement) -> tuple[str, ...]:
    """The loops around `stmt` outside its point band: those before its first point loop.

    A statement with no blocked loop around it has an empty tuple: one tile is
    the whole domain.
    """
    s = _statement(sched, stmt)
    loops = _enclosing(sched, s.name)
    for k, name in enumerate(loops):
        if sched.loop(name).kind == "point":
            return tuple(loops[:k])
    return ()


def tile_map(
    sched: Schedule, stmt: str | Statement, tile_loops: Sequence[str] | None = None
) -> isl.Map:
    """{ [tile loop values] -> S[instance] }: the instances one tile runs.

    The tile dims are named after the loops; `tile_loops` defaults to
    :func:`default_tile_loops`. Each must enclose the statement.
    """
    s = _statement(sched, stmt)
    loops = default_tile_loops(sched, s) if tile_loops is None else tuple(tile_loops)
    around = _enclosing(sched, s.name)
    for name in loops:
        sched.loop(name)
        if name not in around:
            raise PtoError(
                f"loop '{name}' does not enclose statement {s.name}, so it cannot be a tile loop",
                hint="the loops around it are: " + (", ".join(around) or "none"),
            )
    m = isl.Map.from_domain(s.domain)
    for name in loops:
        m = m.flat_range_product(sched.loop(name).values[s.name].as_map())
    for k, name in enumerate(loops):
        m = m.set_dim_name(_DT.out, k, name)
    return m.reverse()


def _box_extents(rel: isl.Map) -> tuple[isl.PwAff, ...]:
    """Per output dim of { tile -> x }: max - min + 1 over the tile, per tile."""
    n = rel.dim(_DT.out)
    out = []
    for k in range(n):
        one = rel.project_out(_DT.out, k + 1, n - k - 1).project_out(_DT.out, 0, k)
        hi = one.lexmax_pw_multi_aff().get_pw_aff(0)
        lo = one.lexmin_pw_multi_aff().get_pw_aff(0)
        ext = hi.sub(lo).add_constant_val(isl.Val.one(rel.get_ctx()))
        out.append(ext.coalesce())
    return tuple(out)


def tile_extents(
    sched: Schedule, stmt: str | Statement, tile_loops: Sequence[str] | None = None
) -> dict[str, isl.PwAff]:
    """Per dimension of the statement: how many values it takes in one tile.

    Keyed by the statement's dimension names (the original induction variables
    for a statement inside the point band). Each extent is ``max - min + 1`` of
    that dimension over the tile's instances, an isl PwAff of the tile loop
    values and the parameters, defined exactly on the tiles that run at least
    one instance (a partial tile at an edge is smaller).
    """
    s = _statement(sched, stmt)
    rel = tile_map(sched, s, tile_loops)
    return dict(zip(s.dims, _box_extents(rel), strict=True))


def array_tile_extents(
    sched: Schedule,
    stmt: str | Statement,
    array: str,
    tile_loops: Sequence[str] | None = None,
) -> tuple[isl.PwAff, ...]:
    """Per dimension of `array`: the extent of the box of elements one tile accesses.

    All accesses of the statement to the array count (reads and writes). The
    extents are PwAffs of the tile loop values and the parameters.
    """
    s = _statement(sched, stmt)
    found = [a.relation for a in s.accesses if a.array == array]
    if not found:
        raise PtoError(
            f"statement {s.name} does not access array '{array}'",
            hint="it accesses: " + (", ".join(sorted({a.array for a in s.accesses})) or "nothing"),
        )
    acc = found[0]
    for r in found[1:]:
        acc = acc.union(r)
    rel = tile_map(sched, s, tile_loops).apply_range(acc)
    return _box_extents(rel)


# ------------------------------------------------------------------ max over tiles


def _monotone(e: Any, syms: set[Any]) -> tuple[bool, bool]:
    """(non-decreasing in every symbol of `syms`, non-negative), for non-negative symbols.

    Structural and conservative: (False, False) means "not shown".
    """
    if e.is_Number:
        return True, bool(e >= 0)
    if e.is_Symbol:
        return (True, True) if e in syms else (False, False)
    parts = [_monotone(a, syms) for a in e.args]
    mono = all(m for m, _ in parts)
    nonneg = all(p for _, p in parts)
    if isinstance(e, sympy.Add):
        return mono, nonneg
    if isinstance(e, sympy.Mul):
        # A product of non-decreasing non-negative factors is non-decreasing.
        ok = mono and nonneg
        return ok, ok
    if isinstance(e, sympy.Pow):
        exp = e.args[1]
        ok = exp.is_Integer and exp > 0 and parts[0][0] and parts[0][1]
        return bool(ok), bool(ok)
    if isinstance(e, (sympy.Max, sympy.Min, sympy.floor, sympy.ceiling)):
        if isinstance(e, sympy.Max):
            nonneg = any(p for _, p in parts)
        return mono, nonneg
    return False, False


def _extent_relation(extents: Mapping[str, isl.PwAff]) -> tuple[list[str], isl.Map]:
    """{ [tile] -> [e_0, ...] } for the extents (on the tiles where all are defined)."""
    names = list(extents)
    first = extents[names[0]]
    m = isl.Map.from_domain(first.domain())
    for name in names:
        m = m.flat_range_product(extents[name].as_map())
    return names, m


def _check_symbols(expr: Any, extents: Mapping[str, isl.PwAff]) -> dict[str, Any]:
    syms = {s.name: s for s in expr.free_symbols}
    unknown = sorted(set(syms) - set(extents))
    if unknown:
        raise PtoError(
            f"size expression {expr} uses {', '.join(unknown)}, which is not a tile extent",
            hint="give one extent per symbol of the expression: "
            + ", ".join(f"{n}=..." for n in sorted(syms)),
        )
    if not extents:
        raise PtoError("max_over_tiles needs at least one extent", hint="valid_row=..., ...")
    return syms


def _joint_maxima(extents: Mapping[str, isl.PwAff]) -> tuple[list[isl.PwAff], isl.Set, bool]:
    """(per-extent maxima over the tiles, parameters with a tile, whether one tile has all)."""
    names, rel = _extent_relation(extents)
    tuples = rel.range()
    maxima = [tuples.dim_max(k).coalesce() for k in range(len(names))]
    # Some tile has every maximum at once iff the lexicographic maximum of the
    # extent tuples has them all (it maximizes the first, then the second, ...).
    joint = tuples.lexmax_pw_multi_aff()
    ok = all(joint.get_pw_aff(k).is_equal(maxima[k]) for k in range(len(names)))
    return maxima, tuples.params(), ok


def _cells(extents: Mapping[str, isl.PwAff]) -> list[dict[str, isl.PwAff]] | None:
    """The extents split where each one is a single quasi-affine expression (None: too many)."""
    cells: list[dict[str, isl.PwAff]] = [{}]
    domains: list[isl.Set | None] = [None]
    for name, pa in extents.items():
        nxt: list[dict[str, isl.PwAff]] = []
        nxt_dom: list[isl.Set | None] = []
        for cell, dom in zip(cells, domains, strict=True):
            for piece, aff in pa.get_pieces():
                d = piece if dom is None else dom.intersect(piece)
                if d.is_empty():
                    continue
                nxt.append({**cell, name: isl.PwAff.alloc(d, aff)})
                nxt_dom.append(d)
        if len(nxt) > _MAX_CELLS:
            return None
        cells, domains = nxt, nxt_dom
    return [
        {n: pa.intersect_domain(d) for n, pa in c.items()}
        for c, d in zip(cells, domains, strict=True)
        if d is not None
    ]


def _size_at_maxima(
    expr: Any,
    syms: Mapping[str, Any],
    names: Sequence[str],
    maxima: Sequence[isl.PwAff],
    where: isl.Set,
    filler: Any,
    symbols: Mapping[str, sympy.Symbol] | None,
) -> Any:
    """expr(maxima) where `where` holds (some tile), `filler` elsewhere."""
    subs = {}
    for k, name in enumerate(names):
        if name in syms:
            subs[syms[name]] = pw_aff_to_sympy(maxima[k], symbols, outside=None)
    value = sympy.sympify(expr).subs(subs)
    if _is_universe(where):
        return value
    return sympy.Piecewise((value, set_to_sympy(where, symbols)), (filler, True))


def max_over_tiles(
    expr: Any,
    extents: Mapping[str, isl.PwAff],
    symbols: Mapping[str, sympy.Symbol] | None = None,
) -> SymbolicSize:
    """max over all tiles of `expr` evaluated at the tile's extents, as an expression of sizes.

    `expr` is a sympy expression whose symbols are named like the keys of
    `extents` (e.g. ``valid_row``, ``valid_col``); each extent is a PwAff of the
    tile loop values and the parameters, all over the same tiles. Where there is
    no tile the size is 0.

    `expr` must be shown non-decreasing in each extent (sums, products,
    Max/Min, floor/ceiling of non-negative non-decreasing terms; tmp sizes are),
    else a PtoError is raised. Then:

    1. If isl proves that for every parameter value some tile reaches every
       extent's maximum at once (the lexicographic maximum of the extent tuples
       equals the per-extent maxima), the result is expr(max extents): exact.
       Rectangular tilings are such: a full tile reaches every maximum when
       there is one, else the single partial tile does.
    2. Otherwise the tiles are split into cells where every extent is one
       quasi-affine expression (full tiles, last tile of a row, ...). If (1)
       holds in every cell, the result is the Max over cells of expr(cell maxima):
       exact.
    3. Otherwise the result is expr(max extents) with ``exact=False``: an upper
       bound, always enough to allocate. :func:`max_over_tiles_at` gives the exact
       number for given sizes.
    """
    syms = _check_symbols(expr, extents)
    monotone, nonneg = _monotone(expr, set(syms.values()))
    if not monotone:
        raise PtoError(
            f"size expression {expr} is not shown non-decreasing in the tile extents, "
            "so its maximum over tiles is not expr(max extents)",
            hint="write it from sums, products, Max/Min, floor/ceiling of the extents, "
            "or use max_over_tiles_at for numbers at given sizes",
        )
    names = list(extents)
    maxima, some_tile, exact = _joint_maxima(extents)
    out = _size_at_maxima(expr, syms, names, maxima, some_tile, 0, symbols)
    if not exact:
        cells = _cells(extents)
        results = [_joint_maxima(c) for c in cells] if cells is not None else []
        if cells is not None and all(ok for _, _, ok in results):
            # Cells without a tile for some sizes contribute nothing there.
            filler = 0 if nonneg else sympy.S.NegativeInfinity
            parts = [
                _size_at_maxima(expr, syms, names, m, w, filler, symbols) for m, w, _ in results
            ]
            best = sympy.Max(*parts)
            if nonneg or _is_universe(some_tile):
                out = best
            else:
                out = sympy.Piecewise((best, set_to_sympy(some_tile, symbols)), (0, True))
            exact = True
    pw = None
    if len(names) == 1 and expr == syms.get(names[0]):
        pw = with_default(maxima[0], 0)
    return SymbolicSize(out, _params_of(out, *extents.values()), pw, exact)


def max_over_tiles_at(expr: Any, extents: Mapping[str, isl.PwAff], **params: int) -> int:
    """max over all tiles of `expr`(extents), for given parameter values (0 if no tile).

    Exact for any expression: isl enumerates the distinct extent tuples of the
    tiles (few: full tiles share one tuple) and `expr` is evaluated at each.
    """
    syms = _check_symbols(expr, extents)
    names, rel = _extent_relation(extents)
    tuples = rel.range()
    for k in range(tuples.dim(_DT.param)):
        pname = tuples.get_dim_name(_DT.param, k)
        if pname not in params:
            if not tuples.involves_dims(_DT.param, k, 1):
                continue
            raise PtoError(
                f"max_over_tiles_at needs a value for parameter '{pname}'",
                hint="pass every parameter by its isl name",
            )
        tuples = tuples.fix_val(_DT.param, k, isl.Val.int_from_si(tuples.get_ctx(), params[pname]))
    points: list[tuple[int, ...]] = []

    def collect(p: isl.Point) -> None:
        points.append(
            tuple(p.get_coordinate_val(_DT.set, k).to_python() for k in range(len(names)))
        )

    tuples.project_out_all_params().foreach_point(collect)
    best: int | None = None
    for pt in points:
        values = {syms[n]: sympy.Integer(x) for n, x in zip(names, pt, strict=True) if n in syms}
        v = sympy.sympify(expr).xreplace(values)
        assert v.is_Integer, f"{expr} at {pt} is {v}"
        best = int(v) if best is None else max(best, int(v))
    return 0 if best is None else best
