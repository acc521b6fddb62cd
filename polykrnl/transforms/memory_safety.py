"""Memory safety as a polyhedral fact: does every access stay inside its array?

For each access, the elements it addresses over its statement's domain (the image of
the domain under the access map, before the model clips it to the array) are compared
with the array's extents, for every value of the parameters (sizes and index
arguments) the function allows. Along one dimension an access leaves the array exactly
when the largest index it addresses reaches the extent or the smallest is negative, so
per dimension the parametric minimum and maximum (isl's ``dim_min`` / ``dim_max``)
decide it, and the parameter values for which some access leaves the array form an isl
set. Each array gets one verdict:

- ``in bounds``: for every size;
- ``in bounds when C``: C is the condition on the parameters, simplified;
- ``out of bounds``: for every size the function allows (a witness instance);
- ``not proven``: only accesses that may not run (in a branch the model does not
  follow) can leave the array, for every size.

Subscripts read from memory (a gather) have no static bound: they are listed, and
generated kernels check them where they are used. Ops that clip by their own semantics
(vector transfers, masked accesses, tile copies) have nothing to prove.

A certain violation (a must-access of a statement that runs) becomes a guard: a set of
parameter values to refuse, with the extent needed, which every generated kernel
checks on the actual sizes before touching memory (``codegen/bounds_guard.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import islpy as isl

from polykrnl.display import Html, code, html_table
from polykrnl.errors import BoundsError, SourceLocation
from polykrnl.poly import Access, DimParam, PolyProgram, Statement
from polykrnl.transforms.samples import sample_pair

Verdict = Literal["in bounds", "in bounds when", "out of bounds", "not proven"]
Side = Literal["upper", "lower"]


@dataclass(frozen=True)
class OutOfBounds:
    """One instance that addresses an element outside its array, and the sizes it needs."""

    statement: str  # the statement's label: `S0 (krnl.load, line 7)`
    instance: dict[str, int]
    array: str
    element: tuple[int, ...]
    dim: int
    extent: int
    params: dict[str, int]  # by the names users give them (`A.0`, `N`)
    write: bool
    certain: bool  # a must-access: the instance runs and touches the element
    data_dims: tuple[int, ...] = ()  # dimensions whose subscripts are read from data (`?`)

    def __str__(self) -> str:
        inst = ", ".join(f"{k}={v}" for k, v in self.instance.items())
        sizes = ", ".join(f"{k} = {v}" for k, v in self.params.items())
        when = f" when {sizes}" if sizes else ""
        verb = "writes" if self.write else "reads"
        if not self.certain:
            verb = f"may {verb[:-1]}"
        elem = ", ".join("?" if d in self.data_dims else str(x) for d, x in enumerate(self.element))
        if self.element[self.dim] < 0:
            why = f"index {self.element[self.dim]} along dimension {self.dim} is negative"
        else:
            why = (
                f"{self.array} has {self.extent} element{'s' * (self.extent != 1)} "
                f"along dimension {self.dim}"
            )
        return f"{self.statement} at ({inst}) {verb} {self.array}[{elem}]{when}: {why}"

    def to_json(self) -> dict[str, Any]:
        return {
            "statement": self.statement,
            "instance": self.instance,
            "array": self.array,
            "element": list(self.element),
            "dim": self.dim,
            "extent": self.extent,
            "params": self.params,
            "write": self.write,
            "certain": self.certain,
        }


@dataclass(frozen=True)
class ArraySafety:
    """The verdict for one array."""

    array: str
    verdict: Verdict
    condition: str = ""  # for `in bounds when`: the condition on the parameters
    witness: OutOfBounds | None = None
    # Accesses whose subscripts depend on data: `S2 (krnl.load, line 9): dimension 0`.
    data_dependent: tuple[str, ...] = ()
    # Accesses the model knows only as "any element" (through a view without an exact
    # map, non-affine starts): nothing proven about them.
    unknown: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        head = (
            f"in bounds when {self.condition}" if self.verdict == "in bounds when" else self.verdict
        )
        if self.verdict == "in bounds" and (self.data_dependent or self.unknown):
            head = "in bounds (affine subscripts)"
        return head

    def lines(self) -> list[str]:
        """The verdict, then its witness and the accesses checked at run time."""
        out = [f"{self.array}: {self.text}"]
        if self.witness is not None:
            out.append(f"  {'witness' if self.witness.certain else 'possible'}: {self.witness}")
        out += [
            f"  subscript not affine in the loops (data, or a loop the model does not "
            f"follow), checked at run time: {d}"
            for d in self.data_dependent
        ]
        out += [f"  not modelled element by element: {u}" for u in self.unknown]
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "array": self.array,
            "verdict": self.verdict,
            "condition": self.condition,
            "witness": None if self.witness is None else self.witness.to_json(),
            "data_dependent": list(self.data_dependent),
            "unknown": list(self.unknown),
        }


@dataclass(frozen=True)
class Guard:
    """Sizes for which a must-access leaves `array` along `dim`: a call must refuse them.

    `bad` is a set over the program's parameters; `needed` (defined on `bad`) is the
    extent the access needs (`side == "upper"`: the largest index + 1) or its smallest
    index (`side == "lower"`, negative on `bad`).
    """

    array: str
    dim: int
    side: Side
    bad: isl.Set
    needed: isl.PwAff
    statement: str  # the label of the access's statement
    write: bool
    location: SourceLocation | None = None  # of the access's op


@dataclass(frozen=True)
class MemoryReport:
    """Per-array memory safety of one function: may an access leave its array?

    `report.memory` of a `LegalityReport`. For each array (`arrays`, or
    `array(name)`), one verdict for every value of the parameters: "in bounds for
    every size", "in bounds when" a condition on the sizes holds (the condition the
    generated kernels check before any access), or "out of bounds" with a witness (an
    access, its iteration and the sizes where it leaves the array). Accesses the model
    cannot bound (subscripts read from data) are listed as such.

    Examples
    --------

    >>> import polykrnl as pk
    >>> fn = pk.parse('''
    ... func.func @scale(%X: memref<?xf32>, %N: index) {
    ...   %ii = krnl.define_loops 1
    ...   krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    ...     %x = krnl.load %X[%i] : memref<?xf32>
    ...     %y = arith.addf %x, %x : f32
    ...     krnl.store %y, %X[%i] : memref<?xf32>
    ...   }
    ...   return
    ... }''')["scale"]
    >>> memory = pk.check(fn).memory
    >>> print(memory)
    memory safety of @scale:
      X: in bounds when X.0 >= N
        witness: S0 (krnl.load, line 5) at (i=0) reads X[0] when X.0 = 0, N = 1: ...
    >>> memory.array("X").condition
    'X.0 >= N'
    """

    function: str
    arrays: tuple[ArraySafety, ...]
    guards: tuple[Guard, ...]
    # Whether refusing the guards' sets proves every modelled access in bounds: no
    # may-access can leave an array where the guards pass, and no subscript depends
    # on data. Then the accesses need no per-access check.
    proven_by_guards: bool

    @property
    def safe(self) -> bool:
        """No array is out of bounds for every size."""
        return all(a.verdict != "out of bounds" for a in self.arrays)

    def array(self, name: str) -> ArraySafety:
        return next(a for a in self.arrays if a.array == name)

    def lines(self) -> list[str]:
        """One line for the arrays in bounds for every size, then one block per other."""
        plain = [a.array for a in self.arrays if a.verdict == "in bounds" and not a.lines()[1:]]
        out = [f"in bounds for every size: {', '.join(plain)}"] if plain else []
        out += [x for a in self.arrays if a.array not in plain for x in a.lines()]
        return out

    def __str__(self) -> str:
        lines = [f"memory safety of @{self.function}:"]
        lines += [f"  {line}" for line in self.lines()]
        return "\n".join(lines)

    def html_table(self) -> str:
        """The per-array verdicts as an HTML table (the rows out of bounds marked)."""
        rows = [
            [
                Html(code(a.array)),
                a.text,
                "" if a.witness is None else str(a.witness),
                "; ".join((*a.data_dependent, *a.unknown)),
            ]
            for a in self.arrays
        ]
        bad = [k for k, a in enumerate(self.arrays) if a.verdict in ("out of bounds", "not proven")]
        return html_table(
            ["array", "verdict", "witness", "checked at run time / unknown"], rows, bad_rows=bad
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "safe": self.safe,
            "proven_by_guards": self.proven_by_guards,
            "arrays": [a.to_json() for a in self.arrays],
        }


# ------------------------------------------------------------------ analysis


@dataclass(frozen=True)
class _Leave:
    """Where one access leaves its array along one dimension and side."""

    access: Access
    stmt: Statement
    dim: int
    side: Side
    bad: isl.Set
    needed: isl.PwAff
    runs: isl.Set  # the parameter values for which the access runs at all


@functools.lru_cache(maxsize=1024)
def _extent_set(params: tuple[str, ...], size: int | str) -> isl.Set:
    """{ [x] : x = size }: an extent (a constant, a parameter or an isl expression of
    them) as a one-point set over the parameters."""
    return isl.Set(f"[{', '.join(params)}] -> {{ [x] : x = {size} }}")


def extent_pw_aff(program: PolyProgram, size: int | str) -> isl.PwAff:
    """The extent as a function of the parameters."""
    return _extent_set(program.params, size).dim_max(0)


def _extent_at(program: PolyProgram, size: int | str, sizes: isl.Set) -> int:
    """The extent's value at the parameter values of `sizes` (one point)."""
    s = _extent_set(program.params, size)
    p = s.intersect_params(sizes.align_params(s.get_space()).params()).sample_point()
    return int(p.get_coordinate_val(isl.dim_type.set, 0).to_python())


@functools.lru_cache(maxsize=4096)
def _inside_text(
    params: tuple[str, ...],
    tuple_name: str,
    shape: tuple[int | str | None, ...],
    n_private: int,
    sides: str,
    dims: tuple[int, ...],
) -> isl.Set:
    names = [f"_p{k}" for k in range(n_private)] + [f"_a{d}" for d in range(len(shape))]
    cons = [f"_a{d} >= 0" if sides == "lower" else f"_a{d} < {shape[d]}" for d in dims]
    return isl.Set(
        f"[{', '.join(params)}] -> {{ {tuple_name}[{', '.join(names)}] : "
        f"{' and '.join(cons) or 'true'} }}"
    )


def _inside(
    program: PolyProgram,
    array: str,
    tuple_name: str,
    n_private: int,
    sides: str,
    dims: tuple[int, ...],
) -> isl.Set:
    """The elements of `array` (after `n_private` dimensions of private copies) at or
    above 0 (`sides == "lower"`) or below the extent (`"upper"`) along `dims`."""
    info = program.arrays[array]
    return _inside_text(program.params, tuple_name, info.shape, n_private, sides, dims)


def _ge_set(a: isl.PwAff, b: isl.PwAff) -> isl.Set:
    """{ a >= b } after aligning the parameters of both."""
    a = a.align_params(b.get_space())
    return a.ge_set(b.align_params(a.get_space()))


@functools.lru_cache(maxsize=64)
def call_context(program: PolyProgram) -> isl.Set:
    """The parameter values a call can have: the program's context, sizes >= 0."""
    ctx = program.context
    for p, src in program.param_sources.items():
        if isinstance(src, DimParam):
            ctx = ctx.intersect(isl.Set(f"[{p}] -> {{ : {p} >= 0 }}"))
    return ctx


def _leaves(
    program: PolyProgram, stmt: Statement, a: Access, ctx: isl.Set
) -> tuple[list[_Leave], list[tuple[int, Side]]]:
    """Where access `a` leaves its array, per dimension and side; and the dimensions and
    sides along which its elements have no bound (a flat region the model cannot split
    into rows), where nothing is proven."""
    info = program.arrays.get(a.array)
    if info is None or info.virtual or a.clips:
        return [], []
    rng = a.addressed.intersect_domain(stmt.domain).intersect_params(ctx).range()
    n_private = rng.dim(isl.dim_type.set) - len(info.shape)
    name = rng.get_tuple_name()

    def within(sides: str, dims: tuple[int, ...]) -> bool:
        box = _inside(program, a.array, name, n_private, sides, dims)
        return bool(rng.is_subset(box.align_params(rng.get_space())))

    checked = tuple(
        d for d, size in enumerate(info.shape) if d not in a.data_dims and size is not None
    )
    # Most accesses stay inside for every size: a few subset tests decide that, before
    # the parametric minimum and maximum of a dimension, which cost far more.
    lows = () if within("lower", checked) else checked
    highs = tuple(d for d in checked if not within("upper", (d,)))
    if not lows and not highs:
        return [], []
    rng = rng.coalesce()
    out: list[_Leave] = []
    unbounded: list[tuple[int, Side]] = []
    for d in checked:
        pos = n_private + d
        if d in highs:
            hi = _bound(rng, pos, "max")
            if hi is None:
                unbounded.append((d, "upper"))
            else:
                size = info.shape[d]
                assert size is not None  # `checked` has only dimensions with an extent
                bad_hi = _ge_set(hi, extent_pw_aff(program, size)).intersect(hi.domain())
                bad_hi = bad_hi.coalesce()
                if not bad_hi.is_empty():
                    one = isl.Val.one(hi.get_ctx())
                    needed = hi.add_constant_val(one).intersect_domain(bad_hi)
                    out.append(_Leave(a, stmt, d, "upper", bad_hi, needed, hi.domain()))
        if d in lows:
            lo = _bound(rng, pos, "min")
            if lo is None:
                unbounded.append((d, "lower"))
                continue
            zero = isl.PwAff.val_on_domain(
                isl.Set.universe(lo.get_domain_space()), isl.Val.zero(lo.get_ctx())
            )
            bad_lo = lo.lt_set(zero.intersect_domain(lo.domain())).coalesce()
            if not bad_lo.is_empty():
                out.append(
                    _Leave(a, stmt, d, "lower", bad_lo, lo.intersect_domain(bad_lo), lo.domain())
                )
    return out, unbounded


def _bound(rng: isl.Set, pos: int, which: str) -> isl.PwAff | None:
    """The parametric largest (smallest) value of dimension `pos`, None if unbounded."""
    try:
        pa = rng.dim_max(pos) if which == "max" else rng.dim_min(pos)
    except isl.Error:
        return None
    # isl marks an unbounded piece with NaN
    if any(aff.is_nan() for _, aff in pa.get_pieces()):
        return None
    return pa


def _witness(program: PolyProgram, leave: _Leave, certain: bool, bad: isl.Set) -> OutOfBounds:
    """A concrete instance of `leave`, at the (lexicographically) smallest parameter values
    of `bad`."""
    a, stmt = leave.access, leave.stmt
    info = program.arrays[a.array]
    involved = bad.gist(call_context(program))
    fixed = a.addressed.intersect_domain(stmt.domain).intersect_params(_smallest(bad))
    n_private = fixed.dim(isl.dim_type.out) - len(info.shape)
    pos = n_private + leave.dim
    size = info.shape[leave.dim]
    # Keep only elements outside the array along the dimension.
    assert size is not None
    extent = _extent_at(program, size, fixed.params())
    out_sp = fixed.range().get_space()
    coord = isl.PwAff.from_aff(
        isl.Aff.var_on_domain(isl.LocalSpace.from_space(out_sp), isl.dim_type.set, pos)
    )
    bound = isl.PwAff.val_on_domain(
        isl.Set.universe(out_sp),
        isl.Val.int_from_si(out_sp.get_ctx(), 0 if leave.side == "lower" else extent),
    )
    outside = coord.lt_set(bound) if leave.side == "lower" else coord.ge_set(bound)
    fixed = fixed.intersect_range(outside)
    at, element, values = sample_pair(fixed)
    params = {
        str(program.param_sources[name]): v
        for name, v in values.items()
        if name in program.param_sources and _involves(involved, name)
    }
    return OutOfBounds(
        statement=_label(program, stmt, a),
        instance=dict(zip(stmt.dims, at, strict=True)),
        array=a.array,
        element=tuple(element[n_private:]),
        dim=leave.dim,
        extent=extent,
        params=params,
        write=a.write,
        certain=certain,
        data_dims=a.data_dims,
    )


def _smallest(bad: isl.Set) -> isl.Set:
    """The lexicographically smallest parameter values of `bad` (a set over parameters),
    as a one-point set; `bad` itself when it has no smallest point (unbounded below)."""
    n = bad.dim(isl.dim_type.param)
    if n == 0:
        return bad
    # isl minimizes set dimensions, not parameters: move them over and back.
    try:
        least = bad.move_dims(isl.dim_type.set, 0, isl.dim_type.param, 0, n).lexmin()
    except isl.Error:  # an index argument unbounded below
        return bad
    if least.is_empty():
        return bad
    point = least.sample_point()
    names = [str(bad.get_dim_name(isl.dim_type.param, i)) for i in range(n)]
    values = [int(point.get_coordinate_val(isl.dim_type.set, i).to_python()) for i in range(n)]
    cond = " and ".join(f"{p} = {v}" for p, v in zip(names, values, strict=True))
    return isl.Set(f"[{', '.join(names)}] -> {{ : {cond} }}")


def _involves(s: isl.Set, name: str) -> bool:
    pos = s.find_dim_by_name(isl.dim_type.param, name)
    return pos >= 0 and bool(s.involves_dims(isl.dim_type.param, pos, 1))


def _union(sets: Sequence[isl.Set], ctx: isl.Set) -> isl.Set:
    out = isl.Set.empty(ctx.get_space())
    for s in sets:
        out = out.union(s.align_params(ctx.get_space()).intersect(ctx.align_params(s.get_space())))
    return out.coalesce()


def condition_text(s: isl.Set, display: dict[str, str]) -> str:
    """A parameter set as a condition users read: `A.0 <= B.0 and N >= 2`."""
    s = s.remove_redundancies().coalesce()
    parts: list[str] = []
    for bs in s.get_basic_sets():
        terms = [_constraint_text(c, display) for c in bs.get_constraints()]
        if bs.dim(isl.dim_type.div):
            return str(s)
        parts.append(" and ".join(terms) if terms else "true")
    if not parts:
        return "false"
    return parts[0] if len(parts) == 1 else " or ".join(f"({p})" for p in parts)


def _constraint_text(c: isl.Constraint, display: dict[str, str]) -> str:
    pos: list[str] = []
    neg: list[str] = []
    for i in range(c.get_space().dim(isl.dim_type.param)):
        v = int(c.get_coefficient_val(isl.dim_type.param, i).to_python())
        if v == 0:
            continue
        name = str(c.get_space().get_dim_name(isl.dim_type.param, i))
        name = display.get(name, name)
        term = name if abs(v) == 1 else f"{abs(v)}*{name}"
        (pos if v > 0 else neg).append(term)
    const = int(c.get_constant_val().to_python())
    # pos - neg + const (>= or ==) 0, written as pos (op) neg - const
    lhs = " + ".join(pos) if pos else "0"
    rhs_terms = list(neg)
    rhs = " + ".join(rhs_terms)
    if -const:
        rhs = f"{rhs} {'-' if const > 0 else '+'} {abs(const)}" if rhs else str(-const)
    rhs = rhs or "0"
    if not pos and neg:
        # `0 >= N - 3` reads better as `N <= 3`
        lhs, rhs = " + ".join(neg), str(const) if not pos else rhs
        return f"{lhs} {'=' if c.is_equality() else '<='} {rhs}"
    return f"{lhs} {'=' if c.is_equality() else '>='} {rhs}"


def _label(program: PolyProgram, stmt: Statement, a: Access) -> str:
    """`S0 (krnl.load, line 8)`: the statement and the op that makes the access."""
    loc = program.function.location(a.op)
    where = f", line {loc.line}" if loc is not None else ""
    return f"{stmt.name} ({a.op.name}{where})"


@dataclass
class _ArrayFacts:
    """What the accesses of one array say, gathered over the statements."""

    leaves: list[tuple[_Leave, bool]]  # each with whether its access certainly runs
    data_dependent: list[str]
    unknown: list[str]


def _facts(program: PolyProgram, ctx: isl.Set) -> dict[str, _ArrayFacts]:
    out: dict[str, _ArrayFacts] = {}
    for stmt in program.statements:
        for a in stmt.accesses:
            info = program.arrays.get(a.array)
            if info is None or info.virtual:
                continue
            facts = out.setdefault(a.array, _ArrayFacts([], [], []))
            if a.data_dims:
                dims = ", ".join(map(str, a.data_dims))
                facts.data_dependent.append(
                    f"{_label(program, stmt, a)}: dimension{'s' * (len(a.data_dims) > 1)} {dims}"
                )
            elif a.may and a.reach is None and a.subscripts is None and not a.clips:
                # Known only as "any element" (through a view without an exact map, an
                # opaque op): nothing proven about it.
                facts.unknown.append(f"{_label(program, stmt, a)}: {a.approximation}")
            # A may-access only for its subscripts read from data still runs whenever its
            # statement does: its affine dimensions are certain.
            certain = not a.may or bool(a.data_subscripts)
            leaves, unbounded = _leaves(program, stmt, a, ctx)
            facts.leaves += [(lv, certain) for lv in leaves]
            facts.unknown += [
                f"{_label(program, stmt, a)}: the elements it addresses have no {side} bound "
                f"along dimension {d}"
                for d, side in unbounded
            ]
    return out


def _guard(program: PolyProgram, lv: _Leave) -> Guard:
    return Guard(
        lv.access.array,
        lv.dim,
        lv.side,
        lv.bad,
        lv.needed,
        _label(program, lv.stmt, lv.access),
        lv.access.write,
        program.function.location(lv.access.op),
    )


def _verdict(program: PolyProgram, name: str, facts: _ArrayFacts, ctx: isl.Set) -> ArraySafety:
    """One array's verdict from where its accesses leave it (see the module docstring)."""
    dd, uk = tuple(facts.data_dependent), tuple(facts.unknown)
    leaves = [lv for lv, _ in facts.leaves]
    must = [lv for lv, certain in facts.leaves if certain]
    bad_must = _union([lv.bad for lv in must], ctx)
    bad_all = _union([lv.bad for lv in leaves], ctx)
    if bad_all.is_empty():
        return ArraySafety(name, "in bounds", data_dependent=dd, unknown=uk)
    certain = not bad_must.is_empty()
    # The witness: a certain access first, and among those one that leaves the array
    # whenever it runs (the clearest case), else any.
    first = sorted(
        (lv for lv in leaves if not lv.bad.intersect(ctx).is_empty()),
        key=lambda lv: (lv not in must, not lv.runs.intersect(ctx).is_subset(lv.bad)),
    )[0]
    wit = _witness(program, first, certain and first in must, first.bad.intersect(ctx))
    proven = ctx.subtract(bad_all)
    # Conditions are stated where every access of the array runs (all loops non-empty):
    # the exact condition's case split over empty loops says nothing users need, and a
    # condition met only where nothing runs is none.
    runs = ctx
    for lv in leaves:
        runs = runs.intersect(lv.runs.align_params(runs.get_space()))
    runs = runs.align_params(proven.get_space())
    useful = not proven.intersect(runs).is_empty()
    if certain and (ctx.subtract(bad_must).is_empty() or not useful):
        return ArraySafety(name, "out of bounds", witness=wit, data_dependent=dd, unknown=uk)
    if useful:
        cond = condition_text(proven.gist(runs), program.param_display)
        return ArraySafety(name, "in bounds when", cond, wit, data_dependent=dd, unknown=uk)
    return ArraySafety(name, "not proven", witness=wit, data_dependent=dd, unknown=uk)


@functools.lru_cache(maxsize=64)
def memory_report(program: PolyProgram) -> MemoryReport:
    """The memory safety of every array of `program` (computed once per program)."""
    ctx = call_context(program)
    facts = _facts(program, ctx)
    guards: dict[tuple[Any, ...], Guard] = {}
    proven_by_guards = True
    for name, f in facts.items():
        for lv, certain in f.leaves:
            if certain:
                key = (name, lv.dim, lv.side, str(lv.bad), str(lv.needed))
                guards.setdefault(key, _guard(program, lv))
        bad_must = _union([lv.bad for lv, certain in f.leaves if certain], ctx)
        bad_may = _union([lv.bad for lv, certain in f.leaves if not certain], ctx)
        # Refusing the guards' sets proves the array only when no may-access can leave
        # it elsewhere, and no subscript of it escapes the model.
        if f.data_dependent or f.unknown or not bad_may.subtract(bad_must).is_empty():
            proven_by_guards = False
    arrays = tuple(_verdict(program, name, f, ctx) for name, f in facts.items())
    return MemoryReport(program.function.name, arrays, tuple(guards.values()), proven_by_guards)


def refuse_unsafe(program: PolyProgram, params: Mapping[str, int], what: str) -> None:
    """Raise BoundsError when, at these parameter values (isl names), an access that
    certainly runs leaves its array: for callers that know the sizes in Python (the PTO
    simulation and harness, the MLIR kernel), as generated kernels check them at their
    start. Sizes already found safe are remembered: a kernel called again with the same
    sizes pays a dictionary lookup, not isl's work."""
    known = tuple(sorted((p, int(v)) for p, v in params.items() if p in program.params))
    if known not in _safe_sizes(program):
        _refuse_unsafe(program, dict(known), what)
        _safe_sizes(program).add(known)


@functools.lru_cache(maxsize=64)
def _safe_sizes(program: PolyProgram) -> set[tuple[tuple[str, int], ...]]:
    return set()


def _refuse_unsafe(program: PolyProgram, known: dict[str, int], what: str) -> None:
    report = memory_report(program)
    if not report.guards or not known:
        return
    cond = " and ".join(f"{p} = {v}" for p, v in known.items())
    point = isl.Set(f"[{', '.join(known)}] -> {{ : {cond} }}")
    display = program.param_display
    ctx = call_context(program)
    for g in report.guards:
        if any(_involves(g.bad.gist(ctx), p) for p in program.params if p not in known):
            continue  # depends on a size not given: the caller checks it when it is
        at = g.bad.intersect_params(point.align_params(g.bad.get_space()))
        if at.is_empty():
            continue
        needed = g.needed.intersect_params(at.align_params(g.needed.get_space())).max_val()
        sizes = ", ".join(f"{display.get(p, p)} = {v}" for p, v in known.items())
        if g.side == "upper":
            detail = f"needs at least {needed.to_python()} elements along dimension {g.dim}"
        else:
            detail = f"addresses index {needed.to_python()} along dimension {g.dim}"
        raise BoundsError(
            f"{what}: at {sizes}, {g.statement} leaves {g.array}: it {detail}",
            location=g.location,
            hint=f"sizes for which {g.array} is in bounds: see `polykrnl check`",
        )
