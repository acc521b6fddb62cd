"""Synchronization between pipes: the set_flag/wait_flag pairs a tile program needs.

PTO pipes run concurrently; an instruction that touches a tile another pipe is still
writing (or reading, for a write) must wait for it. :func:`insert_sync` puts the pairs
into the body, so the printer and the NumPy model see the same items.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import replace

import sympy  # type: ignore[import-untyped]

from polykrnl.targets.pto.program import (
    Barrier,
    GlobalView,
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
    body. Existing sync items are kept and taken into account; for a double-buffered tile only
    the accesses of the current iteration over its variable count (the one before used the
    other copy, older ones are ordered by the release flags of :mod:`.pipeline`).
    """
    state = _SyncState()
    state.pingpong = {t.name: t.pingpong for t in prog.tiles if t.pingpong is not None}
    # Tiles of groups run one after the other may share bytes (TileDecl.scope): an access
    # to one conflicts with the earlier accesses to the others over the same bytes.
    for t in prog.tiles:
        state.aliases[t.name] = [
            o.name
            for o in prog.tiles
            if o.name != t.name and o.buffer is t.buffer
            and o.offset < t.end and t.offset < o.end
        ]  # fmt: skip
    body = _sync_items(prog, prog.body, state)
    return prog.with_body(body)


class _SyncState:
    """Per tile: the accesses that may still be running, as (pipe, time, is_write).
    Per pipe: ``known[p][q]`` = time up to which q's instructions are known finished for p."""

    def __init__(self) -> None:
        self.time = 0
        self.acc: dict[str, list[tuple[Pipe, int, bool]]] = {}
        self.known: dict[Pipe, dict[Pipe, int]] = {}
        # Global memory: window name -> its tensor and the symbols of its offset.
        self.windows: dict[str, tuple[str, frozenset[str]]] = {}
        # Looking at a loop's next iteration (_first_needs): its variable, and the time its
        # previous iteration ended (a window that moves with the variable is another one).
        self.next_of: tuple[str, int] | None = None
        # Release flags of double buffering, per pipe pair: what the source pipe had finished
        # when the latest one was set (the waits after the loop catch up to it).
        self.released: dict[tuple[Pipe, Pipe], tuple[int, dict[Pipe, int]]] = {}
        # the same for the sets that free both copies before the loop
        self.freed: dict[tuple[Pipe, Pipe], tuple[int, dict[Pipe, int]]] = {}
        # Double buffering: tile -> its loop variable, and per variable the time its current
        # iteration began. Iterations over the variable (in any loop over it) alternate the
        # copies and the release flags order those two apart, so only accesses of this
        # iteration count.
        self.pingpong: dict[str, str] = {}
        self.iteration: dict[str, int] = {}
        self.aliases: dict[str, list[str]] = {}  # tile -> tiles over some of its bytes

    def copy(self) -> _SyncState:
        s = _SyncState()
        s.time = self.time
        s.acc = {k: list(v) for k, v in self.acc.items()}
        s.known = {k: dict(v) for k, v in self.known.items()}
        s.windows = dict(self.windows)
        s.released = dict(self.released)
        s.freed = dict(self.freed)
        s.pingpong = self.pingpong
        s.iteration = dict(self.iteration)
        s.aliases = self.aliases
        return s

    def begin_iteration(self, var: str) -> None:
        self.iteration[var] = self.time

    def conflicting(self, name: str) -> list[tuple[str, int]]:
        """The resources an access to `name` may overlap, each with the time before which
        its accesses do not count (-1: all count). Tiles: the tile itself. A window of
        global memory: every window of its tensor (offsets are symbolic), except the same
        window in an earlier iteration of a loop whose variable moves it."""
        shared = [(other, -1) for other in self.aliases.get(name, [])]
        if name in self.pingpong:
            return [(name, self.iteration.get(self.pingpong[name], -1)), *shared]
        if name not in self.windows:
            return [(name, -1), *shared]
        tensor, symbols = self.windows[name]
        out: list[tuple[str, int]] = []
        for other, (t, _) in self.windows.items():
            if t != tensor:
                continue
            since = -1
            if other == name and self.next_of is not None and self.next_of[0] in symbols:
                since = self.next_of[1]
            out.append((other, since))
        return out

    def merge(self, a: _SyncState, b: _SyncState) -> None:
        """The state after a loop that runs zero times (``a``) or at least once (``b``)."""
        self.time = max(a.time, b.time)
        self.windows = {**a.windows, **b.windows}
        self.acc = {
            k: list(dict.fromkeys(a.acc.get(k, []) + b.acc.get(k, []))) for k in {*a.acc, *b.acc}
        }
        # A path that knows every access of q it made knows nothing is missing: the other
        # path decides (each path's accesses are in the merged ones, so this stays sound).
        la, lb = a.last_access(), b.last_access()

        def known(s: _SyncState, last: dict[Pipe, int], p: Pipe, q: Pipe) -> float:
            k = s.known.get(p, {}).get(q, -1)
            return float("inf") if k >= last.get(q, -1) else k

        self.known = {}
        for p in Pipe:
            for q in Pipe:
                k = min(known(a, la, p, q), known(b, lb, p, q))
                self.known.setdefault(p, {})[q] = (
                    int(k) if k != float("inf") else max(la.get(q, -1), lb.get(q, -1))
                )
        self.released = _meet(a.released, b.released)
        self.freed = _meet(a.freed, b.freed)

    def last_access(self) -> dict[Pipe, int]:
        """Per pipe, the time of its latest access."""
        out: dict[Pipe, int] = {}
        for accs in self.acc.values():
            for q, t, _ in accs:
                out[q] = max(out.get(q, -1), t)
        return out

    def release(self, src: Pipe, dst: Pipe, before_loop: bool) -> None:
        self.time += 1
        self.released[(src, dst)] = (self.time, dict(self.known.get(src, {})))
        if before_loop:
            self.freed[(src, dst)] = self.released[(src, dst)]

    def catch_up(self, src: Pipe, dst: Pipe, in_loop: bool = False) -> None:
        """A wait after a double-buffered loop: `dst` knows what `src` had finished when the
        latest release flag was set. One inside the loop answers a set made at the earliest
        before the loop: `dst` knows what `src` had finished then."""
        found = (self.freed if in_loop else self.released).get((src, dst))
        if found is None:
            return
        t, snapshot = found
        kd = self.known.setdefault(dst, {})
        for q, tq in snapshot.items():
            kd[q] = max(kd.get(q, -1), tq)
        kd[src] = max(kd.get(src, -1), t)

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
            accesses = [
                a for other, since in self.conflicting(name) for a in self.acc.get(other, [])
                if a[1] > since
            ]  # fmt: skip
            for q, t, was_write in accesses:
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
    for k, it in enumerate(items):
        if isinstance(it, Instr):
            pipe = prog.pipe_of(it)
            reads, writes = _accesses(it, st)
            for q in st.resolve(pipe, reads, writes):
                out += [SetFlag(q, pipe), WaitFlag(q, pipe)]
            st.access(pipe, reads, writes)
            out.append(it)
        elif isinstance(it, SetFlag):
            if not _plain(it):
                st.release(it.src, it.dst, it.pingpong is None)
            out.append(it)
        elif isinstance(it, WaitFlag):
            _waited(st, it)
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
            st.begin_iteration(it.var)
            body = _sync_items(prog, it.body, st)
            # a second iteration: what it needs from the first is waited for at the body's end
            for q, p in _first_needs(prog, body, st.copy(), it.var):
                body += [SetFlag(q, p), WaitFlag(q, p)]
            after = entry.copy()
            after.begin_iteration(it.var)
            _sync_items(prog, body, after)
            # the waits for a double-buffered loop's last release flags, on each path
            for w in itertools.takewhile(_epilogue, items[k + 1 :]):
                assert isinstance(w, WaitFlag)
                _waited(entry, w)
                _waited(after, w)
            st.merge(entry, after)
            hoisted, kept = _hoisted(prog, body)
            out += hoisted
            out.append(replace(it, body=tuple(kept)))
    return out


def _hoisted(prog: Program, body: Sequence[Item]) -> tuple[list[Item], list[Item]]:
    """The pairs of a loop body whose source pipe runs nothing in the loop, and the rest.

    Such a pair waits for work issued before the loop only, so it can wait once before the
    loop instead of in every iteration (a memset's fill, then its stores in a loop)."""
    inside = {prog.pipe_of(x) for x in walk(body) if isinstance(x, Instr)}
    hoisted: list[Item] = []
    kept: list[Item] = []
    k = 0
    while k < len(body):
        x, nxt = body[k], body[k + 1] if k + 1 < len(body) else None
        if (
            isinstance(x, SetFlag) and isinstance(nxt, WaitFlag) and _plain(x) and _plain(nxt)
            and (x.src, x.dst) == (nxt.src, nxt.dst) and x.src not in inside
        ):  # fmt: skip
            hoisted += [x, nxt]
            k += 2
        else:
            kept.append(x)
            k += 1
    return hoisted, kept


def _accesses(it: Instr, st: _SyncState) -> tuple[list[str], list[str]]:
    """What `it` reads and writes: tiles, and windows of global memory (TLOAD, TSTORE)."""
    reads, writes = list(it.tiles_read()), list(it.tiles_written())
    for view, into in [(x, reads) for x in it.srcs] + [(it.dst, writes)]:
        if isinstance(view, GlobalView):
            name = f"@{view.tensor}@{view.offset}@{view.rows}@{view.cols}"
            symbols = frozenset(str(x) for x in sympy.sympify(view.offset).free_symbols)
            st.windows[name] = (view.tensor, symbols)
            into.append(name)
    return reads, writes


def _first_needs(
    prog: Program, body: Sequence[Item], st: _SyncState, var: str
) -> list[tuple[Pipe, Pipe]]:
    """Pipe pairs that a second run of ``body`` (of the loop over `var`) would have to
    synchronize (from state ``st`` after the first run), found by re-running the analysis
    on the already-synced body."""
    pairs: list[tuple[Pipe, Pipe]] = []
    st.next_of = (var, st.time)
    st.begin_iteration(var)
    for it in walk(body):
        if isinstance(it, Instr):
            pipe = prog.pipe_of(it)
            reads, writes = _accesses(it, st)
            for q in st.resolve(pipe, reads, writes):
                if (q, pipe) not in pairs:
                    pairs.append((q, pipe))
            st.access(pipe, reads, writes)
        elif isinstance(it, SetFlag) and not _plain(it):
            st.release(it.src, it.dst, it.pingpong is None)
        elif isinstance(it, WaitFlag):
            _waited(st, it)
        elif isinstance(it, Barrier):
            st.barrier(it.pipe)
        elif isinstance(it, Loop):
            st.begin_iteration(it.var)
    return pairs


def _meet(
    a: dict[tuple[Pipe, Pipe], tuple[int, dict[Pipe, int]]],
    b: dict[tuple[Pipe, Pipe], tuple[int, dict[Pipe, int]]],
) -> dict[tuple[Pipe, Pipe], tuple[int, dict[Pipe, int]]]:
    """What two paths both know about the release flags (the earlier of two sets)."""
    out = {}
    for key in a.keys() & b.keys():
        (ta, ka), (tb, kb) = a[key], b[key]
        out[key] = (
            min(ta, tb),
            {q: min(ka.get(q, -1), kb.get(q, -1)) for q in ka.keys() & kb.keys()},
        )
    return out


def _epilogue(it: Item) -> bool:
    return isinstance(it, WaitFlag) and not _plain(it) and it.pingpong is None


def _plain(it: SetFlag | WaitFlag) -> bool:
    """Whether a flag is one of the pairs this module writes (event 0, the wait right after
    its set): the wait makes everything issued on the source pipe so far finished."""
    return it.event == 0 and it.pingpong is None


def _waited(st: _SyncState, it: WaitFlag) -> None:
    """What a wait teaches. A release flag of double buffering (:mod:`.pipeline`) inside its
    loop answers a set two iterations earlier, or the one before the loop: what the source
    pipe had finished before the loop, nothing about its recent work. After the loop, the
    waits answer the latest sets."""
    if _plain(it):
        st.sync(it.src, it.dst)
    else:
        st.catch_up(it.src, it.dst, in_loop=it.pingpong is not None)
