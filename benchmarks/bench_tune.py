"""pk.tune on PolyBench: the tuned schedule against the natural order and the hand recipe.

For each kernel, `pk.tune` searches the loops of `@<kernel>_tiled` as written (its nests
distributed by hand, which the primitives cannot do yet) with its recipe as a seed, for
--budget seconds, Numba one thread, on a local pool. Then one process times, in rounds
interleaved across the three and on fresh copies of the same inputs, the Numba kernels
(`parallel=False`, one thread) of `@<kernel>` in its natural order, of `@<kernel>_tiled`'s
recipe and of the winner; medians of the rounds. Prints a Markdown table (ratios measured
in this one run) and appends nothing anywhere: copy it into benchmarks/RESULTS.md.

    python benchmarks/bench_tune.py --quick   # gemm, two_mm, jacobi_2d at MEDIUM, 30 s each
    python benchmarks/bench_tune.py --kernels gemm,syrk --dataset LARGE --budget 120
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import import_path  # noqa: E402

import polykrnl as pk  # noqa: E402

sizes = import_path("polybench_sizes", HERE / "polybench" / "sizes.py")

QUICK = ("gemm", "two_mm", "jacobi_2d")


def run_params(args: dict[str, Any], fn: pk.Function) -> dict[str, float]:
    """The --param sizes of `args` (index arguments, dynamic dimensions of arrays)."""
    out: dict[str, float] = {}
    for a in fn.arguments:
        v = args[a.name]
        if isinstance(v, np.ndarray):
            out.update({f"{a.name}.{d}": int(n) for d, n in enumerate(v.shape)})
        elif isinstance(v, int):
            out[a.name] = v
    return out


def timed(kernel: Any, args: dict[str, Any], rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        fresh = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
        start = time.perf_counter()
        kernel(**fresh)
        out.append(time.perf_counter() - start)
    return out


def bench(kernel: str, dataset: str, budget: float, rounds: int, seed: int) -> dict[str, Any]:
    mod = pk.load(str(HERE / "polybench" / f"{kernel}.mlir"))
    args = sizes.arguments(kernel, dataset, seed=1)
    tiled = mod[f"{kernel}_tiled"]
    start = time.perf_counter()
    result = pk.tune(tiled, run_params(args, tiled), budget=budget, seed=seed, repeats=3)
    searched = time.perf_counter() - start
    kernels = {
        "natural": pk.schedule(mod[kernel]).to_numba(parallel=False),
        "recipe": pk.schedule(tiled).to_numba(parallel=False),
        "tuned": result.schedule.to_numba(parallel=False),
    }
    for k in kernels.values():
        k.compile(**args)
        timed(k, args, 1)  # warm-up
    times: dict[str, list[float]] = {name: [] for name in kernels}
    for _ in range(rounds):
        for name, k in kernels.items():
            times[name] += timed(k, args, 1)
    med = {name: statistics.median(t) for name, t in times.items()}
    return {
        "kernel": kernel,
        "dataset": dataset,
        "median": med,
        "tried": len(result.tried),
        "pruned": result.pruned,
        "searched": searched,
        "winner": str(result.candidate),
        "verdict": result.verdict,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kernels", default=",".join(QUICK))
    p.add_argument("--dataset", default="MEDIUM")
    p.add_argument("--budget", type=float, default=60.0)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="the default kernels, 30 s each")
    a = p.parse_args()
    budget = 30.0 if a.quick else a.budget
    rows = []
    for kernel in a.kernels.split(","):
        r = bench(kernel, a.dataset, budget, a.rounds, a.seed)
        print(f"{kernel}: {r}", file=sys.stderr, flush=True)
        rows.append(r)
    print(f"\n`python benchmarks/bench_tune.py {' '.join(sys.argv[1:])}`, budget {budget:g} s\n")
    print(
        "| kernel | dataset | natural ms | recipe ms | tuned ms | tuned / best of the two "
        "| tried | pruned | search s | winner |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    ratios = []
    for r in rows:
        m = r["median"]
        ratio = m["tuned"] / min(m["natural"], m["recipe"])
        ratios.append(ratio)
        print(
            f"| {r['kernel']} | {r['dataset']} | {m['natural'] * 1e3:.2f} | "
            f"{m['recipe'] * 1e3:.2f} | {m['tuned'] * 1e3:.2f} | {ratio:.2f} | {r['tried']} | "
            f"{r['pruned']} | {r['searched']:.0f} | `{r['winner']}` |"
        )
    geo = math.exp(statistics.mean(math.log(x) for x in ratios))
    print(f"\ngeometric mean of tuned / best of natural and recipe: {geo:.2f}")


if __name__ == "__main__":
    main()
