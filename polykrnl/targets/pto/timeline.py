"""When each instruction of a tile program would run, pipes in parallel, under a cost model.

The model is for comparing schedules of one kernel (single vs double buffering, one block size
against another), not for predicting hardware time: every pipe runs its instructions in issue
order, each instruction takes the cycles :class:`CostModel` gives it, ``wait_flag`` holds its
pipe until the matching ``set_flag``'s pipe has finished everything issued before the set,
and ``pipe_barrier(PIPE_ALL)`` lines every pipe up. The scalar unit issues without waiting
(its own time is not counted). The default costs are round numbers of the right order for
Ascend (a DMA moves tens of bytes per cycle after a latency of about a hundred cycles, the
vector unit 256 bytes per cycle, the cube a 16 x 16 x 16 block per cycle); change them to see
how sensitive a conclusion is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from polykrnl.targets.pto.program import Instr, Pipe

__all__ = ["CostModel", "PipeClock", "Span", "Timeline"]


@dataclass(frozen=True)
class CostModel:
    """Cycles of an instruction: a fixed start-up plus its bytes over a throughput."""

    dma_latency: int = 100  # TLOAD (MTE2), TSTORE (MTE3, FIX)
    dma_bytes_per_cycle: int = 64
    mov_latency: int = 20  # TMOV L1 -> L0 (MTE1)
    mov_bytes_per_cycle: int = 128
    vector_latency: int = 10  # PIPE_V
    vector_bytes_per_cycle: int = 256
    cube_latency: int = 20  # TMATMUL: one 16 x 16 x 16 block per cycle
    cube_block: int = 16

    def cycles(self, pipe: Pipe, nbytes: int, mkn: tuple[int, int, int] | None) -> float:
        if pipe is Pipe.M and mkn is not None:
            m, k, n = (-(-x // self.cube_block) for x in mkn)
            return self.cube_latency + m * k * n
        if pipe in (Pipe.MTE2, Pipe.MTE3, Pipe.FIX):
            return self.dma_latency + nbytes / self.dma_bytes_per_cycle
        if pipe is Pipe.MTE1:
            return self.mov_latency + nbytes / self.mov_bytes_per_cycle
        return self.vector_latency + nbytes / self.vector_bytes_per_cycle


@dataclass(frozen=True)
class Span:
    """One instruction's run on its pipe."""

    pipe: Pipe
    start: float
    end: float
    op: str
    comment: str = ""


@dataclass(frozen=True)
class Timeline:
    """The spans of one run of a kernel; ``makespan`` is when the last pipe finishes."""

    kernel: str
    spans: tuple[Span, ...]
    cost: CostModel = field(default_factory=CostModel)

    @property
    def makespan(self) -> float:
        return max((s.end for s in self.spans), default=0.0)

    @property
    def pipes(self) -> tuple[Pipe, ...]:
        """The pipes used, in the order data flows through them."""
        order = [Pipe.MTE2, Pipe.MTE1, Pipe.M, Pipe.V, Pipe.FIX, Pipe.MTE3, Pipe.S]
        used = {s.pipe for s in self.spans}
        return tuple(p for p in order if p in used)

    def busy(self, pipe: Pipe) -> float:
        """Cycles `pipe` spends running instructions."""
        return sum(s.end - s.start for s in self.spans if s.pipe is pipe)

    def summary(self) -> str:
        span = self.makespan
        parts = [
            f"{p.cpp} {100 * self.busy(p) / span:.0f}%" if span else f"{p.cpp} 0%"
            for p in self.pipes
        ]
        return (
            f"{self.kernel}: {len(self.spans)} instructions in {span:,.0f} modelled cycles; "
            f"busy: {', '.join(parts)}"
        )

    def __repr__(self) -> str:
        return f"<Timeline {self.summary()}>"


class PipeClock:
    """Follows a run (fed by the NumPy model in issue order) and times it."""

    def __init__(self, cost: CostModel) -> None:
        self.cost = cost
        self.free: dict[Pipe, float] = {}  # when each pipe finishes what it was given
        self.pending: dict[tuple[Pipe, Pipe, int], float] = {}
        self.spans: list[Span] = []

    def instr(self, ins: Instr, pipe: Pipe, nbytes: int, mkn: tuple[int, int, int] | None) -> None:
        start = self.free.get(pipe, 0.0)
        end = start + self.cost.cycles(pipe, nbytes, mkn)
        self.free[pipe] = end
        self.spans.append(Span(pipe, start, end, ins.op, ins.comment))

    def set_flag(self, src: Pipe, dst: Pipe, event: int) -> None:
        self.pending[(src, dst, event)] = self.free.get(src, 0.0)

    def wait_flag(self, src: Pipe, dst: Pipe, event: int) -> None:
        # an unmatched wait is the race checker's to report; here it waits for nothing
        ready = self.pending.pop((src, dst, event), 0.0)
        self.free[dst] = max(self.free.get(dst, 0.0), ready)

    def barrier(self, pipe: Pipe) -> None:
        if pipe is Pipe.ALL:
            t = max(self.free.values(), default=0.0)
            self.free = dict.fromkeys(self.free, t)

    def timeline(self, kernel: str) -> Timeline:
        return Timeline(kernel, tuple(self.spans), self.cost)
