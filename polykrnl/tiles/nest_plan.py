"""One top-level nest of the schedule: its tile loops become C++ loops over global offsets,
its point loops the tile's axes; the body goes to the pattern that fits (tile-buffer
copies, the matmul flow, or tile-wise statements) once the legality analysis allows
running it statement after statement."""

from __future__ import annotations

from collections.abc import Sequence

import sympy  # type: ignore[import-untyped]

from polykrnl.model.poly import Statement
from polykrnl.tiles.loop_bounds import bounds_expr, int_symbol, static_value
from polykrnl.tiles.lowering_state import Axis, KernelBuilder, lowering_error
from polykrnl.tiles.matmul import lower_matmul, matmul_form
from polykrnl.tiles.program import Item, Loop
from polykrnl.tiles.tile_buffers import lower_tile_buffers
from polykrnl.tiles.tilewise import lower_tilewise
from polykrnl.transforms import legality
from polykrnl.transforms.core import LoopInfo, Schedule, SLoop, SNode, SStmt

__all__ = ["first_statement", "lower_nest"]


def lower_nest(b: KernelBuilder, node: SNode) -> list[Item]:
    """One top-level nest: C++ loops over its tiles around the tile-wise body."""
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
    stmts = _statements_in(point_nodes)
    statements = [sched.statements[n] for n in stmts]
    _check_distribution(b, point_nodes, statements)
    if not order:
        items = lower_tile_buffers(b, values, statements)
    elif any(matmul_form(b, x) is not None for x in statements):
        items = lower_matmul(b, axes, order, statements)
    else:
        items = lower_tilewise(b, axes, order, statements)
    for info in reversed(tile_loops):
        lb = bounds_expr(info.lbs, {}, f"lower bound of {info.name}", True)
        ub = bounds_expr(info.ubs, {}, f"upper bound of {info.name}", False)
        items = [
            Loop(info.name, lb, ub, info.tile_size or 1, items, comment=f"tiles of {info.origin}")
        ]
    return items


def first_statement(sched: Schedule, node: SNode) -> Statement:
    return sched.statements[_statements_in((node,))[0]]


def _statements_in(nodes: Sequence[SNode]) -> list[str]:
    out: list[str] = []
    for n in nodes:
        if isinstance(n, SStmt):
            out.append(n.name)
        else:
            out += _statements_in(n.body)
    return out


def _empty(sched: Schedule, node: SNode) -> bool:
    """A loop with no statement inside (Krnl's unused point handles)."""
    return isinstance(node, SLoop) and not _statements_in((node,))


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
