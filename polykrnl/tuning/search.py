"""The search: Optuna's TPE sampler over the space, legality as its pruner.

Optuna asks for a batch of trials, the space turns each into a candidate, an evaluator
measures the new ones, and every outcome is told back in the batch's order: a time, a
pruned trial (the candidate breaks a dependence: never compiled, never timed) or a
failed one (a primitive refused it, or its kernel differed from the interpreter). The
first trials are enqueued: the loops as written (with threads, also with their outermost
parallel loops parallel) and two Pluto-style starts (fused and
skewed where that makes a band tilable, every permutable band tiled, 32 by 32 or wide, the
outermost loop parallel);
the function's own recipe is measured beside them. A candidate met again is not
measured again. The search stops at its budget of seconds, after `max_trials`, or when
the sampler only proposes candidates already met (the space is exhausted).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from polykrnl.errors import UnsupportedError
from polykrnl.tuning.evaluate import Evaluator
from polykrnl.tuning.measure import Job, Outcome
from polykrnl.tuning.space import Candidate, Space

#: batches in a row with nothing new before the space counts as exhausted
EXHAUSTED_AFTER = 8
#: the second Pluto-style start's tile sizes: outermost loop of a band, the loops between,
#: the innermost (jacobi-2d at LARGE fused and skewed, Numba one thread: 0.42 s, the
#: tuned winner in benchmarks/RESULTS.md, against about 0.78 s tiled 32 x 32 x 32)
WIDE_TILES = (16, 64, 256)
#: a candidate slower than this many times the best so far at its first call stops there
CUTOFF_FACTOR = 3.0

INSTALL_HINT = "pip install 'polykrnl[tune]' (Optuna, and dask.distributed for --dask)"


@dataclass(frozen=True)
class Tried:
    """One measured candidate: its outcome and when, in seconds since the search began."""

    number: int  # in the order tried (seeded ones first)
    outcome: Outcome
    at: float


@dataclass(frozen=True)
class Progress:
    """How far the search is (handed to the progress callback after every batch)."""

    tried: int
    pruned: int
    best: float | None
    natural: float | None
    elapsed: float
    budget: float


def optuna_module() -> Any:
    """Optuna, or an UnsupportedError that says how to install it."""
    try:
        import optuna
    except ImportError:
        raise UnsupportedError(
            "pk.tune needs Optuna, which is not installed", hint=INSTALL_HINT
        ) from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


@dataclass
class _Search:
    job: Job
    evaluator: Evaluator
    started: float
    tried: list[Tried]
    seen: dict[Candidate, Outcome]
    deadline: float | None = None  # time.monotonic() at which measuring stops

    def best(self) -> float | None:
        times = [t.outcome.seconds for t in self.tried if t.outcome.status == "timed"]
        return min((t for t in times if t is not None), default=None)

    def measure(self, candidates: Sequence[Candidate]) -> list[Outcome]:
        """The outcomes of `candidates`: measured once each, in order (those still
        measured at the end of the budget stopped there)."""
        new = list(dict.fromkeys(c for c in candidates if c not in self.seen))
        best = self.best()
        cutoff = math.inf if best is None else CUTOFF_FACTOR * best
        outcomes = self.evaluator.run(self.job, new, cutoff, self.deadline)
        for c, outcome in zip(new, outcomes, strict=True):
            self.seen[c] = outcome
            self.tried.append(Tried(len(self.tried), outcome, time.perf_counter() - self.started))
        return [self.seen[c] for c in candidates]


def search(
    space: Space,
    job: Job,
    evaluator: Evaluator,
    *,
    budget: float,
    seed: int | None = None,
    max_trials: int | None = None,
    seeds: Sequence[Candidate] = (),
    progress: Callable[[Progress], None] | None = None,
) -> list[Tried]:
    """Search `space` for `budget` seconds; every candidate measured, in order.

    `seeds` (the recipe) are measured first, with the enqueued trials (the natural order
    and the Pluto-style starts) and the space's fusions by tiles. `max_trials` bounds the
    trials asked of the sampler.
    """
    optuna = optuna_module()
    sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=8, multivariate=True)
    study = optuna.create_study(direction="minimize", sampler=sampler)
    labels = _enqueue_starts(study, space)
    s = _Search(job, evaluator, time.perf_counter(), [], {}, time.monotonic() + budget)
    s.measure([*seeds, *space.tilewise_candidates()])
    asked, idle = 0, 0
    batch = max(2, evaluator.workers)
    natural = None
    # A batch is not started when one as long as the recent ones (the median of the last
    # three) would overrun the budget: what is left of it is the final rounds' (api.py),
    # not a batch that ends past it.
    durations: list[float] = []
    while (
        time.perf_counter() - s.started + (statistics.median(durations[-3:]) if durations else 0)
        < budget
        and idle < EXHAUSTED_AFTER
    ):
        batch_started = time.perf_counter()
        if max_trials is not None and asked >= max_trials:
            break
        n = batch if max_trials is None else min(batch, max_trials - asked)
        trials = [study.ask() for _ in range(n)]
        asked += n
        candidates = [space.candidate(t) for t in trials]
        candidates = [
            Candidate(c.moves, c.recipe, labels.get(t.number, ""))
            for c, t in zip(candidates, trials, strict=True)
        ]
        fresh = any(c not in s.seen for c in candidates)
        idle = 0 if fresh else idle + 1
        for t, outcome in zip(trials, s.measure(candidates), strict=True):
            _tell(optuna, study, t, outcome)
            if t.number == 0 and outcome.status == "timed":
                natural = outcome.seconds
        durations.append(time.perf_counter() - batch_started)
        if progress is not None:
            pruned = sum(t.outcome.status == "illegal" for t in s.tried)
            elapsed = time.perf_counter() - s.started
            progress(Progress(len(s.tried), pruned, s.best(), natural, elapsed, budget))
    return s.tried


def _enqueue_starts(study: Any, space: Space) -> dict[int, str]:
    """Enqueue the starting trials, each once; their labels by trial number. With
    threads, the loops as written are also tried with their outermost loops that may run
    in parallel made parallel (heat-3d: 3.5x on two threads, where a tiling across time
    keeps only its innermost loops parallel)."""
    starts = [("natural", space.natural_params())]
    if space.threads:
        starts.append(("natural, parallel", space.natural_params(parallel=True)))
    starts += [
        ("pluto", space.pluto_params()),
        ("pluto, wide tiles", space.pluto_params(WIDE_TILES)),
    ]
    labels: dict[int, str] = {}
    kept: list[dict[str, Any]] = []
    for label, params in starts:
        if params not in kept:
            labels[len(kept)] = label
            kept.append(params)
            study.enqueue_trial(params)
    return labels


def _tell(optuna: Any, study: Any, trial: Any, outcome: Outcome) -> None:
    """Tell the sampler a time, a pruned trial (illegal) or a failed one."""
    state = optuna.trial.TrialState
    if outcome.status == "timed":
        study.tell(trial, outcome.seconds)
    elif outcome.status == "illegal":
        study.tell(trial, state=state.PRUNED)
    else:
        study.tell(trial, state=state.FAIL)
