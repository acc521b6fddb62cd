"""skew: run a loop shifted by an outer one, which can make a band tilable (not in Krnl)."""

from __future__ import annotations

from dataclasses import replace

import islpy as isl
from xdsl.ir.affine import AffineDimExpr

from polykrnl.errors import ScheduleError
from polykrnl.transforms.bounds import Bound, Ref
from polykrnl.transforms.core import ScheduleT, Step, refuse_marked


def skew(sched: ScheduleT, loop: str, by: str, factor: int = 1) -> ScheduleT:
    """Run `loop` over `loop + factor * by` (`by` encloses it): makes bands tilable.

    The loop's bounds shift by `factor * by`; statements still see the
    original values. Krnl has no skew op: `to_krnl()` refuses skewed schedules.
    """
    info, outer = sched.loop(loop), sched.loop(by)
    if not isinstance(factor, int) or isinstance(factor, bool) or factor == 0:
        raise ScheduleError(
            f"skew factor {factor!r} must be a non-zero integer",
            hint="skew('j', 'i', 1) runs j over j + i",
        )
    if not sched.encloses(by, loop):
        raise ScheduleError(
            f"loop '{by}' does not enclose loop '{loop}': a loop is skewed by an outer one",
            hint="the current nest is:\n" + sched.describe(),
        )
    refuse_marked(info, "skew")
    f = isl.Val.int_from_si(isl.DEFAULT_CONTEXT, factor)
    values = {}
    for s_name, v in info.values.items():
        values[s_name] = v.add(sched.loop_info[by].values[s_name].scale_val(f))
    # The loop runs over `by`'s value as it runs now, itself skewed perhaps: in the
    # original values, by + its own skew terms (seidel: j + t + (i + t), not j + t + i).
    terms = dict(info.skew)
    for vid, c in ((outer.vid, 1), *outer.skew):
        terms[vid] = terms.get(vid, 0) + factor * c
    added = [(vid, factor * c) for vid, c in ((outer.vid, 1), *outer.skew)]

    def shifted(b: Bound) -> Bound:
        n = len(b.operands)
        expr = b.expr
        for k, (_, c) in enumerate(added):
            expr = expr + AffineDimExpr(n + k) * c
        return Bound(expr, (*b.operands, *(Ref("value", vid) for vid, _ in added)))

    infos = dict(sched.loop_info)
    infos[loop] = replace(
        info,
        lbs=tuple(shifted(b) for b in info.lbs),
        ubs=tuple(shifted(b) for b in info.ubs),
        values=values,
        skew=tuple((vid, c) for vid, c in terms.items() if c),
    )
    step = Step("skew", (loop, by), size=factor)
    return sched.derive(loop_info=infos, steps=(*sched.steps, step))
