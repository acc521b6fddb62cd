"""Where candidates are measured: in this process, a local process pool, or a Dask cluster.

Candidates are independent, so an evaluator measures a batch of them at once and
answers their outcomes in the batch's order (the search then tells its engine in that
order, whatever finished first: a fixed seed gives the same search on any evaluator).

* :class:`InProcess`: one after the other, here (an injected cost, tests).
* :class:`LocalPool`: a `concurrent.futures` process pool of forked processes (spawned
  ones import the caller's main script again, which runs a script's `pk.tune` call again
  unless it is guarded by `if __name__ == "__main__"`; this process compiles nothing, so
  it has no Numba threads a fork would lose). With threads, the workers come from a fork
  server instead: a process that ran a parallel kernel before (Numba on GNU OpenMP) may
  not fork a child that starts OpenMP threads again (GNU OpenMP terminates it).
  Compilation and the check against the interpreter run in parallel; timings take turns
  (`measure.Turns`, shared by the processes), so that no two kernels are timed at once.
  With threads, a kernel needs every core while it is timed: its timing waits for the
  compilations under way and keeps new ones out, and keeps the machine until its
  OpenMP threads stop spinning (`measure.COOL_DOWN_SECONDS`).
* :class:`DaskPool`: `dask.distributed` workers (`Client(address)`): each worker times
  one candidate at a time (a lock per worker process); start workers with one thread
  each (`dask worker ADDRESS --nthreads 1`) and nothing else running beside them.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import time
from collections.abc import Sequence
from typing import Any, Protocol

from polykrnl.tuning.measure import Job, Outcome, Turns, evaluate, overdue, retime, set_turns
from polykrnl.tuning.space import Candidate


class Evaluator(Protocol):
    """Measures batches of candidates of one job."""

    workers: int
    where: str  # for the report: "this process", "2 local processes", the address

    def run(
        self,
        job: Job,
        candidates: Sequence[Candidate],
        cutoff: float,
        deadline: float | None = None,
    ) -> list[Outcome]:
        """The outcome of each candidate, in the order given; one still measured at
        `deadline` (a `time.monotonic()` instant) is stopped there and said so, where
        the evaluator can stop it."""
        ...

    def retime(
        self, job: Job, candidates: Sequence[Candidate], rounds: int
    ) -> list[tuple[float, ...]]:
        """The times of `candidates` in `rounds` interleaved rounds, on one worker."""
        ...

    def close(self) -> None: ...


def default_workers() -> int:
    """Processes of the local pool: one per core, at most 4 (timings take turns anyway,
    so more processes only compile ahead)."""
    return max(1, min(4, os.cpu_count() or 1))


class InProcess:
    """Measure in this process, one candidate after the other."""

    workers = 1
    where = "this process"

    def run(
        self,
        job: Job,
        candidates: Sequence[Candidate],
        cutoff: float,
        deadline: float | None = None,
    ) -> list[Outcome]:
        del deadline  # nothing here can stop a kernel that runs in this process
        return [evaluate(job, c, cutoff) for c in candidates]

    def retime(
        self, job: Job, candidates: Sequence[Candidate], rounds: int
    ) -> list[tuple[float, ...]]:
        return retime(job, candidates, rounds)

    def close(self) -> None:
        pass


class LocalPool:
    """A pool of local processes that compile in parallel and time one at a time."""

    def __init__(self, workers: int | None = None, threads: bool = False) -> None:
        self.workers = workers or default_workers()
        self.where = f"{self.workers} local process{'es' if self.workers > 1 else ''}"
        methods = multiprocessing.get_all_start_methods()
        # Workers that run kernels on threads are not forked from this process: if it ran
        # a parallel kernel itself (Numba's OpenMP threads), GNU OpenMP terminates a
        # forked child that starts threads again. A fork server is a fresh process.
        method = "fork" if "fork" in methods else "spawn"
        if threads and "forkserver" in methods:
            method = "forkserver"
        self._ctx = multiprocessing.get_context(method)
        self.threads = threads
        self._pool = self._new_pool()

    def _new_pool(self) -> Any:
        from concurrent.futures import ProcessPoolExecutor

        turns = Turns(self.workers, self._ctx)
        return ProcessPoolExecutor(
            self.workers,
            mp_context=self._ctx,
            initializer=_worker_start,
            initargs=(turns, self.threads),
        )

    def run(
        self,
        job: Job,
        candidates: Sequence[Candidate],
        cutoff: float,
        deadline: float | None = None,
    ) -> list[Outcome]:
        from concurrent.futures import wait

        futures = [self._pool.submit(evaluate, job, c, cutoff) for c in candidates]
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        _, late = wait(futures, timeout=timeout)
        if late:
            # A kernel cannot be interrupted inside its process: the processes go, with
            # whatever they were measuring, and a new pool takes their place.
            self._replace_pool()
        return [
            f.result() if f not in late else overdue(c)
            for f, c in zip(futures, candidates, strict=True)
        ]

    def _replace_pool(self) -> None:
        processes = list(getattr(self._pool, "_processes", {}).values())
        self._pool.shutdown(wait=False, cancel_futures=True)
        for p in processes:
            p.kill()
        for p in processes:
            p.join()
        self._pool = self._new_pool()

    def retime(
        self, job: Job, candidates: Sequence[Candidate], rounds: int
    ) -> list[tuple[float, ...]]:
        return self._pool.submit(retime, job, list(candidates), rounds).result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def _worker_start(turns: Turns, threads: bool) -> None:
    """A pool process's start: its turns, and with threads Intel's OpenMP runtime told
    to spin 10 ms after a parallel region instead of 200 (unless the user chose): a
    threaded timing keeps the machine until its threads stop spinning
    (`measure.COOL_DOWN_SECONDS`), since they would share the cores the next worker's
    kernel is timed on. libgomp's spin is that short already. Their threads are not
    made to sleep at once (OMP_WAIT_POLICY=PASSIVE): each call would then time their
    wake-up (conv's fused parallel kernel 0.26 ms instead of 0.15), and the search
    judged two threads against the calls of a program that calls its kernels in a
    row."""
    if threads:
        os.environ.setdefault("KMP_BLOCKTIME", "10")
    set_turns(turns)


class DaskPool:
    """The workers of a Dask cluster: `address` ("tcp://host:8786") or a `Client`."""

    def __init__(self, address: Any) -> None:
        from distributed import Client

        self._own = not isinstance(address, Client)
        self._client: Any = Client(address) if self._own else address
        workers = self._client.scheduler_info().get("workers", {})
        self.workers = max(1, len(workers))
        address = getattr(self._client.scheduler, "address", "?")
        self.where = f"Dask at {address} ({self.workers} workers)"

    def run(
        self,
        job: Job,
        candidates: Sequence[Candidate],
        cutoff: float,
        deadline: float | None = None,
    ) -> list[Outcome]:
        from distributed import wait

        # pure=False: the same candidate asked twice is measured twice, not cached by Dask
        futures = [self._client.submit(evaluate, job, c, cutoff, pure=False) for c in candidates]
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        with contextlib.suppress(TimeoutError):
            wait(futures, timeout=timeout)
        late = [f for f in futures if not f.done()]
        if late:
            self._client.cancel(late)  # a task already running goes on, its answer unread
        return [
            f.result() if f not in late else overdue(c)
            for f, c in zip(futures, candidates, strict=True)
        ]

    def retime(
        self, job: Job, candidates: Sequence[Candidate], rounds: int
    ) -> list[tuple[float, ...]]:
        future = self._client.submit(retime, job, list(candidates), rounds, pure=False)
        return list(future.result())

    def close(self) -> None:
        if self._own:
            self._client.close()


def evaluator(dask: Any = None, workers: int | None = None, threads: bool = False) -> Evaluator:
    """The evaluator for `pk.tune`'s `dask` and `workers` (0: this process); `threads`:
    the kernels run on threads."""
    if dask is not None:
        return DaskPool(dask)
    if workers == 0:
        return InProcess()
    return LocalPool(workers, threads)
