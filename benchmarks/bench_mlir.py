"""The native targets on PolyBench: MLIR (through LLVM 19's tools) and Numba against C.

For every PolyBench kernel of benchmarks/polybench at one dataset (MEDIUM by default),
one process runs on the same inputs: the MLIR kernel of the natural order (one thread,
``to_mlir(parallel=False)``), the Numba kernel of the natural order (one thread, without
Numba's own index checks, as bench_numba.py times it), and the C version of
benchmarks/polybench/hand.c (gcc -O3, one thread). Every output is compared with C's
first; then the variants are timed in interleaved rounds on fresh copies of the inputs,
median of the rounds. Ratios are against C in the same run. A kernel the MLIR target
refuses (an op it has no translation for) is listed with the op.

    python benchmarks/bench_mlir.py                      # MEDIUM, every kernel
    python benchmarks/bench_mlir.py --kernels gemm,lu --dataset LARGE
"""

from __future__ import annotations

import argparse
import copy
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import import_path  # noqa: E402

import polykrnl as pk  # noqa: E402

sizes = import_path("polybench_sizes", HERE / "polybench" / "sizes.py")
c_kernels = import_path("polybench_c_kernels", HERE / "polybench" / "c_kernels.py")


def _difference(ref: dict[str, Any], got: dict[str, Any]) -> float:
    worst = 0.0
    for k, v in ref.items():
        if isinstance(v, np.ndarray):
            scale = float(np.max(np.abs(v))) or 1.0
            worst = max(worst, float(np.max(np.abs(got[k] - v))) / scale)
    return worst


def run(kernel: str, dataset: str, rounds: int) -> dict[str, Any]:
    args = sizes.arguments(kernel, dataset, seed=1)
    fn = pk.load(HERE / "polybench" / f"{kernel}.mlir")[kernel]
    sched = pk.schedule(fn)
    row: dict[str, Any] = {"kernel": kernel}
    try:
        mlir = sched.to_mlir(parallel=False)
        row["mlir compile s"] = mlir.compile()
    except pk.UnsupportedError as e:
        row["refused"] = e.message
        mlir = None
    numba = sched.to_numba(parallel=False, boundscheck=False)
    row["numba compile s"] = numba.compile(**copy.deepcopy(args))
    calls: dict[str, Callable[[dict[str, Any]], None]] = {
        "C -O3": lambda a: c_kernels.c_kernel(kernel)(**a),
        "Numba": lambda a: numba(**a),
    }
    if mlir is not None:
        calls["MLIR"] = lambda a: mlir(**a)
    reference = copy.deepcopy(args)
    calls["C -O3"](reference)
    for name, call in calls.items():
        got = copy.deepcopy(args)
        call(got)
        row[f"{name} error"] = _difference(reference, got)
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            a = copy.deepcopy(args)
            t0 = time.perf_counter()
            call(a)
            times[name].append(time.perf_counter() - t0)
    for name, ts in times.items():
        row[name] = statistics.median(ts)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default="MEDIUM", choices=sizes.DATASETS)
    ap.add_argument("--kernels", help="comma-separated (default: every PolyBench kernel)")
    ap.add_argument("--rounds", type=int, default=5)
    ns = ap.parse_args(argv)
    kernels = ns.kernels.split(",") if ns.kernels else list(sizes.KERNELS)
    rows = []
    for kernel in kernels:
        print(f"... {kernel}", file=sys.stderr, flush=True)
        rows.append(run(kernel, ns.dataset, ns.rounds))
    print(f"PolyBench {ns.dataset}, one thread, median of {ns.rounds} interleaved rounds")
    print("| kernel | C -O3 | Numba / C | MLIR / C | MLIR / Numba | max rel. error (MLIR) |")
    print("|---|---|---|---|---|---|")
    mlir_c: list[float] = []
    numba_c: list[float] = []
    for r in rows:
        c = r["C -O3"]
        numba_c.append(r["Numba"] / c)
        if "MLIR" in r:
            mlir_c.append(r["MLIR"] / c)
            print(
                f"| {r['kernel']} | {c * 1e3:.2f} ms | {r['Numba'] / c:.2f} | "
                f"{r['MLIR'] / c:.2f} | {r['MLIR'] / r['Numba']:.2f} | "
                f"{r['MLIR error']:.1e} |"
            )
        else:
            print(
                f"| {r['kernel']} | {c * 1e3:.2f} ms | {r['Numba'] / c:.2f} | refused: "
                f"{r['refused'][:60]} | | |"
            )

    def geo(xs: list[float]) -> str:
        return f"{math.exp(sum(math.log(x) for x in xs) / len(xs)):.2f}" if xs else "-"

    print(
        f"geo-mean: Numba / C {geo(numba_c)} ({len(numba_c)} kernels), MLIR / C "
        f"{geo(mlir_c)} ({len(mlir_c)} kernels)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
