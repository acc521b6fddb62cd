"""Benchmark: NumPy code generation on the PolyBench kernels (issue 5).

For every kernel NAME of ``benchmarks/polybench/`` and both of its functions
(``@NAME``: PolyBench's natural loop order; ``@NAME_tiled``: a Krnl recipe), in
one process run:

**Compile time by stage** (median and minimum of 7 fresh runs, 3 with
``--quick``, after a discarded one; every run parses the file again, so nothing is cached from an
earlier run). One run is the whole pipeline of ``pk.compile``: ``pk.parse(text)``
(the whole file), ``pk.schedule(fn)``, ``sched.to_numpy()`` and the Python
``compile``/``exec`` of the kernel's source (done by the kernel's first call).
Wrappers around polykrnl's entry points charge every instant of that run to
exactly one stage (the innermost one running), so the stages add up to the
total:

* ``parse``: ``pk.parse`` of the file text (both functions; no ``pk.verify``:
  ``pk.compile`` does not call it, ``poly_program`` checks what it needs);
* ``model``: ``pk.poly_program(fn)`` as ``pk.schedule`` calls it: the nest,
  statements, isl domains and accesses;
* ``recipe``: the rest of ``pk.schedule``: the recipe ops applied as Schedule
  primitives (``krnl.block``/``permute``/``parallel``/``unroll``; their own
  legality refusals are skipped by ``force=True`` inside ``pk.schedule``);
* ``legality``: every call of ``legality.is_legal`` / ``refuse_if_illegal`` /
  ``check``: the report ``pk.schedule`` computes for recipes with a permute or a
  parallel loop (dependences, plus the unpermuted reference program for permuted
  recipes), kept on the schedule, and the one ``to_numpy`` asks for to know which
  loops are parallel (computed there only when the recipe did not);
* ``codegen``: ``to_numpy`` minus its legality check (isl AST, vectorizer,
  Python source) plus the Python compile of the source;
* ``total``: the wall time of the run (the target: under 50 ms median).

Lazy parts of a Schedule (the isl schedule tree, the loop table) are charged to
the stage that first needs them. Also measured, outside the pipeline: ``check``,
``sched.check()`` on a fresh ``pk.schedule(fn, force=True)`` (nothing cached:
the dependence analysis and the full report, as ``bench_legality.py`` times it).

**Run time.** Inputs: ``sizes.arguments(NAME, dataset, seed=0)`` (seeded random
data). Each timed call gets fresh copies of the inputs (copies not timed,
``gc.collect()`` before each call); the figure is the median. Generated kernels
(``pk.schedule(fn).to_numpy()``) and the hand-written NumPy (``hand.NAME``) run
at MEDIUM, interleaved in rounds of one call each, after one untimed call at
MINI (compile, NumPy's first-call paths): at least 7 rounds (3 with ``--quick``),
more until the rounds have taken 3 s (0.3 s), at most 41 (15), so that the
medians of sub-millisecond kernels shrug off the ~4 ms time slices that other
processes take on a busy machine. ``function alone``: the generated function
called directly, without ``NumpyKernel.__call__``'s argument binding and checks
(in the same rounds, for kernels estimated under 2 s). The scalar Python loops are
``pk.schedule(fn).to_numpy(vectorize=False)``, timed at MINI and scaled::

    T_scalar(MEDIUM) ~= T_scalar(MINI) * I(MEDIUM) / I(MINI)

where I(d) is the number of statement instances at dataset d: the sum over the
program's statements of the number of points of the statement's isl domain with
every parameter fixed (index arguments and array sizes), from isl's
``count_val`` (exact; at MINI it is checked against ``len(sched.trace(...))``).
Ratios: ``gen/hand`` = T_generated / T_hand (lower is better); ``speedup vs
scalar`` = T_scalar(MEDIUM, scaled) / T_generated (higher is better).

**Time budget** (``--budget``, seconds per call): the generated kernel runs
first at MINI; if ``T(MINI) * I(MEDIUM) / I(MINI)`` exceeds the budget it runs
at SMALL instead (if SMALL fits in the budget by the same estimate, else it
stays at MINI) and its MEDIUM time is reported as an estimate, scaled from the
largest size run by the same formula, marked "over budget, est.". Kernels that
fit run at most ``budget / estimate`` times (at least once).

**BLAS threads**: the script sets ``OPENBLAS_NUM_THREADS`` (and
``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``) to 1 unless the environment sets them:
on this 2-core machine, shared with other work, two OpenBLAS threads made the
same 200x240 @ 240x220 product take 0.6 ms or 15 ms from one call to the next
(a descheduled thread makes the other spin). Generated and hand code call the
same BLAS, so the ratios compare like with like; the setting is recorded.

**Correctness**, in the same run: the max absolute difference over every array
argument between the generated kernel and the hand NumPy, on the same inputs, at
the size the generated kernel ran (MEDIUM unless over budget), relative to the
largest magnitude in the hand's arrays; a relative error over 1e-10 (as in
``tests/benchmarks/test_polybench_kernels.py``: reassociation in sums and BLAS
products stays far below) or any difference for integers is flagged as a
mismatch. The scalar kernel is checked the same way at MINI.

Targets (issue 5): natural order gen/hand geometric mean <= 1.3 and no kernel
above 3; tiled recipes gen/hand geometric mean <= 2; generated >= 100x faster
than scalar loops; full compile pipeline under 50 ms median per kernel.

Run: ``python benchmarks/bench_numpy.py [--quick] [--kernels a,b] [--json OUT]``.
A full run writes ``benchmarks/RESULTS.md``; ``--quick`` or ``--kernels`` write
it only with an explicit ``--results PATH``.
"""

from __future__ import annotations

import os

# OpenBLAS reads its thread count when NumPy loads it, so this comes before any
# import of numpy (polykrnl imports it). See "BLAS threads" in the docstring.
os.environ["OPENBLAS_NUM_THREADS"] = os.environ.get("OPENBLAS_NUM_THREADS", "1")
os.environ["OMP_NUM_THREADS"] = os.environ.get("OMP_NUM_THREADS", "1")
os.environ["MKL_NUM_THREADS"] = os.environ.get("MKL_NUM_THREADS", "1")

import argparse
import ast
import contextlib
import functools
import gc
import importlib
import importlib.util
import json
import math
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import islpy as isl
import numpy as np

import polykrnl as pk

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine

HERE = Path(__file__).resolve().parent
POLYBENCH = HERE / "polybench"
RESULTS = HERE / "RESULTS.md"

STAGES = ("parse", "model", "recipe", "legality", "codegen")
VARIANTS = ("natural", "tiled")
SEED = 0
# The datasets this benchmark runs: sizes.DATASETS also has LARGE, meant for compiled
# code (the scalar kernels and the model's instance counts would take far too long).
DATASETS = ("MINI", "SMALL", "MEDIUM")
RTOL = 1e-10  # relative tolerance of generated vs hand (reassociation only)

COMPILE_MS = 50.0  # full compile pipeline, median per kernel
NATURAL_GEO = 1.3  # generated / hand, natural order, geometric mean
NATURAL_MAX = 3.0  # generated / hand, natural order, every kernel
TILED_GEO = 2.0  # generated / hand, tiled recipes, geometric mean
SCALAR_SPEEDUP = 100.0  # scalar loops / generated

Array = np.ndarray[Any, Any]


def _import(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"polybench_{name}", POLYBENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hand = _import("hand")
sizes = _import("sizes")


# ------------------------------------------------------------------ stage clock


class Clock:
    """Exclusive time per stage: each instant goes to the innermost open stage."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        # Legality time by the stage that asked for it: "recipe" (the verdict of
        # pk.schedule) or "codegen" (the full check of to_numpy).
        self.legality_for: dict[str, float] = {"recipe": 0.0, "codegen": 0.0}
        self._stack: list[str] = []
        self._mark = 0.0

    def _switch(self, now: float) -> None:
        if self._stack:
            top = self._stack[-1]
            self.totals[top] += now - self._mark
            if top == "legality":
                outer = next((s for s in reversed(self._stack) if s != "legality"), "")
                if outer in self.legality_for:
                    self.legality_for[outer] += now - self._mark
        self._mark = now

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[None]:
        self._switch(time.perf_counter())
        self._stack.append(name)
        try:
            yield
        finally:
            self._switch(time.perf_counter())
            self._stack.pop()

    def wrap(self, name: str, f: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.stage(name):
                return f(*args, **kwargs)

        return wrapper


# Module attributes looked up at call time by pk.schedule / Schedule.check /
# to_numpy: replacing them routes those calls through the clock. (The recipe
# imports refuse_if_illegal by name; the others are called as legality.X.)
PATCHES: tuple[tuple[str, str, str], ...] = (
    ("polykrnl.transforms.recipe", "poly_program", "model"),
    ("polykrnl.transforms.recipe", "refuse_if_illegal", "legality"),
    ("polykrnl.transforms.recipe", "check", "legality"),
    ("polykrnl.transforms.legality", "is_legal", "legality"),
    ("polykrnl.transforms.legality", "refuse_if_illegal", "legality"),
    ("polykrnl.transforms.legality", "check", "legality"),
)


@contextlib.contextmanager
def instrumented(clock: Clock) -> Iterator[None]:
    saved: list[tuple[ModuleType, str, Any]] = []
    try:
        for module_name, attr, stage in PATCHES:
            module = importlib.import_module(module_name)
            original = getattr(module, attr, None)
            if original is None:
                continue  # an older polykrnl (measuring a baseline commit)
            saved.append((module, attr, original))
            setattr(module, attr, clock.wrap(stage, original))
        yield
    finally:
        for module, attr, original in reversed(saved):
            setattr(module, attr, original)


def numpy_kernel(sched: pk.Schedule, *, vectorize: bool = True) -> pk.NumpyKernel:
    kernel = sched.to_numpy(vectorize=vectorize)
    assert isinstance(kernel, pk.NumpyKernel)
    return kernel


def compile_once(text: str, func: str) -> dict[str, float]:
    """One fresh run of the pipeline: seconds per stage and the total."""
    clock = Clock()
    gc.collect()
    with instrumented(clock):
        t0 = time.perf_counter()
        with clock.stage("parse"):
            mod = pk.parse(text)
        fn = mod[func]
        with clock.stage("recipe"):
            sched = pk.schedule(fn)
        with clock.stage("codegen"):
            kernel = numpy_kernel(sched)
            _ = kernel._function  # the Python compile of the source (first call)
        total = time.perf_counter() - t0
    return {
        **clock.totals,
        "total": total,
        "legality:verdict": clock.legality_for["recipe"],
        "legality:to_numpy": clock.legality_for["codegen"],
    }


def check_once(text: str, func: str) -> float:
    """sched.check() on a fresh schedule that has computed nothing yet."""
    sched = pk.schedule(pk.parse(text)[func], force=True)
    gc.collect()
    t0 = time.perf_counter()
    sched.check()
    return time.perf_counter() - t0


# ------------------------------------------------------------------ instances


def param_values(program: pk.PolyProgram, args: dict[str, Any]) -> dict[str, int]:
    """Every parameter of `program`: index arguments by name, array sizes from shapes."""
    out: dict[str, int] = {}
    for p in program.params:
        if p in args and not isinstance(args[p], np.ndarray):
            out[p] = int(args[p])
            continue
        display = program.param_display.get(p, p)
        array, dim = display.rsplit(".", 1)
        out[p] = int(args[array].shape[int(dim)])
    return out


def instances(program: pk.PolyProgram, values: dict[str, int]) -> int:
    """The number of statement instances (exact: isl counts each fixed domain)."""
    total = 0
    for stmt in program.statements:
        dom = stmt.domain
        for i in range(dom.dim(isl.dim_type.param)):
            name = dom.get_dim_name(isl.dim_type.param, i)
            assert name is not None
            dom = dom.fix_val(isl.dim_type.param, i, isl.Val(values[name]))
        total += int(dom.count_val().to_python())
    return total


# ------------------------------------------------------------------ source


@dataclass
class SourceInfo:
    lines: int
    scalar: list[tuple[str, str]]  # (loop, reason) of "# loop X stays scalar: why"
    notes: list[str]  # the vectorizer's other comments ("loops i vectorized ...")
    loop_depth: int  # deepest nest of Python for loops in the kernel
    loops: int  # Python for loops in the kernel

    @staticmethod
    def of(kernel: pk.NumpyKernel) -> SourceInfo:
        scalar: list[tuple[str, str]] = []
        notes: list[str] = []
        for line in kernel.source.splitlines():
            m = re.match(r"\s+# loop (\S+) stays scalar: (.*)$", line)
            if m:
                scalar.append((m.group(1), m.group(2)))
            elif re.match(r"\s+# loops ", line):
                notes.append(line.strip()[2:])
        tree = ast.parse(kernel.source)
        func = next(
            n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == kernel.entry
        )

        def depth(node: ast.AST) -> int:
            inner = max((depth(c) for c in ast.iter_child_nodes(node)), default=0)
            return inner + isinstance(node, ast.For | ast.While)

        loops = sum(isinstance(n, ast.For | ast.While) for n in ast.walk(func))
        return SourceInfo(len(kernel.source.splitlines()), scalar, notes, depth(func), loops)

    def summary(self) -> str:
        if self.scalar:
            return "scalar loop " + ", ".join(loop for loop, _ in self.scalar)
        if self.loop_depth == 0:
            return "array code"
        return f"array code in {self.loop_depth} Python loop" + "s" * (self.loop_depth > 1)


# ------------------------------------------------------------------ results


@dataclass
class Run:
    """Timed calls of one kernel at one dataset."""

    dataset: str
    seconds: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


@dataclass
class FuncResult:
    kernel: str
    variant: str
    func: str
    stage_samples: dict[str, list[float]] = field(default_factory=dict)
    check_samples: list[float] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # dataset -> instances
    trace_checked: bool | None = None  # I(MINI) == len(trace) (None: not checked)
    exact: bool = True
    source: SourceInfo | None = None
    gen_mini: Run | None = None
    gen: Run | None = None  # the run the figures come from (MEDIUM unless over budget)
    raw: Run | None = None  # the generated function called directly (fast kernels)
    scalar_mini: Run | None = None
    error: float = 0.0  # max |generated - hand| at gen.dataset
    scale: float = 0.0  # max |hand| there
    scalar_error: float = 0.0
    scalar_scale: float = 0.0
    integer: bool = False
    failure: str = ""  # an exception that stopped a part of the measurement

    def stage_ms(
        self, stage: str, how: Callable[[list[float]], float] = statistics.median
    ) -> float:
        return how(self.stage_samples[stage]) * 1e3

    @property
    def compile_ms(self) -> float:
        return self.stage_ms("total")

    @property
    def check_ms(self) -> float:
        return statistics.median(self.check_samples) * 1e3

    def scale_to_medium(self, run: Run) -> float:
        return run.median * self.counts["MEDIUM"] / self.counts[run.dataset]

    @property
    def estimated(self) -> bool:
        return self.gen is not None and self.gen.dataset != "MEDIUM"

    @property
    def gen_s(self) -> float:
        """Generated kernel at MEDIUM: measured, or scaled when over budget."""
        assert self.gen is not None
        return self.scale_to_medium(self.gen) if self.estimated else self.gen.median

    @property
    def scalar_s(self) -> float:
        assert self.scalar_mini is not None
        return self.scale_to_medium(self.scalar_mini)

    @property
    def speedup(self) -> float:
        return self.scalar_s / self.gen_s

    def rel_error(self, scalar: bool = False) -> float:
        err, scale = (self.scalar_error, self.scalar_scale) if scalar else (self.error, self.scale)
        return err / scale if scale else err

    def mismatch(self, scalar: bool = False) -> bool:
        err = self.scalar_error if scalar else self.error
        if self.integer:
            return err != 0
        return not self.rel_error(scalar) <= RTOL  # NaN counts as a mismatch


@dataclass
class KernelResult:
    name: str
    hand: Run | None = None
    funcs: dict[str, FuncResult] = field(default_factory=dict)  # variant -> result

    def ratio(self, variant: str) -> float:
        f = self.funcs[variant]
        assert self.hand is not None
        return f.gen_s / self.hand.median


# ------------------------------------------------------------------ running


def copies(args: dict[str, Any]) -> dict[str, Any]:
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}


def timed_call(f: Callable[..., Any], args: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    """Seconds of one call on fresh copies of `args` (the copies not timed), and them."""
    fresh = copies(args)
    gc.collect()
    t0 = time.perf_counter()
    f(**fresh)
    return time.perf_counter() - t0, fresh


def difference(a: dict[str, Any], b: dict[str, Any]) -> tuple[float, float]:
    """(max |a - b|, max |b|) over the array arguments."""
    err = scale = 0.0
    for k, v in b.items():
        if not isinstance(v, np.ndarray):
            continue
        x = a[k].astype(np.float64)
        y = v.astype(np.float64)
        if v.size == 0:
            continue
        if (np.isnan(x) != np.isnan(y)).any():
            return math.inf, 0.0
        err = max(err, float(np.nanmax(np.abs(x - y))))
        scale = max(scale, float(np.nanmax(np.abs(y))))
    return err, scale


def raw_call(kernel: pk.NumpyKernel) -> Callable[..., Any]:
    """The kernel's generated function, called with the arguments in order, unchecked."""
    order = [a.name for a in kernel.schedule.program.function.arguments]
    function = kernel._function

    def call(**args: Any) -> Any:
        return function(*(args[n] for n in order))

    return call


def hand_fn(kernel: str) -> Callable[..., Any]:
    f: Callable[..., Any] = getattr(hand, kernel)
    return f


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def measure_compile(text: str, results: list[FuncResult], reps: int) -> None:
    for r in range(reps + 1):  # the first repetition is discarded
        for res in results:
            stages = compile_once(text, res.func)
            check = check_once(text, res.func)
            if r == 0:
                continue
            for k, v in stages.items():
                res.stage_samples.setdefault(k, []).append(v)
            res.check_samples.append(check)


def measure_kernel(name: str, opts: Options) -> KernelResult:
    text = (POLYBENCH / f"{name}.mlir").read_text()
    out = KernelResult(name)
    for variant in VARIANTS:
        func = name if variant == "natural" else f"{name}_tiled"
        out.funcs[variant] = FuncResult(name, variant, func)
    results = list(out.funcs.values())

    log(f"{name}: compile ({opts.compile_reps} runs)")
    measure_compile(text, results, opts.compile_reps)

    args = {d: sizes.arguments(name, d, seed=SEED) for d in DATASETS}
    hand_out: dict[str, dict[str, Any]] = {}
    hf = hand_fn(name)

    def hand_at(dataset: str) -> dict[str, Any]:
        if dataset not in hand_out:
            hand_out[dataset] = timed_call(hf, args[dataset])[1]
        return hand_out[dataset]

    gen_kernels: dict[str, pk.NumpyKernel] = {}
    for res in results:
        fn = pk.parse(text)[res.func]
        sched = pk.schedule(fn)
        program = sched.program
        for d in DATASETS:
            res.counts[d] = instances(program, param_values(program, args[d]))
        if opts.check_counts and res.counts["MINI"] <= 40_000:
            params = param_values(program, args["MINI"])
            res.trace_checked = len(sched.trace(**params)) == res.counts["MINI"]
        kernel = numpy_kernel(sched)
        gen_kernels[res.variant] = kernel
        res.exact = kernel.exact
        res.source = SourceInfo.of(kernel)
        res.integer = any(
            isinstance(v, np.ndarray) and v.dtype.kind in "iu" for v in args["MINI"].values()
        )

        # Scalar Python loops at MINI.
        scalar = pk.schedule(pk.parse(text)[res.func]).to_numpy(vectorize=False)
        run = Run("MINI")
        for _ in range(opts.scalar_reps):
            dt, got = timed_call(scalar, args["MINI"])
            run.seconds.append(dt)
        res.scalar_mini = run
        res.scalar_error, res.scalar_scale = difference(got, hand_at("MINI"))

        # The generated kernel at MINI: warm-up, then the estimate for MEDIUM.
        timed_call(kernel, args["MINI"])
        run = Run("MINI")
        for _ in range(3):
            dt, got = timed_call(kernel, args["MINI"])
            run.seconds.append(dt)
            if dt > 1.0:
                break
        res.gen_mini = run
        est = res.scale_to_medium(run)
        small = run.median * res.counts["SMALL"] / res.counts["MINI"]
        log(
            f"  {res.func}: scalar MINI {res.scalar_mini.median * 1e3:.1f} ms, "
            f"generated MINI {run.median * 1e3:.2f} ms -> MEDIUM est. {est:.2f} s"
        )
        if est <= opts.budget:
            res.gen = Run("MEDIUM")
        elif small <= opts.budget:
            res.gen = Run("SMALL")
            dt, got = timed_call(kernel, args["SMALL"])
            res.gen.seconds.append(dt)
            res.error, res.scale = difference(got, hand_at("SMALL"))
            log(f"  {res.func}: over budget; SMALL {dt:.2f} s -> est. {res.gen_s:.1f} s")
        else:
            res.gen = run
            res.error, res.scale = difference(got, hand_at("MINI"))
            log(f"  {res.func}: over budget even at SMALL; est. {res.gen_s:.1f} s")

    # MEDIUM: hand and the generated kernels that fit, interleaved.
    timed_call(hf, args["MINI"])
    out.hand = Run("MEDIUM")
    # Rounds of one call each, until every runner has `opts.runs` calls and the
    # rounds have taken `opts.run_seconds` (short kernels get up to
    # `opts.max_runs` calls: their medians then shrug off the ~4 ms time slices
    # other processes take); a generated kernel stops at what the budget allows.
    caps: dict[str, int] = {"hand": opts.max_runs}
    for res in results:
        assert res.gen is not None and res.gen_mini is not None
        if res.gen.dataset == "MEDIUM":
            est = res.scale_to_medium(res.gen_mini)
            caps[res.variant] = max(1, min(opts.max_runs, int(opts.budget / max(est, 1e-9))))
            if est < 2.0:
                # The generated function alone, without NumpyKernel.__call__'s checks.
                caps[f"raw:{res.variant}"] = caps[res.variant]
                res.raw = Run("MEDIUM")
    spent = 0.0
    r = 0
    while any(r < n for n in caps.values()) and (r < opts.runs or spent < opts.run_seconds):
        for who, n in caps.items():
            if r >= n:
                continue
            if who == "hand":
                dt, got = timed_call(hf, args["MEDIUM"])
                out.hand.seconds.append(dt)
                hand_out.setdefault("MEDIUM", got)
            elif who.startswith("raw:"):
                res = out.funcs[who[4:]]
                assert res.raw is not None
                dt = timed_call(raw_call(gen_kernels[res.variant]), args["MEDIUM"])[0]
                res.raw.seconds.append(dt)
            else:
                res = out.funcs[who]
                assert res.gen is not None
                dt, got = timed_call(gen_kernels[who], args["MEDIUM"])
                res.gen.seconds.append(dt)
                if r == 0:
                    res.error, res.scale = difference(got, hand_at("MEDIUM"))
            spent += dt
        r += 1
    for res in results:
        assert res.gen is not None
        log(
            f"  {res.func}: generated {res.gen_s * 1e3:.1f} ms"
            + (" (est.)" if res.estimated else "")
            + f", hand {out.hand.median * 1e3:.1f} ms, ratio {out.ratio(res.variant):.2f}, "
            f"speedup vs scalar {res.speedup:.0f}x, compile {res.compile_ms:.1f} ms, "
            f"error {res.error:.2g}"
        )
    return out


@dataclass
class Options:
    compile_reps: int
    runs: int  # calls at MEDIUM, at least (unless the budget allows fewer)
    max_runs: int  # calls at MEDIUM, at most
    run_seconds: float  # time the rounds at MEDIUM take before they stop
    scalar_reps: int
    budget: float
    check_counts: bool


# ------------------------------------------------------------------ report


def geomean(xs: Sequence[float]) -> float:
    return math.exp(statistics.fmean(math.log(x) for x in xs)) if xs else math.nan


def fmt_ms(s: float) -> str:
    ms = s * 1e3
    if ms >= 10_000:
        return f"{ms / 1e3:,.0f} s" if ms >= 100_000 else f"{ms / 1e3:.1f} s"
    return f"{ms:.1f}" if ms >= 1 else f"{ms:.3f}"


def fmt_ns(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def fmt_x(x: float) -> str:
    return f"{x:.0f}x" if x >= 100 else f"{x:.1f}x" if x >= 10 else f"{x:.2f}x"


def fmt_err(f: FuncResult, scalar: bool = False) -> str:
    err = f.scalar_error if scalar else f.error
    if f.integer:
        text = f"{err:.0f}"
    else:
        text = "0" if err == 0 else f"{err:.1e} ({f.rel_error(scalar):.0e})"
    return f"**{text} MISMATCH**" if f.mismatch(scalar) else text


def compile_table(funcs: list[FuncResult]) -> list[str]:
    rows = [
        "| function | parse | model | recipe | legality | codegen | **total** (min) "
        "| < 50 ms | check (fresh) |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for f in funcs:
        stages = " | ".join(f"{f.stage_ms(s):.1f}" for s in STAGES)
        total = f"**{f.compile_ms:.1f}** ({f.stage_ms('total', min):.1f})"
        ok = "yes" if f.compile_ms < COMPILE_MS else "**no**"
        rows.append(f"| {f.func} | {stages} | {total} | {ok} | {f.check_ms:.1f} |")
    return rows


def run_table(kernels: list[KernelResult], variant: str) -> list[str]:
    rows = [
        "| kernel | instances MEDIUM | generated ms | function alone | hand ms | **gen / hand** "
        "| scalar ms (scaled) | speedup vs scalar | max abs err (rel) | at | exact "
        "| scalar err MINI | generated code |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|---|",
    ]
    for k in kernels:
        f = k.funcs[variant]
        assert k.hand is not None and f.gen is not None and f.source is not None
        gen = fmt_ms(f.gen_s)
        if f.estimated:
            gen = f"~{gen} (over budget, est. from {f.gen.dataset})"
        ratio = fmt_x(k.ratio(variant))
        ratio = f"~{ratio}" if f.estimated else ratio
        target = NATURAL_MAX if variant == "natural" else TILED_GEO
        ratio = f"**{ratio}**" if k.ratio(variant) > target else ratio
        speed = fmt_x(f.speedup)
        speed = f"**{speed}**" if f.speedup < SCALAR_SPEEDUP else speed
        alone = fmt_ms(f.raw.median) if f.raw is not None else "-"
        rows.append(
            f"| {k.name} | {f.counts['MEDIUM']:,} | {gen} | {alone} | {fmt_ms(k.hand.median)} "
            f"| {ratio} "
            f"| ~{fmt_ms(f.scalar_s)} | {speed} | {fmt_err(f)} | {f.gen.dataset} "
            f"| {'yes' if f.exact else 'no'} | {fmt_err(f, scalar=True)} | {f.source.summary()} |"
        )
    return rows


@dataclass
class Verdict:
    target: str
    figure: str
    met: bool


def verdicts(kernels: list[KernelResult]) -> list[Verdict]:
    out: list[Verdict] = []

    def ratios(variant: str) -> list[tuple[str, float, bool]]:
        return [(k.name, k.ratio(variant), k.funcs[variant].estimated) for k in kernels]

    def name(n: str, x: float, est: bool) -> str:
        return f"{n} {'~' if est else ''}{x:.2f}"

    def note(rs: list[tuple[str, float, bool]]) -> str:
        est = sum(e for _, _, e in rs)
        if not est:
            return ""
        rest = [x for _, x, e in rs if not e]
        return (
            f" ({est} estimated: over budget; {geomean(rest):.2f} over the "
            f"{len(rest)} measured at MEDIUM)"
        )

    nat = ratios("natural")
    g = geomean([x for _, x, _ in nat])
    out.append(
        Verdict(
            f"generated / hand, natural order: geometric mean <= {NATURAL_GEO}",
            f"{g:.2f} over {len(nat)} kernels{note(nat)}",
            g <= NATURAL_GEO,
        )
    )
    above = sorted((r for r in nat if r[1] > NATURAL_MAX), key=lambda r: -r[1])
    worst = max(nat, key=lambda r: r[1])
    out.append(
        Verdict(
            f"generated / hand, natural order: no kernel above {NATURAL_MAX:g}",
            (f"{len(above)} above: " + ", ".join(name(*r) for r in above))
            if above
            else f"worst {name(*worst)}",
            not above,
        )
    )
    til = ratios("tiled")
    g = geomean([x for _, x, _ in til])
    out.append(
        Verdict(
            f"generated / hand, tiled recipes: geometric mean <= {TILED_GEO:g}",
            f"{g:.2f} over {len(til)} kernels{note(til)}; worst "
            + name(*max(til, key=lambda r: r[1])),
            g <= TILED_GEO,
        )
    )
    funcs = [f for k in kernels for f in k.funcs.values()]
    below = sorted((f for f in funcs if f.speedup < SCALAR_SPEEDUP), key=lambda f: f.speedup)
    out.append(
        Verdict(
            f"generated >= {SCALAR_SPEEDUP:.0f}x faster than scalar Python loops",
            f"{len(funcs) - len(below)} of {len(funcs)} functions; geometric mean "
            f"{geomean([f.speedup for f in funcs]):.0f}x"
            + (
                "; below: " + ", ".join(f"{f.func} {fmt_x(f.speedup)}" for f in below)
                if below
                else ""
            ),
            not below,
        )
    )
    over = sorted((f for f in funcs if f.compile_ms >= COMPILE_MS), key=lambda f: -f.compile_ms)
    med = statistics.median(f.compile_ms for f in funcs)
    out.append(
        Verdict(
            f"full compile pipeline under {COMPILE_MS:.0f} ms median per kernel",
            f"{len(funcs) - len(over)} of {len(funcs)} functions under; median of the medians "
            f"{med:.1f} ms; over: "
            + (", ".join(f"{f.func} {f.compile_ms:.0f}" for f in over) or "none"),
            not over,
        )
    )
    return out


def slow_notes(kernels: list[KernelResult]) -> list[str]:
    """The "what is slow and why" bullets, from the measurements and the sources."""
    lines: list[str] = []
    funcs = [f for k in kernels for f in k.funcs.values()]
    by_name = {k.name: k for k in kernels}

    lines.append("**Run time** (functions over their gen/hand target or under 100x vs scalar):")
    lines.append("")
    flagged = []
    for f in funcs:
        k = by_name[f.kernel]
        target = NATURAL_MAX if f.variant == "natural" else TILED_GEO
        if k.ratio(f.variant) > target or f.speedup < SCALAR_SPEEDUP:
            flagged.append(f)
    flagged.sort(key=lambda f: -by_name[f.kernel].ratio(f.variant))
    for f in flagged:
        k = by_name[f.kernel]
        assert f.source is not None and k.hand is not None
        per_gen = fmt_ns(f.gen_s / f.counts["MEDIUM"] * 1e9)
        per_scalar = fmt_ns(f.scalar_s / f.counts["MEDIUM"] * 1e9)
        est = " (estimated, over budget)" if f.estimated else ""
        text = (
            f"* `{f.func}`: {fmt_x(k.ratio(f.variant))} hand{est}, {fmt_x(f.speedup)} faster "
            f"than its scalar loops ({per_gen} vs {per_scalar} ns per statement "
            "instance). "
        )
        if f.raw is not None and not f.estimated:
            overhead = f.gen_s - f.raw.median
            # The binding costs the same at every size: a fraction of a millisecond.
            if 0.3 * f.gen_s < overhead < 1e-3:
                text += (
                    f"Of its {fmt_ms(f.gen_s)} ms, {fmt_ms(overhead)} ms are the argument "
                    "binding and checks of `NumpyKernel.__call__` (the generated function "
                    f"alone: {fmt_ms(f.raw.median)} ms, {fmt_x(f.raw.median / k.hand.median)} "
                    "hand). "
                )
        if f.source.scalar:
            reasons = "; ".join(
                f"loop `{loop}` stays scalar: {why}" for loop, why in f.source.scalar
            )
            share = f.gen_s / f.scalar_s
            text += f"{reasons}. Per statement instance the kernel costs "
            if share >= 0.1:
                text += (
                    f"{share:.0%} of the all-scalar version: the instances of the scalar "
                    "loop dominate the time."
                )
            else:
                text += (
                    f"{share:.1%} of the all-scalar version: the scalar loop holds few of the "
                    "instances; the time goes to the array code."
                )
        elif f.source.loop_depth:
            notes = "; ".join(f.source.notes) or "no vectorizer note"
            text += (
                f"Array code inside {f.source.loop_depth} nested Python loop(s) "
                f"({notes}): one NumPy call per iteration of the loops outside the "
                "vectorized ones, on small slices."
            )
        else:
            notes = "; ".join(f.source.notes) or "no vectorizer note"
            text += f"Whole-array code ({notes})."
        lines.append(text)
    if not flagged:
        lines.append("* none")
    lines.append("")

    lines.append("**Compile time** (functions at or over 50 ms; the largest stage):")
    lines.append("")
    over = sorted((f for f in funcs if f.compile_ms >= COMPILE_MS), key=lambda f: -f.compile_ms)
    for f in over:
        shares = sorted(((f.stage_ms(s), s) for s in STAGES), reverse=True)
        (ms1, s1), (ms2, s2) = shares[0], shares[1]
        text = (
            f"* `{f.func}`: {f.compile_ms:.0f} ms; {s1} {ms1:.0f} ms ({ms1 / f.compile_ms:.0%}), "
            f"{s2} {ms2:.0f} ms ({ms2 / f.compile_ms:.0%}); standalone check {f.check_ms:.0f} ms"
        )
        verdict = f.stage_ms("legality:verdict")
        if verdict >= 1.0:
            text += (
                f"; legality = {verdict:.0f} ms for the verdict of `pk.schedule` (the recipe "
                f"permutes or has parallel loops) + {f.stage_ms('legality:to_numpy'):.0f} ms "
                "for the full check of `to_numpy`"
            )
        lines.append(text)
    if not over:
        lines.append("* none")
    if over:
        total = {s: sum(f.stage_ms(s) for f in funcs) for s in STAGES}
        whole = sum(total.values())
        lines.append("")
        lines.append(
            "Over all functions, the stages' shares of the summed medians: "
            + ", ".join(f"{s} {total[s] / whole:.0%}" for s in STAGES)
            + "."
        )
    lines.append("")

    lines.append("**Correctness** (generated vs hand NumPy, relative tolerance 1e-10):")
    lines.append("")
    bad = [f for f in funcs if f.mismatch() or f.mismatch(scalar=True)]
    for f in bad:
        where = f.gen.dataset if f.gen is not None else "?"
        lines.append(
            f"* **`{f.func}` disagrees with hand NumPy**: generated max abs error "
            f"{f.error:.3g} (relative {f.rel_error():.2g}) at {where}; scalar loops "
            f"{f.scalar_error:.3g} at MINI"
        )
    if not bad:
        worst = max(funcs, key=lambda f: f.rel_error())
        lines.append(
            f"* every generated kernel agrees with hand NumPy within the tolerance (largest "
            f"relative error {worst.rel_error():.1e}, `{worst.func}`); so do the scalar loops "
            "at MINI"
        )
    unchecked = [f.func for f in funcs if f.trace_checked is False]
    if unchecked:
        lines.append(f"* instance counts disagree with `len(sched.trace())`: {unchecked}")
    return lines


def markdown(
    kernels: list[KernelResult],
    info: dict[str, Any],
    opts: Options,
    command: str,
    elapsed: float,
    cpu: float,
    partial: bool,
) -> str:
    la = info.get("load_average") or [math.nan] * 3
    le = list(os.getloadavg()) if hasattr(os, "getloadavg") else [math.nan] * 3
    dirty = " (uncommitted changes under polykrnl/)" if info.get("polykrnl_dirty") else ""
    out = [
        "# NumPy code generation on PolyBench: results (issue 5)",
        "",
        "Written by `benchmarks/bench_numpy.py`; see benchmarks/README.md (section "
        '"bench_numpy.py") for what each figure is and how it is measured.',
        "",
        f"* command: `{command}`" + (" (partial run)" if partial else ""),
        f"* commit: {info['commit']}{dirty}, {info['date']}",
        f"* machine: {info['nproc']} CPUs, {info['processor']}, {info['platform']}; "
        f"{info['implementation']} {info['python']}, NumPy {info['numpy']}, islpy "
        f"{info['islpy']}, xdsl {info['xdsl']}; BLAS threads {info['blas_threads']} "
        "(OPENBLAS_NUM_THREADS); load average at the start "
        f"{la[0]:.2f} {la[1]:.2f} {la[2]:.2f}",
        f"* protocol: compile {opts.compile_reps} fresh runs per function (after a discarded "
        f"one), medians; kernels {opts.runs} to {opts.max_runs} calls at MEDIUM on fresh "
        f"input copies (rounds interleaved with the hand version, until they took "
        f"{opts.run_seconds:g} s), medians; scalar loops {opts.scalar_reps} runs at MINI, "
        f"scaled by instance counts; budget {opts.budget:g} s per call",
        f"* the whole run took {elapsed / 60:.1f} min, with {cpu / elapsed:.0%} of a CPU "
        "for this process"
        + (" (other processes were running: expect noisier figures)" if cpu / elapsed < 0.9 else "")
        + f"; load average at the end {le[0]:.2f} {le[1]:.2f} {le[2]:.2f}",
        "",
        "## Targets",
        "",
        "| target | measured | |",
        "|---|---|---|",
    ]
    for v in verdicts(kernels):
        out.append(f"| {v.target} | {v.figure} | {'met' if v.met else '**missed**'} |")
    for variant, title in (("natural", "Natural order (`@NAME`)"), ("tiled", "Tiled recipes")):
        funcs = [k.funcs[variant] for k in kernels]
        out += [
            "",
            f"## {title}",
            "",
            "### Compile time by stage (ms, median of fresh runs)",
            "",
            *compile_table(funcs),
            "",
            "### Run time at MEDIUM (ms, median)",
            "",
            *run_table(kernels, variant),
        ]
    out += [
        "",
        "## What is slow and why",
        "",
        "Generated from the measurements and the kernels' sources (the vectorizer's "
        "comments `# loop X stays scalar: why` and `# loops ... vectorized`, and the "
        "Python loops left in the generated function).",
        "",
        *slow_notes(kernels),
        "",
        "## Columns",
        "",
        "* compile stages (each instant of one `pk.parse` + `pk.schedule` + `to_numpy` + "
        "Python compile run charged to one stage, so they add up to the total): parse = "
        "`pk.parse` of the file; model = `pk.poly_program(fn)` inside `pk.schedule`; "
        "recipe = the rest of `pk.schedule` (the recipe's primitives); legality = the "
        "verdict `pk.schedule` asks for (recipes with permute/parallel) and the full "
        "`sched.check()` inside `to_numpy`; codegen = the rest of `to_numpy` and the "
        "Python compile of the source. check (fresh) = `sched.check()` alone on a new "
        "`pk.schedule(fn, force=True)`, dependence analysis included.",
        "* instances: statement instances (isl `count_val` of each statement's domain "
        "with every parameter fixed).",
        "* scalar ms (scaled) = T(`to_numpy(vectorize=False)` at MINI) x I(MEDIUM) / "
        "I(MINI); speedup vs scalar = that / generated ms.",
        "* over budget: a generated kernel whose MINI time scaled to MEDIUM exceeds the "
        "budget runs at SMALL (or stays at MINI) and its MEDIUM time is that run scaled "
        "the same way.",
        "* max abs err: generated vs hand NumPy on the same inputs (seed 0) at the size in "
        "column `at`, relative to the largest magnitude in brackets; exact: the kernel's "
        "`.exact` (False: a reduction was reassociated, as `np.einsum`).",
        "",
    ]
    return "\n".join(out)


def as_json(kernels: list[KernelResult], info: dict[str, Any], opts: Options) -> dict[str, Any]:
    def run(r: Run | None) -> dict[str, Any] | None:
        if r is None:
            return None
        return {"dataset": r.dataset, "median_s": r.median, "samples_s": r.seconds}

    out: dict[str, Any] = {
        "benchmark": "bench_numpy",
        "machine": info,
        "options": vars(opts),
        "targets": [vars(v) for v in verdicts(kernels)],
        "kernels": [],
    }
    for k in kernels:
        entry: dict[str, Any] = {"kernel": k.name, "hand": run(k.hand), "functions": {}}
        for variant, f in k.funcs.items():
            assert f.source is not None
            entry["functions"][variant] = {
                "func": f.func,
                "compile_ms": {s: f.stage_ms(s) for s in f.stage_samples},
                "compile_min_ms": {s: f.stage_ms(s, min) for s in f.stage_samples},
                "compile_samples_ms": {s: [x * 1e3 for x in v] for s, v in f.stage_samples.items()},
                "check_fresh_ms": f.check_ms,
                "instances": f.counts,
                "instances_checked_by_trace": f.trace_checked,
                "generated": run(f.gen),
                "generated_mini": run(f.gen_mini),
                "function_alone": run(f.raw),
                "generated_medium_s": f.gen_s,
                "estimated": f.estimated,
                "scalar_mini": run(f.scalar_mini),
                "scalar_medium_s_scaled": f.scalar_s,
                "gen_over_hand": k.ratio(variant),
                "speedup_vs_scalar": f.speedup,
                "max_abs_error": f.error,
                "relative_error": f.rel_error(),
                "mismatch": f.mismatch(),
                "scalar_max_abs_error_mini": f.scalar_error,
                "scalar_mismatch": f.mismatch(scalar=True),
                "exact": f.exact,
                "source": vars(f.source),
            }
        out["kernels"].append(entry)
    return out


# ------------------------------------------------------------------ main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (a check, ~2 min)")
    ap.add_argument("--kernels", metavar="A,B", help="only these kernels (comma-separated)")
    ap.add_argument("--json", metavar="OUT", help="also write machine-readable results to OUT")
    ap.add_argument(
        "--results",
        metavar="PATH",
        help="where to write the markdown (default: benchmarks/RESULTS.md for a full run, "
        "nowhere for --quick/--kernels; '-' for nowhere)",
    )
    ap.add_argument(
        "--budget",
        type=float,
        default=20.0,
        metavar="S",
        help="seconds one generated-kernel call may take at MEDIUM (estimated from MINI) "
        "before it runs at a smaller size and is reported as an estimate (default 20)",
    )
    args = ap.parse_args(argv)
    opts = Options(
        compile_reps=3 if args.quick else 7,
        runs=3 if args.quick else 7,
        max_runs=15 if args.quick else 41,
        run_seconds=0.3 if args.quick else 3.0,
        scalar_reps=1 if args.quick else 3,
        budget=args.budget,
        check_counts=not args.quick,
    )
    names = list(sizes.KERNELS)
    if args.kernels:
        names = [n.strip() for n in args.kernels.split(",") if n.strip()]
        unknown = [n for n in names if n not in sizes.KERNELS]
        if unknown:
            ap.error(f"unknown kernels {unknown}; known: {', '.join(sizes.KERNELS)}")
    partial = bool(args.quick or args.kernels)
    results_path: Path | None = None
    if args.results and args.results != "-":
        results_path = Path(args.results)
    elif args.results is None and not partial:
        results_path = RESULTS

    info = machine()
    info["numpy"] = np.__version__
    info["blas_threads"] = os.environ["OPENBLAS_NUM_THREADS"]
    info["date"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    dirty = " (polykrnl/ has uncommitted changes)" if info["polykrnl_dirty"] else ""
    log(
        f"bench_numpy: python {info['python']}, nproc {info['nproc']}, numpy {np.__version__}, "
        f"islpy {info['islpy']}, commit {info['commit']}{dirty}, load average "
        + " ".join(f"{x:.2f}" for x in info["load_average"] or [])
    )

    # Warm-up: imports, xDSL's and isl's first allocations, the code generator.
    text = (POLYBENCH / "gemm.mlir").read_text()
    for func in ("gemm", "gemm_tiled"):
        compile_once(text, func)
    gc.collect()
    gc.freeze()

    t0, c0 = time.perf_counter(), time.process_time()
    kernels = [measure_kernel(n, opts) for n in names]
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0

    command = "python benchmarks/bench_numpy.py" + "".join(
        f" {a}" for a in (argv if argv is not None else sys.argv[1:])
    )
    md = markdown(kernels, info, opts, command, elapsed, cpu, partial)
    print(md)
    if results_path is not None:
        results_path.write_text(md)
        log(f"wrote {results_path}")
    if args.json:
        Path(args.json).write_text(json.dumps(as_json(kernels, info, opts), indent=1) + "\n")
        log(f"wrote {args.json}")
    log(f"done in {elapsed:.0f} s ({cpu / elapsed:.0%} of a CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
