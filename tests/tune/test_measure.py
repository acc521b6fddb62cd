"""Measurement on Numba: every timed kernel equals the interpreter first; errors are clear."""

from __future__ import annotations

import contextlib
import math
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.tuning import Candidate, Job, Move, measure, synthetic_cost
from polykrnl.tuning.evaluate import InProcess, LocalPool
from polykrnl.tuning.measure import Turns, evaluate
from tests.tune.programs import MATMUL, RECIPE_SIZES, SWEEP

SMALL = MATMUL.replace("48", "16")

pytest.importorskip("numba")


def test_a_candidate_is_checked_then_timed() -> None:
    job = Job(SMALL, "mm", (), repeats=2)
    tiled = Candidate((Move("block", ("i",), 8), Move("reorder", ("i_t", "j", "i", "k"))))
    outcome = evaluate(job, tiled)
    assert outcome.status == "timed", outcome.message
    # microseconds a call: repeated past the two asked, to MAX_REPEATS
    assert outcome.seconds is not None and len(outcome.times) == measure.MAX_REPEATS
    # what making it again costs: at least its compilation, which is part of it
    assert outcome.prepare_seconds >= outcome.compile_seconds > 0
    illegal = evaluate(Job(SWEEP, "sweep", (("N", 30),)), Candidate((Move("reorder", ("j", "i")),)))
    assert illegal.status == "illegal" and illegal.seconds is None


def test_timed_calls_copy_again_only_what_the_kernel_writes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    job = Job(SMALL, "mm", (), repeats=2, seed=7)
    copies: dict[int, int] = {}
    copyto = np.copyto

    def counted(dst: np.ndarray, src: np.ndarray) -> None:
        copies[id(dst)] = copies.get(id(dst), 0) + 1
        copyto(dst, src)

    monkeypatch.setattr(measure.np, "copyto", counted)
    outcome = evaluate(job, Candidate(()))
    assert outcome.status == "timed", outcome.message
    st = measure._state(job)
    assert st.written == {"C"}
    calls = job.warmup + len(outcome.times)
    assert [copies[id(st.buffers[n][1])] for n in "ABC"] == [1, 1, calls]
    large = st.large
    assert large is not None  # C holds one call's result: it was copied before each
    one_call = large["C"] + large["A"] @ large["B"]
    assert np.allclose(st.buffers["C"][1], one_call)


class _SpyTurns:
    """Turns that record what is held: ("compiling" or "timing", threads) or None."""

    def __init__(self) -> None:
        self.held: tuple[str, bool] | None = None

    @contextlib.contextmanager
    def _hold(self, what: str, threads: bool) -> Iterator[None]:
        assert self.held is None, "taken twice"
        self.held = (what, threads)
        try:
            yield
        finally:
            self.held = None

    def compiling(self, threads: bool) -> contextlib.AbstractContextManager[None]:
        return self._hold("compiling", threads)

    def timing(self, threads: bool) -> contextlib.AbstractContextManager[None]:
        return self._hold("timing", threads)


@pytest.mark.parametrize("threads", [False, True])
def test_compiling_and_timing_take_their_turns(
    threads: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Legality, the compile and the check hold a compile's turn, the timing a timing's
    turn."""
    from polykrnl.tuning import measure

    turns = _SpyTurns()
    seen: dict[str, tuple[str, bool] | None] = {}
    kernel, checked, timed = measure._kernel, measure._checked, measure._timed
    legality = measure.legality_outcome

    def spy(name: str, f: object) -> object:
        def call(*a: object, **k: object) -> object:
            seen[name] = turns.held
            return f(*a, **k)  # type: ignore[operator]

        return call

    monkeypatch.setattr(measure, "_kernel", spy("kernel", kernel))
    monkeypatch.setattr(measure, "_checked", spy("checked", checked))
    monkeypatch.setattr(measure, "_timed", spy("timed", timed))
    monkeypatch.setattr(measure, "legality_outcome", spy("legality", legality))
    monkeypatch.setattr(measure, "_TURNS", turns)
    outcome = evaluate(Job(SMALL, "mm", (), repeats=1, threads=threads), Candidate())
    assert outcome.status == "timed", outcome.message
    compiling, timing = ("compiling", threads), ("timing", threads)
    assert seen == {
        "legality": compiling,
        "kernel": compiling,
        "checked": compiling,
        "timed": timing,
    }
    assert turns.held is None


def _in_thread(
    log: list[str],
    what: str,
    hold: contextlib.AbstractContextManager[None],
    until: threading.Event | None = None,
) -> tuple[threading.Thread, threading.Event]:
    """Run `hold` in a new thread, log `what` inside it, keep it until `until` is set."""
    inside = threading.Event()

    def body() -> None:
        with hold:
            log.append(what)
            inside.set()
            if until is not None:
                assert until.wait(10)

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread, inside


def test_compilations_overlap_but_wait_for_a_threaded_timing() -> None:
    turns = Turns(2)
    log: list[str] = []
    release = threading.Event()
    first, in_first = _in_thread(log, "compile 1", turns.compiling(True), release)
    assert in_first.wait(10)
    # a second compilation runs beside the first (two slots)
    second, in_second = _in_thread(log, "compile 2", turns.compiling(True))
    assert in_second.wait(10)
    second.join(10)
    # a threaded timing waits for the compilation under way ...
    timer, timed = _in_thread(log, "timing", turns.timing(True))
    assert not timed.wait(0.3)
    # ... and a compilation asked for meanwhile waits for the timing (no starvation)
    third, in_third = _in_thread(log, "compile 3", turns.compiling(True))
    assert not in_third.wait(0.3)
    release.set()
    for t in (first, timer, third):
        t.join(10)
    assert log == ["compile 1", "compile 2", "timing", "compile 3"]


def test_one_thread_timings_run_beside_compilations_not_beside_each_other() -> None:
    turns = Turns(2)
    log: list[str] = []
    release = threading.Event()
    timer, in_timer = _in_thread(log, "timing 1", turns.timing(False), release)
    assert in_timer.wait(10)
    compiler, compiled = _in_thread(log, "compile", turns.compiling(True))
    assert compiled.wait(10)  # a one-thread timing leaves the other core to compile
    other, in_other = _in_thread(log, "timing 2", turns.timing(False))
    assert not in_other.wait(0.3)
    release.set()
    for t in (timer, compiler, other):
        t.join(10)
    assert log == ["timing 1", "compile", "timing 2"]


def test_a_slow_candidate_stops_at_the_cutoff() -> None:
    outcome = evaluate(Job(SMALL, "mm", (), repeats=5), Candidate(), cutoff=0.0)
    assert outcome.status == "timed" and outcome.abandoned and len(outcome.times) == 1


@pytest.mark.slow  # about 10 s: a few Numba compilations
def test_the_winner_equals_the_interpreter() -> None:
    fn = pk.parse(SWEEP)["sweep"]
    sizes = {"N": 64, "A.0": 64, "A.1": 64}
    result = pk.tune(fn, sizes, workers=0, seed=0, max_trials=4, repeats=1)
    assert result.measured and result.verdict == "legal"
    rounds = result.final_rounds
    assert 5 <= rounds <= 15 and f"timed again in {rounds} rounds" in str(result)
    rng = np.random.default_rng(0)
    A = rng.uniform(-1, 1, (50, 50))
    expected = A.copy()
    pk.run_reference(fn, N=50, A=expected)
    result.schedule.to_numba(parallel=False)(N=50, A=A)
    np.testing.assert_allclose(A, expected, rtol=1e-12)


def test_the_local_pool_gives_the_same_search_as_this_process() -> None:
    fn = pk.parse(SWEEP)["sweep"]
    runs = [
        pk.tune(fn, {"N": 40}, cost=synthetic_cost, workers=w, seed=5, max_trials=12)
        for w in (0, 2)
    ]
    assert runs[0].candidate == runs[1].candidate
    assert [t.outcome for t in runs[0].tried] == [t.outcome for t in runs[1].tried]


@pytest.mark.slow  # about 10 s: starting a cluster of two worker processes
def test_a_dask_cluster_gives_the_same_winner_as_the_local_pool() -> None:
    distributed = pytest.importorskip("distributed")
    fn = pk.parse(SWEEP)["sweep"]
    local = pk.tune(fn, {"N": 40}, cost=synthetic_cost, workers=2, seed=7, max_trials=12)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        on_dask = pk.tune(fn, {"N": 40}, cost=synthetic_cost, dask=client, seed=7, max_trials=12)
    assert on_dask.candidate == local.candidate
    assert on_dask.seconds == local.seconds
    assert "Dask" in on_dask.where


def test_errors_are_polykrnl_errors() -> None:
    fn = pk.parse(SWEEP)["sweep"]
    with pytest.raises(pk.ArgumentError, match="numba or the mlir target, not 'numpy'"):
        pk.tune(fn, target="numpy")
    with pytest.raises(pk.ArgumentError, match="budget"):
        pk.tune(fn, budget=0)
    with pytest.raises(pk.ArgumentError, match="no argument 'M'"):
        pk.tune(fn, {"M": 3}, cost=synthetic_cost, workers=0)
    # a dimension no size sets: the interpreter's check says so before any search
    with pytest.raises(pk.ArgumentError, match="does not run at the sizes"):
        pk.tune(pk.parse(MATMUL.replace("48x48", "?x?").replace("= 48", "= 40"))["mm"], {})
    assert InProcess().where == "this process"


def test_a_missing_optuna_says_how_to_install_it() -> None:
    code = (
        "import sys; sys.modules['optuna'] = None\n"
        "import polykrnl as pk\n"
        f"fn = pk.parse({SWEEP!r})['sweep']\n"
        "try:\n    pk.tune(fn)\nexcept pk.UnsupportedError as e:\n    print(e.message, e.hint)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert "needs Optuna" in out and "polykrnl[tune]" in out


def test_tune_loads_neither_optuna_nor_dask_until_it_runs() -> None:
    code = (
        "import sys, polykrnl as pk\npk.tune, pk.TuneResult\n"
        "print('optuna' in sys.modules, 'distributed' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert out.split() == ["False", "False"]


def test_sizes_of_the_recipe_program_are_accepted() -> None:
    job = Job(MATMUL, "mm", tuple(RECIPE_SIZES.items()), check_size=8)
    assert job.check_params()["N"] == 8
    assert LocalPool.__name__ == "LocalPool"


def test_a_sample_sets_the_dynamic_sizes_and_progress_true_draws_a_bar(
    capsys: pytest.CaptureFixture[str],
) -> None:
    fn = pk.parse(SWEEP)["sweep"]
    sample = {"A": np.zeros((40, 24))}
    result = pk.tune(
        fn, {"N": 20}, sample=sample, cost=synthetic_cost, workers=0, seed=5, max_trials=4,
        progress=True,
    )  # fmt: skip
    assert dict(result.sizes) == {"A.0": 40, "A.1": 24, "N": 20}
    assert "timed at A.0=40, A.1=24, N=20" in str(result)
    assert "tune @sweep" in capsys.readouterr().err  # tqdm writes to standard error
    # a --param wins over the sample's shape; a sample of the wrong rank is refused
    result = pk.tune(
        fn, {"N": 20, "A.0": 30}, sample=sample, cost=synthetic_cost, workers=0, max_trials=2
    )
    assert dict(result.sizes)["A.0"] == 30
    with pytest.raises(pk.ArgumentError, match="sample A holds a 40 array"):
        pk.tune(fn, sample={"A": np.zeros(40)}, cost=synthetic_cost, workers=0)
    with pytest.raises(pk.ArgumentError, match="sample N: @sweep has no array argument %N"):
        pk.tune(fn, sample={"N": np.zeros(3)}, cost=synthetic_cost, workers=0)


@pytest.mark.skipif(
    bool(__import__("polykrnl.targets.mlir.native", fromlist=["x"]).missing_tools()),
    reason="MLIR's tools (mlir-opt-19, mlir-translate-19, clang-19) are not installed",
)
def test_tuning_on_the_mlir_target_times_native_kernels() -> None:
    fn = pk.parse(SWEEP)["sweep"]
    sizes = {"N": 64, "A.0": 64, "A.1": 64}
    result = pk.tune(fn, sizes, target="mlir", workers=0, seed=0, max_trials=3, repeats=1)
    assert result.measured and result.verdict == "legal" and result.count("timed") >= 2
    kernel = result.schedule.to_mlir()
    A = np.random.default_rng(1).uniform(-1, 1, (40, 40))
    expected = A.copy()
    pk.run_reference(fn, N=40, A=expected)
    kernel(N=40, A=A)
    np.testing.assert_array_equal(A, expected)


@pytest.mark.slow  # about 20 s: a fork server and Numba compilations in its workers
def test_threaded_tuning_after_a_parallel_kernel_ran_in_this_process(tmp_path: Path) -> None:
    """A process that ran a parallel kernel (Numba on GNU OpenMP) then tunes with
    threads: forked workers were terminated by GNU OpenMP (BrokenProcessPool)."""
    script = tmp_path / "tune_after_parallel.py"
    script.write_text(
        f"""
import numba, numpy as np, polykrnl as pk
MATMUL = {MATMUL!r}
if __name__ == "__main__":
    fn = pk.parse(MATMUL)["mm"]
    s = pk.Schedule.from_function(fn, recipe=False).parallel("i")
    a = np.ones((48, 48))
    numba.set_num_threads(2)
    s.to_numba(parallel=True, cache=False)(A=a, B=a.copy(), C=np.zeros((48, 48)))
    r = pk.tune(fn, threads=True, workers=2, seed=0, max_trials=3, repeats=1, budget=60)
    print("timed", r.count("timed"))
"""
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "timed " in done.stdout


def _slow_when_blocked(candidate: Candidate, schedule: object) -> float:
    """A cost that takes a minute for a blocked candidate (a kernel that runs long)."""
    del schedule
    if any(m.op == "block" for m in candidate.moves):
        time.sleep(60)
    return 1.0


def test_a_candidate_still_measured_at_the_deadline_is_stopped() -> None:
    # The pool's processes cannot interrupt a kernel: they are replaced, and the pool
    # measures the next batch as before.
    job = Job(SMALL, "mm", (), cost=_slow_when_blocked)
    blocked = Candidate((Move("block", ("i",), 8),))
    pool = LocalPool(2)
    try:
        fast, slow = pool.run(job, [Candidate(), blocked], math.inf, time.monotonic() + 2.0)
        assert fast.status == "timed" and fast.seconds == 1.0
        assert slow.status == "stopped" and slow.abandoned and "budget ran out" in slow.message
        (again,) = pool.run(job, [Candidate()], math.inf, time.monotonic() + 30.0)
        assert again.status == "timed"
    finally:
        pool.close()


@pytest.mark.parametrize(
    ("threads", "given", "expected"),
    [(True, None, "10"), (True, "200", "200"), (False, None, None)],
)
def test_threaded_pool_workers_spin_briefly_after_a_region(
    monkeypatch: pytest.MonkeyPatch, threads: bool, given: str | None, expected: str | None
) -> None:
    """Intel's OpenMP threads would spin 200 ms after a region, past the cool-down a
    threaded timing keeps; the user's own KMP_BLOCKTIME stands."""
    import os

    from polykrnl.tuning import evaluate, measure

    monkeypatch.delenv("KMP_BLOCKTIME", raising=False)
    if given is not None:
        monkeypatch.setenv("KMP_BLOCKTIME", given)
    monkeypatch.setattr(measure, "_TURNS", measure._TURNS)  # restored after the test
    turns = Turns()
    evaluate._worker_start(turns, threads)
    assert os.environ.get("KMP_BLOCKTIME") == expected
    assert measure._TURNS is turns


def test_a_threaded_timing_keeps_the_machine_while_its_threads_spin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A threaded timing sleeps COOL_DOWN_SECONDS holding every slot; a one-thread
    timing does not."""
    from polykrnl.tuning import measure

    turns = Turns(2)
    slept: list[tuple[float, bool]] = []

    def sleep(seconds: float) -> None:
        # whether a compilation could start now (it could not while the slots are held)
        free = turns._slots.acquire(blocking=False)
        if free:
            turns._slots.release()
        slept.append((seconds, free))

    monkeypatch.setattr(measure.time, "sleep", sleep)
    for threads in (True, False):
        with turns.timing(threads):
            pass
    assert slept == [(measure.COOL_DOWN_SECONDS, False)]
    with turns.compiling(True):  # every slot given back
        pass
