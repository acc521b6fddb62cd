"""`polykrnl demo`: a short tour on a built-in example, printed for a terminal.

It grows with the project; today it shows what the foundation does: parse a
tiled matmul written in Krnl, print it back, verify it, and run it with the
reference interpreter against NumPy.
"""

from __future__ import annotations

import time
from typing import TextIO

import numpy as np

TILED_MATMUL = """\
// C += A * B, blocked 8x8 on i and j with a 4-wide k, tiles outermost,
// the i tile loop marked parallel.
func.func @matmul(%A: memref<30x20xf32>, %B: memref<20x25xf32>, %C: memref<30x25xf32>) {
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl, %kb, %kl) [0, 3, 1, 4, 2, 5]
      : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.parallel %ib : !krnl.loop
  krnl.iterate(%ib, %jb, %kb, %il, %jl, %kl)
      with (%ii -> %i = 0 to 30, %jj -> %j = 0 to 25, %kk -> %k = 0 to 20) {
    %a = krnl.load %A[%i, %k] : memref<30x20xf32>
    %b = krnl.load %B[%k, %j] : memref<20x25xf32>
    %c = krnl.load %C[%i, %j] : memref<30x25xf32>
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    krnl.store %s, %C[%i, %j] : memref<30x25xf32>
  }
  return
}
"""


def _section(out: TextIO, title: str) -> None:
    out.write(f"\n== {title} {'=' * max(0, 70 - len(title))}\n")


def run_demo(out: TextIO) -> int:
    """Print the tour; returns the exit status."""
    import polykrnl as pk

    _section(out, "Krnl input (built-in example)")
    out.write(TILED_MATMUL)

    t0 = time.perf_counter()
    mod = pk.parse(TILED_MATMUL, "<demo>")
    printed = mod.print()
    again = pk.parse(printed, "<demo-printed>").print()
    _section(out, "parsed and printed back (xDSL IR)")
    out.write(printed)
    out.write(f"round trip is a fixpoint: {again == printed}\n")

    pk.verify(mod)
    out.write("verify: ok (handles, recipe, scoping, ranks)\n")

    fn = mod["matmul"]
    rng = np.random.default_rng(0)
    a = rng.standard_normal((30, 20)).astype(np.float32)
    b = rng.standard_normal((20, 25)).astype(np.float32)
    c = rng.standard_normal((30, 25)).astype(np.float32)
    expected = c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    t1 = time.perf_counter()
    pk.run_reference(fn, A=a, B=b, C=c)
    t2 = time.perf_counter()
    err = float(np.max(np.abs(c - expected)))
    _section(out, "reference interpreter (the oracle), tiled order, element by element")
    out.write(f"parse + print + verify: {(t1 - t0) * 1e3:.1f} ms\n")
    out.write(f"interpreted 30x25x20 matmul: {(t2 - t1) * 1e3:.1f} ms\n")
    out.write(f"max |C - (C0 + A @ B)| vs NumPy in float64: {err:.2e}\n")
    ok = again == printed and err < 1e-4
    out.write("\n" + ("demo finished: all checks passed\n" if ok else "demo FAILED\n"))
    return 0 if ok else 1
