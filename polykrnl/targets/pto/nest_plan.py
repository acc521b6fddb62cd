"""One top-level nest of the schedule: its tile loops become C++ loops over global offsets,
its point loops the tile's axes; the body goes to the pattern that fits (tile-buffer
copies, the matmul flow, or tile-wise statements) once the legality analysis allows
running it statement after statement."""

from __future__ import annotations

from collections.abc import Sequence, Set
from dataclasses import dataclass, replace

import sympy  # type: ignore[import-untyped]

from polykrnl.dialect.krnl import MemsetOp
from polykrnl.poly import Statement
from polykrnl.targets.pto.layouts import conversion_of, lower_conversion
from polykrnl.targets.pto.loop_bounds import bounds_expr, int_symbol, static_value
from polykrnl.targets.pto.lowering_state import Axis, KernelBuilder, lowering_error
from polykrnl.targets.pto.matmul import (
    check_krnl_matmul,
    cube_flow,
    krnl_matmul_of,
    lower_matmul,
    matmul_form,
)
from polykrnl.targets.pto.program import GlobalView, Instr, Item, Loop, SetValid, walk
from polykrnl.targets.pto.tile_buffers import lower_tile_buffers
from polykrnl.targets.pto.tilewise import lower_tilewise
from polykrnl.transforms import legality
from polykrnl.transforms.core import LoopInfo, Schedule, SLoop, SNode, SStmt

__all__ = [
    "first_statement",
    "lower_group",
    "lower_krnl_matmul",
    "lower_nest",
    "statements_in",
]


@dataclass
class _NestPlan:
    """One top-level nest, taken apart: its tile loops (outermost first), the tile axes of
    its original loops, the point loops' origins (rows first) and its statements."""

    node: SNode
    tile_loops: list[LoopInfo]
    values: dict[str, sympy.Expr]
    axes: dict[str, Axis]
    order: list[str]
    point_nodes: tuple[SNode, ...]
    statements: list[Statement]


def lower_nest(b: KernelBuilder, node: SNode, zeroed: Statement | None = None) -> list[Item]:
    """One top-level nest: C++ loops over its tiles around the tile-wise body (or, for a
    nest that moves a whole tensor into a convolution layout, one TTRANS). `zeroed`: the
    `krnl.memset` of 0 right before the nest, into what it writes (a krnl.matmul's C, a
    padded conversion's destination)."""
    statements = [b.sched.statements[n] for n in statements_in((node,))]
    conv = conversion_of(b, statements) if isinstance(node, SLoop) else None
    if conv is not None:
        blocked = [x for x in _loops_in((node,)) if b.sched.loop(x).kind == "tile"]
        if blocked:
            raise lowering_error(
                statements[0],
                f"a layout conversion ({conv.form.src_layout.name} -> "
                f"{conv.form.dst_layout.name}) with blocked loops ({', '.join(blocked)}): "
                "TTRANS converts the whole tensor in one ConvTile",
                hint="remove the krnl.block of this nest",
            )
        return lower_conversion(b, conv, statements[0], zeroed is not None)
    plan = _plan(b, node)
    if krnl_matmul_of(b, plan.statements) is not None:
        return lower_krnl_matmul(b, node, zeroed)
    _check_distribution(b, plan.point_nodes, plan.statements)
    if not plan.order:
        items = lower_tile_buffers(b, plan.values, plan.statements)
    elif any(matmul_form(b, x) is not None for x in plan.statements):
        items = lower_matmul(b, plan.axes, plan.order, plan.statements)
    else:
        items = lower_tilewise(b, plan.axes, plan.order, plan.statements)
    return _tile_loops(plan, items)


def lower_krnl_matmul(b: KernelBuilder, node: SNode, zeroed: Statement | None) -> list[Item]:
    """onnx-mlir's matmul: `krnl.matmul` in the tile loops of i, j and k: the cube flow in
    each (i, j) tile, over the k tiles. After `krnl.memset C, 0` (`zeroed`) the sum is
    stored into C, otherwise added to what C holds (krnl.matmul's C += A * B)."""
    plan = _plan(b, node)
    op = krnl_matmul_of(b, plan.statements)
    assert op is not None
    s = plan.statements[0]
    names, axes = check_krnl_matmul(b, s, op, plan.tile_loops, plan.axes)
    # lower() passes `zeroed` only for a memset of this matmul's C (_zeroes_next)
    items = cube_flow(b, s, names, axes, accumulate=zeroed is None)
    k_loop = axes[2].tile_loop
    return _tile_loops(
        replace(plan, tile_loops=[x for x in plan.tile_loops if x is not k_loop]), items
    )


def lower_group(b: KernelBuilder, nodes: Sequence[SNode], temps: Set[str]) -> list[Item]:
    """Nests that share temporaries (`temps`) as one loop over row tiles, each tile running
    the nests' bodies in order; the temporaries live in UB.

    Legal when every nest runs over the same row tiles and each row tile needs only its
    own rows of what earlier nests computed: the temporaries are read and written at the
    row (and column) being computed, and a tensor written in the group is accessed at one
    window only (checked where the accesses are lowered, naming the two accesses that
    break it). Then fusing only moves whole tiles of later nests before later tiles of
    earlier ones, which touch other rows.
    """
    sched = b.sched
    stray = next(
        (n for n in nodes if isinstance(n, SStmt) and not _memset_of_temporary(b, n, temps)),
        None,
    )
    if stray is not None:
        raise lowering_error(
            sched.statements[stray.name],
            "a statement outside every loop between nests that share a temporary",
            hint="only a krnl.memset of a constant into one of the temporaries may stand "
            "between them",
        )
    # A memset of a temporary is the value its rows start from in every row tile: it runs
    # in the fused body where it stands (tilewise), with no instruction of its own.
    plans = [_plan(b, n) for n in nodes if isinstance(n, SLoop)]
    if not plans:
        return []
    first = plans[0]
    for p in plans:
        _check_distribution(b, p.point_nodes, p.statements)
        if not p.order or any(matmul_form(b, x) is not None for x in p.statements):
            raise lowering_error(
                p.statements[0],
                "a matmul or tile-buffer nest shares a temporary with other nests: only "
                "tile-wise nests (elementwise ops, row reductions) are fused",
            )
    # The row tiles: the same tile loops (sizes and bounds) in every nest, over the rows.
    rename: dict[sympy.Symbol, sympy.Expr] = {}
    for p in plans[1:]:
        if not _same_tiling(first, p, rename):
            raise lowering_error(
                p.statements[0],
                f"this nest shares temporaries ({', '.join(sorted(temps))}) with the nest of "
                f"{first.statements[0].label} but is tiled differently (fused nests need the "
                "same row blocking)",
                hint="block the row loops of all these nests by the same size, or none",
            )
    row = first.axes[first.order[0]]
    alias: dict[str, str] = {}
    col: Axis | None = None
    for p in plans:
        alias[p.order[0]] = row.origin
        r = p.axes[p.order[0]]
        if not _same_axis(r, row, rename):
            raise lowering_error(
                p.statements[0],
                f"row loop {r.origin} runs over other rows than {row.origin} of "
                f"{first.statements[0].label} (fused nests need the same rows)",
            )
        for o in p.order[1:]:
            c = p.axes[o]
            if col is None:
                col = c
            elif not _same_axis(c, col, rename):
                raise lowering_error(
                    p.statements[0],
                    f"column loops {col.origin} and {c.origin} run over different ranges "
                    "(one tile has one column range)",
                )
            alias[o] = col.origin
    axes = {row.origin: row, **({col.origin: col} if col is not None else {})}
    order = [row.origin, *([col.origin] if col is not None else [])]
    by_node = iter(plans)
    statements = [
        x
        for n in nodes
        for x in (next(by_node).statements if isinstance(n, SLoop) else [sched.statements[n.name]])
    ]
    items = lower_tilewise(b, axes, order, statements, alias=alias, temps=temps)
    return _tile_loops(first, items)


def _memset_of_temporary(b: KernelBuilder, node: SStmt, temps: Set[str]) -> bool:
    """Whether `node` is a `krnl.memset` of one of `temps` (the fused group's temporaries)."""
    op = b.sched.statements[node.name].anchor
    return isinstance(op, MemsetOp) and b.sched.program.array_names.get(op.dest) in temps


def _tile_loops(plan: _NestPlan, items: list[Item]) -> list[Item]:
    """`items` inside the nest's tile loops; loads that are the same in every tile (a
    per-column scale or bias) go before them."""
    before, items = _invariant_loads(items, {x.name for x in plan.tile_loops})
    for info in reversed(plan.tile_loops):
        lb = bounds_expr(info.lbs, {}, f"lower bound of {info.name}", True)
        ub = bounds_expr(info.ubs, {}, f"upper bound of {info.name}", False)
        items = [
            Loop(info.name, lb, ub, info.tile_size or 1, items, comment=f"tiles of {info.origin}")
        ]
    return before + items


def _invariant_loads(items: list[Item], loop_vars: set[str]) -> tuple[list[Item], list[Item]]:
    """(the TLOADs of `items` that every iteration of the loops over `loop_vars` repeats
    unchanged, the rest). A load qualifies when its window does not use the loop variables,
    nothing else in the body writes its tile or changes its valid shape, and the body does
    not store into its tensor."""
    if not loop_vars:
        return [], items
    flat = list(walk(items))
    stored = {x.dst.tensor for x in flat if isinstance(x, Instr) and isinstance(x.dst, GlobalView)}
    reshaped = {x.tile for x in flat if isinstance(x, SetValid)}
    writers: dict[str, int] = {}
    for x in flat:
        if isinstance(x, Instr):
            for t in x.tiles_written():
                writers[t] = writers.get(t, 0) + 1
    hoisted: list[Item] = []
    for x in items:
        if not (isinstance(x, Instr) and x.op == "TLOAD" and isinstance(x.srcs[0], GlobalView)):
            continue
        view = x.srcs[0]
        used = set().union(*(
            {str(v) for v in sympy.sympify(e).free_symbols}
            for e in (view.offset, view.rows, view.cols, view.row_stride)
        ))  # fmt: skip
        tile = x.dst
        if (
            isinstance(tile, str)
            and not used & loop_vars
            and writers.get(tile) == 1
            and tile not in reshaped
            and view.tensor not in stored
        ):
            hoisted.append(x)
    return hoisted, [x for x in items if not any(x is h for h in hoisted)]


def _same_tiling(a: _NestPlan, p: _NestPlan, rename: dict[sympy.Symbol, sympy.Expr]) -> bool:
    """Whether nest `p` has the tile loops of `a` (sizes, bounds, the same axes in the same
    order); records p's tile variables as a's in `rename`."""
    if len(a.tile_loops) != len(p.tile_loops):
        return False
    for x, y in zip(a.tile_loops, p.tile_loops, strict=True):
        axis = [o for o in a.order if o == x.origin], [o for o in p.order if o == y.origin]
        if x.tile_size != y.tile_size or not axis[0] or not axis[1]:
            return False
        if a.order.index(x.origin) != p.order.index(y.origin):
            return False
        ex = [bounds_expr(b_, {}, "", lo) for b_, lo in ((x.lbs, True), (x.ubs, False))]
        ey = [bounds_expr(b_, {}, "", lo) for b_, lo in ((y.lbs, True), (y.ubs, False))]
        if any(sympy.simplify(u - v) != 0 for u, v in zip(ex, ey, strict=True)):
            return False
        rename[int_symbol(y.name)] = int_symbol(x.name)
    return True


def _same_axis(a: Axis, b: Axis, rename: dict[sympy.Symbol, sympy.Expr]) -> bool:
    return (
        a.size == b.size
        and sympy.simplify(sympy.sympify(a.extent).subs(rename) - b.extent) == 0
        and sympy.simplify(sympy.sympify(a.start).subs(rename) - b.start) == 0
    )


def _plan(b: KernelBuilder, node: SNode) -> _NestPlan:
    sched = b.sched
    if isinstance(node, SStmt):
        raise lowering_error(sched.statements[node.name], "a statement outside every loop")
    tile_loops: list[LoopInfo] = []
    inner: SNode = node
    while isinstance(inner, SLoop) and (
        sched.loop(inner.name).kind == "tile" or sched.loop(inner.name).trivial
    ):
        if not sched.loop(inner.name).trivial:
            tile_loops.append(sched.loop(inner.name))
        body = [x for x in inner.body if not _empty(sched, x)]
        if len(body) != 1:
            # Statements at tile level (tile-buffer copies): the body of the innermost
            # tile loop is the tile's work.
            inner = SLoop(inner.name, tuple(body))
            break
        inner = body[0]
    values: dict[str, sympy.Expr] = {}
    axes: dict[str, Axis] = {}
    for info in tile_loops:
        if info.tile_size is None:
            raise lowering_error(
                first_statement(sched, node), f"tile loop {info.name} has no tile size"
            )
        var = int_symbol(info.name)
        ub = bounds_expr(info.ubs, values, f"upper bound of {info.name}", False)
        values[info.vid] = var
        axes[info.origin] = Axis(
            info.origin, var, sympy.Min(info.tile_size, ub - var), info.tile_size, info
        )
    point_nodes: tuple[SNode, ...] = (inner,)
    if isinstance(inner, SLoop) and (
        sched.loop(inner.name).kind == "tile" or sched.loop(inner.name).trivial
    ):
        point_nodes = inner.body
    order = _point_origins(sched, point_nodes)
    for origin in order:
        if origin in axes:
            continue
        info = _loop_of_origin(sched, point_nodes, origin)
        ub = bounds_expr(info.ubs, values, f"upper bound of {info.name}", False)
        if info.kind == "tile" and info.tile_size is not None:
            # Blocked inside the point loops (a matmul's k): a loop over k tiles in the body.
            var = int_symbol(info.name)
            axes[origin] = Axis(
                origin, var, sympy.Min(info.tile_size, ub - var), info.tile_size, info
            )
            continue
        lb = bounds_expr(info.lbs, values, f"lower bound of {info.name}", True)
        size = static_value(ub - lb, b.params)
        b.shaping |= {str(x) for x in sympy.sympify(ub - lb).free_symbols} & set(b.params)
        if size is None:
            s = first_statement(sched, node)
            names = ", ".join(sorted(map(str, sympy.sympify(ub - lb).free_symbols)))
            raise lowering_error(
                s,
                f"loop {info.name} runs over {ub - lb} elements, a symbolic number: a tile "
                "needs a static shape",
                hint=f"block it (krnl.block) or give the size ({names}) as a parameter",
            )
        axes[origin] = Axis(origin, lb, ub - lb, size, None)
    for origin in axes:
        if order and origin not in order:
            raise lowering_error(
                first_statement(sched, node), f"tile loop of {origin} has no point loop inside"
            )
    stmts = statements_in(point_nodes)
    statements = [sched.statements[n] for n in stmts]
    return _NestPlan(node, tile_loops, values, axes, order, point_nodes, statements)


def first_statement(sched: Schedule, node: SNode) -> Statement:
    return sched.statements[statements_in((node,))[0]]


def statements_in(nodes: Sequence[SNode]) -> list[str]:
    out: list[str] = []
    for n in nodes:
        if isinstance(n, SStmt):
            out.append(n.name)
        else:
            out += statements_in(n.body)
    return out


def _empty(sched: Schedule, node: SNode) -> bool:
    """A loop with no statement inside (Krnl's unused point handles)."""
    return isinstance(node, SLoop) and not statements_in((node,))


def _point_origins(sched: Schedule, nodes: Sequence[SNode]) -> list[str]:
    """The original loops of the point loops, outermost first (first seen first); trivial
    loops (one iteration, unused point handles) do not count."""
    out: list[str] = []
    for n in nodes:
        if isinstance(n, SLoop) and sched.loop(n.name).trivial:
            for x in _point_origins(sched, n.body):
                if x not in out:
                    out.append(x)
        elif isinstance(n, SLoop):
            o = sched.loop(n.name).origin
            if o not in out:
                out.append(o)
            for x in _point_origins(sched, n.body):
                if x not in out:
                    out.append(x)
    return out


def _loop_of_origin(sched: Schedule, nodes: Sequence[SNode], origin: str) -> LoopInfo:
    found = _find(sched, nodes, origin)
    assert found is not None, origin
    return found


def _find(sched: Schedule, nodes: Sequence[SNode], origin: str) -> LoopInfo | None:
    for n in nodes:
        if isinstance(n, SLoop):
            info = sched.loop(n.name)
            if info.origin == origin:
                return info
            found = _find(sched, n.body, origin)
            if found is not None:
                return found
    return None


def _check_distribution(
    b: KernelBuilder, nodes: Sequence[SNode], statements: list[Statement]
) -> None:
    """Tile-wise execution runs each statement over the whole tile before the next one: the
    point loops may carry no dependence other than a statement's own reduction."""
    report = legality.check(b.sched)
    status = {lv.loop: lv for lv in report.loops}
    names = {s.name for s in statements}
    for n in _loops_in(nodes):
        lv = status.get(n)
        if lv is None or lv.status == "parallel":
            continue
        own = [(src, snk, red) for src, snk, red in lv.pairs if src in names or snk in names]
        if lv.status == "reduction" and all(src == snk and red for src, snk, red in own):
            continue
        s = next((x for x in statements if n in x.loops), statements[0])
        raise lowering_error(
            s,
            f"loop {n} carries a dependence ({lv.why_not_vectorizable or lv.status}): the tile "
            "cannot run statement after statement",
            hint="PTO tiles need the point loops parallel (or a reduction along the columns)",
        )


def _loops_in(nodes: Sequence[SNode]) -> list[str]:
    out: list[str] = []
    for n in nodes:
        if isinstance(n, SLoop):
            out.append(n.name)
            out += _loops_in(n.body)
    return out
