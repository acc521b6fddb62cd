"""A yield that passes iter_args to each other (`krnl.yield %b, %a`) reads every value
before the step stores any: the generated kernels stored `a` first and then read the new
`a` for `b` (both Python targets gave 0 or NaN where the interpreter has numbers). The
reference interpreter is the oracle, bit for bit where no float sum is reassociated.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import polykrnl as pk

# A pair of running values per row, swapped by each step: a' = b - x[i, j], b' = a.
SWAP = """
func.func @f(%x: memref<?x6xf32>) -> (memref<?xf32>, memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x6xf32>
  %out_a = memref.alloc(%n) : memref<?xf32>
  %out_b = memref.alloc(%n) : memref<?xf32>
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %rows = krnl.define_loops 1
  krnl.iterate(%rows) with (%rows -> %i = 0 to %n) {
    %cols = krnl.define_loops 1
    %r:2 = krnl.iterate(%cols) with (%cols -> %j = 0 to 6) iter_args(%a = %zero, %b = %one)
        -> (f32, f32) {
      %v = krnl.load %x[%i, %j] : memref<?x6xf32>
      %a2 = arith.subf %b, %v : f32
      krnl.yield %a2, %a : f32, f32
    }
    krnl.store %r#0, %out_a[%i] : memref<?xf32>
    krnl.store %r#1, %out_b[%i] : memref<?xf32>
  }
  return %out_a, %out_b : memref<?xf32>, memref<?xf32>
}
"""

TARGETS: dict[str, dict[str, Any]] = {
    "numpy": {"target": "numpy", "reassociate": False},
    "numpy-default": {"target": "numpy"},
    "numba": {"target": "numba"},
}


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_swapping_iter_args_read_the_old_values(target: str) -> None:
    if target == "numba":
        pytest.importorskip("numba", reason="the Numba target needs the extra polykrnl[numba]")
    fn = pk.parse(SWAP)["f"]
    x = np.random.default_rng(3).standard_normal((4, 6)).astype(np.float32)
    want = pk.run_reference(fn, x=x)
    got = pk.compile(fn, **TARGETS[target])(x=x)
    assert not np.isnan(want[0]).any()
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g.view(np.uint32), w.view(np.uint32))
