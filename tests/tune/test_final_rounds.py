"""The end of a search: the finalists timed again side by side, and the warm-up a long
first call makes unnecessary."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from polykrnl.tuning import Candidate, Job, Move, Outcome, api, measure
from polykrnl.tuning.search import Tried
from tests.tune.programs import MATMUL

SMALL = MATMUL.replace("48", "16")
TILED = Candidate((Move("block", ("i",), 8), Move("reorder", ("i_t", "j", "i", "k"))))


class _Times:
    """An evaluator whose final rounds give fixed times (by candidate), counted."""

    workers = 1
    where = "a test"

    def __init__(self, times: dict[Candidate, float]) -> None:
        self.times = times
        self.asked: list[tuple[list[Candidate], int]] = []

    def run(
        self,
        job: Job,
        candidates: Sequence[Candidate],
        cutoff: float,
        deadline: float | None = None,
    ) -> list[Outcome]:
        raise AssertionError("the final rounds measure nothing new")

    def retime(
        self, job: Job, candidates: Sequence[Candidate], rounds: int
    ) -> list[tuple[float, ...]]:
        self.asked.append((list(candidates), rounds))
        return [(self.times[c],) * rounds for c in candidates]

    def close(self) -> None:
        pass


def _tried(*rows: tuple[Candidate, float, bool]) -> list[Tried]:
    return [
        Tried(i, Outcome(c, "timed", s, (s,), abandoned=slow), float(i))
        for i, (c, s, slow) in enumerate(rows)
    ]


def _cands(n: int) -> list[Candidate]:
    return [Candidate((Move("block", ("i",), 8 * (k + 1)),)) for k in range(n)]


def test_the_winner_is_chosen_on_the_final_rounds() -> None:
    natural = Candidate(label="natural")
    a, b, c, d, e, f = _cands(6)
    tried = _tried((natural, 4.0, False), (a, 1.0, False), (b, 1.1, False), (c, 1.2, False),
                   (d, 1.3, False), (e, 1.4, False), (f, 1.5, False))  # fmt: skip
    # Side by side, b is the fastest: a's 1.0 was a quiet moment of the machine.
    pool = _Times({natural: 4.0, a: 1.5, b: 1.05, c: 1.3, d: 1.3, e: 1.4})
    # 10 s a round, one round's time for the warm-ups: 105 s hold nine rounds
    again, rounds = api._final_rounds(Job("", "f", ()), pool, tried, left=105.0)
    assert rounds == 9
    ((asked, _),) = pool.asked
    assert set(asked) == {natural, a, b, c, d, e}  # the fastest five and the natural order
    best = min((t for t in again if t.outcome.seconds), key=lambda t: t.outcome.seconds or 0)
    assert best.outcome.candidate == b and best.outcome.times == (1.05,) * rounds
    assert [t.outcome for t in again][6] == tried[6].outcome  # f keeps its time


def test_three_finalists_where_five_rounds_of_five_do_not_fit() -> None:
    natural = Candidate(label="natural")
    a, b, c, d, e = _cands(5)
    tried = _tried((natural, 4.0, False), (a, 1.0, False), (b, 1.1, False), (c, 1.2, False),
                   (d, 1.3, False), (e, 1.4, False))  # fmt: skip
    pool = _Times({natural: 4.0, a: 1.0, b: 1.1, c: 1.2})
    # five: 10 s a round, three rounds in 40 s; three: 7.3 s a round, four rounds
    _, rounds = api._final_rounds(Job("", "f", ()), pool, tried, left=40.0)
    assert rounds == 4 and [set(c) for c, _ in pool.asked] == [{natural, a, b, c}]


def test_at_most_fifteen_final_rounds() -> None:
    a, b = _cands(2)
    pool = _Times({a: 0.001, b: 0.002})
    tried = _tried((a, 0.001, False), (b, 0.002, False))
    _, rounds = api._final_rounds(Job("", "f", ()), pool, tried, left=60.0)
    assert rounds == api.MOST_FINAL_ROUNDS == 15


@pytest.mark.parametrize(("threads", "rounds"), [(False, 5), (True, 2)])
def test_short_threaded_finalists_count_twice_a_round(
    monkeypatch: pytest.MonkeyPatch, threads: bool, rounds: int
) -> None:
    """`retime` calls a short kernel on threads twice a round (once to wake its threads):
    2.1 s a round, or 4.2 with threads, and a round for the warm-ups, in 13 s."""
    monkeypatch.setattr(api, "WARM_SECONDS", 10.0)
    a, b = _cands(2)
    pool = _Times({a: 1.0, b: 1.1})
    tried = _tried((a, 1.0, False), (b, 1.1, False))
    _, got = api._final_rounds(Job("", "f", (), threads=threads), pool, tried, left=13.0)
    assert got == rounds


def test_no_final_rounds_when_two_do_not_fit_or_a_candidate_was_abandoned() -> None:
    a, b = _cands(2)
    natural = Candidate(label="natural")
    tried = _tried((natural, 30.0, True), (a, 1.0, False), (b, 1.1, False))
    pool = _Times({a: 1.0, b: 1.1})
    # 2.1 s a round, and one round's time for the warm-ups: 6 s hold one round only
    again, rounds = api._final_rounds(Job("", "f", ()), pool, tried, left=6.0)
    assert (again, rounds) == (tried, 0) and not pool.asked
    again, rounds = api._final_rounds(Job("", "f", ()), pool, tried, left=6.5)
    assert rounds == 2 and [set(c) for c, _ in pool.asked] == [{a, b}]  # not the abandoned


def test_the_final_rounds_count_the_finalists_preparation() -> None:
    """Each finalist is made again before its first call: with 6.5 s left, two rounds of
    2.1 s fit (test above), but not after 4 s of making the two kernels again."""
    a, b = (
        Outcome(c, "timed", s, (s,), prepare_seconds=2.0)
        for c, s in zip(_cands(2), (1.0, 1.1), strict=True)
    )
    tried = [Tried(0, a, 0.0), Tried(1, b, 1.0)]
    pool = _Times({a.candidate: 1.0, b.candidate: 1.1})
    assert api._final_rounds(Job("", "f", ()), pool, tried, left=6.5) == (tried, 0)
    assert not pool.asked
    _, rounds = api._final_rounds(Job("", "f", ()), pool, tried, left=10.5)
    assert rounds == 2 and len(pool.asked) == 1


class _Kernel:
    """A kernel whose calls take `seconds` each, counted."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.calls = seconds, 0

    def compile(self, **_: Any) -> float:
        return 0.0

    def __call__(self, **_: Any) -> None:
        self.calls += 1
        time.sleep(self.seconds)


@pytest.mark.parametrize(("seconds", "calls"), [(0.0, 3), (0.01, 2)])
def test_a_long_first_call_is_a_timing_not_a_warm_up(
    monkeypatch: pytest.MonkeyPatch, seconds: float, calls: int
) -> None:
    monkeypatch.setattr(measure, "WARM_SECONDS", 0.005)
    monkeypatch.setattr(measure, "STEADY_SECONDS", 0.0)
    job = Job(SMALL, "mm", (), warmup=1, repeats=2)
    st = measure._State(None, None, None, large={})  # type: ignore[arg-type]
    kernel = _Kernel(seconds)
    times, abandoned = measure._timed(job, st, kernel, float("inf"))
    assert kernel.calls == calls and len(times) == 2 and not abandoned


@pytest.mark.parametrize(("enough", "calls"), [(10.0, 3), (0.015, 2), (0.005, 1)])
def test_calls_that_add_up_to_enough_seconds_rank_a_candidate(
    monkeypatch: pytest.MonkeyPatch, enough: float, calls: int
) -> None:
    """Calls of 0.01 s, three repeats asked, the first a timing (long enough): the
    candidate is timed until its calls add up to ENOUGH_SECONDS (a 12 s kernel once)."""
    monkeypatch.setattr(measure, "WARM_SECONDS", 0.005)
    monkeypatch.setattr(measure, "ENOUGH_SECONDS", enough)
    monkeypatch.setattr(measure, "STEADY_SECONDS", 0.0)
    job = Job(SMALL, "mm", (), warmup=1, repeats=3)
    st = measure._State(None, None, None, large={})  # type: ignore[arg-type]
    kernel = _Kernel(0.01)
    times, abandoned = measure._timed(job, st, kernel, float("inf"))
    assert kernel.calls == calls and len(times) == calls and not abandoned


class _FirstSlow(_Kernel):
    """A kernel whose first call takes `first` seconds, the others `seconds`."""

    def __init__(self, first: float, seconds: float) -> None:
        super().__init__(seconds)
        self.first = first

    def __call__(self, **_: Any) -> None:
        self.calls += 1
        time.sleep(self.first if self.calls == 1 else self.seconds)


@pytest.mark.parametrize(("later", "calls", "abandoned"), [(0.0, 3, False), (0.02, 2, True)])
def test_a_slow_warm_up_call_does_not_stop_a_candidate(
    monkeypatch: pytest.MonkeyPatch, later: float, calls: int, abandoned: bool
) -> None:
    """A first call above the cutoff (the output's first touch) but short of
    WARM_SECONDS is a warm-up: the candidate stops only when a timed call is slow too."""
    monkeypatch.setattr(measure, "WARM_SECONDS", 1.0)
    monkeypatch.setattr(measure, "STEADY_SECONDS", 0.0)
    job = Job(SMALL, "mm", (), warmup=1, repeats=2)
    st = measure._State(None, None, None, large={})  # type: ignore[arg-type]
    kernel = _FirstSlow(0.02, later)
    times, stopped = measure._timed(job, st, kernel, 0.01)
    assert kernel.calls == calls and stopped == abandoned
    assert len(times) == (1 if abandoned else 2)


@pytest.mark.parametrize(("seconds", "steady"), [(0.002, 0.01), (0.002, 1.0), (0.02, 0.01)])
def test_short_calls_are_repeated_until_they_add_up_to_steady_seconds(
    monkeypatch: pytest.MonkeyPatch, seconds: float, steady: float
) -> None:
    """Three repeats asked: calls of 2 ms are timed until they add up to 10 ms (about
    five), at most MAX_REPEATS (fifteen); calls of 20 ms three times, as asked."""
    monkeypatch.setattr(measure, "STEADY_SECONDS", steady)
    job = Job(SMALL, "mm", (), warmup=1, repeats=3)
    st = measure._State(None, None, None, large={})  # type: ignore[arg-type]
    kernel = _Kernel(seconds)
    times, _ = measure._timed(job, st, kernel, float("inf"))
    assert kernel.calls == len(times) + 1  # and a warm-up
    if seconds * 3 >= steady:
        assert len(times) == 3
    elif seconds * measure.MAX_REPEATS < steady:
        assert len(times) == measure.MAX_REPEATS == 15
    else:
        assert len(times) > 3 and sum(times[:-1]) < steady <= sum(times)


def test_retime_times_each_candidate_once_per_round() -> None:
    pytest.importorskip("numba")
    times = measure.retime(Job(SMALL, "mm", ()), [Candidate(), TILED], 3)
    assert [len(t) for t in times] == [3, 3]
    assert all(x > 0 for t in times for x in t)


@pytest.mark.parametrize(("threads", "per_round"), [(False, 1), (True, 2)])
def test_retime_wakes_a_short_threaded_kernel_before_each_timed_call(
    monkeypatch: pytest.MonkeyPatch, threads: bool, per_round: int
) -> None:
    """With threads, a kernel shorter than WARM_SECONDS is called once untimed before
    each timed call of the rounds (its threads asleep after the others' calls would
    time their wake-up); one-thread kernels are called once per round."""
    pytest.importorskip("numba")
    calls: Counter[int] = Counter()
    call = measure._call

    def counted(kernel: Any, inputs: Any, buffers: Any) -> float:
        calls[id(kernel)] += 1
        return call(kernel, inputs, buffers)

    monkeypatch.setattr(measure, "_call", counted)
    times = measure.retime(Job(SMALL, "mm", (), threads=threads), [Candidate(), TILED], 3)
    assert [len(t) for t in times] == [3, 3]
    assert sorted(calls.values()) == [1 + 3 * per_round] * 2


def test_static_sizes_too_large_for_the_interpreter_check_against_the_loops_as_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("numba")
    import polykrnl as pk

    fn = pk.parse(SMALL)["mm"]
    job = Job(SMALL, "mm", ())
    assert measure.oracle_for(fn, job) == "interpreter"  # 16^3 multiply-adds
    monkeypatch.setattr(measure, "ORACLE_STEPS", 1000)
    assert measure.oracle_for(fn, job) == "natural"
    result = pk.tune(fn, workers=0, seed=0, max_trials=3, repeats=1, budget=60)
    assert result.checked_against == "natural" and result.count("timed") >= 2
    assert "checked against the loops as written compiled by Numba" in str(result)


class _Clock:
    """A clock the evaluator below advances by one second per batch."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _OneSecondBatches:
    workers = 2
    where = "a test"

    def __init__(self, clock: _Clock) -> None:
        self.clock, self.batches = clock, 0

    def run(
        self,
        job: Job,
        candidates: Sequence[Candidate],
        cutoff: float,
        deadline: float | None = None,
    ) -> list[Outcome]:
        self.clock.now += 1.0
        self.batches += 1
        return [Outcome(c, "timed", 1.0 + 0.01 * i) for i, c in enumerate(candidates)]

    def retime(
        self, job: Job, candidates: Sequence[Candidate], rounds: int
    ) -> list[tuple[float, ...]]:
        raise AssertionError("not called by the search")

    def close(self) -> None:
        pass


def test_no_batch_starts_that_would_end_past_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    import polykrnl as pk
    from polykrnl.tuning import search as search_module
    from polykrnl.tuning.space import space_of

    clock = _Clock()
    monkeypatch.setattr(search_module.time, "perf_counter", clock)
    fn = pk.parse(SMALL)["mm"]
    pool = _OneSecondBatches(clock)
    space = space_of(pk.Schedule.from_function(fn, recipe=False))
    search_module.search(space, Job(SMALL, "mm", ()), pool, budget=3.5, seed=0)
    # batches start at 0, 1 and 2 s; one started at 3 s would end at 4 s, past 3.5 s
    assert pool.batches == 3


def test_timed_calls_copy_the_inputs_into_the_same_buffers() -> None:
    import numpy as np

    buffers: dict[str, Any] = {}
    a = np.arange(6.0)
    first = measure.refilled({"A": a, "N": 6}, buffers)
    first["A"][0] = -1.0  # a kernel writes its input in place
    second = measure.refilled({"A": a, "N": 6}, buffers)
    assert second["A"] is first["A"] and second["N"] == 6
    assert np.array_equal(second["A"], a) and a[0] == 0.0  # fresh values, `a` untouched
    third = measure.refilled({"A": np.arange(4.0)}, buffers)
    assert third["A"] is not first["A"] and third["A"].shape == (4,)


def test_only_the_arrays_a_call_may_change_are_copied_again() -> None:
    import numpy as np

    buffers: dict[str, Any] = {}
    a, b = np.arange(6.0), np.arange(3.0)
    first = measure.refilled({"A": a, "B": b}, buffers, written={"A"})
    assert np.array_equal(first["B"], b) and first["B"] is not b  # copied once
    first["A"][0] = first["B"][0] = -1.0
    second = measure.refilled({"A": a, "B": b}, buffers, written={"A"})
    assert second["A"][0] == 0.0  # copied again
    assert second["B"] is first["B"] and second["B"][0] == -1.0  # left as it was
    # another array of the same shape under the same name is copied in
    third = measure.refilled({"A": a, "B": b + 1}, buffers, written={"A"})
    assert third["B"] is first["B"] and np.array_equal(third["B"], b + 1)
