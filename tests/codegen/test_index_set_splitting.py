"""Loops split where every dependence they carry starts or ends (transforms/splits.py).

The oracle is the reference interpreter, on data chosen to make a wrong split show:
floyd_warshall with negative weights changes row and column k during iteration k (a
kernel that read them once, as a hand-written NumPy version does, would differ).
"""

from __future__ import annotations

from pathlib import Path

import islpy as isl
import numpy as np
import pytest

import polykrnl as pk
from polykrnl.transforms.splits import split_point

ROOT = Path(__file__).parent.parent.parent
FLOYD = pk.load(ROOT / "benchmarks" / "polybench" / "floyd_warshall.mlir")

# j carries dependences only through j = i (A[i, i] is written there and read by every
# j); i is parallel, so the split point uses a vectorized loop: i stays a loop.
DIAGONAL = """
func.func @diag(%N: index, %A: memref<?x?xf64>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to %N, %jj -> %j = 0 to %N) {
    %aij = krnl.load %A[%i, %j] : memref<?x?xf64>
    %aii = krnl.load %A[%i, %i] : memref<?x?xf64>
    %s = arith.addf %aij, %aii : f64
    krnl.store %s, %A[%i, %j] : memref<?x?xf64>
  }
  return
}
"""

# A reduction into an iter_args value over a loop of two iterations: every carried
# dependence starts at the first one, but a part of one iteration must not turn the
# kept value into an array (found by the differential campaign, seed 0, program 55).
TWO_STEP_SUM = """
func.func @two(%A: memref<8x8xi64>, %B: memref<8xi64>) {
  %zero = arith.constant 0 : i64
  %hp = krnl.define_loops 1
  %hr = krnl.define_loops 1
  krnl.iterate(%hp) with (%hp -> %p = 1 to 7) {
    %red = krnl.iterate(%hr) with (
        %hr -> %r = affine_map<(d0) -> (d0 - 1)>(%p) to affine_map<(d0) -> (d0 + 1)>(%p)
      ) iter_args(%acc = %zero) -> (i64) {
      %v = krnl.load %A[%r, %r] : memref<8x8xi64>
      %s = arith.addi %acc, %v : i64
      krnl.yield %s : i64
    }
    krnl.store %red, %B[%p] : memref<8xi64>
  }
  return
}
"""


def _paths(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(-20, 100, size=(n, n)).astype(np.int32)


@pytest.mark.parametrize("name", ["floyd_warshall", "floyd_warshall_tiled"])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 33])
def test_floyd_warshall_equals_the_interpreter(name: str, n: int) -> None:
    fn = FLOYD[name]
    want = _paths(n, n)
    got = want.copy()
    pk.run_reference(fn, N=n, path=want)
    pk.compile(fn)(N=n, path=got)
    assert np.array_equal(got, want)


def test_floyd_warshall_splits_i_and_j_at_k() -> None:
    sched = pk.schedule(FLOYD["floyd_warshall"])
    for loop in ("i", "j"):
        sp = split_point(sched, loop)
        assert sp is not None
        assert sp.outer[0] == "k"
        # the point is k: coefficient 1 on k, 0 elsewhere, no constant
        aff = sp.point
        assert aff.get_coefficient_val(isl.dim_type.in_, 0).to_python() == 1
        assert aff.get_constant_val().to_python() == 0
    assert split_point(sched, "k") is None  # k carries dependences at every distance
    source = sched.to_numpy().source
    assert "split at i = k, j = k" in source
    body = source[source.index("def kernel_floyd_warshall(") :]
    assert "for i" not in body and "for j" not in body, body
    assert "path[0:k, 0:k] = np.minimum(" in body  # exact ranges, no clamps


@pytest.mark.parametrize(
    ("kernel", "loop"),
    [("seidel_2d", "j"), ("lu", "j"), ("jacobi_1d", "t")],
)
def test_no_split_where_dependences_are_carried_everywhere(kernel: str, loop: str) -> None:
    mod = pk.load(ROOT / "benchmarks" / "polybench" / f"{kernel}.mlir")
    assert split_point(pk.schedule(mod[kernel]), loop) is None


def test_a_split_point_on_a_vectorized_loop_keeps_that_loop() -> None:
    fn = pk.parse(DIAGONAL)["diag"]
    source = pk.schedule(fn).to_numpy().source
    assert "split at j = i" in source
    assert "for i in range(N)" in source
    for n in (0, 1, 4, 9):
        a = np.random.default_rng(n).standard_normal((n, n))
        want, got = a.copy(), a.copy()
        pk.run_reference(fn, N=n, A=want)
        pk.compile(fn)(N=n, A=got)
        assert np.array_equal(got, want)


def test_iter_args_reductions_are_not_split() -> None:
    fn = pk.parse(TWO_STEP_SUM)["two"]
    assert "split" not in pk.schedule(fn).to_numpy().source
    a = np.arange(64, dtype=np.int64).reshape(8, 8)
    want, got = np.zeros(8, np.int64), np.zeros(8, np.int64)
    pk.run_reference(fn, A=a, B=want)
    pk.compile(fn)(A=a, B=got)
    assert np.array_equal(got, want)


@pytest.mark.parametrize(
    ("ty", "np_type", "form"), [("i32", np.int32, "np.minimum("), ("f32", np.float32, "np.where(")]
)
def test_select_of_the_smaller_is_minimum_for_integers_only(
    ty: str, np_type: type, form: str
) -> None:
    """For floats select(a < b, a, b) and np.minimum differ on NaN and -0.0."""
    cmp = "arith.cmpi slt" if ty == "i32" else "arith.cmpf olt"
    src = f"""
func.func @m(%A: memref<6x{ty}>, %B: memref<6x{ty}>) {{
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 6) {{
    %a = krnl.load %A[%i] : memref<6x{ty}>
    %b = krnl.load %B[%i] : memref<6x{ty}>
    %lt = {cmp}, %a, %b : {ty}
    %m = arith.select %lt, %a, %b : {ty}
    krnl.store %m, %A[%i] : memref<6x{ty}>
  }}
  return
}}
"""
    fn = pk.parse(src)["m"]
    assert form in pk.schedule(fn).to_numpy().source
    if ty == "i32":
        a = np.array([3, -1, 7, 0, 5, -9], np_type)
        b = np.array([2, -1, 9, 1, -5, -8], np_type)
    else:
        a = np.array([np.nan, 1.0, -0.0, 0.0, 2.0, np.nan], np_type)
        b = np.array([1.0, np.nan, 0.0, -0.0, 3.0, np.nan], np_type)
    want, got = a.copy(), a.copy()
    pk.run_reference(fn, A=want, B=b)
    pk.compile(fn)(A=got, B=b)
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
