"""permute and reorder: a new order of a perfectly nested chain of loops (krnl.permute)."""

from __future__ import annotations

from collections.abc import Sequence

from polykrnl.errors import ScheduleError
from polykrnl.transforms.core import ScheduleT, SLoop, Step


def permute(sched: ScheduleT, loops: Sequence[str], krnl_map: Sequence[int]) -> ScheduleT:
    """Krnl's scatter: the loop of `loops[k]` goes to position `krnl_map[k]` of the chain."""
    loops = list(loops)
    perm = list(krnl_map)
    n = len(loops)
    if len(perm) != n:
        raise ScheduleError(
            f"permute of {n} loop{'s' * (n != 1)} got a map of {len(perm)} "
            f"position{'s' * (len(perm) != 1)}",
            hint="give one position per loop: the loop of operand k goes to position map[k]",
        )
    if sorted(perm) != list(range(n)):
        raise ScheduleError(
            f"permute map {perm} is not a permutation of 0..{n - 1}",
            hint=f"give each position 0..{n - 1} exactly once",
        )
    for name in loops:
        sched.loop(name)
    dup = [x for i, x in enumerate(loops) if x in loops[:i]]
    if dup:
        raise ScheduleError(
            f"loop '{dup[0]}' appears twice in permute",
            hint="list each loop of the chain once",
        )
    chain = sched.chain(loops)
    new = [""] * n
    for k, name in enumerate(loops):
        new[perm[k]] = name
    # Recorded as Krnl writes it: operands in their current nesting order.
    step = Step("permute", tuple(chain), perm=tuple(new.index(x) for x in chain))
    return _reordered(sched, chain, new, step)


def reorder(sched: ScheduleT, order: Sequence[str]) -> ScheduleT:
    """Gather: `order` lists the loops of a perfectly nested chain, outermost first."""
    order = list(order)
    for name in order:
        sched.loop(name)
    dup = [x for i, x in enumerate(order) if x in order[:i]]
    if dup:
        raise ScheduleError(
            f"loop '{dup[0]}' appears twice in reorder",
            hint="list each loop of the chain once",
        )
    chain = sched.chain(order)
    perm = [order.index(name) for name in chain]
    step = Step("permute", tuple(chain), perm=tuple(perm))
    return _reordered(sched, chain, order, step)


def _reordered(sched: ScheduleT, chain: list[str], new: list[str], step: Step) -> ScheduleT:
    """`chain` nested in the order `new`, once no loop ends up outside a loop its bounds use."""
    pos = {name: i for i, name in enumerate(new)}
    for name in new:
        info = sched.loop_info[name]
        if info.skew or info.isl_bounds:
            # A skewed band (polykrnl's extension, not Krnl): bounds that use a
            # loop now inside are shown as isl computes them.
            continue
        for b in (*info.lbs, *info.ubs):
            for r in b.operands:
                if r.kind != "value":
                    continue
                for carrier in sched.vid_loops(r.name):
                    if carrier in pos and pos[carrier] > pos[name]:
                        raise ScheduleError(
                            f"the new order puts loop '{name}' outside loop '{carrier}', "
                            f"but the bounds of '{name}' use the value of '{carrier}'",
                            hint="a point loop must stay inside its tile loop"
                            if info.kind == "point"
                            else "as in Krnl, a loop must stay inside the loops its bounds use",
                        )
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
