"""Benchmark: building the polyhedral model and the Schedule of Krnl programs.

Measures, for Krnl programs given as text:

* ``parse+verify``: ``pk.parse(text)`` then ``pk.verify(module)``: the baseline
  (benchmarks/README.md: speed is reported as ratios against a baseline run in the same
  process);
* ``poly``: ``pk.poly_program(fn)`` alone (statements, isl domains, accesses);
* ``build``: ``pk.schedule(fn, force=True)`` (which builds the PolyProgram itself and
  applies the recipe; the legality check is measured by bench_legality.py)
  plus materializing ``sched.tree`` and ``sched.loops()``;
  the three parts are also reported on their own (``sched``, ``tree``,
  ``loops``).

Programs:

* ``tiled6``: C[i, j] += A[i, k] * B[k, j] over 64x64x64, every loop blocked by
  16 and permuted to ib, jb, kb, il, jl, kl (a 6-deep tiled nest);
* ``body-N``: one 2-D nest (64x64, blocked 16x16, permuted to ib, jb, il, jl)
  whose body holds N independent load/add/store statements;
* ``siblings-N``: N sibling 2-D nests, each with its own recipe (blocked 16x16,
  permuted) and one statement.

Targets: tiled6 build under 20 ms; build time no worse than linear in the
number of statements.

Run: ``python benchmarks/bench_schedule.py [--quick] [--json OUT.json]``.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polykrnl as pk

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine

TILED6_BUDGET_MS = 20.0
SIZES = (1, 8, 32, 128)
PHASES = ("parse", "verify", "poly", "sched", "tree", "loops")
REPO = Path(__file__).resolve().parent.parent

# ------------------------------------------------------------------ programs

LOOP = "!krnl.loop"
BLOCK_TYPE = f"({LOOP}) -> ({LOOP}, {LOOP})"
M64 = "memref<64x64xf32>"


def tiled6_program() -> str:
    """Matmul 64x64x64, blocked 16 in i, j and k, permuted to ib, jb, kb, il, jl, kl."""
    handles = f"{LOOP}, {LOOP}, {LOOP}, {LOOP}, {LOOP}, {LOOP}"
    return f"""\
func.func @kernel(%A: {M64}, %B: {M64}, %C: {M64}) {{
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 16 : {BLOCK_TYPE}
  %jb, %jl = krnl.block %jj 16 : {BLOCK_TYPE}
  %kb, %kl = krnl.block %kk 16 : {BLOCK_TYPE}
  krnl.permute(%ib, %il, %jb, %jl, %kb, %kl) [0, 3, 1, 4, 2, 5] : {handles}
  krnl.iterate(%ib, %jb, %kb, %il, %jl, %kl) with (%ii -> %i = 0 to 64, \
%jj -> %j = 0 to 64, %kk -> %k = 0 to 64) {{
    %a = krnl.load %A[%i, %k] : {M64}
    %b = krnl.load %B[%k, %j] : {M64}
    %c = krnl.load %C[%i, %j] : {M64}
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    krnl.store %s, %C[%i, %j] : {M64}
  }}
  return
}}
"""


def _args(n: int) -> str:
    return ", ".join([f"%X: {M64}"] + [f"%Y{s}: {M64}" for s in range(n)])


def _nest_2d(suffix: str, body: list[str]) -> list[str]:
    """A 2-D nest 64x64, blocked 16x16 and permuted to ib, jb, il, jl."""
    x = suffix
    handles = f"{LOOP}, {LOOP}, {LOOP}, {LOOP}"
    return [
        f"  %ii{x}, %jj{x} = krnl.define_loops 2",
        f"  %ib{x}, %il{x} = krnl.block %ii{x} 16 : {BLOCK_TYPE}",
        f"  %jb{x}, %jl{x} = krnl.block %jj{x} 16 : {BLOCK_TYPE}",
        f"  krnl.permute(%ib{x}, %il{x}, %jb{x}, %jl{x}) [0, 2, 1, 3] : {handles}",
        f"  krnl.iterate(%ib{x}, %jb{x}, %il{x}, %jl{x}) with "
        f"(%ii{x} -> %i{x} = 0 to 64, %jj{x} -> %j{x} = 0 to 64) {{",
        *body,
        "  }",
    ]


def _statement(s: int, i: str, j: str) -> list[str]:
    """Y_s[i, j] = X[i, j] + c: one polyhedral statement (its own load)."""
    return [
        f"    %x{s} = krnl.load %X[{i}, {j}] : {M64}",
        f"    %v{s} = arith.addf %x{s}, %c : f32",
        f"    krnl.store %v{s}, %Y{s}[{i}, {j}] : {M64}",
    ]


def body_program(n: int) -> str:
    """One tiled 2-D nest whose body has n independent statements."""
    body = [line for s in range(n) for line in _statement(s, "%i", "%j")]
    lines = [
        f"func.func @kernel(%c: f32, {_args(n)}) {{",
        *_nest_2d("", body),
        "  return",
        "}",
    ]
    return "\n".join(lines) + "\n"


def siblings_program(n: int) -> str:
    """n sibling tiled 2-D nests, one statement each."""
    lines = [f"func.func @kernel(%c: f32, {_args(n)}) {{"]
    for s in range(n):
        lines += _nest_2d(str(s), _statement(s, f"%i{s}", f"%j{s}"))
    lines += ["  return", "}"]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ measuring


@dataclass
class Case:
    name: str
    shape: str  # "tiled6", "body" or "siblings"
    n: int  # statements asked for
    text: str
    samples: dict[str, list[float]] = field(default_factory=dict)  # phase -> seconds
    statements: int = 0
    loops: int = 0


def run_once(case: Case) -> dict[str, float]:
    """One measurement of every phase, on a freshly parsed module."""
    clock = time.perf_counter
    gc.collect()
    t0 = clock()
    mod = pk.parse(case.text)
    t1 = clock()
    pk.verify(mod)
    t2 = clock()
    fn = mod["kernel"]
    program = pk.poly_program(fn)
    t3 = clock()
    sched = pk.schedule(fn, force=True)
    t4 = clock()
    tree = sched.tree
    t5 = clock()
    loops = sched.loops()
    t6 = clock()
    assert tree is not None and loops is not None
    case.statements = len(sched.program.statements)
    case.loops = len(sched.loop_names())
    assert len(program.statements) == case.statements
    return {
        "parse": t1 - t0,
        "verify": t2 - t1,
        "poly": t3 - t2,
        "sched": t4 - t3,
        "tree": t5 - t4,
        "loops": t6 - t5,
    }


def measure(case: Case, min_reps: int, max_reps: int, budget_s: float) -> None:
    """Repeat run_once: at least min_reps, then until budget_s or max_reps."""
    case.samples = {p: [] for p in PHASES}
    start = time.perf_counter()
    reps = 0
    while reps < min_reps or (reps < max_reps and time.perf_counter() - start < budget_s):
        for phase, t in run_once(case).items():
            case.samples[phase].append(t)
        reps += 1


def derived(case: Case, key: str) -> list[float]:
    """Per-repetition totals: baseline = parse+verify, build = sched+tree+loops."""
    parts = {
        "baseline": ("parse", "verify"),
        "build": ("sched", "tree", "loops"),
    }.get(key, (key,))
    reps = len(case.samples["parse"])
    return [sum(case.samples[p][r] for p in parts) for r in range(reps)]


def stats(xs: list[float]) -> dict[str, float]:
    return {"median_ms": statistics.median(xs) * 1e3, "min_ms": min(xs) * 1e3}


def med(case: Case, key: str) -> float:
    return statistics.median(derived(case, key)) * 1e3


# ------------------------------------------------------------------ reporting


def growth(cases: list[Case]) -> dict[str, Any]:
    """How build time grows with the number of statements for one shape."""
    cases = sorted(cases, key=lambda c: c.n)
    first, last = cases[0], cases[-1]
    t1, tn = med(first, "build"), med(last, "build")
    steps = []
    for a, b in itertools.pairwise(cases):
        ta, tb = med(a, "build"), med(b, "build")
        fa, fb = min(derived(a, "build")), min(derived(b, "build"))
        steps.append(
            {
                "from": a.n,
                "to": b.n,
                # log-log slope of the medians: 1.0 is linear, 2.0 quadratic
                "exponent": math.log(tb / ta) / math.log(b.n / a.n),
                # the same from the minima (less sensitive to a loaded machine)
                "exponent_min": math.log(fb / fa) / math.log(b.n / a.n),
            }
        )
    return {
        "ratio": tn / t1,
        "linear_ratio": last.n / first.n,
        "per_statement_ms": {c.n: med(c, "build") / c.n for c in cases},
        "marginal_ms_per_statement": (tn - t1) / (last.n - first.n),
        "steps": steps,
        # no worse than linear: the slope over the largest step stays near 1
        # (0.15 of slack for timing noise on a shared machine)
        "linear_or_better": steps[-1]["exponent"] <= 1.15 if steps else True,
    }


def print_table(cases: list[Case]) -> None:
    head = (
        f"{'case':<14}{'stmts':>6}{'loops':>6}{'reps':>5}"
        f"{'parse+verify':>16}{'poly':>16}{'build':>18}"
        f"{'sched/tree/loops':>21}{'build/':>8}{'poly/':>7}"
    )
    sub = (
        f"{'':<31}{'med':>8}{'min':>8}{'med':>8}{'min':>8}{'med':>9}{'min':>9}"
        f"{'(medians, ms)':>21}{'base':>8}{'base':>7}"
    )
    print(head)
    print(sub)
    print("-" * len(head))
    for c in cases:
        b, p, s = derived(c, "baseline"), derived(c, "poly"), derived(c, "build")
        parts = "/".join(f"{statistics.median(c.samples[x]) * 1e3:.1f}" for x in PHASES[3:])
        print(
            f"{c.name:<14}{c.statements:>6}{c.loops:>6}{len(b):>5}"
            f"{statistics.median(b) * 1e3:>8.1f}{min(b) * 1e3:>8.1f}"
            f"{statistics.median(p) * 1e3:>8.1f}{min(p) * 1e3:>8.1f}"
            f"{statistics.median(s) * 1e3:>9.1f}{min(s) * 1e3:>9.1f}"
            f"{parts:>21}"
            f"{statistics.median(s) / statistics.median(b):>7.2f}x"
            f"{statistics.median(p) / statistics.median(b):>6.2f}x"
        )
    print(
        "  (ms; build = pk.schedule(fn, force=True) [PolyProgram included]"
        " + sched.tree + sched.loops();"
    )
    print("   poly = pk.poly_program(fn) alone; base = parse+verify of the same text)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="fewer repetitions (about 8 s instead of 20 s)"
    )
    ap.add_argument("--json", metavar="OUT", help="write machine-readable results to OUT")
    ap.add_argument(
        "--sizes",
        default=",".join(map(str, SIZES)),
        help="statement counts of the generated programs (default: %(default)s)",
    )
    args = ap.parse_args(argv)
    sizes = sorted({int(s) for s in args.sizes.split(",")})
    # (min_reps, max_reps, seconds per case after min_reps)
    small, large = ((3, 10, 0.3), (2, 2, 0.0)) if args.quick else ((5, 50, 1.5), (3, 5, 3.0))

    info = machine()
    print(
        f"bench_schedule: python {info['python']}, nproc {info['nproc']}, "
        f"islpy {info['islpy']}, xdsl {info['xdsl']}, commit {info['commit']}"
        + (" (polykrnl/ has uncommitted changes)" if info["polykrnl_dirty"] else "")
    )

    cases = [Case("tiled6", "tiled6", 1, tiled6_program())]
    shapes: list[tuple[str, Callable[[int], str]]] = [
        ("body", body_program),
        ("siblings", siblings_program),
    ]
    for shape, gen in shapes:
        cases += [Case(f"{shape}-{n}", shape, n, gen(n)) for n in sizes]

    # Warm-up: imports, xDSL's parser context, isl's first allocations.
    for _ in range(3):
        run_once(cases[0])

    t_start = time.perf_counter()
    for c in cases:
        reps = large if c.n >= 64 else small
        measure(c, *reps)
    elapsed = time.perf_counter() - t_start

    tiled = cases[0]
    assert tiled.statements == 1 and tiled.loops == 6, "tiled6 is not a 6-deep nest"
    for c in cases[1:]:
        assert c.statements == c.n, f"{c.name}: {c.statements} statements"

    print()
    print_table(cases)

    grow = {s: growth([c for c in cases if c.shape == s]) for s, _ in shapes}
    print()
    print("growth of build time with the number of statements (linear: ratio = N ratio)")
    for s, g in grow.items():
        per = ", ".join(f"N={n}: {t:.2f}" for n, t in g["per_statement_ms"].items())
        slopes = ", ".join(
            f"{x['from']}->{x['to']}: {x['exponent']:.2f} ({x['exponent_min']:.2f})"
            for x in g["steps"]
        )
        ratio = f"t({sizes[-1]})/t({sizes[0]}) = {g['ratio']:.1f}"
        print(f"  {s:<9} {ratio} (linear: {g['linear_ratio']:.0f})")
        print(f"  {'':<9} ms per statement: {per}")
        print(f"  {'':<9} marginal cost: {g['marginal_ms_per_statement']:.2f} ms per statement")
        print(f"  {'':<9} log-log slope (1 = linear; of minima in brackets): {slopes}")
        verdict = "linear or better" if g["linear_or_better"] else "WORSE than linear"
        print(f"  {'':<9} -> {verdict} (slope over the last step <= 1.15)")

    t6 = med(tiled, "build")
    verdicts = {
        "tiled6_under_20ms": t6 < TILED6_BUDGET_MS,
        "growth_linear_or_better": all(g["linear_or_better"] for g in grow.values()),
    }
    print()
    print("targets")
    print(
        f"  tiled6 build {t6:.1f} ms (min {min(derived(tiled, 'build')) * 1e3:.1f}) "
        f"< {TILED6_BUDGET_MS:.0f} ms: {'met' if verdicts['tiled6_under_20ms'] else 'MISSED'}"
        f"  ({t6 / med(tiled, 'baseline'):.2f}x parse+verify)"
    )
    print(
        "  growth no worse than linear: "
        + ("met" if verdicts["growth_linear_or_better"] else "MISSED")
    )
    print(f"  (measured in {elapsed:.1f} s)")

    if args.json:
        out = {
            "benchmark": "bench_schedule",
            "machine": info,
            "quick": args.quick,
            "sizes": sizes,
            "elapsed_s": elapsed,
            "cases": [
                {
                    "name": c.name,
                    "shape": c.shape,
                    "n": c.n,
                    "statements": c.statements,
                    "loops": c.loops,
                    "reps": len(c.samples["parse"]),
                    "ms": {k: stats(derived(c, k)) for k in ("baseline", "build", *PHASES)},
                    "samples_ms": {k: [t * 1e3 for t in v] for k, v in c.samples.items()},
                    "ratios_vs_parse_verify": {
                        "build": med(c, "build") / med(c, "baseline"),
                        "poly": med(c, "poly") / med(c, "baseline"),
                    },
                }
                for c in cases
            ],
            "growth": grow,
            "targets": {"tiled6_build_ms": TILED6_BUDGET_MS, **verdicts},
        }
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
        print(f"  results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
