"""iter_args on an iterate that only anchors a loop: `krnl.iterate(%h) with () iter_args(...)`.

The loop of %h carries the values: they start before that loop (each time it
starts), each iteration yields, and the iterate's results are the values after
the loop. The interpreter, the polyhedral model and the NumPy kernel must agree;
NumPy itself is the oracle for the interpreter.
"""

from __future__ import annotations

import numpy as np

import polykrnl as pk

ROW_DOTS = """
func.func @row_dots(%a: memref<5x6xf32>, %b: memref<6x3xf32>, %c: memref<5x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %l:3 = krnl.define_loops 3
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 5, %l#1 -> %j = 0 to 3,
                                 %l#2 -> %k = 0 to 6) {
    %ij:2 = krnl.get_induction_var_value(%l#0, %l#1) : (!krnl.loop, !krnl.loop) -> (index, index)
    %acc = krnl.iterate(%l#2) with () iter_args(%s = %zero) -> (f32) {
      %kk = krnl.get_induction_var_value(%l#2) : (!krnl.loop) -> index
      %x = krnl.load %a[%ij#0, %kk] : memref<5x6xf32>
      %y = krnl.load %b[%kk, %ij#1] : memref<6x3xf32>
      %p = arith.mulf %x, %y : f32
      %t = arith.addf %s, %p : f32
      krnl.yield %t : f32
    }
    krnl.store %acc, %c[%ij#0, %ij#1] : memref<5x3xf32>
  }
  return
}
"""

TILE_SUMS = """
func.func @tile_sums(%v: memref<12xi64>, %out: memref<3xi64>) {
  %zero = arith.constant 0 : i64
  %l = krnl.define_loops 1
  %t, %p = krnl.block %l 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%t) with (%l -> %i = 0 to 12) {
    %ti = krnl.get_induction_var_value(%t) : (!krnl.loop) -> index
    %sum = krnl.iterate(%p) with () iter_args(%s = %zero) -> (i64) {
      %pi = krnl.get_induction_var_value(%p) : (!krnl.loop) -> index
      %x = krnl.load %v[%pi] : memref<12xi64>
      %n = arith.addi %s, %x : i64
      krnl.yield %n : i64
    }
    %slot = affine.apply affine_map<(d0) -> (d0 floordiv 4)>(%ti)
    krnl.store %sum, %out[%slot] : memref<3xi64>
  }
  return
}
"""


def test_a_reduction_carried_by_the_anchored_loop() -> None:
    fn = pk.parse(ROW_DOTS)["row_dots"]
    rng = np.random.default_rng(1)
    a = rng.standard_normal((5, 6)).astype(np.float32)
    b = rng.standard_normal((6, 3)).astype(np.float32)
    c = np.zeros((5, 3), dtype=np.float32)
    pk.run_reference(fn, a=a, b=b, c=c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-6)
    report = pk.check(fn)
    verdicts = {lv.loop: lv.status for lv in report.loops}
    assert verdicts["i"] == verdicts["j"] == "parallel"
    assert verdicts["k"] == "reduction"
    # The accumulator over k of every (i, j) at once: a contraction, reassociated.
    kernel = pk.compile(fn)
    assert not kernel.exact and "reduction over k as a contraction" in kernel.source
    kernel_c = np.zeros_like(c)
    kernel(a=a, b=b, c=kernel_c)
    np.testing.assert_allclose(kernel_c, c, rtol=1e-5, atol=1e-6)
    exact = pk.schedule(fn).to_numpy(reassociate=False)
    kernel_c = np.zeros_like(c)
    exact(a=a, b=b, c=kernel_c)
    np.testing.assert_array_equal(kernel_c, c)


def test_iter_args_restart_with_each_tile() -> None:
    fn = pk.parse(TILE_SUMS)["tile_sums"]
    v = np.arange(12, dtype=np.int64) ** 2
    out = np.zeros(3, dtype=np.int64)
    pk.run_reference(fn, v=v, out=out)
    np.testing.assert_array_equal(out, v.reshape(3, 4).sum(axis=1))
    kernel_out = np.zeros(3, dtype=np.int64)
    pk.compile(fn)(v=v, out=kernel_out)
    np.testing.assert_array_equal(kernel_out, out)
