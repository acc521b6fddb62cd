"""Benchmark: dependence analysis and legality check of the corpus kernels (issue 4).

Measures, for every case below:

* ``parse+verify``: ``pk.parse(text)`` then ``pk.verify(module)`` of the whole
  file the case comes from: the baseline (benchmarks/README.md: speed is reported as ratios
  against a baseline run in the same process);
* ``build``: making the Schedule (``Schedule.from_function(fn, recipe=False)``
  [+ the replayed steps], or ``pk.schedule(fn, force=True)``), for reference;
* ``deps``: ``dependences(program)`` on a PolyProgram built for this repetition
  (``dependences`` caches its result per program object, so a fresh program is
  timed each time; the program is the one ``check`` judges against:
  ``sched.reference_program``);
* ``check``: ``sched.check()`` on another Schedule built for this repetition, so
  that nothing is cached: its dependences, the isl schedule tree and map, the
  loop table. This is the full check, dependence analysis included, and the
  figure the target is about.

Cases:

* ``plain``: each kernel of ``tests/transforms/legality/*.mlir`` in its original
  order (``Schedule.from_function(fn, recipe=False)``);
* ``steps``: per kernel, one transformed schedule from
  ``tests/transforms/legality/cases.py`` (the case with the most steps; the
  first in the file on a tie), replayed with ``force=True``; ``--all-cases``
  times all of them;
* ``recipe``: every function of ``tests/corpus/*.mlir`` that schedules
  (``pk.schedule(fn, force=True)``, its Krnl recipe applied); files whose first
  line says ``syntax-only`` are skipped, and so are functions that raise
  ``pk.PolykrnlError`` (both listed).

Target (issue 4): dependence analysis + full check under 50 ms for each corpus
kernel. Cases over it are flagged; ``--profile`` then prints where their time
goes (cProfile, outside the measurements).

Run: ``python benchmarks/bench_legality.py [--quick] [--json OUT.json]``.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.util
import io
import json
import pstats
import statistics
import sys
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polykrnl as pk
from polykrnl.transforms import dependences as dep_mod

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine

BUDGET_MS = 50.0
PHASES = ("parse", "verify", "build", "deps", "check")
REPO = Path(__file__).resolve().parent.parent
LEGALITY = REPO / "tests" / "transforms" / "legality"
CORPUS = REPO / "tests" / "corpus"


# ------------------------------------------------------------------ cases


@dataclass
class Case:
    name: str
    group: str  # "plain", "steps" or "recipe"
    path: Path
    func: str
    text: str
    steps: list[list[Any]] | None = None  # replayed on the plain schedule
    samples: dict[str, list[float]] = field(default_factory=dict)  # phase -> seconds
    statements: int = 0
    loops: int = 0
    dependences: int = 0
    violations: int = 0
    legal: bool = True

    def schedule(self, fn: pk.Function) -> pk.Schedule:
        if self.group == "recipe":
            return pk.schedule(fn, force=True)
        s = pk.Schedule.from_function(fn, recipe=False)
        for name, *args in self.steps or ():
            s = getattr(s, name)(*args, force=True)
        return s


def _legality_cases() -> list[dict[str, Any]]:
    spec = importlib.util.spec_from_file_location("legality_cases", LEGALITY / "cases.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return list(mod.CASES)


def collect(all_cases: bool) -> tuple[list[Case], list[str], list[str]]:
    """The cases, the skipped files, and the functions that do not schedule."""
    cases: list[Case] = []
    by_kernel: dict[str, list[dict[str, Any]]] = {}
    for c in _legality_cases():
        by_kernel.setdefault(c["kernel"], []).append(c)
    for path in sorted(LEGALITY.glob("*.mlir")):
        kernel = path.stem
        text = path.read_text()
        cases.append(Case(kernel, "plain", path, kernel, text))
        chosen = by_kernel.get(kernel, [])
        if not all_cases and chosen:
            # The most transformed one (most steps); the first in the file on a tie.
            chosen = [max(chosen, key=lambda c: len(c["steps"]))]
        for c in chosen:
            cases.append(Case(c["id"], "steps", path, kernel, text, steps=c["steps"]))

    skipped: list[str] = []
    failing: list[str] = []
    for path in sorted(CORPUS.glob("*.mlir")):
        text = path.read_text()
        first = text.splitlines()[0] if text else ""
        if "syntax-only" in first:
            skipped.append(f"{path.name} ({first.strip()})")
            continue
        mod = pk.parse(text, str(path))
        pk.verify(mod)
        for fn in mod.functions:
            try:
                pk.schedule(fn, force=True)
            except pk.PolykrnlError as e:
                msg = str(e).splitlines()[0] if str(e) else type(e).__name__
                failing.append(f"{path.name} @{fn.name}: {type(e).__name__}: {msg}")
                continue
            cases.append(Case(f"{path.stem}:{fn.name}", "recipe", path, fn.name, text))
    return cases, skipped, failing


# ------------------------------------------------------------------ measuring


def run_once(case: Case) -> dict[str, float]:
    """One measurement of every phase, on a freshly parsed module."""
    clock = time.perf_counter
    gc.collect()
    t0 = clock()
    mod = pk.parse(case.text, str(case.path))
    t1 = clock()
    pk.verify(mod)
    t2 = clock()
    fn = mod[case.func]
    sched = case.schedule(fn)
    t3 = clock()
    program = sched.reference_program
    assert program not in dep_mod._CACHE, "the program's dependences are already cached"
    deps = dep_mod.dependences(program)
    t4 = clock()

    fresh = case.schedule(fn)  # nothing cached: dependences, tree, loop table
    assert (fresh.reference_program) not in dep_mod._CACHE
    gc.collect()
    t5 = clock()
    report = fresh.check()
    t6 = clock()

    case.statements = len(sched.program.statements)
    case.loops = len(sched.loop_names())
    case.dependences = len(deps.deps)
    case.violations = len(report.violations)
    case.legal = report.legal
    # The cached Dependences holds its program, which keeps the weak key alive
    # (see cache_keeps_programs): drop the entries, or every repetition would
    # leave its module behind and the collector would slow the later cases down.
    dep_mod._CACHE.pop(program, None)
    dep_mod._CACHE.pop(fresh.reference_program, None)
    return {
        "parse": t1 - t0,
        "verify": t2 - t1,
        "build": t3 - t2,
        "deps": t4 - t3,
        "check": t6 - t5,
    }


def cache_keeps_programs(case: Case) -> bool:
    """Whether the dependence cache keeps a program alive after its last use."""
    mod = pk.parse(case.text, str(case.path))
    sched = case.schedule(mod[case.func])
    sched.check()
    ref = weakref.ref(sched.reference_program)
    del mod, sched
    gc.collect()
    program = ref()
    kept = program is not None
    if program is not None:
        dep_mod._CACHE.pop(program, None)
        del program
        gc.collect()
    return kept


def measure(case: Case, min_reps: int, max_reps: int, budget_s: float) -> None:
    """One run_once discarded, then at least min_reps, then until budget_s or max_reps."""
    run_once(case)
    case.samples = {p: [] for p in PHASES}
    start = time.perf_counter()
    reps = 0
    while reps < min_reps or (reps < max_reps and time.perf_counter() - start < budget_s):
        for phase, t in run_once(case).items():
            case.samples[phase].append(t)
        reps += 1


def derived(case: Case, key: str) -> list[float]:
    """Per-repetition values; baseline = parse+verify."""
    parts = {"baseline": ("parse", "verify")}.get(key, (key,))
    reps = len(case.samples["parse"])
    return [sum(case.samples[p][r] for p in parts) for r in range(reps)]


def med(case: Case, key: str) -> float:
    return statistics.median(derived(case, key)) * 1e3


def low(case: Case, key: str) -> float:
    return min(derived(case, key)) * 1e3


def profile(case: Case, top: int) -> str:
    """cProfile of the full check of fresh schedules (collector off), top functions.

    islpy's calls do not show as functions of their own: their time counts in the
    tottime of the polykrnl function that makes them.
    """
    mod = pk.parse(case.text, str(case.path))
    pk.verify(mod)
    fn = mod[case.func]
    scheds = [case.schedule(fn) for _ in range(3)]
    gc.collect()
    gc.disable()
    prof = cProfile.Profile()
    try:
        for s in scheds:
            prof.runcall(s.check)
    finally:
        gc.enable()
    out = io.StringIO()
    st = pstats.Stats(prof, stream=out)
    st.sort_stats("tottime").print_stats(top)
    st.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


# ------------------------------------------------------------------ reporting


def print_table(cases: list[Case]) -> None:
    head = (
        f"{'case':<40}{'group':>7}{'st':>4}{'lp':>4}{'dep':>5}{'verdict':>9}{'reps':>5}"
        f"{'parse+verify':>14}{'build':>7}{'deps':>14}{'check':>16}"
        f"{'deps/':>7}{'check/':>8}"
    )
    sub = (
        f"{'':<74}{'med':>7}{'min':>7}{'med':>7}{'med':>7}{'min':>7}{'med':>8}{'min':>8}"
        f"{'base':>7}{'base':>8}"
    )
    print(head)
    print(sub)
    print("-" * len(head))
    for c in cases:
        verdict = "legal" if c.legal else f"ill.({c.violations})"
        flag = " <-- over 50 ms" if med(c, "check") > BUDGET_MS else ""
        print(
            f"{c.name:<40}{c.group:>7}{c.statements:>4}{c.loops:>4}{c.dependences:>5}"
            f"{verdict:>9}{len(c.samples['parse']):>5}"
            f"{med(c, 'baseline'):>7.1f}{low(c, 'baseline'):>7.1f}"
            f"{med(c, 'build'):>7.1f}"
            f"{med(c, 'deps'):>7.1f}{low(c, 'deps'):>7.1f}"
            f"{med(c, 'check'):>8.1f}{low(c, 'check'):>8.1f}"
            f"{med(c, 'deps') / med(c, 'baseline'):>6.2f}x"
            f"{med(c, 'check') / med(c, 'baseline'):>7.2f}x{flag}"
        )
    print(
        "  (ms; st/lp/dep = statements, loops, dependences; parse+verify = the whole file;"
        " build = the Schedule;\n   deps = dependences(program) of a fresh program; check ="
        " sched.check() of a fresh Schedule,\n   dependence analysis included: the target is"
        f" check < {BUDGET_MS:.0f} ms; base = parse+verify)"
    )


def case_json(c: Case) -> dict[str, Any]:
    return {
        "name": c.name,
        "group": c.group,
        "file": str(c.path.relative_to(REPO)),
        "function": c.func,
        "steps": c.steps,
        "statements": c.statements,
        "loops": c.loops,
        "dependences": c.dependences,
        "legal": c.legal,
        "violations": c.violations,
        "reps": len(c.samples["parse"]),
        "ms": {k: {"median_ms": med(c, k), "min_ms": low(c, k)} for k in ("baseline", *PHASES)},
        "samples_ms": {k: [t * 1e3 for t in v] for k, v in c.samples.items()},
        "ratios_vs_parse_verify": {
            "deps": med(c, "deps") / med(c, "baseline"),
            "check": med(c, "check") / med(c, "baseline"),
        },
        "over_budget": med(c, "check") > BUDGET_MS,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="3 repetitions per case (about 18 s instead of 35 s)"
    )
    ap.add_argument("--json", metavar="OUT", help="write machine-readable results to OUT")
    ap.add_argument(
        "--all-cases",
        action="store_true",
        help="time every case of cases.py, not one per kernel (slower)",
    )
    ap.add_argument(
        "--profile",
        type=int,
        nargs="?",
        const=25,
        default=0,
        metavar="N",
        help="print the top N functions (cProfile) of each case over the budget (default N: 25)",
    )
    args = ap.parse_args(argv)
    # (min_reps, max_reps, seconds per case after min_reps); slow cases do min_reps
    reps = (3, 3, 0.0) if args.quick else (5, 11, 0.25)

    info = machine()
    dirty = " (polykrnl/ has uncommitted changes)" if info["polykrnl_dirty"] else ""
    print(
        f"bench_legality: python {info['python']}, nproc {info['nproc']}, "
        f"islpy {info['islpy']}, xdsl {info['xdsl']}, commit {info['commit']}{dirty}"
    )
    if info["polykrnl_dirty"] is None:
        print(f"  polykrnl imported from {info['polykrnl']}")
    la = info["load_average"]
    if la:
        print(f"  load average {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}")

    cases, skipped, failing = collect(args.all_cases)

    # Warm-up: imports (legality, looptree), xDSL's parser context, isl's first
    # allocations; one case of each group (and one discarded run of each case).
    for group in ("plain", "steps", "recipe"):
        first = next((c for c in cases if c.group == group), None)
        for _ in range(2 if first is not None else 0):
            run_once(first)  # type: ignore[arg-type]

    leak = cache_keeps_programs(cases[0])

    # What is alive now (modules, xDSL and isl contexts, the cases' texts) stays
    # for the whole run: out of the collector's way, so that gc.collect() before
    # each timed section is cheap. Garbage made by the measurements is collected
    # as usual.
    gc.collect()
    gc.freeze()

    t_start = time.perf_counter()
    for c in cases:
        measure(c, *reps)
    elapsed = time.perf_counter() - t_start

    ordered = sorted(cases, key=lambda c: med(c, "check"), reverse=True)
    print()
    print_table(ordered)

    if skipped:
        print()
        print("skipped files (syntax-only): " + ", ".join(skipped))
    print("functions that do not schedule (pk.PolykrnlError): " + ("; ".join(failing) or "none"))

    over = [c for c in ordered if med(c, "check") > BUDGET_MS]
    print()
    print("target: dependence analysis + full check under 50 ms for each kernel")
    for group in ("plain", "steps", "recipe"):
        gs = [c for c in cases if c.group == group]
        if not gs:
            continue
        worst = max(gs, key=lambda c: med(c, "check"))
        print(
            f"  {group:<7} {len(gs):>3} cases: check median of medians "
            f"{statistics.median(med(c, 'check') for c in gs):.1f} ms, worst {worst.name} "
            f"{med(worst, 'check'):.1f} ms; {sum(med(c, 'check') > BUDGET_MS for c in gs)} over"
        )
    print(
        f"  all     {len(cases):>3} cases: {len(cases) - len(over)} under 50 ms, "
        f"{len(over)} over" + (": " + ", ".join(c.name for c in over) if over else "")
    )
    print("  -> " + ("met" if not over else "MISSED") + f"  (measured in {elapsed:.1f} s)")
    if leak:
        print(
            "  note: dependences() keeps every program it has seen alive (the cached\n"
            "  Dependences refers to its PolyProgram, the WeakKeyDictionary's key); the\n"
            "  benchmark drops the entries after each repetition"
        )

    if args.profile and over:
        for c in over:
            print()
            print(f"profile of {c.name} (3 full checks, collector off)")
            print(profile(c, args.profile))

    if args.json:
        out = {
            "benchmark": "bench_legality",
            "machine": info,
            "quick": args.quick,
            "all_cases": args.all_cases,
            "elapsed_s": elapsed,
            "budget_ms": BUDGET_MS,
            "cases": [case_json(c) for c in ordered],
            "skipped_files": skipped,
            "not_scheduled": failing,
            "over_budget": [c.name for c in over],
            "target_met": not over,
            "dependence_cache_keeps_programs": leak,
        }
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
        print(f"  results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
