"""Loop polyhedra and index values as isl: loop bounds as constraints, SSA values as isl terms."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol, cast

import islpy as isl
from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)

from polykrnl.dialect import krnl as k
from polykrnl.dialect.semi_affine import is_semi_affine
from polykrnl.errors import Diagnostic
from polykrnl.ir import const_int
from polykrnl.nest.loops import (
    Bound,
    IVBound,
    Loop,
    MapBound,
)
from polykrnl.poly.program import Access, ArrayInfo, ParamSource, isl_name
from polykrnl.poly.table import Exprs, model_of


@dataclass(frozen=True)
class Site:
    """Where a value is defined: the loops of the defining statement's dimensions."""

    loops: tuple[Loop, ...]


class ProgramBuilder(Protocol):
    """What a statement's polyhedron and its expressions read from the program builder
    (builder.py), named here so that this module, which the builder imports, imports
    nothing of it."""

    params: dict[str, ParamSource]
    arrays: dict[str, ArrayInfo]
    array_site: dict[str, tuple[Loop, ...]]
    func_args: set[BlockArgument]
    get_iv: dict[SSAValue, Loop]
    in_loop: set[Operation]
    origin_rank: dict[SSAValue, int]
    param_of: dict[SSAValue, str]
    loop_names: dict[Loop, str]
    unsupported: list[Diagnostic]

    def dim_param(self, mem: SSAValue, d: int) -> str: ...

    def param(self, v: SSAValue, display: str) -> str: ...

    def vname(self, v: SSAValue) -> str: ...

    def unsupported_op(self, op: Operation, message: str, hint: str) -> None: ...


def affine_expr(e: AffineExpr, args: Sequence[str | None], ndims: int) -> str | None:
    """`e` in isl syntax, dims and symbols replaced by `args` (None: not affine)."""
    if isinstance(e, AffineConstantExpr):
        return str(e.value)
    if isinstance(e, AffineDimExpr):
        return args[e.position]
    if isinstance(e, AffineSymExpr):
        return args[ndims + e.position]
    if isinstance(e, AffineBinaryOpExpr):
        lhs = affine_expr(e.lhs, args, ndims)
        rhs = affine_expr(e.rhs, args, ndims)
        if lhs is None or rhs is None:
            return None
        kind = e.kind
        if kind == AffineBinaryOpKind.Add:
            return f"({lhs}) + ({rhs})"
        # A semi-affine map (`d0 * s0`, `d0 ceildiv s0`) is affine where the symbol is
        # bound to a constant, as onnx-mlir's pooling maps are for static strides.
        cl, cr = _integer(e.lhs, lhs), _integer(e.rhs, rhs)
        if kind == AffineBinaryOpKind.Mul:
            if cr is not None:
                return f"{cr}*({lhs})"
            if cl is not None:
                return f"{cl}*({rhs})"
            return None
        if cr is None or cr <= 0:
            return None
        c = cr
        if kind == AffineBinaryOpKind.FloorDiv:
            return f"floor(({lhs})/{c})"
        if kind == AffineBinaryOpKind.CeilDiv:
            return f"ceil(({lhs})/{c})"
        if kind == AffineBinaryOpKind.Mod:
            return f"({lhs}) mod {c}"
    return None


def _integer(e: AffineExpr, text: str) -> int | None:
    """The value of `e` when it is a constant, or its operands made it one."""
    if isinstance(e, AffineConstantExpr):
        return e.value
    try:
        return int(text)
    except ValueError:
        return None


def map_results(m: AffineMap, args: Sequence[str | None]) -> list[str | None]:
    return [affine_expr(e, args, m.num_dims) for e in m.results]


class Expr:
    """SSA index values as isl expressions over loop variables and parameters."""

    def __init__(self, b: ProgramBuilder, env: dict[SSAValue, str]) -> None:
        self.b = b
        self.env = env

    def of(self, v: SSAValue) -> str | None:
        if v in self.env:
            return self.env[v]
        c = const_int(v)
        if c is not None:
            return str(c)
        b = self.b
        if isinstance(v, BlockArgument):
            if v in b.func_args and isinstance(v.type, IndexType | IntegerType):
                return b.param(v, b.vname(v).lstrip("%"))
            return None
        assert isinstance(v, OpResult)
        op = v.op
        model = model_of(op)
        if model is not None and model.index is not None:
            found = model.index(op, self)
            piecewise = found is not None and ("min(" in found or "max(" in found)
            only_bounds = all(isinstance(u.operation, k.IterateOp) for u in v.uses)
            if (
                piecewise
                and not only_bounds
                and op not in b.in_loop
                and isinstance(v.type, IndexType | IntegerType)
            ):
                # A min/max fixed for the whole call and used through other ops (a map of
                # a bound, an allocation's size): a parameter, so that the schedule's loop
                # bounds stay single affine expressions. Used directly as a loop bound, it
                # stays exact (the schedule splits it into one bound per result).
                return b.param(v, b.vname(v).lstrip("%"))
            if found is not None or (model.index_final and op in b.in_loop):
                return found
        if op not in b.in_loop and isinstance(v.type, IndexType | IntegerType):
            # Fixed for the whole call: a parameter named after the value.
            return b.param(v, b.vname(v).lstrip("%"))
        return None


class LoopPolyhedron:
    """The loop polyhedron around one statement: every enclosing loop as a variable."""

    def __init__(
        self,
        b: ProgramBuilder,
        loops: tuple[Loop, ...],
        guards: Callable[[Expr], list[str]] | None = None,
    ) -> None:
        self.b = b
        self.loops = loops
        self.var = {lp: f"_l{n}" for n, lp in enumerate(loops)}
        env: dict[SSAValue, str] = {}
        for lp in loops:
            if lp.origin.carrier is lp:
                env[lp.origin.entry.iv] = self.var[lp]
        for r, lp in b.get_iv.items():
            if lp in self.var:
                env[r] = self.var[lp]
        self.env = env
        expr = Expr(b, env)
        cons: list[str] = []
        for lp in loops:
            x = self.var[lp]
            if lp.trivial:
                cons.append(f"{x} = 0")
                continue
            lbs = [e for bd in lp.lbs for e in self.bound(bd, expr)]
            ubs = [e for bd in lp.ubs for e in self.bound(bd, expr)]
            self._semi_affine_bounds(lp, (*lp.lbs, *lp.ubs), expr)
            for e in ubs:
                if e is not None:
                    cons.append(f"{x} < {e}")
            known = [e for e in lbs if e is not None]
            for e in known:
                cons.append(f"{x} >= {e}")
            if lp.step > 1 and known:
                if len(known) == 1:
                    cons.append(f"({x} - ({known[0]})) mod {lp.step} = 0")
                else:
                    alts = []
                    for i, e in enumerate(known):
                        others = " and ".join(f"{e} >= {o}" for j, o in enumerate(known) if j != i)
                        alts.append(
                            f"(({x} - ({e})) mod {lp.step} = 0"
                            + (f" and {others}" if others else "")
                            + ")"
                        )
                    cons.append("(" + " or ".join(alts) + ")")
        # The conditions of the affine branches around the statement (guards.py): its
        # instances are those that run.
        if guards is not None:
            cons += guards(expr)
        self.constraints = cons
        # The dimensions: per original loop, its innermost non-trivial loop here.
        chosen: dict[int, Loop] = {}
        order: list[int] = []
        for lp in loops:
            key = id(lp.origin)
            if lp.trivial:
                continue
            if key not in chosen:
                order.append(key)
            chosen[key] = lp
        # In `with`-list order (outer iterates first), whatever the recipe did, so
        # that a statement's space does not depend on the schedule.
        order.sort(key=lambda key: b.origin_rank[chosen[key].origin.entry.handle])
        dims: list[str] = []
        self.dim_var: list[str] = []
        self.dim_loops = [chosen[key] for key in order]
        for key in order:
            lp = chosen[key]
            if lp.origin.carrier is lp:
                dims.append(isl_name(lp.origin.name))
            else:
                dims.append(b.loop_names[lp])
            self.dim_var.append(self.var[lp])
        seen: dict[str, int] = {}
        unique = []
        for d in dims:
            n = seen.get(d, 0)
            seen[d] = n + 1
            unique.append(d if n == 0 else f"{d}_{n + 1}")
        self.dims = tuple(unique)

    def bound(self, bd: MapBound | IVBound, expr: Expr) -> list[str | None]:
        if isinstance(bd, IVBound):
            # A point loop sits inside its tile loop (the nest builder checks it).
            return [f"{self.var[bd.current]} + {bd.offset}"]
        return map_results(bd.map, [expr.of(v) for v in bd.operands])

    def _semi_affine_bounds(self, lp: Loop, bounds: Sequence[Bound], expr: Expr) -> None:
        """Refuse a bound that multiplies or divides a loop variable by a symbol: isl has no
        such expression, and dropping it would leave the loop unbounded."""
        for bd in bounds:
            if not isinstance(bd, MapBound):
                continue
            for e, found in zip(bd.map.results, self.bound(bd, expr), strict=True):
                if found is not None or not is_semi_affine(e):
                    continue
                message = (
                    f"a bound of loop {lp.name} is semi-affine, {e}: the polyhedral model "
                    "cannot multiply or divide by a symbol that is not a constant"
                )
                if all(d.message != message for d in self.b.unsupported):
                    self.b.unsupported_op(
                        lp.origin.iterate,
                        message,
                        "the reference interpreter runs it (`polykrnl run`); to model it, "
                        "compute the bound with affine.apply before the loops when it uses "
                        "no induction variable (a value fixed for the call is a parameter)",
                    )

    def _params(self) -> str:
        return "[" + ", ".join(self.b.params) + "]"

    @cached_property
    def values(self) -> isl.Map:
        """Statement instance -> the values of all its loops (parsed once per site)."""
        vs = [self.var[lp] for lp in self.loops]
        cons = [
            *self.constraints,
            *(f"{d} = {v}" for d, v in zip(self.dims, self.dim_var, strict=True)),
        ]
        body = " and ".join(cons) if cons else "true"
        return parse_map(
            f"{self._params()} -> {{ _S[{', '.join(self.dims)}] -> [{', '.join(vs)}] : {body} }}"
        )

    def _through_loops(
        self, stmt: str, array: str, outs: Sequence[str], cons: Sequence[str]
    ) -> isl.Map:
        """{ stmt[dims] -> array[outs] } for constraints written over the loop variables."""
        vs = [self.var[lp] for lp in self.loops]
        body = " and ".join(cons) if cons else "true"
        f = parse_map(
            f"{self._params()} -> {{ [{', '.join(vs)}] -> {array}[{', '.join(outs)}] : {body} }}"
        )
        return self.values.apply_range(f).set_tuple_name(isl.dim_type.in_, stmt).coalesce()

    def domain(self, name: str) -> isl.Set:
        return self.values.domain().set_tuple_name(name)

    def loop_values(self, name: str) -> isl.Map:
        return self.values.set_tuple_name(isl.dim_type.in_, name)

    def access(
        self,
        stmt: str,
        array: str,
        subs: Sequence[str | None] | None,
        write: bool,
        may: bool,
        op: Operation,
        region: Sequence[tuple[str, str]] | None = None,
        why: str | None = None,
    ) -> Access:
        """`op`'s access of `array` at `subs` (None: any element; a None subscript: any
        value in that dimension), optionally only the points of `region`.

        `why` says why a may-access covers more than it touches; an access whose
        subscripts are not all affine gets a reason of its own.
        """
        info = self.b.arrays[array]
        rank = len(info.shape)
        outs = [f"_a{d}" for d in range(rank)]
        extra: list[str] = []
        exact: tuple[str, ...] | None = None
        site = self.b.array_site.get(array, ())
        if site:
            # This iteration's private copy of a buffer allocated inside loops.
            private = [f"_p{d}" for d in range(len(site))]
            extra += [f"{p} = {self.var[lp]}" for p, lp in zip(private, site, strict=True)]
            outs_all = [*private, *outs]
        else:
            outs_all = outs
        approximation = why or ""
        data_dims: tuple[int, ...] = ()
        reach_extra: list[str] | None = None
        data: tuple[int, ...] = ()
        if subs is not None and len(subs) == rank and all(s is not None for s in subs):
            exact = tuple(str(x) for x in subs)
            extra += [f"{o} = {x}" for o, x in zip(outs, exact, strict=True)]
        else:
            if subs is not None and len(subs) == rank:
                # The affine subscripts still bound the access; the others range
                # over their whole dimension.
                unknown = [d for d, x in enumerate(subs) if x is None]
                data_dims = tuple(unknown)
                if not may and not why and region is None:
                    data = tuple(unknown)
                extra += [f"{outs[d]} = {x}" for d, x in enumerate(subs) if x is not None]
                may = True
                approximation = approximation or (
                    f"{op.name}: subscript{'s' * (len(unknown) > 1)} "
                    f"{', '.join(map(str, unknown))} of {array} "
                    f"{'are' if len(unknown) > 1 else 'is'} not an affine function of the "
                    "loops and parameters (a value read from memory?): any value is assumed"
                )
            elif subs is not None or region is None:
                may = True if subs is not None else may
                if may:
                    approximation = approximation or f"{op.name} may touch any element of {array}"
            if region is not None or data_dims:
                # What the op addresses, before the clip below keeps the relation
                # inside the array.
                reach_extra = extra + [c for _, c in region or ()]
            for d, size in enumerate(info.shape):
                extra.append(f"{outs[d]} >= 0")
                if size is not None:
                    extra.append(f"{outs[d]} < {size}")
            if region is not None:
                extra += [c for _, c in region]
        # The subscripts are written over _l0, _l1, ...: Statement.loops in order.
        rel = self._through_loops(stmt, array, outs_all, extra)
        model = model_of(op)
        clips = model is not None and model.clips
        reach = (
            self._through_loops(stmt, array, outs_all, reach_extra)
            if reach_extra is not None and not clips
            else None
        )
        return Access(
            array,
            rel,
            write,
            may,
            op,
            exact,
            approximation if may else "",
            data,
            reach=reach,
            data_dims=data_dims,
            clips=clips,
        )

    def virtual_access(
        self, stmt: str, array: str, def_site: Site, write: bool, op: Operation
    ) -> Access:
        """Element of a virtual array: the iteration of the loops around its definition."""
        subs = [self.var.get(lp) for lp in def_site.loops]
        if any(s is None for s in subs):
            # The definition's loops do not all enclose this statement.
            self.b.unsupported_op(
                op,
                f"{op.name} uses a value defined in a loop that does not enclose it",
                "this happens when the recipe moves a statement out of the loop that "
                "computes its operands; keep uses inside that loop",
            )
            subs = []
        outs = [f"_a{d}" for d in range(len(subs))]
        extra = [f"{o} = {s}" for o, s in zip(outs, subs, strict=True)]
        return Access(array, self._through_loops(stmt, array, outs, extra), write, False, op)


@functools.lru_cache(maxsize=4096)
def parse_map(text: str) -> isl.Map:
    """The isl map of `text`, coalesced. Cached: the nests of one function repeat the
    same relations over the same loop variables, and isl's parser takes about half a
    millisecond a map (islpy's maps are values: no operation changes one in place)."""
    try:
        return isl.Map(text).coalesce()
    except isl.Error as e:  # pragma: no cover - an internal bug, not user input
        raise AssertionError(f"polykrnl built an invalid isl map: {text}") from e


def dim_size(op: Operation, exprs: Exprs) -> str | None:
    """`dim %mem, %d`: a static size, or the parameter of a dynamic size of an argument."""
    # Registered in the op table, which knows expressions by their protocol; the
    # parameter of a size is the builder's to make.
    expr = cast(Expr, exprs)
    mem, idx = op.operands[0], const_int(op.operands[1])
    t = mem.type
    if idx is not None and isinstance(t, MemRefType):
        size = t.get_shape()[idx]
        if size >= 0:
            return str(size)
        b = expr.b
        if mem in b.func_args:
            p = b.dim_param(mem, idx)
            b.param_of.setdefault(op.results[0], p)
            return p
    return None
