"""Triangles of parallel loops as masked array code over their bounding box (codegen/masks.py).

The oracle is the reference interpreter. Arrays hold values outside the triangle too
(so a store or a sum that leaked outside would show), and zeros where an integer
division outside the triangle would divide by zero.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.inputs import make_inputs
from tests.parsed import load

ROOT = Path(__file__).parent.parent.parent
MASKED = "over their bounding box, stores masked"

TRIANGLES = """
func.func @row_sums(%N: index, %A: memref<?x?xf64>, %s: memref<?xf64>) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    %kk = krnl.define_loops 1
    krnl.iterate(%kk) with (%kk -> %k = 0 to affine_map<(d0) -> (d0 + 1)>(%i)) {
      %a = krnl.load %A[%i, %k] : memref<?x?xf64>
      %o = krnl.load %s[%i] : memref<?xf64>
      %t = arith.addf %o, %a : f64
      krnl.store %t, %s[%i] : memref<?xf64>
    }
  }
  return
}

func.func @gather_tri(%N: index, %idx: memref<?xindex>, %x: memref<?xf64>,
                      %y: memref<?x?xf64>) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    %jj = krnl.define_loops 1
    krnl.iterate(%jj) with (%jj -> %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i)) {
      %p = krnl.load %idx[%j] : memref<?xindex>
      %v = krnl.load %x[%p] : memref<?xf64>
      krnl.store %v, %y[%i, %j] : memref<?x?xf64>
    }
  }
  return
}

func.func @skewed(%N: index, %x: memref<?x?xf64>, %y: memref<?x?xf64>) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    %jj = krnl.define_loops 1
    krnl.iterate(%jj) with (%jj -> %j = %i to %N) {
      %d = affine.apply affine_map<(d0, d1) -> (d1 - d0)>(%i, %j)
      %v = krnl.load %x[%i, %d] : memref<?x?xf64>
      krnl.store %v, %y[%i, %j] : memref<?x?xf64>
    }
  }
  return
}

func.func @int_div(%N: index, %x: memref<?x?xi32>, %y: memref<?x?xi32>) {
  %c = arith.constant 1000 : i32
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    %jj = krnl.define_loops 1
    krnl.iterate(%jj) with (%jj -> %j = affine_map<(d0) -> (d0 + 1)>(%i) to %N) {
      %v = krnl.load %x[%i, %j] : memref<?x?xi32>
      %q = arith.divsi %c, %v : i32
      krnl.store %q, %y[%i, %j] : memref<?x?xi32>
    }
  }
  return
}
"""
MOD = pk.parse(TRIANGLES)


def _same_as_reference(fn: pk.Function, args: dict[str, Any]) -> None:
    want = copy.deepcopy(args)
    got = copy.deepcopy(args)
    pk.run_reference(fn, **want)
    pk.compile(fn)(**got)
    for key, value in want.items():
        if isinstance(value, np.ndarray):
            assert np.allclose(got[key], value, rtol=1e-12, atol=0, equal_nan=True), key


@pytest.mark.parametrize("kernel", ["syrk", "covariance"])
@pytest.mark.parametrize(("n", "m"), [(0, 0), (1, 1), (2, 3), (6, 4), (11, 9)])
def test_polybench_triangles_equal_the_interpreter(kernel: str, n: int, m: int) -> None:
    mod = load(ROOT / "benchmarks" / "polybench" / f"{kernel}.mlir")
    rng = np.random.default_rng(n * 10 + m)
    for fn in mod.functions:
        if kernel == "syrk":
            args = dict(
                N=n,
                M=m,
                alpha=1.5,
                beta=1.2,
                C=rng.standard_normal((n, n)),
                A=rng.standard_normal((n, m)),
            )
        else:
            args = dict(
                M=m,
                N=n,
                float_n=float(n),
                data=rng.standard_normal((n, m)),
                cov=rng.standard_normal((m, m)),
                mean=rng.standard_normal(m),
            )
        _same_as_reference(fn, args)


@pytest.mark.parametrize("kernel", ["syrk", "covariance"])
def test_polybench_triangles_are_masked_not_row_loops(kernel: str) -> None:
    mod = load(ROOT / "benchmarks" / "polybench" / f"{kernel}.mlir")
    source = pk.schedule(mod[kernel]).to_numpy().source
    assert MASKED in source
    assert "for " not in source.split("import numpy as np", 1)[1], source


def test_a_reduction_axis_is_never_masked() -> None:
    """Summing over the box would add the elements outside the triangle."""
    fn = MOD["row_sums"]
    source = pk.schedule(fn).to_numpy().source
    assert "np.where" not in source
    rng = np.random.default_rng(0)
    _same_as_reference(fn, dict(N=7, A=rng.standard_normal((7, 7)), s=rng.standard_normal(7)))


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("gather_tri", "an access of x that is not affine"),
        ("skewed", "a subscript of x that uses two vectorized loops"),
    ],
)
def test_unsafe_triangles_stay_row_loops(name: str, why: str) -> None:
    fn = MOD[name]
    source = pk.schedule(fn).to_numpy().source
    assert MASKED not in source
    assert why in source
    if name == "gather_tri":
        args = make_inputs(fn, {"N": 6, "x.0": 6, "y.0": 6, "y.1": 6, "idx.0": 6}, seed=1)
        args["idx"] = np.array([5, 0, 3, 1, 4, 2], dtype=np.int64)
    else:
        args = make_inputs(fn, {"N": 6, "x.0": 6, "x.1": 6, "y.0": 6, "y.1": 6}, seed=1)
    _same_as_reference(fn, args)


def test_integer_division_outside_the_triangle_does_not_raise() -> None:
    fn = MOD["int_div"]
    assert MASKED in pk.schedule(fn).to_numpy().source
    x = np.triu(np.arange(1, 37, dtype=np.int32).reshape(6, 6), 1)  # zeros outside
    y = np.full((6, 6), -7, dtype=np.int32)
    _same_as_reference(fn, dict(N=6, x=x, y=y))
