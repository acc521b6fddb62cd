"""parallel: mark loops parallel (krnl.parallel; their band members become coincident)."""

from __future__ import annotations

from dataclasses import replace

from polykrnl.dialect.krnl import recipe as rules
from polykrnl.errors import ScheduleError
from polykrnl.transforms.core import ScheduleT, Step


def parallel(sched: ScheduleT, *loops: str) -> ScheduleT:
    """Mark loops parallel (their band members become coincident)."""
    if not loops:
        raise ScheduleError("parallel() needs at least one loop name", hint="parallel('i')")
    infos = dict(sched.loop_info)
    refusal = rules.listed_twice([repr(x) for x in loops], "krnl.parallel")
    for name in loops:
        info = sched.loop(name)
        if refusal is None and info.parallel:
            refusal = rules.twice_refusal("krnl.parallel", repr(name))
        if refusal is None and info.unroll:
            refusal = rules.parallel_unroll_refusal("krnl.parallel", repr(name))
        if refusal is not None:
            raise ScheduleError(refusal.message, hint=refusal.hint)
        infos[name] = replace(info, parallel=True)
    step = Step("parallel", loops)
    return sched.derive(loop_info=infos, steps=(*sched.steps, step))
