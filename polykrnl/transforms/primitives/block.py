"""block: strip-mine a loop into a tile loop and a point loop (krnl.block)."""

from __future__ import annotations

from dataclasses import replace

import islpy as isl

from polykrnl.errors import ScheduleError
from polykrnl.model.poly import isl_name
from polykrnl.transforms.bounds import Bound
from polykrnl.transforms.core import LoopInfo, ScheduleT, SLoop, SNode, Step


def block(
    sched: ScheduleT,
    loop: str,
    size: int,
    *,
    names: tuple[str, str] | None = None,
) -> ScheduleT:
    """Strip-mine `loop` by `size`: a tile loop and a point loop directly inside it."""
    info = sched.loop(loop)
    if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        raise ScheduleError(
            f"tile size {size!r} for loop '{loop}' must be a positive integer",
            hint="krnl.block takes a constant tile size >= 1",
        )
    if info.parallel or info.unroll:
        what = "parallel" if info.parallel else "unrolled"
        raise ScheduleError(
            f"loop '{loop}' is {what}: it cannot be blocked any more",
            hint="block first, then mark the tile or point loop "
            + ("parallel" if info.parallel else "unrolled")
            + " (Krnl applies krnl.parallel and krnl.unroll last)",
        )
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
    stride = info.step * size
    stmts = sched.statements
    tile_values: dict[str, isl.PwAff] = {}
    for s, v in info.values.items():
        lb = sched.bound_value(info.lbs, stmts[s], maximum=True)
        for by, factor in info.skew:
            # A skewed loop is tiled from its unskewed origin, so that its tiles
            # line up across the loop it is skewed by (rectangular tiles).
            f = isl.Val.int_from_si(v.get_ctx(), factor)
            lb = lb.sub(sched.vid_value(by, s).scale_val(f))
        tile_values[s] = _strip(v, lb, stride)
    vids = {i.vid for i in sched.loop_info.values()}
    tile_vid = _fresh(tile_name, vids) if tile_name in vids else tile_name
    extent, divisor = (1, 1) if info.trivial else sched.extent(info)
    if info.skew:
        point_lbs: tuple[Bound, ...] = (Bound.value_plus(tile_vid, 0), *info.lbs)
        point_ubs: tuple[Bound, ...] = (Bound.value_plus(tile_vid, stride), *info.ubs)
    elif extent is not None and 0 < extent < stride:
        point_lbs = (Bound.value_plus(tile_vid, 0),)
        point_ubs = (Bound.value_plus(tile_vid, extent),)
    elif divisor % stride == 0 and (extent is None or extent > 0):
        point_lbs = (Bound.value_plus(tile_vid, 0),)
        point_ubs = (Bound.value_plus(tile_vid, stride),)
    else:
        point_lbs = (Bound.value_plus(tile_vid, 0),)
        point_ubs = (Bound.value_plus(tile_vid, stride), *info.ubs)
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


def _fresh(base: str, taken: set[str]) -> str:
    name, n = isl_name(base), 2
    while name in taken:
        name, n = f"{isl_name(base)}_{n}", n + 1
    return name


def _strip(v: isl.PwAff, lb: isl.PwAff, stride: int) -> isl.PwAff:
    """lb + stride * floor((v - lb) / stride): the start of v's tile."""
    if stride == 1:
        return v
    ctx = v.get_ctx()
    s = isl.Val.int_from_si(ctx, stride)
    return v.sub(lb).scale_down_val(s).floor().scale_val(s).add(lb)
