"""Dependence distances through the loops of a schedule, and what they allow each loop.

A loop at depth k carries a dependence where the first k - 1 distances are 0
and the k-th is not: it may run in parallel only if it carries none, and a
negative distance means the schedule runs a sink before its source.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import islpy as isl

from polykrnl.poly import CTX
from polykrnl.transforms.core import Schedule, SLoop, SNode
from polykrnl.transforms.dependences import Dependence
from polykrnl.transforms.legality_report import LoopStatus, LoopVerdict


def carried_pairs(n: int) -> isl.Map:
    """{[o..., l] -> [o..., l'] : l' != l} over n dims (equal outer loops)."""
    xs = [f"x{i}" for i in range(n)]
    ys = [*xs[:-1], "y"]
    return isl.Map(f"{{ [{', '.join(xs)}] -> [{', '.join(ys)}] : y != x{n - 1} }}")


class Distances:
    """Distance vectors of each dependence through the loops around both its ends.

    Computed once per dependence; a loop at depth k carries it where the first
    k - 1 distances are 0 and the k-th is not, and a band looks at a projection.
    """

    def __init__(self, sched: Schedule, deps: Sequence[Dependence]) -> None:
        self.sched = sched
        self.deps = deps
        around: dict[str, tuple[str, ...]] = {}

        def walk(nodes: Sequence[SNode], prefix: tuple[str, ...]) -> None:
            for n in nodes:
                if isinstance(n, SLoop):
                    walk(n.body, (*prefix, n.name))
                else:
                    around[n.name] = prefix

        walk(sched.nodes, ())
        self.common: list[tuple[str, ...]] = []
        self.delta: list[isl.Set | None] = []
        for d in deps:
            a, b = around.get(d.source, ()), around.get(d.sink, ())
            n = 0
            while n < min(len(a), len(b)) and a[n] == b[n]:
                n += 1
            common = a[:n]
            self.common.append(common)
            if not common:
                self.delta.append(None)
                continue
            m_src = sched.prefix_map(common, [d.source])
            m_snk = sched.prefix_map(common, [d.sink])
            rel = isl.UnionMap.from_map(d.relation).apply_domain(m_src).apply_range(m_snk)
            sets: list[isl.Set] = []
            rel.deltas().foreach_set(sets.append)
            self.delta.append(sets[0] if sets else None)
        # Dependence indices by every prefix of their common loops: under() of one
        # loop then costs the dependences inside it, not all of them.
        self._inside: dict[tuple[str, ...], list[int]] = {}
        for i, (common, delta) in enumerate(zip(self.common, self.delta, strict=True)):
            if delta is not None:
                for k in range(1, len(common) + 1):
                    self._inside.setdefault(common[:k], []).append(i)

    def under(self, path: tuple[str, ...]) -> list[tuple[int, isl.Set]]:
        """(dependence index, distances) for the dependences inside `path`'s loop.

        The distances keep the dimensions of every common loop, `path`'s first:
        constraints on those are cheap, projecting the others out is not (tile
        and skewed loops make the sets full of integer divisions).
        """
        out: list[tuple[int, isl.Set]] = []
        for i in self._inside.get(tuple(path), ()):
            delta = self.delta[i]
            assert delta is not None
            out.append((i, delta))
        return out


def over(n: int, text: str) -> isl.Set:
    """{ [x0, ..., x(n-1)] : text }, parsed once."""
    return parsed_set(f"{{ [{', '.join(f'x{i}' for i in range(n))}] : {text} }}")


@functools.lru_cache(maxsize=4096)
def parsed_set(text: str) -> isl.Set:
    """isl sets of the distance checks and the skew search, parsed once (few shapes recur)."""
    return isl.Set(text)


def loop_verdict(
    sched: Schedule, dist: Distances, name: str, path: tuple[str, ...]
) -> tuple[LoopVerdict, list[tuple[Dependence, isl.UnionMap]]]:
    """What the dependences allow loop `name` (at `path`), and those it carries.

    For a parallel loop (or one in parallel parts) each carried dependence comes with
    the instance pairs it relates across iterations (for a witness); else with an empty
    map.
    """
    node = sched.node(name)
    innermost = not any(isinstance(b, SLoop) for b in node.body)
    info = sched.loop_info[name]
    k = len(path)
    outer = " and ".join(f"x{i} = 0" for i in range(k - 1)) or "true"
    carried: list[tuple[Dependence, isl.UnionMap]] = []
    lo: int | None = None
    hi: int | None = None
    negative = False
    names: list[str] = []
    pair: isl.UnionMap | None = None
    for i, delta in dist.under(path):
        n = delta.dim(isl.dim_type.set)
        c = delta.intersect(over(n, f"{outer} and x{k - 1} != 0"))
        if c.is_empty():
            continue
        d = dist.deps[i]
        if info.parallel or info.parts:
            # The instance pairs, for a witness of the parallel violation.
            if pair is None:
                m = sched.prefix_map(path, sorted(set(sched.statements_below(name))))
                pair = m.apply_range(isl.UnionMap.from_map(carried_pairs(k))).apply_range(
                    m.reverse()
                )
            carried.append((d, isl.UnionMap.from_map(d.relation).intersect(pair)))
        else:
            carried.append((d, isl.UnionMap.empty(isl.Space.params_alloc(CTX, 0))))
        label = f"{d.kind} on {d.array}" + (" (reduction)" if d.reduction else "")
        if label not in names:
            names.append(label)
        dmin, dmax = _dim_range(c, k - 1)
        lo = dmin if lo is None or (dmin is not None and dmin < lo) else lo
        hi = dmax if hi is None or (dmax is not None and dmax > hi) else hi
        if not negative and (dmin is None or dmin < 0):
            negative = not delta.intersect(over(n, f"{outer} and x{k - 1} < 0")).is_empty()
    if not carried:
        status: LoopStatus = "parallel"
    elif negative:
        status = "violates"
    elif all(d.reduction for d, _ in carried):
        status = "reduction"
    else:
        status = "forward"
    return (
        LoopVerdict(
            name,
            status,
            info.parallel,
            innermost,
            lo,
            hi,
            tuple(names),
            tuple((d.source, d.sink, d.reduction) for d, _ in carried),
        ),
        carried,
    )


def _dim_range(s: isl.Set, pos: int) -> tuple[int | None, int | None]:
    """The smallest and largest value of dimension `pos` (None where unbounded)."""

    def value(v: isl.Val) -> int | None:
        return int(v.to_python()) if v.is_int() else None

    try:
        return value(s.dim_min_val(pos)), value(s.dim_max_val(pos))
    except isl.Error:
        return None, None
