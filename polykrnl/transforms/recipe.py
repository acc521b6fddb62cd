"""The schedule of a Krnl function's recipe (its block/permute/parallel/unroll ops).

The recipe is applied once, by the loop nest (:mod:`polykrnl.nest.loops`),
which the polyhedral model reads. ``schedule(fn)`` turns that nest into a
Schedule: each loop of the nest (original, tile or point, with its marks)
becomes a LoopInfo, its bounds schedule bounds and its values isl values
computed from the loop it was split from; each recipe op becomes a Step, as
the primitive Python users call would record it (a replay of the steps
through :mod:`polykrnl.transforms.primitives` makes the same schedule:
``tests/transforms/test_recipe_agreement.py`` holds the two to it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

import islpy as isl
from xdsl.dialects import affine, arith, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import Operation, OpResult, SSAValue
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
from polykrnl.dialect.krnl import recipe as rules
from polykrnl.dialect.std_ext import MaxOp
from polykrnl.errors import ScheduleError, UnsupportedError
from polykrnl.ir import Function, location_of
from polykrnl.nest.loops import IVBound, Loop, MapBound, Origin
from polykrnl.poly import POLY, PLoop, PNode, PolyProgram, PStmt, Statement, poly_program
from polykrnl.transforms.bounds import Bound, Ref, const_on, eval_affine, param_on
from polykrnl.transforms.core import (
    LoopInfo,
    Schedule,
    ScheduleT,
    SLoop,
    SNode,
    SStmt,
    Step,
    UnpermutedOrder,
)
from polykrnl.transforms.legality import check, refuse_if_illegal
from polykrnl.transforms.primitives.block import simplest_point_ubs, tile_start


def schedule(fn: Function, *, force: bool = False) -> Schedule:
    """The Schedule of `fn` after its Krnl recipe.

    Raises IllegalTransformError (located at the recipe op responsible) when the
    recipe breaks a dependence, unless `force=True`.
    """
    return schedule_as(Schedule, fn, force=force)


def schedule_as(cls: type[ScheduleT], fn: Function, *, force: bool = False) -> ScheduleT:
    """schedule(fn), made a `cls` (polykrnl.Schedule for users)."""
    sched = schedule_of(fn, cls, recipe=True)
    # Blocks and unrolls keep the order of every instance: only permutes and
    # parallel loops can make a recipe illegal.
    # The whole report, not only the verdict: it stays with the schedule, and code
    # generation asks for it next (legality runs once per pipeline).
    judged = not force and any(st.op in ("permute", "parallel") for st in sched.steps)
    # A recipe that is only not proven legal is the program as written: kept, and code
    # generation runs in parallel only the loops legality proves parallel.
    if judged and check(sched).verdict == "illegal":
        refuse_if_illegal(
            sched,
            f"the Krnl recipe of @{fn.name}",
            cli_hint="`polykrnl check` explains, and `polykrnl lower` and `trace` show "
            "the recipe's loops anyway; to emit or run code, change the recipe in the "
            "Krnl text",
        )
    return sched


def schedule_of(fn: object, cls: type[ScheduleT], recipe: bool = True) -> ScheduleT:
    """The `cls` of `fn`: after its Krnl recipe, or in original order (recipe=False)."""
    if not isinstance(fn, Function):
        raise TypeError(f"expected a polykrnl Function (module['name']), got {type(fn).__name__}")
    program = poly_program(fn, recipe=recipe)
    if not recipe:
        return _as_written(program, cls)
    # The loop nest applied the recipe once: its loops become the schedule's loops, and
    # its recipe ops the steps (a replay starts from this schedule).
    loops = _NestLoops(program)
    steps = _recipe_steps(fn, program, loops)
    infos = {n.name: loops.final(n.loop) for n in _ploops(program.tree)}
    # Legality is judged against the order before the loops were permuted.
    permuted = any(isinstance(op, k.PermuteOp) for op in fn.op.walk())
    reference = UnpermutedOrder(fn, program) if permuted else None
    return cls(
        program, _snodes(program.tree), infos, tuple(steps), reference, recipe_steps=len(steps)
    )


class _NestLoops:
    """The LoopInfo of each loop of a program's nest, from the loop its krnl.block split.

    An original loop's values are the statements' dimension of it; a tile loop's, the
    start of each value's tile; a point loop carries the value of the loop it was split
    from. Bounds are the nest's, as schedule bounds.
    """

    def __init__(self, program: PolyProgram) -> None:
        self.program = program
        by_name = program.statement_map
        order = _stmt_names(_snodes(program.tree))
        # Every statement the loops of an original loop enclose has a dimension for it.
        self.stmts_of: dict[str, list[str]] = {}
        for s in order:
            for origin in by_name[s].dim_origins:
                self.stmts_of.setdefault(origin, []).append(s)
        self.infos: dict[Loop, LoopInfo] = {}
        self.vid_values: dict[str, Mapping[str, isl.PwAff]] = {}
        # The original loops of the iterates whose loops run, first (blocking a loop
        # reads the values of the loops its bounds use).
        self.iterates: dict[k.IterateOp, None] = {}
        for n in _ploops(program.tree):
            self.iterates.setdefault(n.loop.origin.iterate)
        for it in self.iterates:
            for e in it.entries:
                self.info(_original(program.nest.origins[e.handle]))

    def final(self, lp: Loop) -> LoopInfo:
        """The loop as the schedule has it: a point loop never named runs once."""
        info = self.info(lp)
        if not lp.trivial:
            return info
        zero = {s: const_on(v.domain(), 0) for s, v in info.values.items()}
        return replace(
            info, lbs=(Bound.const(0),), ubs=(Bound.const(1),), values=zero, trivial=True
        )

    def trip_count_refusal(self, handle: SSAValue) -> rules.Refusal | None:
        """Why krnl.unroll cannot unroll the loop of `handle` as it is at the op (None: it
        can): only a point loop or a loop with a constant trip count unrolls."""
        every = {lp.handle: lp for final in self.program.loop_names for lp in _split_chain(final)}
        info = self.info(every[handle])
        # The loops so far, the loops that carry a value now last (bounds name them).
        known = {i.name: i for i in self.infos.values()}
        known.update({i.name: i for lp, i in self.infos.items() if lp in self.program.loop_names})
        sched = Schedule(self.program, (), known)
        if sched.trip_info(info)[0] is not None or sched.tile_of(info.name) is not None:
            return None
        bounds = f"for %{info.name} = {sched.format_bounds(info)}"
        return rules.no_trip_count_refusal(repr(info.name), bounds=bounds)

    def info(self, lp: Loop) -> LoopInfo:
        found = self.infos.get(lp)
        if found is None:
            found = self.infos[lp] = self._made(lp)
            self.vid_values.setdefault(found.vid, found.values)
        return found

    def _made(self, lp: Loop) -> LoopInfo:
        program = self.program
        name = program.handle_names[lp.handle]
        if lp.split_from is None:
            stmts = self.stmts_of.get(name, [])
            info = _info(program, lp, name, stmts, program.statement_map)
            return replace(info, parallel=lp.parallel, unroll=lp.unroll)
        blocked = self.info(lp.split_from)
        # A tile loop keeps the bounds of the loop it was split from, and a point loop
        # ends there too, as the schedule writes them (simplified, for a point loop).
        if lp.kind == "tile":
            values = {
                s: tile_start(v, self._lower(blocked, s), lp.step)
                for s, v in blocked.values.items()
            }
            return LoopInfo(
                name,
                "tile",
                name,
                blocked.origin,
                blocked.lbs,
                blocked.ubs,
                lp.step,
                values,
                lp.tile_size,
                parallel=lp.parallel,
                unroll=lp.unroll,
            )
        # The nest's point loop runs from its tile's value to min(tile + stride, UB...).
        (tile,) = (b.loop for b in lp.lbs if isinstance(b, IVBound))
        lbs = self._bounds(lp, lp.lbs, lower=True)
        end = self._bounds(lp, lp.ubs[:1], lower=False)
        tile_info = self.info(tile)
        ubs = simplest_point_ubs(blocked, tile_info.vid, tile_info.step, (*end, *blocked.ubs))
        return replace(
            blocked,
            name=name,
            kind="point",
            lbs=lbs,
            ubs=ubs,
            tile_size=None,
            parallel=lp.parallel,
            unroll=lp.unroll,
        )

    def _bounds(
        self, lp: Loop, bounds: Sequence[MapBound | IVBound], lower: bool
    ) -> tuple[Bound, ...]:
        out: list[Bound] = []
        for b in bounds:
            if isinstance(b, IVBound):
                out.append(Bound.value_plus(self.info(b.loop).vid, b.offset))
            else:
                out += _bounds(self.program, (b,), lp, lower)
        return tuple(out)

    def _lower(self, info: LoopInfo, stmt: str) -> isl.PwAff:
        """The greatest lower bound of loop `info` for the instances of `stmt`."""
        dom = self.program.statement_map[stmt].domain
        out: isl.PwAff | None = None
        for b in info.lbs:
            args: list[isl.PwAff] = []
            for r in b.operands:
                if r.kind == "const":
                    args.append(const_on(dom, r.value))
                elif r.kind == "param":
                    args.append(param_on(dom, r.name))
                else:
                    args.append(self.vid_values[r.name][stmt])
            v = eval_affine(b.expr, args, dom)
            out = v if out is None else out.max(v)
        assert out is not None, f"loop {info.name} has no lower bound"
        return out


def _original(origin: Origin) -> Loop:
    """The loop of a `with` entry, before any krnl.block split it."""
    assert origin.carrier is not None
    return _split_chain(origin.carrier)[-1]


def _split_chain(lp: Loop) -> list[Loop]:
    """`lp`, the loop a krnl.block split into it, and so on up to an original loop."""
    out = [lp]
    while out[-1].split_from is not None:
        out.append(out[-1].split_from)
    return out


def _ploops(nodes: Sequence[PNode]) -> Iterator[PLoop]:
    for n in nodes:
        if isinstance(n, PLoop):
            yield n
            yield from _ploops(n.body)


def _recipe_steps(fn: Function, program: PolyProgram, loops: _NestLoops) -> list[Step]:
    """The steps of `fn`'s recipe ops on the loops that run, each where its op is.

    The nest refused most misuses already; the marks it does not check (a loop made
    parallel or unrolled twice, or both, blocked once unrolled, unrolled without a
    constant trip count) are refused here as the primitives refuse them.
    """
    names = program.handle_names
    live = {names[e.handle] for it in loops.iterates for e in it.entries}
    marked: dict[str, type[Operation]] = {}  # loop -> the kind of op that marked it
    steps: list[Step] = []
    for op in fn.op.walk():
        handles: tuple[SSAValue, ...] = ()
        if isinstance(op, k.BlockOp | k.UnrollOp):
            handles = (op.loop,)
        elif isinstance(op, k.PermuteOp | k.ParallelOp):
            handles = tuple(op.loops)
        if not handles or handles[0] not in names or names[handles[0]] not in live:
            continue
        loop_names = tuple(names[h] for h in handles)
        refusal = _mark_refusal(op, loop_names, marked, loops)
        if refusal is not None:
            raise ScheduleError(
                f"{op.name}: {refusal.message}",
                location=location_of(op, fn.module),
                hint=refusal.hint,
            )
        where = location_of(op, fn.module)
        if isinstance(op, k.BlockOp):
            made = (names[op.loop_block], names[op.loop_local])
            live.update(made)
            steps.append(Step("block", loop_names, size=op.size, names=made, location=where))
        elif isinstance(op, k.PermuteOp):
            steps.append(Step("permute", loop_names, perm=tuple(op.perm), location=where))
        else:
            steps.append(
                Step(
                    "parallel" if isinstance(op, k.ParallelOp) else "unroll",
                    loop_names,
                    location=where,
                )
            )
            marked.update(dict.fromkeys(loop_names, type(op)))
    for lp, name in program.loop_names.items():
        if lp.trivial and name in live:
            steps.append(Step("trivial", (name,)))
    return steps


def _mark_refusal(
    op: Operation, loops: tuple[str, ...], marked: Mapping[str, type[Operation]], nest: _NestLoops
) -> rules.Refusal | None:
    """Why a recipe op cannot apply to loops marked so far (None: it can)."""
    quoted = [repr(x) for x in loops]
    if isinstance(op, k.BlockOp) and marked.get(loops[0]) is k.UnrollOp:
        return rules.unrolled_block_refusal(quoted[0])
    if not isinstance(op, k.ParallelOp | k.UnrollOp):
        return None
    if isinstance(op, k.ParallelOp) and (twice := rules.listed_twice(quoted, op.name)):
        return twice
    for name, shown in zip(loops, quoted, strict=True):
        if marked.get(name) is type(op):
            return rules.twice_refusal(op.name, shown)
        if name in marked:
            return rules.parallel_unroll_refusal(op.name, shown)
    if isinstance(op, k.UnrollOp):
        return nest.trip_count_refusal(op.loop)
    return None


def _loops_of(nodes: Sequence[SNode]) -> list[SLoop]:
    out: list[SLoop] = []
    for n in nodes:
        if isinstance(n, SLoop):
            out.append(n)
            out += _loops_of(n.body)
    return out


def _snodes(nodes: Sequence[PNode]) -> tuple[SNode, ...]:
    return tuple(
        SLoop(n.name, _snodes(n.body)) if isinstance(n, PLoop) else SStmt(n.name) for n in nodes
    )


def _stmts_below(node: PNode) -> list[str]:
    if isinstance(node, PStmt):
        return [node.name]
    return [s for b in node.body for s in _stmts_below(b)]


def _dim_value(stmt: Statement, vid: str) -> isl.PwAff | None:
    """The value of loop value `vid` for `stmt`'s instances, if it is one of its dims."""
    for pos in range(len(stmt.dims)):
        if stmt.dim_origins[pos] == vid:
            ls = isl.LocalSpace.from_space(stmt.domain.get_space())
            aff = isl.Aff.var_on_domain(ls, isl.dim_type.set, pos)
            return isl.PwAff.from_aff(aff).intersect_domain(stmt.domain)
    return None


def _info(
    program: PolyProgram,
    lp: Loop,
    name: str,
    stmts: list[str],
    by_name: Mapping[str, Statement],
) -> LoopInfo:
    """LoopInfo of an original loop (from its `with` entry)."""
    values: dict[str, isl.PwAff] = {}
    for s in stmts:
        v = _dim_value(by_name[s], name)
        if v is not None:
            values[s] = v
    lbs = _bounds(program, lp.lbs, lp, lower=True)
    ubs = _bounds(program, lp.ubs, lp, lower=False)
    return LoopInfo(name, "loop", name, name, lbs, ubs, lp.step, values)


def _as_written(program: PolyProgram, cls: type[ScheduleT]) -> ScheduleT:
    """The schedule of a program whose nest has no recipe applied."""
    infos: dict[str, LoopInfo] = {}
    by_name = {s.name: s for s in program.statements}

    def walk(nodes: Sequence[PNode]) -> None:
        for n in nodes:
            if isinstance(n, PLoop):
                infos[n.name] = _info(program, n.loop, n.name, _stmts_below(n), by_name)
                walk(n.body)

    walk(program.tree)
    return cls(program, _snodes(program.tree), infos)


def _stmt_names(nodes: Sequence[SNode]) -> list[str]:
    out: list[str] = []
    for n in nodes:
        if isinstance(n, SStmt):
            out.append(n.name)
        else:
            out += _stmt_names(n.body)
    return out


# ------------------------------------------------------------------ bounds


def _bounds(
    program: PolyProgram, bounds: Sequence[MapBound | IVBound], lp: Loop, lower: bool
) -> tuple[Bound, ...]:
    out: list[Bound] = []
    for b in (x for bd in bounds for x in _spread(program, bd, lower)):
        if isinstance(b, IVBound):  # pragma: no cover - original loops have map bounds
            out.append(Bound.value_plus(program.loop_names[b.current], b.offset))
            continue
        m = b.map
        refs: list[Ref] = []
        exprs: list[AffineExpr] = []
        for v in b.operands:
            e, more = _operand(program, v, len(refs), lp)
            exprs.append(e)
            refs += more
        for r in m.results:
            out.append(Bound(_substitute(r, exprs, m.num_dims), tuple(refs)))
    return tuple(out)


def _spread(program: PolyProgram, b: MapBound | IVBound, lower: bool) -> list[MapBound | IVBound]:
    """`b` as several bounds when an operand is the least (of an upper bound) or the
    greatest (of a lower bound) of several affine values, and `b` grows with it.

    A loop runs below each of its upper bounds and above each lower bound, so
    `to f(affine.min(g1, g2))` is exactly `to min(f(g1), f(g2))` for a non-decreasing `f`.
    """
    if isinstance(b, IVBound):  # pragma: no cover - original loops have map bounds
        return [b]
    m, n = b.map, len(b.operands)
    for at, v in enumerate(b.operands):
        if v in program.symbols or not isinstance(v, OpResult):
            continue
        if not isinstance(v.op, MaxOp if lower else affine.MinOp):
            continue
        pos = AffineDimExpr(at) if at < m.num_dims else AffineSymExpr(at - m.num_dims)
        growth = {_growth(r, pos) for r in m.results}
        if not growth <= {0, 1}:
            continue  # the bound does not grow with it
        inner_map = v.op.map.data
        kept = (*b.operands[:at], *b.operands[at + 1 :])  # the value gives way to its operands
        inner_args = [AffineDimExpr(n - 1 + i) for i in range(len(v.op.operands))]
        out: list[MapBound | IVBound] = []
        for g in inner_map.results:
            args: list[AffineExpr] = [AffineDimExpr(i - (i > at)) for i in range(n)]
            args[at] = _substitute(g, inner_args, inner_map.num_dims)
            results = tuple(_substitute(r, args, m.num_dims) for r in m.results)
            operands = (*kept, *v.op.operands)
            whole = MapBound(AffineMap(len(operands), 0, results), operands)
            out += _spread(program, whole, lower)
        return out
    return [b]


def _growth(e: AffineExpr, x: AffineExpr) -> int | None:
    """1 if `e` never decreases as `x` grows, -1 if it never increases, 0 if `e` does
    not use `x`, None if it does both (a `mod`, a product of two unknowns)."""
    if isinstance(e, AffineDimExpr | AffineSymExpr):
        return 1 if e == x else 0
    if not isinstance(e, AffineBinaryOpExpr):
        return 0
    lhs, rhs = _growth(e.lhs, x), _growth(e.rhs, x)
    if e.kind == AffineBinaryOpKind.Add:
        if lhs is None or rhs is None or lhs * rhs < 0:
            return None
        return lhs or rhs
    if e.kind == AffineBinaryOpKind.Mul:
        for var, const in ((lhs, e.rhs), (rhs, e.lhs)):
            if isinstance(const, AffineConstantExpr):
                sign = (const.value > 0) - (const.value < 0)
                return None if var is None else var * sign
        return None if lhs or rhs else 0
    if e.kind in (AffineBinaryOpKind.FloorDiv, AffineBinaryOpKind.CeilDiv):
        if isinstance(e.rhs, AffineConstantExpr) and e.rhs.value > 0:
            return lhs
        return None if lhs or rhs else 0
    return None if lhs or rhs else 0  # mod


def _substitute(e: AffineExpr, args: Sequence[AffineExpr], ndims: int) -> AffineExpr:
    if isinstance(e, AffineDimExpr):
        return args[e.position]
    if isinstance(e, AffineSymExpr):
        return args[ndims + e.position]
    if isinstance(e, AffineBinaryOpExpr):
        return AffineBinaryOpExpr(
            e.kind, _substitute(e.lhs, args, ndims), _substitute(e.rhs, args, ndims)
        )
    return e


def _operand(
    program: PolyProgram, v: SSAValue, first: int, lp: Loop
) -> tuple[AffineExpr, list[Ref]]:
    """A bound operand as an expression over new dims numbered from `first`."""
    nest = program.nest
    if isinstance(v, OpResult) and isinstance(v.op, arith.ConstantOp):
        val = v.op.value
        if isinstance(val, IntegerAttr):
            return AffineConstantExpr(int(val.value.data)), []
    if v in nest.origin_of_iv:
        origin = nest.origin_of_iv[v]
        return AffineDimExpr(first), [Ref("value", program.handle_names[origin.entry.handle])]
    if isinstance(v, OpResult) and isinstance(v.op, k.GetInductionVarValueOp):
        h = v.op.operands[v.index]
        if h in program.handle_names:
            return AffineDimExpr(first), [Ref("value", program.handle_names[h])]
    if v in program.symbols:
        return AffineDimExpr(first), [Ref("param", program.symbols[v])]
    if isinstance(v, OpResult) and (model := POLY.get(v.op)) is not None and model.index_final:
        return _operand(program, v.op.operands[0], first, lp)  # a cast keeps the value
    if isinstance(v, OpResult) and isinstance(v.op, memref.DimOp | k.DimOp):
        t = v.op.operands[0].type
        idx = v.op.operands[1]
        if (
            isinstance(t, MemRefType)
            and isinstance(idx, OpResult)
            and isinstance(idx.op, arith.ConstantOp)
            and isinstance(idx.op.value, IntegerAttr)
        ):
            size = t.get_shape()[int(idx.op.value.value.data)]
            if size >= 0:
                return AffineConstantExpr(size), []
    if isinstance(v, OpResult) and isinstance(v.op, affine.ApplyOp):
        m = v.op.map.data
        refs: list[Ref] = []
        args: list[AffineExpr] = []
        for x in v.op.operands:
            e, more = _operand(program, x, first + len(refs), lp)
            args.append(e)
            refs += more
        return _substitute(m.results[0], args, m.num_dims), refs
    if isinstance(v, OpResult) and isinstance(v.op, arith.AddiOp | arith.SubiOp | arith.MuliOp):
        lhs, r1 = _operand(program, v.op.operands[0], first, lp)
        rhs, r2 = _operand(program, v.op.operands[1], first + len(r1), lp)
        if isinstance(v.op, arith.AddiOp):
            return lhs + rhs, r1 + r2
        if isinstance(v.op, arith.SubiOp):
            return lhs - rhs, r1 + r2
        if isinstance(lhs, AffineConstantExpr) or isinstance(rhs, AffineConstantExpr):
            return lhs * rhs, r1 + r2
    op: Operation = lp.origin.iterate
    raise UnsupportedError(
        "a loop bound uses a value polykrnl cannot express as an affine function of "
        "parameters and enclosing loops",
        location=location_of(op, program.function.module),
        hint="compute bounds from constants, index arguments, memref.dim, enclosing "
        "induction variables and affine.apply",
    )
