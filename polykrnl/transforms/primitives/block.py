"""block: strip-mine a loop into a tile loop and a point loop (krnl.block)."""

from __future__ import annotations

from dataclasses import replace

import islpy as isl

from polykrnl.dialect.krnl import recipe as rules
from polykrnl.errors import ScheduleError
from polykrnl.poly import isl_name
from polykrnl.transforms.bounds import Bound
from polykrnl.transforms.core import LoopInfo, Schedule, ScheduleT, SLoop, SNode, Step


def block(
    sched: ScheduleT,
    loop: str,
    size: int,
    *,
    names: tuple[str, str] | None = None,
) -> ScheduleT:
    """Strip-mine `loop` by `size`: a tile loop and a point loop directly inside it."""
    info = sched.loop(loop)
    refusal = rules.block_size_refusal(size, repr(loop))
    if refusal is None and (info.parallel or info.parts):
        refusal = rules.parallel_first_refusal("krnl.block", repr(loop))
    if refusal is None and info.unroll:
        refusal = rules.unrolled_block_refusal(repr(loop))
    if refusal is not None:
        raise ScheduleError(refusal.message, hint=refusal.hint)
    taken = set(sched.loop_info) - {loop}
    # A default tile name is also new to the earlier steps: to_krnl() writes a
    # handle for every loop the steps made, so the names stay those handles' names.
    used = taken | {x for st in sched.steps for x in (*st.loops, *st.names)}
    tile_name, point_name = names or (_fresh(f"{loop}_t", used), loop)
    tile_name, point_name = isl_name(tile_name), isl_name(point_name)
    if tile_name == point_name or tile_name in taken or point_name in taken:
        raise ScheduleError(
            f"cannot name the loops of block('{loop}') {tile_name!r} and {point_name!r}: "
            "names must be new and different",
            hint="loops in use: " + ", ".join(sorted(taken)),
        )
    stride = rules.tile_stride(info.step, size)
    stmts = sched.statements
    tile_values: dict[str, isl.PwAff] = {}
    for s, v in info.values.items():
        lb = sched.bound_value(info.lbs, stmts[s], maximum=True)
        for by, factor in info.skew:
            # A skewed loop is tiled from its unskewed origin, so that its tiles
            # line up across the loop it is skewed by (rectangular tiles).
            f = isl.Val.int_from_si(v.get_ctx(), factor)
            lb = lb.sub(sched.vid_value(by, s).scale_val(f))
        tile_values[s] = tile_start(v, lb, stride)
    vids = {i.vid for i in sched.loop_info.values()}
    tile_vid = _fresh(tile_name, vids) if tile_name in vids else tile_name
    point_lbs, point_ubs = rules.point_range(tile_vid, stride, info.ubs, Bound.value_plus)
    if info.skew:
        # A skewed loop's tiles start at its unskewed origin: its own lower bounds still bind.
        point_lbs = (*point_lbs, *info.lbs)
    else:
        point_ubs = simplest_point_ubs(info, tile_vid, stride, point_ubs)
    tile = LoopInfo(
        tile_name,
        "tile",
        tile_vid,
        info.origin,
        info.lbs,
        info.ubs,
        stride,
        tile_values,
        tile_size=size,
        isl_bounds=bool(info.skew),
    )
    point = replace(
        info,
        name=point_name,
        kind="point",
        lbs=point_lbs,
        ubs=point_ubs,
        tile_size=None,
    )
    infos = {n: i for n, i in sched.loop_info.items() if n != loop}
    infos[tile_name] = tile
    infos[point_name] = point

    def split(node: SLoop) -> SNode:
        return SLoop(tile_name, (SLoop(point_name, node.body),))

    nodes = sched.replaced_nodes(loop, split)
    step = Step("block", (loop,), size=size, names=(tile_name, point_name))
    # Strip-mining keeps the order of every instance: never illegal.
    return sched.derive(nodes=nodes, loop_info=infos, steps=(*sched.steps, step))


def simplest_point_ubs(
    info: LoopInfo, tile_vid: str, stride: int, ubs: tuple[Bound, ...]
) -> tuple[Bound, ...]:
    """The point loop's upper bounds `ubs` (min(tile + stride, UB...)) of blocking the
    loop `info` by `stride`, written as simply as the facts allow (the schedule of a
    Krnl recipe writes its point loops this way too)."""
    extent, divisor = (1, 1) if info.trivial else Schedule.extent(info)
    if extent is not None and 0 < extent < stride:
        # One tile holds the whole loop: min(tile + stride, UB) is tile + extent.
        return (Bound.value_plus(tile_vid, extent),)
    if divisor % stride == 0 and (extent is None or extent > 0):
        # Every tile is full: the loop's own upper bounds never bind.
        return ubs[:1]
    return ubs


def _fresh(base: str, taken: set[str]) -> str:
    name, n = isl_name(base), 2
    while name in taken:
        name, n = f"{isl_name(base)}_{n}", n + 1
    return name


def tile_start(v: isl.PwAff, lb: isl.PwAff, stride: int) -> isl.PwAff:
    """lb + stride * floor((v - lb) / stride): the start of v's tile."""
    if stride == 1:
        return v
    ctx = v.get_ctx()
    s = isl.Val.int_from_si(ctx, stride)
    return v.sub(lb).scale_down_val(s).floor().scale_val(s).add(lb)
