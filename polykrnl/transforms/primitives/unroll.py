"""unroll: fully unroll a loop with a constant trip count (krnl.unroll)."""

from __future__ import annotations

from dataclasses import replace

from polykrnl.errors import ScheduleError
from polykrnl.transforms.core import ScheduleT, Step


def unroll(sched: ScheduleT, loop: str) -> ScheduleT:
    """Fully unroll `loop`; it needs a constant trip count (never illegal)."""
    info = sched.loop(loop)
    if info.unroll:
        raise ScheduleError(f"loop '{loop}' is already unrolled", hint="unroll it once")
    if info.parallel:
        raise ScheduleError(
            f"loop '{loop}' is parallel: Krnl does not unroll a parallel loop",
            hint="unroll another loop, or do not mark this one parallel",
        )
    count = 1 if info.trivial else sched.trip_info(info)[0]
    if count is None:
        raise ScheduleError(
            f"loop '{loop}' has no constant trip count, so it cannot be unrolled "
            f"(for %{loop} = {sched.format_bounds(info)})",
            hint="unroll a loop whose bounds differ by a constant: block by a size that "
            "divides the trip count, or unroll the point loop of a full tile",
        )
    infos = dict(sched.loop_info)
    infos[loop] = replace(info, unroll=True)
    step = Step("unroll", (loop,))
    return sched.derive(loop_info=infos, steps=(*sched.steps, step))
