"""What a Numba prange launch costs on a small batch: y[b, i] = x[b, i] * 2 over rows of
a memref<?x64xf32>, krnl.parallel on the batch loop, compiled with parallel=True and
parallel=False, called on a batch of 1 and of 4096 rows (best of 15 repeats of many
calls each), through the kernel (its argument checks included) and through its @njit
function alone.

    python benchmarks/bench_prange_launch.py      # about 20 s, most of it compiling
"""

from __future__ import annotations

import timeit
from functools import partial
from typing import Any

import numpy as np

import polykrnl as pk

SCALE_ROWS = """
func.func @scale_rows(%x: memref<?x64xf32>, %y: memref<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %two = arith.constant 2.0 : f32
  %n = memref.dim %x, %c0 : memref<?x64xf32>
  %bb, %ii = krnl.define_loops 2
  krnl.parallel %bb : !krnl.loop
  krnl.iterate(%bb, %ii) with (%bb -> %b = 0 to %n, %ii -> %i = 0 to 64) {
    %v = krnl.load %x[%b, %i] : memref<?x64xf32>
    %w = arith.mulf %v, %two : f32
    krnl.store %w, %y[%b, %i] : memref<?x64xf32>
  }
  return
}
"""


def _best_us(call: Any, number: int) -> float:
    return min(timeit.repeat(call, number=number, repeat=15)) / number * 1e6


def main() -> None:
    fn = pk.parse(SCALE_ROWS)["scale_rows"]
    kernels = {p: pk.compile(fn, target="numba", parallel=p) for p in (False, True)}
    for how in ("kernel", "njit only"):
        for batch, number in ((1, 2000), (4096, 20)):
            x = np.random.default_rng(0).standard_normal((batch, 64)).astype(np.float32)
            y = np.zeros_like(x)
            row = []
            for parallel, k in kernels.items():
                k(x=x, y=y)  # compiles for this signature
                call = partial(k, x=x, y=y) if how == "kernel" else partial(k.dispatcher, x, y)
                row.append(f"parallel={parallel}: {_best_us(call, number):8.2f} us")
            print(f"{how:9s} batch {batch:4d}: " + "   ".join(row))


if __name__ == "__main__":
    main()
