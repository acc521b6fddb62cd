"""Race checking of a tile program as the hardware would run it: pipes in parallel.

The NumPy model runs one instruction at a time in program order, so on its own it cannot see
a missing flag. This checker follows the order the hardware guarantees and nothing more:

- instructions on one pipe run in issue order;
- ``set_flag(P, Q, e)`` fires once everything issued on P before it has finished, and
  ``wait_flag(P, Q, e)`` holds everything issued on Q after it until then; the wait consumes
  the set (pto-isa: waiting for an event never set is illegal). A flag is one bit: setting a
  flag that is still set is refused, and so is a flag left set when the kernel ends;
- ``pipe_barrier(PIPE_ALL)`` waits for every pipe.

Each pipe keeps a vector clock (how many instructions of every pipe it knows finished); an
access conflicts with an earlier one by another pipe, one of them writing, unless the clock
says that one finished. Tiles are checked by the 32-byte blocks of their buffer they occupy
(each copy of a double-buffered tile its own; two tiles placed over the same bytes conflict
like one), global memory element by element, so windows of one tensor that do not overlap
never conflict. The first conflict raises :class:`RaceError` naming both instructions and the loop
iterations they ran in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from polykrnl.errors import RaceError
from polykrnl.targets.pto.program import Instr, Pipe

__all__ = ["RaceChecker"]

_PIPES: tuple[Pipe, ...] = tuple(p for p in Pipe if p is not Pipe.ALL)
_INDEX: dict[Pipe, int] = {p: k for k, p in enumerate(_PIPES)}

Array = np.ndarray


@dataclass(frozen=True)
class _Issued:
    """One issued instruction, for messages."""

    ins: Instr
    pipe: Pipe
    where: str

    def describe(self) -> str:
        what = f" ({self.ins.comment})" if self.ins.comment else ""
        at = f" at {self.where}" if self.where else ""
        return f"{self.ins.op} on {self.pipe.cpp}{what}{at}"


class _Shadow:
    """Per element of one resource: the last write (pipe index, its sequence number) and, per
    pipe, the sequence number of its last read (0: none)."""

    def __init__(self, size: int) -> None:
        self.write_pipe = np.full(size, -1, np.int8)
        self.write_seq = np.zeros(size, np.int64)
        self.read_seq = np.zeros((len(_PIPES), size), np.int64)


class RaceChecker:
    """Feed it the program's items in the order the model runs them (see :mod:`.interpret`)."""

    def __init__(self, kernel: str) -> None:
        self.kernel = kernel
        n = len(_PIPES)
        # clock[p][q]: how many of q's instructions p knows finished (clock[p][p]: issued)
        self.clock = np.zeros((n, n), np.int64)
        self.issued: list[list[_Issued]] = [[] for _ in _PIPES]
        self.pending: dict[tuple[Pipe, Pipe, int], tuple[Array, str]] = {}
        self.shadows: dict[str, _Shadow] = {}

    # -- synchronization
    def set_flag(self, src: Pipe, dst: Pipe, event: int, where: str) -> None:
        key = (src, dst, event)
        if key in self.pending:
            raise RaceError(
                f"kernel {self.kernel}: {_flag('set_flag', key)}{_at(where)} while the same "
                f"flag, set{_at(self.pending[key][1])}, has not been waited for",
                hint="a flag is one bit: wait for it before setting it again, or use another "
                "event id",
            )
        self.pending[key] = (self.clock[_INDEX[src]].copy(), where)

    def wait_flag(self, src: Pipe, dst: Pipe, event: int, where: str) -> None:
        key = (src, dst, event)
        if key not in self.pending:
            raise RaceError(
                f"kernel {self.kernel}: {_flag('wait_flag', key)}{_at(where)} waits for a flag "
                "that no set_flag has set",
                hint="waiting for an event never set is illegal (pto-isa); set it first, e.g. "
                "before the loop for the first iterations of a double-buffered loop",
            )
        known, _ = self.pending.pop(key)
        d = _INDEX[dst]
        np.maximum(self.clock[d], known, out=self.clock[d])

    def barrier(self, pipe: Pipe) -> None:
        if pipe is Pipe.ALL:
            self.clock[:] = self.clock.max(axis=0)

    def finish(self) -> None:
        if self.pending:
            key, (_, where) = next(iter(self.pending.items()))
            raise RaceError(
                f"kernel {self.kernel}: {_flag('set_flag', key)}{_at(where)} is never waited for",
                hint="wait for every flag before the kernel ends (the next kernel would see it)",
            )

    # -- accesses
    def access(
        self,
        ins: Instr,
        pipe: Pipe,
        reads: Sequence[tuple[str, Array, str]],
        writes: Sequence[tuple[str, Array, str]],
        where: str,
    ) -> None:
        """One instruction: ``reads``/``writes`` give a resource (a buffer, a tensor), the
        indices of its elements it touches (32-byte blocks of a buffer, elements of a
        tensor) and what to call it. Checks every access against the earlier ones, then
        records them."""
        p = _INDEX[pipe]
        self.clock[p, p] += 1
        seq = int(self.clock[p, p])
        me = _Issued(ins, pipe, where)
        self.issued[p].append(me)
        known = self.clock[p]
        accesses = [(r, False) for r in reads] + [(w, True) for w in writes]
        for (name, idx, label), is_write in accesses:
            sh = self.shadows.setdefault(name, _Shadow(0))
            sel = self._grow(sh, idx)
            wp = sh.write_pipe[sel]
            for q in {int(x) for x in np.unique(wp)} - {-1, p}:
                last = int(sh.write_seq[sel][wp == q].max())
                if last > known[q]:
                    self._race(me, label, is_write, q, last, True)
            if is_write:
                for q in range(len(_PIPES)):
                    if q == p:
                        continue
                    last = int(sh.read_seq[q][sel].max(initial=0))
                    if last > known[q]:
                        self._race(me, label, True, q, last, False)
        for (name, idx, _), is_write in accesses:
            sh = self.shadows[name]
            sel = idx
            if is_write:
                sh.write_pipe[sel] = p
                sh.write_seq[sel] = seq
            else:
                sh.read_seq[p][sel] = seq

    @staticmethod
    def _grow(sh: _Shadow, idx: Array) -> Array:
        need = int(idx.max()) + 1 if idx.size else 0
        if need > sh.write_pipe.size:
            old = sh.write_pipe.size
            sh.write_pipe = np.concatenate([sh.write_pipe, np.full(need - old, -1, np.int8)])
            sh.write_seq = np.concatenate([sh.write_seq, np.zeros(need - old, np.int64)])
            sh.read_seq = np.concatenate(
                [sh.read_seq, np.zeros((len(_PIPES), need - old), np.int64)], axis=1
            )
        return idx

    def _race(
        self, me: _Issued, name: str, writes: bool, q: int, seq: int, other_wrote: bool
    ) -> None:
        other = self.issued[q][seq - 1]
        what = name
        verb = "writes" if writes else "reads"
        raise RaceError(
            f"kernel {self.kernel}: race on {what}: {me.describe()} {verb} it while "
            f"{other.describe()} may still {'write' if other_wrote else 'read'} it "
            f"(no set_flag/wait_flag orders {other.pipe.cpp} before {me.pipe.cpp})",
            hint=f"insert set_flag({other.pipe.cpp}, {me.pipe.cpp}, e) after the first and "
            f"wait_flag({other.pipe.cpp}, {me.pipe.cpp}, e) before the second "
            "(polykrnl.targets.pto.sync.insert_sync does this)",
        )


def _flag(kind: str, key: tuple[Pipe, Pipe, int]) -> str:
    return f"{kind}({key[0].cpp}, {key[1].cpp}, EVENT_ID{key[2]})"


def _at(where: str) -> str:
    return f" at {where}" if where else ""
