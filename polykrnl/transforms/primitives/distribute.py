"""distribute: one loop per part of a loop's body, in order (loop distribution; not Krnl).

`distribute(loop)` splits a loop whose body holds several nodes (statements, loops)
into sibling loops with its range, one per node, in the body's order. The first loop
keeps the name; the others are named `loop_d`, `loop_d_2`, ... (or `names`). Every
instance runs its statements at the same values of the loops; only the order between
parts changes: all of the first part's iterations, then the second's. Distribution is
the inverse of `fuse`.

Inside a tile loop it is fusion at the granularity of a tile: fuse the row loops of
sibling passes, block the fused loop, distribute its point loop; each pass then runs
over one tile of rows while they are in cache, and can be reordered on its own
(layernorm's row sums with the rows of a tile inside, sixteen sums interleaved).

The copies carry one value (the distributed loop's): a statement's value is found on
the copy that runs it. A loop inside whose bounds read that value is refused (each copy
would need its own).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from polykrnl.errors import ScheduleError
from polykrnl.poly import isl_name
from polykrnl.transforms.core import LoopInfo, ScheduleT, SLoop, SNode, Step, refuse_marked


def distribute(sched: ScheduleT, loop: str, *, names: Sequence[str] | None = None) -> ScheduleT:
    """One loop per part of `loop`'s body (see the module docstring)."""
    info = sched.loop(loop)
    node = sched.node(loop)
    parts = body_parts(node.body)
    _check(sched, info, parts)
    taken = set(sched.loop_info) - {loop}
    used = taken | {x for st in sched.steps for x in (*st.loops, *st.names)}
    new_names = [loop, *(_fresh_names(f"{loop}_d", used, len(parts) - 1))]
    if names is not None:
        new_names = [isl_name(x) for x in names]
        if len(new_names) != len(parts) or len(set(new_names)) != len(new_names):
            raise ScheduleError(
                f"distribute('{loop}') makes {len(parts)} loops: give {len(parts)} distinct "
                f"names, not {list(names)}"
            )
        clash = next((x for x in new_names if x in taken), None)
        if clash is not None:
            raise ScheduleError(f"cannot name a loop of distribute('{loop}') {clash!r}: taken")
    copies = {
        name: replace(
            info,
            name=name,
            values={s: v for s, v in info.values.items() if s in _statements(part)},
        )
        for name, part in zip(new_names, parts, strict=True)
    }
    infos: dict[str, LoopInfo] = {}
    for n, i in sched.loop_info.items():
        if n == loop:
            infos.update(copies)
        else:
            infos[n] = i
    loops = tuple(SLoop(name, part) for name, part in zip(new_names, parts, strict=True))
    nodes = _spliced(sched.nodes, loop, loops)
    step = Step("distribute", (loop,), names=tuple(names) if names is not None else ())
    return sched.derive(nodes=nodes, loop_info=infos, steps=(*sched.steps, step))


def body_parts(body: Sequence[SNode]) -> list[tuple[SNode, ...]]:
    """The parts of a loop's body: each statement and each loop in it."""
    return [(n,) for n in body]


def _check(sched: ScheduleT, info: LoopInfo, parts: list[tuple[SNode, ...]]) -> None:
    if len(parts) < 2:
        raise ScheduleError(
            f"loop '{info.name}' holds one statement or loop: nothing to distribute",
            hint="the current nest is:\n" + sched.describe(),
        )
    refuse_marked(info, "distribute")
    if info.skew or info.isl_bounds:
        raise ScheduleError(
            f"loop '{info.name}' is skewed: distribute it before skewing",
            hint="the current nest is:\n" + sched.describe(),
        )
    vids = {info.vid, *(v for v, _ in info.fused)}
    inner = [x for x in sched.loop_names() if sched.encloses(info.name, x) and x != info.name]
    for x in inner:
        for b in (*sched.loop(x).lbs, *sched.loop(x).ubs):
            if any(r.kind == "value" and r.name in vids for r in b.operands):
                raise ScheduleError(
                    f"loop '{x}' runs over bounds that read loop '{info.name}': polykrnl "
                    "distributes loops whose inner loops' ranges do not depend on them",
                    hint="the current nest is:\n" + sched.describe(),
                )


def _statements(nodes: Sequence[SNode]) -> set[str]:
    out: set[str] = set()
    for n in nodes:
        out |= _statements(n.body) if isinstance(n, SLoop) else {n.name}
    return out


def _fresh_names(base: str, used: set[str], count: int) -> list[str]:
    out: list[str] = []
    name, n = isl_name(base), 2
    while len(out) < count:
        if name not in used and name not in out:
            out.append(name)
        name, n = f"{isl_name(base)}_{n}", n + 1
    return out


def _spliced(nodes: tuple[SNode, ...], loop: str, loops: tuple[SLoop, ...]) -> tuple[SNode, ...]:
    """`nodes` with loop `loop` replaced by the sibling `loops`."""
    out: list[SNode] = []
    for n in nodes:
        if isinstance(n, SLoop) and n.name == loop:
            out += loops
        elif isinstance(n, SLoop):
            out.append(SLoop(n.name, _spliced(n.body, loop, loops)))
        else:
            out.append(n)
    return tuple(out)
