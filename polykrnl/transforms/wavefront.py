"""Wavefronts: an innermost pair of loops that both carry dependences, run front by front.

A Gauss-Seidel sweep updates in place: each point reads the new values of its left
and upper neighbours, so neither i nor j is parallel. The points of a front
`j + f * i = w` depend only on points of earlier fronts when every dependence the pair
carries has `f * di + dj >= 1`: skewed by f and swapped, the outer loop runs the fronts
in order and the inner loop, over the points of one front, is parallel (Lamport's
hyperplane method). The rewrite is a legal reordering, checked like any other, so
the results are the same bit for bit; the NumPy target uses it to write each front as
one array statement, where the pair would otherwise stay scalar Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from polykrnl.errors import PolykrnlError
from polykrnl.transforms import legality
from polykrnl.transforms.core import ScheduleT, SLoop
from polykrnl.transforms.legality_report import LegalityReport
from polykrnl.transforms.primitives.permute import reorder
from polykrnl.transforms.primitives.skew import skew
from polykrnl.transforms.splits import split_point

#: the skew factors tried, smallest first (a 9-point in-place stencil needs 2)
FACTORS = (1, 2, 3)


@dataclass(frozen=True)
class Wavefront:
    """Loop `inner` now runs over `inner + factor * outer`, outside `outer`."""

    inner: str
    outer: str
    factor: int

    def __str__(self) -> str:
        by = self.outer if self.factor == 1 else f"{self.factor} * {self.outer}"
        return (
            f"loops {self.outer}, {self.inner} run along wavefronts {self.inner} + {by}: "
            f"{self.outer} is parallel on each"
        )


def wavefronts(
    sched: ScheduleT, report: LegalityReport
) -> tuple[ScheduleT, LegalityReport, list[Wavefront]]:
    """`sched` with every innermost pair of loops that carries dependences, that a split
    does not free (see splits.py) and that a skew makes a wavefront of, rewritten so."""
    if not report.legal:
        return sched, report, []
    done: list[Wavefront] = []
    status = {lv.loop: lv.status for lv in report.loops}
    for inner in sched.loop_names():
        pair = _pair(sched, inner, status)
        if pair is None:
            continue
        outer = pair
        for factor in FACTORS:
            try:
                cand = reorder(skew(sched, inner, outer, factor), [inner, outer])
            except PolykrnlError:
                continue
            checked = legality.check(cand)
            verdicts = {lv.loop: lv.status for lv in checked.loops}
            if checked.legal and verdicts.get(outer) == "parallel":
                sched, report, status = cand, checked, verdicts
                done.append(Wavefront(inner, outer, factor))
                break
    return sched, report, done


def _pair(sched: ScheduleT, inner: str, status: Mapping[str, str]) -> str | None:
    """The loop around `inner` when the two are a candidate pair (see wavefronts)."""
    node = sched.node(inner)
    if any(isinstance(b, SLoop) for b in node.body):
        return None  # not innermost
    path = sched.loop_paths()[inner]
    if len(path) < 2:
        return None
    outer = path[-2]
    if len(sched.node(outer).body) != 1:
        return None  # not perfectly nested
    if status.get(inner) != "forward" or status.get(outer) != "forward":
        return None
    for x in (inner, outer):
        info = sched.loop_info[x]
        kept = info.skew or info.fused or info.parallel or info.unroll
        if info.kind != "loop" or info.step != 1 or kept:
            return None
    if split_point(sched, inner) is not None:
        return None  # three parts over slices beat fronts over gathered elements
    return outer
