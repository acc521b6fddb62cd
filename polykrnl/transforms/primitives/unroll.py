"""unroll: fully unroll a loop with a constant trip count or a point loop (krnl.unroll)."""

from __future__ import annotations

from dataclasses import replace

from polykrnl.dialect.krnl import recipe as rules
from polykrnl.errors import ScheduleError
from polykrnl.transforms.core import ScheduleT, Step


def unroll(sched: ScheduleT, loop: str) -> ScheduleT:
    """Fully unroll `loop`: a constant trip count or a point loop (never illegal)."""
    info = sched.loop(loop)
    refusal = None
    if info.unroll:
        refusal = rules.twice_refusal("krnl.unroll", repr(loop))
    elif info.parallel:
        refusal = rules.parallel_unroll_refusal("krnl.unroll", repr(loop))
    elif info.parts:
        raise ScheduleError(
            f"loop '{loop}' runs in parallel parts: it cannot be unrolled too",
            hint="a loop runs in parallel, in parallel parts or unrolled: one of the three",
        )
    elif sched.trip_info(info)[0] is None and sched.tile_of(loop) is None:
        # A point loop runs at most its tile size: a partial last tile is run apart
        # from the full ones (Schedule.tree isolates them).
        bounds = f"for %{loop} = {sched.format_bounds(info)}"
        refusal = rules.no_trip_count_refusal(repr(loop), bounds=bounds)
    if refusal is not None:
        raise ScheduleError(refusal.message, hint=refusal.hint)
    infos = dict(sched.loop_info)
    infos[loop] = replace(info, unroll=True)
    step = Step("unroll", (loop,))
    return sched.derive(loop_info=infos, steps=(*sched.steps, step))
