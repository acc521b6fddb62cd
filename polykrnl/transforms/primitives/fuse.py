"""fuse: run two sibling loops as one, the second shifted (not in Krnl).

`fuse(first, second, shift)` makes one loop of two adjacent sibling loops: in each of
its iterations, the body of `first` at value v, then the body of `second` at value
v - shift (so `second`'s iteration w runs in the fused loop's iteration w + shift). The
loops inside stay siblings (fuse them in turn). The fused loop keeps `first`'s name and
value; `second`'s statements still see their own values, shown as `(%first - shift)`.
Its range covers both loops' ranges; each statement runs on its own domain.

Together with skew, fusion makes a time loop's sibling spatial nests one band that can
be tiled across time steps (jacobi-2d: fuse i with i2 and j with j2, each by 1, then skew
and tile t, i, j).
"""

from __future__ import annotations

from dataclasses import replace

import islpy as isl

from polykrnl.errors import ScheduleError
from polykrnl.transforms.bounds import Bound, linear
from polykrnl.transforms.core import LoopInfo, ScheduleT, SLoop, SNode, Step, refuse_marked


def fuse(sched: ScheduleT, first: str, second: str, shift: int = 0) -> ScheduleT:
    """One loop of the adjacent siblings `first` and `second` (`second` by `shift`)."""
    a, b = sched.loop(first), sched.loop(second)
    if not isinstance(shift, int) or isinstance(shift, bool):
        raise ScheduleError(f"fuse shift {shift!r} must be an integer", hint="fuse('i', 'i2', 1)")
    _check_siblings(sched, first, second)
    for info in (a, b):
        refuse_marked(info, "fuse")
        if info.kind != "loop" or info.skew or info.trivial:
            raise ScheduleError(
                f"loop '{info.name}' is blocked or skewed: fuse loops as written (or "
                "fused), then block or skew the fused loop",
                hint="the current nest is:\n" + sched.describe(),
            )
    if a.vid == b.vid:
        raise ScheduleError(
            f"loops '{first}' and '{second}' are parts of one distributed loop: polykrnl "
            "does not fuse them back (leave out the distribute)"
        )
    if a.step != b.step:
        raise ScheduleError(f"loops '{first}' and '{second}' have different steps")
    lbs, ubs = _union_range(a, b, shift)
    if lbs is None or ubs is None:
        raise ScheduleError(
            f"cannot fuse loops '{first}' and '{second}': polykrnl fuses loops whose bounds "
            "differ by a constant (after the shift), and these do not",
            hint="the current nest is:\n" + sched.describe(),
        )
    ctx = isl.DEFAULT_CONTEXT
    moved = {s: v.add_constant_val(isl.Val.int_from_si(ctx, shift)) for s, v in b.values.items()}
    fused = replace(
        a,
        lbs=(lbs,),
        ubs=(ubs,),
        values={**a.values, **moved},
        # `second`'s own value and those it carries from earlier fusions, shifted
        fused=(*a.fused, (b.vid, shift), *((v, k + shift) for v, k in b.fused)),
    )
    infos = {n: i for n, i in sched.loop_info.items() if n != second}
    infos[first] = fused
    nodes = _fused_nodes(sched.nodes, first, second)
    step = Step("fuse", (first, second), size=shift)
    return sched.derive(nodes=nodes, loop_info=infos, steps=(*sched.steps, step))


def _check_siblings(sched: ScheduleT, first: str, second: str) -> None:
    siblings = _siblings(sched.nodes, first)
    names = [n.name if isinstance(n, SLoop) else None for n in siblings]
    k = names.index(first)
    if k + 1 >= len(names) or names[k + 1] != second:
        raise ScheduleError(
            f"loop '{second}' does not come right after loop '{first}' in the same loop: "
            "fuse adjacent sibling loops",
            hint="the current nest is:\n" + sched.describe(),
        )


def _siblings(nodes: tuple[SNode, ...], name: str) -> tuple[SNode, ...]:
    """The nodes among which loop `name` is (its parent's body, or the top level)."""
    for n in nodes:
        if isinstance(n, SLoop) and n.name == name:
            return nodes
    for n in nodes:
        if isinstance(n, SLoop):
            found = _siblings(n.body, name)
            if found:
                return found
    return ()


def _fused_nodes(nodes: tuple[SNode, ...], first: str, second: str) -> tuple[SNode, ...]:
    out: list[SNode] = []
    for n in nodes:
        if not isinstance(n, SLoop):
            out.append(n)
        elif n.name == first:
            out.append(n)  # replaced when `second` comes
        elif n.name == second:
            a = out.pop()
            assert isinstance(a, SLoop) and a.name == first
            out.append(SLoop(first, (*a.body, *n.body)))
        else:
            out.append(SLoop(n.name, _fused_nodes(n.body, first, second)))
    return tuple(out)


def _shifted(bounds: tuple[Bound, ...], shift: int) -> tuple[Bound, ...]:
    return tuple(Bound(b.expr + shift, b.operands) if shift else b for b in bounds)


def _union_range(a: LoopInfo, b: LoopInfo, shift: int) -> tuple[Bound | None, Bound | None]:
    """The range of the fused loop: from the lower of the two lower bounds to the higher
    of the upper ones when they differ by constants; a loop of one iteration (`surround`)
    inside or just before the other's range takes the other's upper bound."""
    b_lbs, b_ubs = _shifted(b.lbs, shift), _shifted(b.ubs, shift)
    lbs = _union_bound(a.lbs, b_lbs, lower=True)
    ubs = _union_bound(a.ubs, b_ubs, lower=False)
    if lbs is not None and ubs is None:
        for first, end, other in ((a.lbs, a.ubs, b_ubs), (b_lbs, b_ubs, a.ubs)):
            start = _constant(first)
            one = start is not None and _constant(end) == start + 1
            if one and start == _constant((lbs,)) and len(other) == 1:
                # the point is the fused range's first value: the other loop's range
                # from there holds it whenever that loop runs (its own code, from each
                # statement's domain, runs the point at every size)
                return lbs, other[0]
    return lbs, ubs


def _constant(bounds: tuple[Bound, ...]) -> int | None:
    found = linear(bounds[0]) if len(bounds) == 1 else None
    return found[1] if found is not None and not found[0] else None


def _union_bound(xs: tuple[Bound, ...], ys: tuple[Bound, ...], *, lower: bool) -> Bound | None:
    """The bound of the union of two ranges, each with one bound: the lower of two lower
    bounds (the higher of two upper ones) that differ by a constant; None otherwise."""
    if len(xs) != 1 or len(ys) != 1:
        return None
    x, y = linear(xs[0]), linear(ys[0])
    if x is None or y is None or x[0] != y[0]:
        return None
    pick_x = x[1] <= y[1] if lower else x[1] >= y[1]
    return xs[0] if pick_x else ys[0]


def smallest_shift(sched: ScheduleT, first: str, second: str) -> int | None:
    """The smallest shift that keeps every dependence when fusing `first` and `second`
    (adjacent siblings): in one iteration of the loops around them, an instance of
    `second` that depends on one of `first` must run in the fused loop's iteration of
    that instance or a later one. 0 when none depends; None when the bound is not a
    constant (it depends on the sizes)."""
    from polykrnl.transforms.dependences import kept_dependences

    a, b = sched.loop(first), sched.loop(second)
    outer = sched.loop_paths()[first][:-1]
    deps = kept_dependences(sched.reference_program, sched.nest_statements).deps
    need: int | None = None
    for d in deps:
        if d.source not in a.values or d.sink not in b.values:
            continue
        src = _values_map(sched, [*outer, first], d.source, a.values[d.source])
        dst = _values_map(sched, [*outer, first], d.sink, b.values[d.sink])
        # (outer..., value in first) -> (outer..., value in second), then their differences
        deltas = d.relation.apply_domain(src).apply_range(dst).deltas()
        for k in range(len(outer)):
            deltas = deltas.fix_val(isl.dim_type.set, k, isl.Val.zero(deltas.get_ctx()))
        if deltas.is_empty():
            continue
        # The least difference over every size (isl: over all parameter values).
        least = deltas.dim_min_val(len(outer))
        if not least.is_int():
            return None  # unbounded: no shift keeps it for every size
        val = int(least.to_python())
        need = max(need if need is not None else -val, -val)
    return need if need is not None else 0


def _values_map(sched: ScheduleT, loops: list[str], stmt: str, last: isl.PwAff) -> isl.Map:
    """Instances of `stmt` -> the values of `loops` (the last one's given)."""
    vals = [sched.loop_info[x].values[stmt] for x in loops[:-1]] + [last]
    m = isl.Map.from_pw_aff(vals[0])
    for v in vals[1:]:
        m = m.flat_range_product(isl.Map.from_pw_aff(v))
    return m
