"""`pk.tune`: search the legal schedules of a function for the fastest, by measuring them."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from polykrnl.errors import ArgumentError
from polykrnl.tuning.evaluate import Evaluator, evaluator
from polykrnl.tuning.measure import WARM_SECONDS, Cost, Job, oracle_for
from polykrnl.tuning.result import TuneResult
from polykrnl.tuning.search import Progress, Tried, optuna_module, search
from polykrnl.tuning.space import Candidate, space_of, starting_schedules
from polykrnl.tuning.starts import start_candidates

if TYPE_CHECKING:
    from polykrnl.ir import Function

#: the default budget of `pk.tune` and `polykrnl tune`, in seconds
DEFAULT_BUDGET = 120.0


def tune(
    fn: Function,
    params: Mapping[str, float] | None = None,
    *,
    budget: float = DEFAULT_BUDGET,
    target: str = "numba",
    dask: Any = None,
    seed: int | None = None,
    threads: bool = False,
    workers: int | None = None,
    max_trials: int | None = None,
    skew: bool = True,
    repeats: int = 3,
    size: int = 16,
    cost: Cost | None = None,
    progress: Callable[[Progress], None] | bool | None = None,
    sample: Mapping[str, Any] | None = None,
    start: Sequence[Candidate | TuneResult] = (),
) -> TuneResult:
    """The fastest legal schedule of `fn` found in `budget` seconds, by measured time.

    The space (`polykrnl.tuning.space`): the fusion of a loop's sibling loops (a time
    loop's spatial nests), per band of each nest, skews that make it tilable,
    block sizes, orders of the tile and point loops, unrolling; with `threads`, the
    parallel loops (or parallel parts). Optuna's TPE sampler searches it, from the loops
    as written (with threads, also parallel), the recipe and two Pluto-style tilings;
    illegal candidates are pruned before anything is compiled. Each other candidate is
    compiled for `target` (Numba, or "mlir": MLIR's own tools; `parallel=threads`),
    checked against the reference interpreter at small sizes, then timed at `params`
    (sizes as `polykrnl run` takes them: ``{"N": 1000, "A.0": 64}``; others take `size`)
    with a warm-up and `repeats` calls (a short kernel more), median kept. The search
    stops at 85% of the budget (a candidate still measured then is stopped); the fastest
    five (or three), the natural order and the recipe are then timed again in up to 15
    interleaved rounds, and the winner is the fastest of those times. `sample` (arrays by
    argument name, as the function will be called) sets the dynamic dimensions of those
    arguments to the sample's shapes, where `params` does not.

    `progress`: a callable given a `Progress` after each batch, or True for a tqdm bar.

    Candidates are measured by a local process pool (`workers` processes, default one
    per core; 0: this process) or by the workers of a Dask cluster (`dask`: its address,
    or a `distributed.Client`). `seed` fixes the sampler, `max_trials` bounds its trials.
    `cost` (a function of the candidate and its schedule, picklable) replaces compiling
    and timing, for tests and examples. `skew=False` keeps to schedules Krnl can write
    (no skew, fusion or parallel parts).
    `start`: candidates (or earlier results: their winner, and a runner-up within 5% of
    it, `TuneResult.starts`) measured first, beside the recipe; with `threads`, each also
    parallel, hoisted, in wavefronts (`starts.start_candidates`: a one-thread winner).

    Needs ``polykrnl[tune]`` (Optuna; dask.distributed for `dask`) and
    ``polykrnl[numba]``. Raises `ArgumentError` for a bad size or budget,
    `UnsupportedError` when a dependency is missing.

    Examples
    --------
    >>> import polykrnl as pk
    >>> from polykrnl.tuning import synthetic_cost
    >>> fn = pk.parse('''
    ... func.func @t(%A: memref<64x64xf32>, %B: memref<64x64xf32>) {
    ...   %ii, %jj = krnl.define_loops 2
    ...   krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 64, %jj -> %j = 0 to 64) {
    ...     %v = krnl.load %A[%i, %j] : memref<64x64xf32>
    ...     krnl.store %v, %B[%j, %i] : memref<64x64xf32>
    ...   }
    ...   return
    ... }''')["t"]
    >>> result = pk.tune(fn, cost=synthetic_cost, workers=0, seed=1, max_trials=12)
    >>> result.verdict, result.pruned
    ('legal', 0)
    >>> len(result.top(3)), result.seconds == result.top(1)[0][1]
    (3, True)
    >>> print(result.script.splitlines()[0])
    s = pk.Schedule.from_function(fn, recipe=False)
    """
    _check_arguments(target, budget, repeats, dask, max_trials)
    optuna_module()  # before anything runs: say how to install it when it is missing
    natural, recipe = starting_schedules(fn)
    given = {**_sample_sizes(fn, sample or {}), **dict(params or {})}
    job = _job(fn, given, size=size, threads=threads, target=target, repeats=repeats, cost=cost)
    space = space_of(natural, params=given, threads=threads, skew=skew)
    seeds = [Candidate((), recipe=True, label="recipe")] if recipe is not None else []
    seeds += start_candidates(start, natural, recipe, space)
    pool = evaluator(dask, workers, threads)
    bar = _ProgressBar(fn.name, budget) if progress is True else None
    report = bar if bar is not None else (progress if callable(progress) else None)
    started = time.perf_counter()
    searching = budget if cost is not None else budget * (1 - FINAL_SHARE)
    try:
        tried = search(space, job, pool, budget=searching, seed=seed, max_trials=max_trials,
                       seeds=seeds, progress=report)  # fmt: skip
        rounds = 0
        if cost is None:
            left = budget - (time.perf_counter() - started)
            tried, rounds = _final_rounds(job, pool, tried, left)
    finally:
        pool.close()
        if bar is not None:
            bar.close()
    result = _result(fn.name, tried, natural, recipe, cost is None, pool.where, space.size)
    return replace(result, sizes=job.params, final_rounds=rounds, checked_against=job.oracle)


def _job(
    fn: Function,
    given: Mapping[str, float],
    *,
    size: int,
    threads: bool,
    target: str,
    repeats: int,
    cost: Cost | None,
) -> Job:
    """The measuring job of `fn` at the sizes `given`, after checking that they run."""
    from polykrnl.inputs import make_inputs

    make_inputs(fn, given, seed=0, size=0)  # a --param that sets nothing is refused now
    module = fn.module
    job = Job(
        source=module.source if module.source is not None else module.print(),
        function=fn.name,
        params=tuple(sorted(given.items())),
        size=size,
        threads=threads,
        target="mlir" if target == "mlir" else "numba",
        repeats=repeats,
        cost=cost,
    )
    if cost is None:
        job = replace(job, oracle=oracle_for(fn, job))
        if job.oracle == "interpreter":
            _check_sizes(fn, job)
    return job


#: the share of the budget kept for timing the finalists again, side by side
FINAL_SHARE = 0.15
#: the fastest candidates timed again at the end (with the natural order and the recipe),
#: where FINAL_ROUNDS rounds of them fit in the budget left; else FEWER_FINALISTS
FINALISTS = 5
FEWER_FINALISTS = 3
#: the rounds the finalists are wanted in (fewer when the budget left allows fewer) ...
FINAL_ROUNDS = 5
#: ... and, while they fit, up to this many (short kernels: the median of five calls of
#: mvt's 1.5 ms parallel kernel moved by 0.2 ms between runs on a 2-vCPU VM)
MOST_FINAL_ROUNDS = 15


def _final_rounds(
    job: Job, pool: Evaluator, tried: list[Tried], left: float
) -> tuple[list[Tried], int]:
    """`tried` with the finalists' times replaced by those of interleaved rounds (the
    fastest few, the natural order, the recipe), and the number of rounds (0: none,
    when fewer than two fit in the budget left). Each candidate was timed alone while
    the search ran, under whatever load the machine had then; the winner is chosen
    among times taken side by side."""
    timed = [
        t
        for t in tried
        if t.outcome.status == "timed" and t.outcome.seconds is not None and not t.outcome.abandoned
    ]
    ranked = sorted(timed, key=lambda t: (t.outcome.seconds, t.number))
    baselines = [t for t in timed if t.outcome.candidate.label in ("natural", "recipe")]
    for n in (FINALISTS, FEWER_FINALISTS):
        finalists = list({t.number: t for t in [*ranked[:n], *baselines]}.values())
        rounds = _rounds_that_fit(finalists, left, job.threads)
        if rounds >= FINAL_ROUNDS:
            break
    if len(finalists) < 2 or rounds < 2:
        return tried, 0
    times = pool.retime(job, [t.outcome.candidate for t in finalists], rounds)
    again = {
        t.number: replace(
            t,
            outcome=replace(
                t.outcome,
                seconds=statistics.median(ts),
                times=ts,
                message=f"timed again in {rounds} rounds beside the other finalists",
            ),
        )
        for t, ts in zip(finalists, times, strict=True)
    }
    return [again.get(t.number, t) for t in tried], rounds


def _rounds_that_fit(finalists: list[Tried], left: float, threads: bool) -> int:
    """How many rounds of `finalists` fit in `left` seconds, at most MOST_FINAL_ROUNDS."""
    # Each finalist is made again where it is timed (its legality, code and compiled
    # kernel, as long as the search's worker took: jacobi-2d's wavefronts of skewed
    # tiles, 14 s of isl's AST each), then one round's time for the warm-up calls.
    left -= sum(t.outcome.prepare_seconds for t in finalists)
    # `measure.retime` calls a short kernel on threads twice a round (once to wake them)
    per_round = sum(
        (2 if threads and s < WARM_SECONDS else 1) * s
        for s in (t.outcome.seconds or 0.0 for t in finalists)
    )
    return min(MOST_FINAL_ROUNDS, int(left / per_round) - 1) if per_round > 0 else 0


def _sample_sizes(fn: Function, sample: Mapping[str, Any]) -> dict[str, float]:
    """The dynamic dimensions of `fn`'s memref arguments that the sample's arrays give
    (``A.0 -> 64``), each array checked against its argument's type."""
    import numpy as np
    from xdsl.dialects.builtin import MemRefType

    from polykrnl.inputs import check_input
    from polykrnl.interpreter.values import memref_shape

    sizes: dict[str, float] = {}
    for name, data in sample.items():
        arr = check_input(fn, name, np.asarray(data), f"sample {name}")
        t = next(a.type for a in fn.arguments if a.name == name)
        assert isinstance(t, MemRefType)
        for d, n in enumerate(memref_shape(t)):
            if n is None:
                sizes[f"{name}.{d}"] = arr.shape[d]
    return sizes


class _ProgressBar:
    """A tqdm bar over the budget's seconds, with the search's counts beside it."""

    def __init__(self, name: str, budget: float) -> None:
        import warnings

        with warnings.catch_warnings():
            # Without ipywidgets, tqdm.auto warns and draws the text bar: that bar is fine.
            warnings.simplefilter("ignore")
            from tqdm.auto import tqdm

        self.bar = tqdm(total=round(budget), desc=f"tune @{name}", unit="s")

    def __call__(self, p: Progress) -> None:
        best = "-" if p.best is None else f"{p.best * 1e3:.3g} ms"
        self.bar.set_postfix_str(f"{p.tried} tried, {p.pruned} pruned, best {best}")
        self.bar.update(max(0, min(round(p.elapsed), self.bar.total) - self.bar.n))

    def close(self) -> None:
        self.bar.close()


def _check_sizes(fn: Function, job: Job) -> None:
    """Run the interpreter once at the check's sizes: inputs it cannot run (a dimension
    no --param sizes) are the user's to fix, not every candidate's failure."""
    from polykrnl.errors import PolykrnlError
    from polykrnl.inputs import make_inputs
    from polykrnl.reference import run_reference

    small = job.check_params()
    inputs = make_inputs(fn, small, seed=job.seed, size=min(job.size, job.check_size))
    try:
        run_reference(fn, **inputs)
    except PolykrnlError as e:
        sizes = ", ".join(f"{k}={v}" for k, v in small.items()) or "none given"
        raise ArgumentError(
            f"@{fn.name} does not run at the sizes of the check against the interpreter "
            f"(each size at most {job.check_size}: {sizes}): {e.message}",
            location=e.location,
            hint="give every size the loops need, dynamic memref dimensions included "
            "(--param A.0=N), as `polykrnl run` takes them",
        ) from None


def _check_arguments(
    target: str, budget: float, repeats: int, dask: Any, max_trials: int | None
) -> None:
    if target not in ("numba", "mlir"):
        raise ArgumentError(
            f"pk.tune measures on the numba or the mlir target, not {target!r}",
            hint="target='numba' (Numba's LLVM) or target='mlir' (MLIR's own tools, "
            "mlir-opt, mlir-translate and clang)",
        )
    if target == "mlir":
        from polykrnl.targets.mlir.native import missing_tools

        if missing := missing_tools():
            from polykrnl.errors import UnsupportedError

            raise UnsupportedError(
                f"tuning on the mlir target needs {', '.join(missing)}, not found on PATH",
                hint="install LLVM 19's tools (Debian: apt-get install mlir-19-tools "
                "clang-19), or tune on target='numba'",
            )
    if not budget > 0:
        raise ArgumentError(f"the budget must be a positive number of seconds, not {budget}")
    if repeats < 1:
        raise ArgumentError(f"repeats must be at least 1, not {repeats}")
    if max_trials is not None and max_trials < 1:
        raise ArgumentError(f"max_trials must be at least 1, not {max_trials}")
    if dask is not None:
        try:
            import distributed  # noqa: F401
        except ImportError:
            from polykrnl.errors import UnsupportedError
            from polykrnl.tuning.search import INSTALL_HINT

            raise UnsupportedError(
                "tuning on a Dask cluster needs dask.distributed, which is not installed",
                hint=INSTALL_HINT,
            ) from None


def _result(
    name: str,
    tried: list[Tried],
    natural: Any,
    recipe: Any,
    measured: bool,
    where: str,
    space_size: int,
) -> TuneResult:
    """The fastest timed candidate (by measured time, nothing else) and the baselines."""
    timed = [t for t in tried if t.outcome.status == "timed" and t.outcome.seconds is not None]
    if not timed:
        failures = sorted({t.outcome.message for t in tried if t.outcome.message})[:3]
        raise ArgumentError(
            f"no candidate of @{name} could be timed",
            hint="; ".join(failures) or "give a larger budget",
        )
    best = min(timed, key=lambda t: (t.outcome.seconds, t.number))
    by_label = {t.outcome.candidate.label: t.outcome.seconds for t in timed}
    schedule = best.outcome.candidate.schedule(natural, recipe)
    assert best.outcome.seconds is not None
    return TuneResult(
        function=name,
        schedule=schedule,
        candidate=best.outcome.candidate,
        seconds=best.outcome.seconds,
        natural_seconds=by_label.get("natural"),
        recipe_seconds=by_label.get("recipe"),
        tried=tuple(tried),
        measured=measured,
        where=where,
        space_size=space_size,
    )
