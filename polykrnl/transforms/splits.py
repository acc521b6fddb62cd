"""Index-set splitting: a loop whose carried dependences all go through one iteration.

Floyd-Warshall's `path[i][j] = min(path[i][j], path[i][k] + path[k][j])` carries
dependences along j only through j = k (the iteration that writes the `path[i][k]`
every other j reads), and along i only through i = k. Cut there, the loop runs as
three consecutive parts (before the point, the point alone, after it) in its own
order, which changes nothing; inside each part the loop carries no dependence, so
each part may run as array code. Pluto calls this index-set splitting.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polykrnl.poly import CTX
from polykrnl.transforms.core import Schedule
from polykrnl.transforms.dependences import kept_dependences
from polykrnl.transforms.distances import carried_pairs
from polykrnl.transforms.loop_ranges import loop_range, simplest


@dataclass(frozen=True)
class SplitPoint:
    """Where loop `loop` splits: `point`, an affine function of the loops around it."""

    loop: str
    outer: tuple[str, ...]  # the loops around `loop`, outermost first: the point's inputs
    point: isl.Aff  # [outer values] -> the iteration every carried dependence touches
    # (first, end) of each part, before the point, the point, after it: functions of
    # the outer values, exact wherever the loop runs (simplified with that knowledge)
    parts: tuple[tuple[isl.PwAff, isl.PwAff], ...]

    def __str__(self) -> str:
        return f"{self.loop} = {self.point}"


def split_point(sched: Schedule, loop: str) -> SplitPoint | None:
    """The iteration of `loop` that every dependence it carries starts or ends at, if any.

    Only a plain loop with a unit step qualifies (a tile or point loop of krnl.block
    does not: its parts would cut tiles). The point is a total affine function: where
    no dependence is carried, any value splits correctly.
    """
    info = sched.loop_info[loop]
    if info.step != 1 or info.kind != "loop" or info.skew or info.fused:
        return None
    path = sched.loop_paths()[loop]
    k = len(path)
    below = set(sched.statements_below(loop))
    carried: list[isl.Map] = []
    for d in kept_dependences(sched.reference_program, sched.nest_statements).deps:
        if d.source not in below or d.sink not in below:
            continue
        rel = (
            isl.UnionMap.from_map(d.relation)
            .apply_domain(sched.prefix_map(path, [d.source]))
            .apply_range(sched.prefix_map(path, [d.sink]))
        )
        if rel.is_empty():
            continue
        pairs = isl.Map.from_union_map(rel).intersect(carried_pairs(k))
        if not pairs.is_empty():
            carried.append(pairs)
    if not carried:
        return None
    for candidate in _candidates(carried, k):
        graph = isl.Map.from_aff(candidate).move_dims(
            isl.dim_type.in_, k - 1, isl.dim_type.out, 0, 1
        )
        on = graph.domain()
        if all(p.subtract_domain(on).subtract_range(on).is_empty() for p in carried):
            return SplitPoint(loop, path[:-1], candidate, _parts(sched, loop, candidate))
    return None


def _parts(sched: Schedule, loop: str, point: isl.Aff) -> tuple[tuple[isl.PwAff, isl.PwAff], ...]:
    """The ranges of the loop before `point`, at it and after it, as functions of the
    outer values: [max(first, p), min(end, p)) and so on, where [first, end) is the
    loop's range, simplified with the outer values where the loop runs."""
    r = loop_range(sched, loop)
    p = isl.PwAff.from_aff(point)
    after = p.add_constant_val(isl.Val.one(CTX))
    first, end = r.first, r.end
    bounds = ((first, end.min(p)), (first.max(p), end.min(after)), (first.max(after), end))
    return tuple((simplest(lo, r.where), simplest(hi, r.where)) for lo, hi in bounds)


def _candidates(carried: list[isl.Map], k: int) -> list[isl.Aff]:
    """Affine functions (outer values -> value of the loop) on which the sources, or
    the sinks, of one carried dependence lie."""
    out: list[isl.Aff] = []
    for pairs in carried:
        for ends in (pairs.domain(), pairs.range()):
            as_map = isl.Map.from_domain(ends).move_dims(
                isl.dim_type.out, 0, isl.dim_type.in_, k - 1, 1
            )
            if not as_map.is_single_valued():
                continue
            pieces = as_map.as_pw_multi_aff().get_pw_aff(0).get_pieces()
            for _dom, aff in pieces:
                if aff.dim(isl.dim_type.div) == 0 and not any(aff.plain_is_equal(x) for x in out):
                    out.append(aff)
    return out
