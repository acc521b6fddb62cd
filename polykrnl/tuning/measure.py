"""Measuring one candidate: legality, a check against the interpreter, then its time.

A worker (a process of the local pool, or a Dask worker) gets a :class:`Job` (the
module's text, the function, the sizes, how to measure) and a candidate, and answers an
:class:`Outcome`. The job is text and numbers so that it travels to any process; each
process parses the function, builds its schedule and the inputs once per job.

Every timed kernel first runs at a small size (each size at most `Job.check_size`) and
is compared with the reference interpreter (`pk.run_reference`), within the tolerance of
reassociated sums (a reordered reduction sums in another order): a kernel that is wrong
is never timed. Timing then calls the kernel at the user's sizes on fresh copies of the
inputs (copies not timed): `warmup` calls, then `repeats` (a short kernel more, until
they add up to `STEADY_SECONDS`), the median kept. The
processes measuring take turns (:class:`Turns`): no two kernels are timed at once, and
nothing is compiled beside a kernel timed on threads.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import statistics
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from polykrnl.errors import PolykrnlError
from polykrnl.tuning.space import Candidate, legality_outcome, starting_schedules

if TYPE_CHECKING:
    from polykrnl.ir import Function
    from polykrnl.pipeline import Schedule

# "stopped": still measured when the search's budget ran out (not a fault of the kernel)
Status = Literal["timed", "illegal", "refused", "wrong", "failed", "stopped"]
#: a candidate the cost injected instead of timing ranks (see `synthetic_cost`)
Cost = Callable[[Candidate, "Schedule"], float]


@dataclass(frozen=True)
class Job:
    """What every worker needs to measure candidates of one function (picklable)."""

    source: str  # the module's Krnl text
    function: str
    params: tuple[tuple[str, float], ...]  # the sizes timed (as `polykrnl run` takes them)
    size: int = 16  # dynamic dimensions and index arguments no param sets
    threads: bool = False  # parallel=True: krnl.parallel loops on threads
    target: Literal["numba", "mlir"] = "numba"  # what the kernels are compiled and timed on
    warmup: int = 1
    repeats: int = 3
    check_size: int = 20  # every size of the check against the interpreter, at most
    seed: int = 0  # of the random inputs
    cost: Cost | None = None  # instead of timing (deterministic tests, examples)
    # What every kernel is compared with at the check's sizes: the reference interpreter,
    # or, where it would run for minutes (static shapes the check cannot shrink), the
    # loops as written compiled by Numba ("natural"; see `oracle_for`).
    oracle: Literal["interpreter", "natural"] = "interpreter"

    def check_params(self) -> dict[str, float]:
        """The sizes of the check against the interpreter: each at most `check_size`."""
        out: dict[str, float] = {}
        for name, v in self.params:
            # Integers are sizes (index arguments, dimensions); floats are data (alpha).
            out[name] = min(v, self.check_size) if isinstance(v, int) else v
        return out


@dataclass(frozen=True)
class Outcome:
    """What measuring one candidate gave."""

    candidate: Candidate
    status: Status
    seconds: float | None = None  # the median time (or the injected cost)
    times: tuple[float, ...] = ()  # every timed call
    compile_seconds: float = 0.0
    # Legality, code generation and compilation: what timing it again in another
    # process costs before its first call (isl's AST of a wavefront of skewed
    # tiles takes seconds; `api._final_rounds` counts it).
    prepare_seconds: float = 0.0
    message: str = ""  # why it was not timed, or that timing stopped early
    abandoned: bool = False  # slower than the cutoff at its first call: not repeated


def overdue(candidate: Candidate) -> Outcome:
    """The outcome of a candidate still measured when the search's budget ran out."""
    return Outcome(
        candidate,
        "stopped",
        message="stopped: still measured when the search's budget ran out",
        abandoned=True,
    )


def synthetic_cost(candidate: Candidate, schedule: Schedule) -> float:
    """A deterministic stand-in for a time, for tests and examples: a number in [1, 2)
    from the candidate's text, the same in every process (Python's hash() is not)."""
    del schedule
    digest = hashlib.sha256(str(candidate).encode()).digest()
    return 1.0 + int.from_bytes(digest[:4], "big") / 2**32


@dataclass
class _State:
    """One process's parsed function, schedules and inputs for one job (made once)."""

    fn: Function
    natural: Schedule
    recipe: Schedule | None
    small: dict[str, Any] = field(default_factory=dict)
    expected: tuple[dict[str, Any], tuple[Any, ...]] | None = None
    large: dict[str, Any] | None = None
    # The buffers the inputs are copied into for each timed call (`refilled`), and the
    # arguments a call may change, the only ones copied again (None: all).
    buffers: dict[str, Any] = field(default_factory=dict)
    written: frozenset[str] | None = None


_STATES: dict[Job, _State] = {}


class Turns:
    """How the processes measuring candidates share the machine.

    Timings take turns: two kernels timed at once would share the cores and the memory
    bandwidth they are timed on. A one-thread kernel is timed beside compilations (one
    core each); a kernel on threads needs every core, so its timing waits until the
    compilations under way are done and keeps new ones out (a compile beside a
    two-thread timing on two cores made mvt's one-launch kernel 13.5 ms instead of
    1.1 ms, and the search kept a slower kernel). Compilations still overlap each other:
    each holds one of `workers` slots, a threaded timing holds them all. A timing that
    waits for its slots holds the gate, so that compilations cannot starve it.

    `ctx` makes the locks: `threading` within one process, a multiprocessing context for
    the processes of a pool (which get the object when they start).
    """

    def __init__(self, workers: int = 1, ctx: Any = threading) -> None:
        self.workers = max(1, workers)
        self._gate = ctx.Lock()
        self._slots = ctx.Semaphore(self.workers)
        self._timing = ctx.Lock()

    @contextlib.contextmanager
    def compiling(self, threads: bool) -> Iterator[None]:
        """Held while a candidate is prepared: its legality, code, compilation and check
        (free without threads)."""
        if not threads:
            yield
            return
        with self._gate:
            self._slots.acquire()
        try:
            yield
        finally:
            self._slots.release()

    @contextlib.contextmanager
    def timing(self, threads: bool) -> Iterator[None]:
        """Held while a kernel is timed: alone among timings, and with threads alone."""
        with self._timing:
            if not threads:
                yield
                return
            with self._gate:
                for _ in range(self.workers):
                    self._slots.acquire()
            try:
                yield
                # Still holding every slot: this process's OpenMP threads spin for a few
                # milliseconds after its last call (libgomp's spin; KMP_BLOCKTIME for
                # Intel's runtime, which the pool sets short), on the cores the next
                # timing needs (conv's fused parallel kernel took 6.98, 0.59 and 0.15 ms
                # at its three calls right after another worker's threaded timing).
                time.sleep(COOL_DOWN_SECONDS)
            finally:
                for _ in range(self.workers):
                    self._slots.release()


#: how long a threaded timing keeps the machine after its last call: the OpenMP threads'
#: spin after a parallel region (under 10 ms with libgomp's default here: a call 10 ms
#: after the last paid their wake-up, one 2 ms after did not)
COOL_DOWN_SECONDS = 0.02

# Set by the local pool's initializer to turns its processes share; a Dask worker keeps
# its own (its tasks take turns; give each worker one thread and the machine to itself).
_TURNS = Turns()


def set_turns(turns: Turns) -> None:
    """Make this process's measurements take turns with the processes sharing `turns`."""
    global _TURNS
    _TURNS = turns


def _state(job: Job) -> _State:
    found = _STATES.get(job)
    if found is None:
        from polykrnl.reader.parser import parse

        fn = parse(job.source)[job.function]
        natural, recipe = starting_schedules(fn)
        written = natural.program.written_arguments()
        found = _STATES[job] = _State(fn, natural, recipe, written=written)
    return found


def evaluate(job: Job, candidate: Candidate, cutoff: float = float("inf")) -> Outcome:
    """Measure one candidate (run by a worker): its legality, its check against the
    interpreter, its time. A candidate slower than `cutoff` seconds at its first timed
    call is not repeated (`abandoned`)."""
    try:
        # Legality is isl's work and takes a core as a compilation does (half a second
        # for softmax's fused forms): beside a kernel timed on threads it made the
        # kernel 2x slower, and the search dropped the fastest parallel form.
        with _TURNS.compiling(job.threads):
            ready = _ready(job, candidate)
        if isinstance(ready, Outcome):
            return ready
        st, kernel, compiled, prepared = ready
        with _TURNS.timing(job.threads):
            times, abandoned = _timed(job, st, kernel, cutoff)
    except PolykrnlError as e:
        return Outcome(candidate, "failed", message=e.message)
    except Exception as e:  # the generated kernel failed: this candidate, not the search
        return Outcome(candidate, "failed", message=f"{type(e).__name__}: {e}")
    return Outcome(
        candidate,
        "timed",
        statistics.median(times),
        tuple(times),
        compiled,
        prepared,
        "stopped after one call: slower than the best so far" if abandoned else "",
        abandoned,
    )


def _ready(job: Job, candidate: Candidate) -> Outcome | tuple[_State, Any, float, float]:
    """`candidate`'s kernel compiled and checked against the oracle, with its compile
    seconds and its preparation's (legality, code, compilation); or the outcome that
    ends its measurement there (illegal, refused, wrong, or the injected cost)."""
    st = _state(job)
    started = time.perf_counter()
    sched, status, why = legality_outcome(candidate, st.natural, st.recipe)
    if sched is None:
        return Outcome(candidate, "illegal" if status == "illegal" else "refused", message=why)
    if job.cost is not None:
        return Outcome(candidate, "timed", job.cost(candidate, sched))
    kernel = _kernel(job, sched)
    prepared = time.perf_counter() - started
    compiled = _checked(job, st, kernel)  # its run and the oracle's are not preparation
    if isinstance(compiled, str):
        return Outcome(candidate, "wrong", message=compiled)
    return st, kernel, compiled, prepared + compiled


def _kernel(job: Job, sched: Schedule) -> Any:
    """The kernel of `sched` on the job's target."""
    if job.target == "mlir":
        return sched.to_mlir(parallel=job.threads)
    return sched.to_numba(parallel=job.threads, cache=True)


def _checked(job: Job, st: _State, kernel: Any) -> float | str:
    """Compile, run at the check's sizes and compare with the interpreter: the compile
    time, or what differs."""
    from polykrnl.inputs import make_inputs
    from polykrnl.reference import run_reference
    from polykrnl.tolerance import compare

    if st.expected is None:
        small = job.check_params()
        st.small = make_inputs(st.fn, small, seed=job.seed, size=min(job.size, job.check_size))
        ref_args = copy.deepcopy(st.small)
        if job.oracle == "natural":
            written = _kernel(replace(job, threads=False), st.natural)
            st.expected = (ref_args, _results(written(**ref_args)))
        else:
            st.expected = (ref_args, _results(run_reference(st.fn, **ref_args)))
    args = copy.deepcopy(st.small)
    seconds = kernel.compile(**args)
    results = _results(kernel(**args))
    ref_args, ref_results = st.expected
    n = max(
        (max(v.shape, default=1) for v in args.values() if isinstance(v, np.ndarray)), default=1
    )
    pairs = [
        (f"argument {k}", v, args[k]) for k, v in ref_args.items() if isinstance(v, np.ndarray)
    ]
    if len(results) != len(ref_results):
        return "returns another number of results than the interpreter"
    pairs += [
        (f"result {i}", r, g) for i, (r, g) in enumerate(zip(ref_results, results, strict=True))
    ]
    for label, ref, got in pairs:
        if not compare(ref, got, exact=False, n=n).ok:
            return f"{label} differs from the reference interpreter's at the check's sizes"
    return float(seconds)


#: the interpreter's estimated work (`reference_work`, ops) at the check's sizes above
#: which kernels are checked against the loops as written, compiled: about a minute of
#: interpreter per worker process otherwise, before the first candidate is measured
ORACLE_STEPS = 5_000_000


def oracle_for(fn: Function, job: Job) -> Literal["interpreter", "natural"]:
    """What the candidates of `job` are checked against (see `Job.oracle`)."""
    from polykrnl.inputs import make_inputs
    from polykrnl.reference_work import reference_work

    small = make_inputs(fn, job.check_params(), seed=job.seed, size=min(job.size, job.check_size))
    work = reference_work(fn, small)
    return "natural" if work is not None and work > ORACLE_STEPS else "interpreter"


def _results(result: Any) -> tuple[Any, ...]:
    return () if result is None else result if isinstance(result, tuple) else (result,)


#: a first call at least this long counts as a timing, not a warm-up: what a warm-up
#: settles (caches, branch predictors, the first touch of the output) is then a small
#: part of it, and skipping it saves a whole call of the kernels that matter most
WARM_SECONDS = 0.2
#: timed calls that add up to this many seconds rank a candidate: a kernel of seconds a
#: call (seidel-2d at LARGE, 12 s) is timed once, not `repeats` times, so that the
#: search measures more candidates in its budget (its final rounds time the best again)
ENOUGH_SECONDS = 2.0
#: a short kernel is called past `repeats` until its timed calls add up to this many
#: seconds (at most MAX_REPEATS calls): the median of three calls of a 2.5 ms kernel on
#: threads moved by 20% between timings on a 2-vCPU VM (gemver's strips per thread timed
#: 3.04 ms in a search, 2.55 in 40 rounds beside the 2.9 ms form the search then kept),
#: while fifteen calls cost less than its compilation
STEADY_SECONDS = 0.03
MAX_REPEATS = 15


def _large(job: Job, st: _State) -> dict[str, Any]:
    from polykrnl.inputs import make_inputs

    if st.large is None:
        st.large = make_inputs(st.fn, dict(job.params), seed=job.seed, size=job.size)
    return st.large


def _call(kernel: Any, inputs: Mapping[str, Any], st: _State) -> float:
    """One call's seconds, on fresh copies of `inputs` (the copies are not timed)."""
    args = refilled(inputs, st.buffers, st.written)
    start = time.perf_counter()
    kernel(**args)
    return time.perf_counter() - start


def _timed(job: Job, st: _State, kernel: Any, cutoff: float) -> tuple[list[float], bool]:
    """The times of `repeats` calls after `warmup` (none after a long first call; fewer
    once they add up to ENOUGH_SECONDS, more while they add up to less than
    STEADY_SECONDS), each on fresh copies of the inputs."""
    large = _large(job, st)
    kernel.compile(**large)
    times: list[float] = []
    warmup = job.warmup
    for k in range(job.warmup + max(job.repeats, MAX_REPEATS)):
        t = _call(kernel, large, st)
        if k == 0 and t >= WARM_SECONDS:
            warmup = 0
        if k < warmup:
            # A warm-up call pays the first touch of the kernel's output (page faults:
            # softmax's natural parallel rows 17 ms at their first call, 4.3 after),
            # not the kernel's time: it settles no rank.
            continue
        times.append(t)
        if t > cutoff:
            return [t], True  # already slower than the best: its rank is settled
        if _enough(times, job.repeats):
            break
    return times, False


def _enough(times: Sequence[float], repeats: int) -> bool:
    """Whether `times` rank a candidate (see `_timed`)."""
    total = sum(times)
    if total >= ENOUGH_SECONDS:
        return True
    return len(times) >= repeats and (total >= STEADY_SECONDS or len(times) >= MAX_REPEATS)


def retime(job: Job, candidates: Sequence[Candidate], rounds: int) -> list[tuple[float, ...]]:
    """The times of `candidates` (each legal, checked, timed once already) in `rounds`
    interleaved rounds: every candidate once per round, so that a change of the machine's
    load during the search weighs on all of them alike. Run by one worker."""
    st = _state(job)
    large = _large(job, st)
    kernels = []
    for c in candidates:
        sched, _, why = legality_outcome(c, st.natural, st.recipe)
        assert sched is not None, why
        kernel = _kernel(job, sched)
        kernel.compile(**large)
        kernels.append(kernel)
    times: list[list[float]] = [[] for _ in candidates]
    with _TURNS.timing(job.threads):
        # a warm-up each, as the search's timings had
        warm = [_call(kernel, large, st) for kernel in kernels]
        for _ in range(rounds):
            for i, kernel in enumerate(kernels):
                if job.threads and warm[i] < WARM_SECONDS:
                    # after the others' calls its threads sleep: a short kernel would be
                    # timed on their wake-up (conv's 0.12 ms twice as long after 10 ms
                    # idle), which the search's back-to-back calls did not see
                    _call(kernel, large, st)
                times[i].append(_call(kernel, large, st))
    return [tuple(t) for t in times]


def refilled(
    inputs: Mapping[str, Any], buffers: dict[str, Any], written: Collection[str] | None = None
) -> dict[str, Any]:
    """`inputs` with every array copied into its buffer in `buffers` (by name, made at
    the first call). A new copy per call would be a new allocation per call: the
    allocator then hands the kernel's own result fresh pages, and their page faults
    (about 5 ms for 16 MB) weigh on a kernel that allocates its output as much as its
    loops do, by an amount that depends on the order of the calls.

    `buffers` keeps, by name, the array last copied and its buffer.
    `written`: the arrays a call may change (`PolyProgram.written_arguments`; None: all).
    Only those are copied again at each call; the others once, into their new buffer,
    and the kernel then reads them where the previous call left them. Copying mvt's 32
    MB matrix before every call left it as the copy's dirty lines in one core's cache
    (two threads 1.52 ms, 1.82x one thread; copying only x1 and x2: 1.32 ms, 1.86x, as
    C's 1.94x) and cost every timed call of the search 3-5 ms it did not time."""
    out: dict[str, Any] = {}
    for k, v in inputs.items():
        if not isinstance(v, np.ndarray):
            out[k] = v
            continue
        source, buf = buffers.get(k, (None, None))
        if buf is None or buf.shape != v.shape or buf.dtype != v.dtype:
            buf = np.empty_like(v)
        elif source is v and written is not None and k not in written:
            out[k] = buf
            continue
        np.copyto(buf, v)
        buffers[k] = (v, buf)
        out[k] = buf
    return out
