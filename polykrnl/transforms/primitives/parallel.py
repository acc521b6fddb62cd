"""parallel: mark loops parallel (krnl.parallel; their band members become coincident)."""

from __future__ import annotations

from dataclasses import replace

from polykrnl.errors import ScheduleError
from polykrnl.transforms.core import ScheduleT, Step


def parallel(sched: ScheduleT, *loops: str) -> ScheduleT:
    """Mark loops parallel (their band members become coincident)."""
    if not loops:
        raise ScheduleError("parallel() needs at least one loop name", hint="parallel('i')")
    infos = dict(sched.loop_info)
    twice = [x for i, x in enumerate(loops) if x in loops[:i]]
    if twice:
        raise ScheduleError(
            f"loop '{twice[0]}' is listed twice in parallel()",
            hint="list each loop once",
        )
    for name in loops:
        info = sched.loop(name)
        if info.parallel:
            raise ScheduleError(
                f"loop '{name}' is already parallel", hint="mark each loop parallel once"
            )
        infos[name] = replace(info, parallel=True)
    step = Step("parallel", loops)
    return sched.derive(loop_info=infos, steps=(*sched.steps, step))
