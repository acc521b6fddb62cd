"""Synchronization between pipes: the set_flag/wait_flag pairs a tile program needs.

PTO pipes run concurrently; an instruction that touches a tile another pipe is still
writing (or reading, for a write) must wait for it. :func:`insert_sync` puts the pairs
into the body, so the printer and the NumPy model see the same items.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from polykrnl.tiles.program import (
    Barrier,
    Instr,
    Item,
    Loop,
    Pipe,
    Program,
    SetFlag,
    SetValid,
    WaitFlag,
    walk,
)

__all__ = ["insert_sync"]


def insert_sync(prog: Program) -> Program:
    """The program with set_flag/wait_flag pairs wherever an instruction on one pipe touches a
    tile that an unfinished instruction on another pipe wrote (read after write), or reads
    (write after read), or wrote (write after write).

    A pair ``set_flag(P, Q); wait_flag(P, Q)`` makes everything issued on P so far finish before
    anything later on Q starts, and carries what P already waited for (transitively). Hazards
    between one iteration of a loop and the next are resolved by pairs at the end of the loop
    body. Existing sync items are kept and taken into account.
    """
    state = _SyncState()
    body = _sync_items(prog, prog.body, state)
    return prog.with_body(body)


class _SyncState:
    """Per tile: the accesses that may still be running, as (pipe, time, is_write).
    Per pipe: ``known[p][q]`` = time up to which q's instructions are known finished for p."""

    def __init__(self) -> None:
        self.time = 0
        self.acc: dict[str, list[tuple[Pipe, int, bool]]] = {}
        self.known: dict[Pipe, dict[Pipe, int]] = {}

    def copy(self) -> _SyncState:
        s = _SyncState()
        s.time = self.time
        s.acc = {k: list(v) for k, v in self.acc.items()}
        s.known = {k: dict(v) for k, v in self.known.items()}
        return s

    def merge(self, a: _SyncState, b: _SyncState) -> None:
        """The state after a loop that runs zero times (``a``) or at least once (``b``)."""
        self.time = max(a.time, b.time)
        self.acc = {
            k: list(dict.fromkeys(a.acc.get(k, []) + b.acc.get(k, []))) for k in {*a.acc, *b.acc}
        }
        self.known = {
            p: {q: min(a.known.get(p, {}).get(q, -1), b.known.get(p, {}).get(q, -1)) for q in Pipe}
            for p in Pipe
        }

    def sync(self, src: Pipe, dst: Pipe) -> None:
        self.time += 1
        kd = self.known.setdefault(dst, {})
        for q, t in self.known.get(src, {}).items():
            kd[q] = max(kd.get(q, -1), t)
        kd[src] = self.time

    def barrier(self, pipe: Pipe) -> None:
        self.time += 1
        if pipe is Pipe.ALL:
            for p in Pipe:
                for q in Pipe:
                    self.known.setdefault(p, {})[q] = self.time

    def needed(self, pipe: Pipe, reads: Iterable[str], writes: Iterable[str]) -> dict[Pipe, int]:
        """Other pipes with a conflicting access not yet known finished: pipe -> latest time."""
        out: dict[Pipe, int] = {}
        w = set(writes)
        for name in [*reads, *w]:
            is_write = name in w
            for q, t, was_write in self.acc.get(name, []):
                if q is pipe or not (was_write or is_write):
                    continue
                if self.known.get(pipe, {}).get(q, -1) < t:
                    out[q] = max(out.get(q, -1), t)
        return out

    def resolve(self, pipe: Pipe, reads: Sequence[str], writes: Sequence[str]) -> list[Pipe]:
        """Synchronize ``pipe`` with what it must wait for; the pipe accessed last first, since
        waiting for it often covers the others (it waited for them)."""
        added: list[Pipe] = []
        while need := self.needed(pipe, reads, writes):
            q = max(need, key=lambda p: need[p])
            self.sync(q, pipe)
            added.append(q)
        return added

    def access(self, pipe: Pipe, reads: Iterable[str], writes: Iterable[str]) -> None:
        self.time += 1
        for name in reads:
            self.acc.setdefault(name, []).append((pipe, self.time, False))
        for name in writes:
            self.acc.setdefault(name, []).append((pipe, self.time, True))


def _sync_items(prog: Program, items: Sequence[Item], st: _SyncState) -> list[Item]:
    out: list[Item] = []
    for it in items:
        if isinstance(it, Instr):
            pipe = prog.pipe_of(it)
            reads, writes = it.tiles_read(), it.tiles_written()
            for q in st.resolve(pipe, reads, writes):
                out += [SetFlag(q, pipe), WaitFlag(q, pipe)]
            st.access(pipe, reads, writes)
            out.append(it)
        elif isinstance(it, SetFlag):
            out.append(it)
        elif isinstance(it, WaitFlag):
            st.sync(it.src, it.dst)
            out.append(it)
        elif isinstance(it, Barrier):
            st.barrier(it.pipe)
            out.append(it)
        elif isinstance(it, SetValid):
            # the scalar unit changes the valid shape: instructions issued before keep theirs
            out.append(it)
        else:
            assert isinstance(it, Loop)
            entry = st.copy()
            body = _sync_items(prog, it.body, st)
            # a second iteration: what it needs from the first is waited for at the body's end
            for q, p in _first_needs(prog, body, st.copy()):
                body += [SetFlag(q, p), WaitFlag(q, p)]
            after = entry.copy()
            _sync_items(prog, body, after)
            st.merge(entry, after)
            out.append(replace(it, body=tuple(body)))
    return out


def _first_needs(prog: Program, body: Sequence[Item], st: _SyncState) -> list[tuple[Pipe, Pipe]]:
    """Pipe pairs that a second run of ``body`` would have to synchronize (from state ``st``
    after the first run), found by re-running the analysis on the already-synced body."""
    pairs: list[tuple[Pipe, Pipe]] = []
    for it in walk(body):
        if isinstance(it, Instr):
            pipe = prog.pipe_of(it)
            reads, writes = it.tiles_read(), it.tiles_written()
            for q in st.resolve(pipe, reads, writes):
                if (q, pipe) not in pairs:
                    pairs.append((q, pipe))
            st.access(pipe, reads, writes)
        elif isinstance(it, WaitFlag):
            st.sync(it.src, it.dst)
        elif isinstance(it, Barrier):
            st.barrier(it.pipe)
    return pairs
