"""permute and reorder: a new order of a perfectly nested chain of loops (krnl.permute)."""

from __future__ import annotations

from collections.abc import Sequence

from polykrnl.dialect.krnl import recipe as rules
from polykrnl.errors import ScheduleError
from polykrnl.transforms.core import ScheduleT, SLoop, Step


def permute(sched: ScheduleT, loops: Sequence[str], krnl_map: Sequence[int]) -> ScheduleT:
    """Krnl's scatter: the loop of `loops[k]` goes to position `krnl_map[k]` of the chain."""
    loops = list(loops)
    perm = list(krnl_map)
    refusal = rules.permutation_refusal(perm, len(loops))
    if refusal is None:
        for name in loops:
            sched.loop(name)
        refusal = rules.listed_twice([repr(x) for x in loops], "krnl.permute")
    if refusal is not None:
        raise ScheduleError(refusal.message, hint=refusal.hint)
    chain = sched.chain(loops)
    new = rules.scattered(loops, perm)
    # Recorded as Krnl writes it: operands in their current nesting order.
    step = Step("permute", tuple(chain), perm=tuple(new.index(x) for x in chain))
    return _reordered(sched, chain, new, step)


def reorder(sched: ScheduleT, order: Sequence[str]) -> ScheduleT:
    """Gather: `order` lists the loops of a perfectly nested chain, outermost first."""
    order = list(order)
    for name in order:
        sched.loop(name)
    if (refusal := rules.listed_twice([repr(x) for x in order], "reorder")) is not None:
        raise ScheduleError(refusal.message, hint=refusal.hint)
    chain = sched.chain(order)
    perm = [order.index(name) for name in chain]
    step = Step("permute", tuple(chain), perm=tuple(perm))
    return _reordered(sched, chain, order, step)


def _reordered(sched: ScheduleT, chain: list[str], new: list[str], step: Step) -> ScheduleT:
    """`chain` nested in the order `new`, once no loop ends up outside a loop its bounds use."""

    def uses(name: str) -> list[str]:
        """The loops of the chain whose values the bounds of loop `name` read."""
        info = sched.loop_info[name]
        if info.skew or info.isl_bounds or info.fused:
            # A skewed band (polykrnl's extension, not Krnl): bounds that use a
            # loop now inside are shown as isl computes them.
            return []
        return [
            carrier
            for b in (*info.lbs, *info.ubs)
            for r in b.operands
            if r.kind == "value"
            for carrier in sched.vid_loops(r.name)
        ]

    bad = rules.misplaced_bound(new, uses)
    if bad is not None:
        name, used = bad
        point = sched.loop_info[name].kind == "point"
        refusal = rules.misplaced_refusal(repr(name), repr(used), point)
        raise ScheduleError(refusal.message, hint=refusal.hint)
    top = sched.node(chain[0])
    inner = top
    for _ in chain[1:]:
        inner = next(b for b in inner.body if isinstance(b, SLoop))
    body = inner.body
    rebuilt: SLoop = SLoop(new[-1], body)
    for name in reversed(new[:-1]):
        rebuilt = SLoop(name, (rebuilt,))
    nodes = sched.replaced_nodes(chain[0], lambda _: rebuilt)
    return sched.derive(nodes=nodes, steps=(*sched.steps, step))
