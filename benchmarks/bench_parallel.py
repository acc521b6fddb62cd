"""When do threads pay off for krnl.parallel loops? (`to_numpy(parallel=True)`)

Runs the kernels of benchmarks/parallel/rows.mlir with and without threads, in
the same process, on the same inputs, over a range of sizes, and prints a
Markdown table: median time of each (fresh inputs are copied in outside the
timed region), the speedup (serial / threaded) and the average number of
elements one iteration of the parallel loop works on.

    python benchmarks/bench_parallel.py            # about 30 s
    python benchmarks/bench_parallel.py --quick    # fewer sizes and repetitions
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _common import machine

import polykrnl as pk

HERE = Path(__file__).resolve().parent
MOD = pk.load(HERE / "parallel" / "rows.mlir")


ROWS = 64  # iterations of the parallel loop


def inputs(kernel: str, m: int, rng: np.random.Generator) -> dict[str, Any]:
    x = rng.uniform(-1, 1, (ROWS, m))
    if kernel == "band_exp":
        x = x.astype(np.float32)
        return {"N": ROWS, "M": m, "x": x, "y": np.zeros_like(x)}
    return {"N": ROWS, "M": m, "s": 1.0000001, "x": x}


def per_iteration(m: int) -> float:
    return m - (ROWS - 1) / 2


def timed(call: Callable[..., Any], args: dict[str, Any], reps: int) -> float:
    fresh = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    times = []
    for _ in range(reps):
        for k, v in args.items():
            if isinstance(v, np.ndarray):
                np.copyto(fresh[k], v)
        gc.collect()
        t0 = time.perf_counter()
        call(**fresh)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    opts = ap.parse_args()
    sizes = [256, 4096, 65536] if opts.quick else [128, 512, 2048, 8192, 32768, 131072]
    info = machine()
    print(
        f"machine: {info['nproc']} CPUs, {info['processor']}, CPython {info['python']}, "
        f"NumPy {np.__version__}, commit {info['commit']}"
    )
    print(f"threads used by _pk_parallel: {os.cpu_count()}")
    print()
    print(f"{ROWS} iterations of the parallel loop; M = row length")
    print()
    print("| kernel | M | elements per iteration (avg) | serial ms | threaded ms | speedup |")
    print("|---|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(0)
    for kernel in ("band_exp", "band_scale"):
        sched = pk.schedule(MOD[kernel])
        serial = sched.to_numpy()
        threaded = sched.to_numpy(parallel=True)
        assert "_pk_parallel(" in threaded.source
        for n in sizes:
            args = inputs(kernel, n, rng)
            # Same results first (the iterations are independent: bit for bit).
            a = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
            b = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
            serial(**a)
            threaded(**b)
            assert all(np.array_equal(a[k], b[k]) for k in a if isinstance(a[k], np.ndarray))
            work = ROWS * per_iteration(n)
            reps = max(5, min(200, int(2e7 / max(work, 1))))
            if opts.quick:
                reps = max(3, reps // 4)
            # Interleaved, so that a change of machine load hits both alike.
            ts, tt = [], []
            for _ in range(3):
                ts.append(timed(serial, args, reps))
                tt.append(timed(threaded, args, reps))
            s, t = min(ts), min(tt)
            print(
                f"| {kernel} | {n} | {per_iteration(n):,.0f} | {s * 1e3:.3f} | "
                f"{t * 1e3:.3f} | {s / t:.2f}x |"
            )


if __name__ == "__main__":
    main()
