"""Double buffering: the load of the next tile overlaps the compute of this one.

With one copy of a tile, iteration i + 1 of a tile loop cannot load into it before the vector
unit of iteration i has read it, so the pipes take turns. :func:`double_buffer` gives each
tile that two pipes pass along inside an innermost loop two copies (like pto-isa's ping-pong
demos): the copies alternate along all iterations over the loop's variable, counted across
the enclosing loops and across loops over the same variable (a matmul's first k tile and the
others), so iteration i + 1 works on the other copy; *release flags* order iteration i + 2
after iteration i:

    set_flag(P, Q, EVENT_ID1); set_flag(P, Q, EVENT_ID2)   # before the top-level statement
    for (...) {                                             # holding the loops: both free
        const int64_t pp = count++ % 2;
        wait_flag(P, Q, EVENT_ID1 + pp)    # before Q's first use of a copy P used last time
        ...
        set_flag(P, Q, EVENT_ID1 + pp)     # after P's last use of the copy
    }
    wait_flag(P, Q, EVENT_ID1); wait_flag(P, Q, EVENT_ID2)  # after it: both done

One pair (P, Q) is needed when P uses a doubled tile *after* Q's first use of it in the
body, one of the two writing (a load into it after the vector unit read it: V -> MTE2; a vector
write after the store read it: MTE3 -> V). When P's use comes first, the ordering inside
iteration i + 2 (which :func:`~polykrnl.targets.pto.sync.insert_sync` adds) covers iteration i too,
since each pipe runs in order. Release flags use event ids 1 and 2; insert_sync's own pairs
use 0, so no flag is set twice. The NumPy model's race checker
(:mod:`~polykrnl.targets.pto.races`) checks the result on every test kernel.

A tile is doubled when it is used only inside loops over one variable, by at least two
pipes, its first use in each body writes it without reading it (nothing flows from one
iteration to the next through it), and its valid shape is set before that use. A variable
whose doubled tiles would not fit their buffers keeps one copy; the kernel's notes say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from polykrnl.errors import PtoError
from polykrnl.targets.pto.program import (
    Instr,
    Item,
    Loop,
    Pipe,
    Program,
    SetFlag,
    SetValid,
    WaitFlag,
    plan_offsets,
    walk,
)

__all__ = ["RELEASE_EVENT", "double_buffer"]

RELEASE_EVENT = 1  # release flags use EVENT_ID1 and EVENT_ID2 (insert_sync uses EVENT_ID0)


@dataclass(frozen=True)
class _Use:
    at: int  # index in the loop body
    pipe: Pipe
    writes: bool


def double_buffer(prog: Program) -> Program:
    """``prog`` with its innermost loops double-buffered where that is possible (see the
    module); call before :func:`~polykrnl.targets.pto.sync.insert_sync`.

    Innermost loops over the same variable are taken together (a matmul's first k tile is a
    loop of one iteration before the loop over the others): a tile used only in them is
    doubled when it qualifies in each, and every one of them gets its release flags."""
    groups: dict[str, list[Loop]] = {}
    for it in walk(prog.body):
        if isinstance(it, Loop) and _innermost(it):
            groups.setdefault(it.var, []).append(it)
    chosen: dict[int, tuple[Loop, list[str]]] = {}
    pingpong: dict[str, str] = {}
    scopes = {t.name: t.scope for t in prog.tiles}
    notes: list[str] = []
    for var, loops in groups.items():
        outside = _uses_outside(prog, loops)
        per_loop = [set(_doubled(prog, loop, outside)) for loop in loops]
        used = [set(_uses(prog, loop.body)) for loop in loops]
        # a tile used in several of the loops must qualify in each of them
        tiles = sorted(
            {n for d in per_loop for n in d}
            - {n for d, u in zip(per_loop, used, strict=True) for n in u - d}
        )
        if not tiles:
            continue
        trial = {**pingpong, **dict.fromkeys(tiles, var)}
        try:
            plan_offsets([(t.name, t.type) for t in prog.tiles], prog.arch, trial, scopes)
        except PtoError as e:
            notes.append(f"loop {var} not double-buffered: {e.message}")
            continue
        pingpong = trial
        for loop, u in zip(loops, used, strict=True):
            if mine := [n for n in tiles if n in u]:
                chosen[id(loop)] = (loop, mine)
    if not chosen:
        return replace(prog, notes=prog.notes + tuple(notes)) if notes else prog
    decls = plan_offsets([(t.name, t.type) for t in prog.tiles], prog.arch, pingpong, scopes)
    body = _rewrite(prog, chosen)
    return replace(prog, tiles=decls, body=tuple(body), notes=prog.notes + tuple(notes))


def _innermost(loop: Loop) -> bool:
    return not any(isinstance(it, Loop) for it in loop.body) and any(
        isinstance(it, Instr) for it in loop.body
    )


def _names(it: Item) -> set[str]:
    if isinstance(it, Instr):
        return {*it.tiles_read(), *it.tiles_written()}
    if isinstance(it, SetValid):
        return {it.tile}
    return set()


def _uses_outside(prog: Program, loops: Sequence[Loop]) -> set[str]:
    """The tiles used anywhere in the program but in `loops`."""
    total: dict[str, int] = {}
    for it in walk(prog.body):
        for n in _names(it):
            total[n] = total.get(n, 0) + 1
    for loop in loops:
        for x in loop.body:
            for n in _names(x):
                total[n] -= 1
    return {n for n, c in total.items() if c}


def _uses(prog: Program, body: Sequence[Item]) -> dict[str, list[_Use]]:
    out: dict[str, list[_Use]] = {}
    for k, it in enumerate(body):
        if isinstance(it, Instr):
            pipe = prog.pipe_of(it)
            for n in it.tiles_read():
                out.setdefault(n, []).append(_Use(k, pipe, False))
            for n in it.tiles_written():
                out.setdefault(n, []).append(_Use(k, pipe, True))
    return out


def _doubled(prog: Program, loop: Loop, outside: set[str]) -> list[str]:
    uses = _uses(prog, loop.body)
    valid_at = {it.tile: k for k, it in enumerate(loop.body) if isinstance(it, SetValid)}
    out: list[str] = []
    for name, us in uses.items():
        if name in outside or len({u.pipe for u in us}) < 2:
            continue
        first = us[0].at
        first_uses = [u for u in us if u.at == first]
        if any(not u.writes for u in first_uses):
            continue  # read before (or while) written: a value from the last iteration
        if valid_at.get(name, -1) > first:
            continue  # the valid shape is set after the first use: a copy would miss it
        out.append(name)
    return out


def _release_pairs(
    prog: Program, loop: Loop, tiles: Sequence[str]
) -> dict[tuple[Pipe, Pipe], tuple[int, int]]:
    """(P, Q) -> (where Q waits: before this body index, where P sets: after this one)."""
    uses = _uses(prog, loop.body)
    out: dict[tuple[Pipe, Pipe], tuple[int, int]] = {}
    for name in tiles:
        us = uses[name]
        for a in us:
            for b in us:
                if a.pipe is b.pipe or not (a.writes or b.writes) or a.at <= b.at:
                    continue
                key = (a.pipe, b.pipe)
                wait, set_ = out.get(key, (b.at, a.at))
                out[key] = (min(wait, b.at), max(set_, a.at))
    return out


def _rewrite(prog: Program, chosen: dict[int, tuple[Loop, list[str]]]) -> list[Item]:
    """The body with release flags in the chosen loops and, per loop variable, the flags
    that free both copies before the top-level item holding its first loop and wait for
    them after the one holding its last."""
    pairs: dict[str, set[tuple[Pipe, Pipe]]] = {}
    for loop, tiles in chosen.values():
        pairs.setdefault(loop.var, set()).update(_release_pairs(prog, loop, tiles))
    body = _with_releases(prog, prog.body, chosen, pairs)
    events = (RELEASE_EVENT, RELEASE_EVENT + 1)
    first: dict[int, list[Item]] = {}
    last: dict[int, list[Item]] = {}
    for var, ps in pairs.items():
        where = [k for k, it in enumerate(body) if _has_loop(it, var)]
        order = sorted(ps, key=lambda pq: (pq[0].value, pq[1].value))
        first.setdefault(where[0], []).extend(SetFlag(p, q, e) for p, q in order for e in events)
        last.setdefault(where[-1], []).extend(WaitFlag(p, q, e) for p, q in order for e in events)
    out: list[Item] = []
    for k, it in enumerate(body):
        out += first.get(k, [])
        out.append(it)
        out += last.get(k, [])
    return out


def _has_loop(it: Item, var: str) -> bool:
    return isinstance(it, Loop) and any(isinstance(x, Loop) and x.var == var for x in walk([it]))


def _with_releases(
    prog: Program,
    items: Sequence[Item],
    chosen: dict[int, tuple[Loop, list[str]]],
    pairs: dict[str, set[tuple[Pipe, Pipe]]],
) -> list[Item]:
    out: list[Item] = []
    for it in items:
        if not isinstance(it, Loop):
            out.append(it)
            continue
        if id(it) not in chosen:
            out.append(replace(it, body=tuple(_with_releases(prog, it.body, chosen, pairs))))
            continue
        # Every loop over the variable waits for and sets every pair of them, so that each
        # flag is set once and waited for once whichever loop the next iteration is in; a
        # pair without a use here waits at the start of the body and sets at the end.
        mine = _release_pairs(prog, it, chosen[id(it)][1])
        end = len(it.body) - 1
        before: dict[int, list[Item]] = {}
        after: dict[int, list[Item]] = {}
        for p, q in sorted(pairs[it.var], key=lambda pq: mine.get(pq, (0, end))):
            wait, set_ = mine.get((p, q), (0, end))
            before.setdefault(wait, []).append(WaitFlag(p, q, RELEASE_EVENT, it.var))
            after.setdefault(set_, []).append(SetFlag(p, q, RELEASE_EVENT, it.var))
        body: list[Item] = []
        for k, x in enumerate(it.body):
            body += before.get(k, [])
            body.append(x)
            body += after.get(k, [])
        out.append(replace(it, body=tuple(body)))
    return out
