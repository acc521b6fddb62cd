"""parallel: mark loops parallel (krnl.parallel; their band members become coincident),
or parallel in parts at their split point (not Krnl: see `parallel_parts`)."""

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
        if refusal is None and info.parts:
            raise ScheduleError(
                f"loop '{name}' already runs in parallel parts",
                hint="a loop runs in parallel, in parallel parts or unrolled: one of the three",
            )
        if refusal is not None:
            raise ScheduleError(refusal.message, hint=refusal.hint)
        infos[name] = replace(info, parallel=True)
    step = Step("parallel", loops)
    return sched.derive(loop_info=infos, steps=(*sched.steps, step))


def parallel_parts(sched: ScheduleT, loop: str) -> ScheduleT:
    """Run `loop` in three parts at its split point (`polykrnl.transforms.splits`): the
    iterations before it, the point alone, the iterations after it, in that order, the
    first and last parts in parallel. The loop may carry dependences, all through the
    point (Floyd-Warshall's row loop through row k); legality checks that they do."""
    info = sched.loop(loop)
    marked = "parallel" if info.parallel else "parallel in parts" if info.parts else ""
    if marked or info.unroll:
        raise ScheduleError(
            f"loop '{loop}' is already {marked or 'unrolled'}",
            hint="a loop runs in parallel, in parallel parts or unrolled: one of the three",
        )
    if info.kind != "loop" or info.step != 1 or info.skew or info.fused:
        raise ScheduleError(
            f"loop '{loop}' cannot run in parts: only a loop as written (not blocked, "
            "skewed or fused) has a split point",
            hint="mark it before blocking it, or mark the loop it came from",
        )
    infos = dict(sched.loop_info)
    infos[loop] = replace(info, parts=True)
    return sched.derive(loop_info=infos, steps=(*sched.steps, Step("parts", (loop,))))
