"""surround: a loop of one iteration around a loop (not in Krnl), to fuse nests of
different depths.

`surround(loop, name, value)` puts loop `loop` (and what it holds) inside a new loop
`name` that runs once, at `value`. Nothing runs differently; what changes is the depth:
a 1-D loop beside 2-D nests becomes a 2-D nest that `fuse` can join to them, its
statements at row `value` of the fused loop. fdtd-2d's time step writes row 0 of `ey`
in a loop over columns before its three 2-D nests: surrounded at row 0, it fuses with
them, and the time loop holds one band that skewing makes tilable.
"""

from __future__ import annotations

import islpy as isl

from polykrnl.errors import ScheduleError
from polykrnl.transforms.bounds import Bound, const_on
from polykrnl.transforms.core import LoopInfo, ScheduleT, SLoop, Step


def surround(sched: ScheduleT, loop: str, name: str, value: int = 0) -> ScheduleT:
    """`loop` inside a new loop `name` of one iteration, at `value`."""
    info = sched.loop(loop)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ScheduleError(
            f"surround value {value!r} must be an integer", hint="surround('j', 'i0', 0)"
        )
    if not name.isidentifier():
        raise ScheduleError(f"loop name {name!r} is not an identifier", hint="surround('j', 'i0')")
    if name in taken_names(sched):
        raise ScheduleError(
            f"there is already a loop named '{name}': name the new loop otherwise",
            hint="the current nest is:\n" + sched.describe(),
        )
    values: dict[str, isl.PwAff] = {s: const_on(v.domain(), value) for s, v in info.values.items()}
    new = LoopInfo(
        name=name,
        kind="loop",
        vid=name,  # a value no statement reads: the loop runs once
        origin=name,
        lbs=(Bound.const(value),),
        ubs=(Bound.const(value + 1),),
        step=1,
        values=values,
    )
    nodes = sched.replaced_nodes(loop, lambda n: SLoop(name, (n,)))
    infos = {**sched.loop_info, name: new}
    step = Step("surround", (loop, name), size=value)
    return sched.derive(nodes=nodes, loop_info=infos, steps=(*sched.steps, step))


def taken_names(sched: ScheduleT) -> set[str]:
    """The names a new loop may not take: every loop's, and every value a loop carries."""
    return set(sched.loop_info) | {i.vid for i in sched.loop_info.values()}
