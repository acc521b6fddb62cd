"""The range of a loop as functions of the loops around it, from the statements it runs.

Where code generation rewrites a loop's range (the parts of a split loop, the
bounding box of a masked triangle), the range comes from the domains of the
statements below the loop, not from isl's AST: exact wherever the loop runs, and
simplified with that knowledge (`max(0, k)` is `k` where k >= 0).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import islpy as isl

from polykrnl.poly import CTX
from polykrnl.transforms.core import Schedule


@dataclass(frozen=True)
class LoopRange:
    """`loop` runs over [first, end) for each value of the `outer` loops in `where`."""

    loop: str
    outer: tuple[str, ...]  # the loops around it that the range may depend on
    first: isl.PwAff
    end: isl.PwAff
    where: isl.Set  # the outer values where it runs


def loop_range(
    sched: Schedule,
    loop: str,
    without: Collection[str] = (),
    stmts: Sequence[str] | None = None,
) -> LoopRange:
    """The range of `loop` where it runs the statements `stmts` (default: all below
    it); with `without`, the union of its ranges over all the values of those outer
    loops (their hull: the bounding box of a triangle)."""
    path = sched.loop_paths()[loop]
    k = len(path)
    below = sched.statements_below(loop) if stmts is None else list(stmts)
    runs = sched.prefix_map(path, below).range()
    values = isl.Set.from_union_set(runs)
    keep = [i for i, x in enumerate(path[:-1]) if x not in without]
    for i in reversed(range(k - 1)):
        if i not in keep:
            values = values.project_out(isl.dim_type.set, i, 1)
    values = values.coalesce()
    n = len(keep)
    # outer values -> the loop's values there
    ranges = isl.Map.from_domain(values).move_dims(isl.dim_type.out, 0, isl.dim_type.in_, n, 1)
    where = ranges.domain()
    first = ranges.lexmin_pw_multi_aff().get_pw_aff(0)
    end = ranges.lexmax_pw_multi_aff().get_pw_aff(0).add_constant_val(isl.Val.one(CTX))
    return LoopRange(
        loop,
        tuple(path[i] for i in keep),
        simplest(first, where),
        simplest(end, where),
        where,
    )


def simplest(pa: isl.PwAff, where: isl.Set) -> isl.PwAff:
    """`pa` on `where`, as one of its pieces' affine functions when that one alone
    gives the same values there (`max(0, k)` is `k` where k >= 0)."""
    pa = pa.gist(where).coalesce()
    exact = pa.intersect_domain(where)
    for _dom, aff in pa.get_pieces():
        one = isl.PwAff.from_aff(aff)
        if one.intersect_domain(where).is_equal(exact):
            return one
    return pa
