"""An iterate whose empty first list binds its body to no loop, with a `with ()` marker.

onnx-mlir's MatMul of two vectors writes `krnl.iterate() with (%l -> ...)` whose body
holds `krnl.iterate(%l) with () iter_args(...)` and then stores the sum: the body sits
outside the loop, which runs where the marker is. The interpreter is the oracle for the
kernels; NumPy's own sums check the interpreter.
"""

from __future__ import annotations

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.poly.builder import poly_program

DOT = """
func.func @dot(%a: memref<5xf32>, %b: memref<5xf32>) -> memref<f32> {
  %zero = arith.constant 0.0 : f32
  %res = memref.alloc() : memref<f32>
  %l = krnl.define_loops 1
  krnl.iterate() with (%l -> %i = 0 to 5) {
    %sum = krnl.iterate(%l) with () iter_args(%acc = %zero) -> (f32) {
      %k = krnl.get_induction_var_value(%l) : (!krnl.loop) -> index
      %x = krnl.load %a[%k] : memref<5xf32>
      %y = krnl.load %b[%k] : memref<5xf32>
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %p : f32
      krnl.yield %s : f32
    }
    krnl.store %sum, %res[] : memref<f32>
  }
  return %res : memref<f32>
}
"""

# Statements before and after the marker, a two-loop with list whose inner loop is
# placed by a second marker inside the first one's body.
AROUND = """
func.func @around(%x: memref<4x3xf32>, %out: memref<4xf32>, %total: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %l:2 = krnl.define_loops 2
  krnl.iterate() with (%l#0 -> %i = 0 to 4, %l#1 -> %j = 0 to 3) {
    krnl.store %zero, %total[] : memref<f32>
    krnl.iterate(%l#0) with () {
      %ii = krnl.get_induction_var_value(%l#0) : (!krnl.loop) -> index
      krnl.store %zero, %out[%ii] : memref<4xf32>
      krnl.iterate(%l#1) with () {
        %jj = krnl.get_induction_var_value(%l#1) : (!krnl.loop) -> index
        %v = krnl.load %x[%ii, %jj] : memref<4x3xf32>
        %o = krnl.load %out[%ii] : memref<4xf32>
        %s = arith.addf %o, %v : f32
        krnl.store %s, %out[%ii] : memref<4xf32>
      }
      %r = krnl.load %out[%ii] : memref<4xf32>
      %t = krnl.load %total[] : memref<f32>
      %u = arith.addf %t, %r : f32
      krnl.store %u, %total[] : memref<f32>
    }
    %t2 = krnl.load %total[] : memref<f32>
    %d = arith.mulf %t2, %two : f32
    krnl.store %d, %total[] : memref<f32>
  }
  return
}
"""


def _kernels() -> list[str]:
    targets = ["numpy"]
    try:
        import numba  # noqa: F401
    except ImportError:
        return targets
    return [*targets, "numba"]


def test_the_dot_product_runs_its_loop_at_the_marker() -> None:
    module = pk.parse(DOT)
    pk.verify(module)
    fn = module["dot"]
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(5).astype(np.float32) for _ in range(2))
    ref = pk.run_reference(fn, a=a, b=b)
    expected = np.float32(0)
    for k in range(5):
        expected = np.float32(expected + a[k] * b[k])
    assert np.asarray(ref)[()] == expected
    for target in _kernels():
        got = pk.compile(fn, target=target)(a=a, b=b)
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=1e-6)


@pytest.mark.parametrize("target", _kernels())
def test_statements_around_the_marker_run_before_and_after_the_loops(target: str) -> None:
    module = pk.parse(AROUND)
    pk.verify(module)
    fn = module["around"]
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    rows = x[:, 0] + x[:, 1] + x[:, 2]
    total = np.float32(0)
    for r in rows:
        total = np.float32(total + r)
    out, tot = np.zeros(4, np.float32), np.zeros((), np.float32)
    pk.run_reference(fn, x=x, out=out, total=tot)
    np.testing.assert_array_equal(out, rows)
    assert tot[()] == np.float32(2) * total
    out2, tot2 = np.full(4, 9, np.float32), np.full((), 9, np.float32)
    pk.compile(fn, target=target)(x=x, out=out2, total=tot2)
    np.testing.assert_allclose(out2, out, rtol=1e-6)
    np.testing.assert_allclose(tot2, tot, rtol=1e-6)


def test_the_model_orders_the_statements_around_the_loop() -> None:
    fn = pk.parse(AROUND)["around"]
    program = poly_program(fn)
    # total = 0; for i { out[i] = 0; for j {...}; total += out[i] }; total *= 2
    order = str(program.schedule).replace(" ", "")
    first, loop, last = ('filter:"{S0[]}"', 'mark:"i"', 'filter:"{S4[]}"')
    assert order.index(first) < order.index(loop) < order.index(last)
    report = pk.check(fn)
    assert report.legal
    assert [lp.status for lp in report.loops] == ["reduction", "reduction"]


def test_a_marker_naming_an_inner_loop_says_which_loop_it_must_name() -> None:
    src = AROUND.replace(
        "krnl.iterate(%l#0) with () {\n      %ii", "krnl.iterate(%l#1) with () {\n      %ii", 1
    )
    with pytest.raises(pk.VerifyError, match=r"must name the outermost loop %l#0"):
        pk.verify(pk.parse(src))
