"""A krnl.iterate inside another op's region (onnx-mlir's Loop and If lowerings do this).

The polyhedral model sees the enclosing scf.if as one statement; the NumPy kernel runs
the nest inside it as Python loops, as written. NumPy is the oracle for the interpreter,
the interpreter for the kernel.
"""

from __future__ import annotations

import numpy as np
import pytest

import polykrnl as pk

GUARDED = """
func.func @guarded(%flag: memref<i1>, %x: memref<5x4xf32>, %out: memref<5xf32>) {
  %c = krnl.load %flag[] : memref<i1>
  %zero = arith.constant 0.0 : f32
  scf.if %c {
    %l:2 = krnl.define_loops 2
    krnl.iterate(%l#0) with (%l#0 -> %i = 0 to 5) {
      %s = krnl.iterate(%l#1) with (%l#1 -> %j = 0 to 4) iter_args(%acc = %zero) -> (f32) {
        %jj = krnl.get_induction_var_value(%l#1) : (!krnl.loop) -> index
        %v = krnl.load %x[%i, %jj] : memref<5x4xf32>
        %t = arith.addf %acc, %v : f32
        krnl.yield %t : f32
      }
      krnl.store %s, %out[%i] : memref<5xf32>
    }
  }
  return
}
"""


@pytest.mark.parametrize("flag", [True, False])
def test_a_nest_under_scf_if_runs_as_python_loops(flag: bool) -> None:
    fn = pk.parse(GUARDED)["guarded"]
    x = np.random.default_rng(3).standard_normal((5, 4)).astype(np.float32)
    expected = np.full(5, -1.0, np.float32)
    if flag:
        expected = x[:, 0] + x[:, 1] + x[:, 2] + x[:, 3]  # the program's order of the sum
    for run in (pk.run_reference, lambda f, **kw: pk.compile(f)(**kw)):
        out = np.full(5, -1.0, np.float32)
        run(fn, flag=np.array(flag), x=x, out=out)
        np.testing.assert_array_equal(out, expected)
    assert "for " in pk.compile(fn).source


def test_a_blocked_nest_under_scf_if_is_refused_clearly() -> None:
    src = GUARDED.replace(
        "    krnl.iterate(%l#0) with",
        "    %b0, %b1 = krnl.block %l#0 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)\n"
        "    krnl.iterate(%b0, %b1) with",
    )
    fn = pk.parse(src)["guarded"]
    with pytest.raises(pk.UnsupportedError, match=r"a krnl\.iterate with a recipe"):
        pk.compile(fn)
