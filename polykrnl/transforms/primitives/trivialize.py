"""trivialize: a loop that runs once, as Krnl makes a point loop whose handle is never named."""

from __future__ import annotations

from dataclasses import replace

from polykrnl.transforms.bounds import Bound, const_on
from polykrnl.transforms.core import ScheduleT, Step


def trivialize(sched: ScheduleT, loop: str) -> ScheduleT:
    """Make `loop` run once (0 to 1): Krnl's point loop whose handle is never used."""
    info = sched.loop(loop)
    zero = {s: const_on(v.domain(), 0) for s, v in info.values.items()}
    infos = dict(sched.loop_info)
    infos[loop] = replace(
        info, lbs=(Bound.const(0),), ubs=(Bound.const(1),), values=zero, trivial=True
    )
    return sched.derive(loop_info=infos, steps=(*sched.steps, Step("trivial", (loop,))))
