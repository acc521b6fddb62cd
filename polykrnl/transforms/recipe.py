"""The recipe interpreter: a Krnl function's block/permute/parallel/unroll ops as primitives.

``schedule(fn)`` starts from the original loops (the `with` lists, every
statement inside the innermost loop of its chain) and applies the function's
recipe ops in program order through the same primitives
(:mod:`polykrnl.transforms.primitives`) that Python users call, so the Krnl
text and the Python API cannot disagree.
Krnl places statements after the whole recipe (a body goes into the loop of
the last handle of its iterate's list; onnx-mlir carries statements in
``krnl.movable`` regions until then); so does this interpreter, last.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
from polykrnl.dialect.std_ext import MaxOp
from polykrnl.errors import ScheduleError, UnsupportedError
from polykrnl.ir import Function, location_of
from polykrnl.nest.loops import IVBound, Loop, MapBound
from polykrnl.poly import POLY, PLoop, PNode, PolyProgram, PStmt, Statement, poly_program
from polykrnl.transforms.bounds import Bound, Ref
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
from polykrnl.transforms.primitives.block import block
from polykrnl.transforms.primitives.parallel import parallel
from polykrnl.transforms.primitives.permute import permute
from polykrnl.transforms.primitives.trivialize import trivialize
from polykrnl.transforms.primitives.unroll import unroll


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
    base = _base(program)
    # Each top-level nest gets its recipe on its own (recipe ops name the loops of
    # one nest), so that applying it costs time in proportion to that nest only.
    parts: list[Schedule] = []
    part_of: dict[str, int] = {}
    for n, node in enumerate(base.nodes):
        inside = [x.name for x in _loops_of((node,))]
        parts.append(Schedule(program, (node,), {x: base.loop_info[x] for x in inside}))
        part_of.update(dict.fromkeys(inside, n))
    steps: list[Step] = []
    names = program.handle_names
    for op in fn.op.walk():
        handles: tuple[SSAValue, ...] = ()
        if isinstance(op, k.BlockOp | k.UnrollOp):
            handles = (op.loop,)
        elif isinstance(op, k.PermuteOp | k.ParallelOp):
            handles = tuple(op.loops)
        if not handles or handles[0] not in names or names[handles[0]] not in part_of:
            continue
        n = part_of[names[handles[0]]]
        sched = parts[n]
        try:
            if isinstance(op, k.BlockOp):
                tile, point = names[op.loop_block], names[op.loop_local]
                sched = block(sched, names[op.loop], op.size, names=(tile, point))
                part_of[tile] = part_of[point] = n
            elif isinstance(op, k.PermuteOp):
                sched = permute(sched, [names[h] for h in op.loops], op.perm)
            elif isinstance(op, k.ParallelOp):
                sched = parallel(sched, *(names[h] for h in op.loops))
            elif isinstance(op, k.UnrollOp):
                sched = unroll(sched, names[op.loop])
        except ScheduleError as e:
            raise ScheduleError(
                f"{op.name}: {e.message}", location=location_of(op, fn.module), hint=e.hint
            ) from None
        parts[n] = sched
        steps.append(replace(sched.steps[-1], location=location_of(op, fn.module)))
    for lp, name in program.loop_names.items():
        if lp.trivial and name in part_of and name in parts[part_of[name]].loop_info:
            n = part_of[name]
            parts[n] = trivialize(parts[n], name)
            steps.append(parts[n].steps[-1])
    loop_info = {x: i for part in parts for x, i in part.loop_info.items()}
    # Statements go where Krnl puts them: the program's nest.
    nodes = _snodes(program.tree)
    present = {n.name for n in _loops_of(nodes)}
    infos = {n: i for n, i in loop_info.items() if n in present}
    # Legality is judged against the order before the loops were permuted.
    permuted = any(isinstance(op, k.PermuteOp) for op in fn.op.walk())
    reference = UnpermutedOrder(fn, program) if permuted else None
    return cls(program, nodes, infos, tuple(steps), reference, recipe_steps=len(steps))


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
    by_name: dict[str, Statement],
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


def _base(program: PolyProgram) -> Schedule:
    """The original loops of every chain, with all its statements in the innermost one."""
    infos: dict[str, LoopInfo] = {}
    by_name = {s.name: s for s in program.statements}

    def collapse(nodes: Sequence[PNode]) -> list[SNode]:
        out: list[SNode] = []
        for n in nodes:
            if isinstance(n, PStmt):
                out.append(SStmt(n.name))
                continue
            iterate = n.loop.origin.iterate
            inner: list[SNode] = []
            _gather(n, iterate, inner, collapse)
            body: tuple[SNode, ...] = tuple(inner)
            stmts = [s for s in _stmt_names(body)]
            for e in reversed(iterate.entries):
                origin = program.nest.origins[e.handle]
                name = program.handle_names[e.handle]
                plain = Loop(
                    origin,
                    "loop",
                    e.handle,
                    (MapBound(e.lb_map, e.lb_operands),),
                    (MapBound(e.ub_map, e.ub_operands),),
                    1,
                )
                infos[name] = _info(program, plain, name, stmts, by_name)
                body = (SLoop(name, body),)
            out.extend(body)
        return out

    return Schedule(program, tuple(collapse(program.tree)), infos)


def _gather(
    node: PLoop,
    iterate: k.IterateOp,
    into: list[SNode],
    collapse: Callable[[Sequence[PNode]], list[SNode]],
) -> None:
    """What runs inside the loops of `iterate`'s chain (nested chains collapsed too)."""
    for b in node.body:
        if isinstance(b, PLoop) and b.loop.origin.iterate is iterate:
            _gather(b, iterate, into, collapse)
        else:
            into.extend(collapse([b]))


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
