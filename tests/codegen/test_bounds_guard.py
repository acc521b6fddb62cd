"""Kernels refuse arrays that do not fit their accesses (codegen/bounds_guard.py).

The oracle is the reference interpreter: each inconsistent call below is one it refuses
(an access out of bounds); the kernels must refuse it too, before writing anything, with
one polykrnl error naming the array, the dimension and the sizes. Consistent calls
still equal the interpreter's results.
"""

from __future__ import annotations

import importlib.util
import io
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.cli import main
from polykrnl.targets.mlir import missing_tools
from tests.bounds_programs import BMM

SHIFTED = """
func.func @shifted(%X: memref<?xf32>, %Y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %Y, %c0 : memref<?xf32>
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to %n) {
    %j = affine.apply affine_map<(d0) -> (d0 + 2)>(%i)
    %v = krnl.load %X[%j] : memref<?xf32>
    krnl.store %v, %Y[%i] : memref<?xf32>
  }
  return
}
"""

ROWS = """
func.func @rows(%X: memref<?x16xf32>, %Y: memref<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %X, %c0 : memref<?x16xf32>
  %ii, %jj = krnl.define_loops 2
  krnl.parallel %ii : !krnl.loop
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to %n, %jj -> %j = 0 to 16) {
    %v = krnl.load %X[%i, %j] : memref<?x16xf32>
    %w = arith.mulf %v, %v : f32
    krnl.store %w, %Y[%i, %j] : memref<?x16xf32>
  }
  return
}
"""

GATHER = """
func.func @gather(%X: memref<?x4xf32>, %idx: memref<?xi64>, %Y: memref<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %idx, %c0 : memref<?xi64>
  %ii, %jj = krnl.define_loops 2
  krnl.parallel %ii : !krnl.loop
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to %n, %jj -> %j = 0 to 4) {
    %r = krnl.load %idx[%i] : memref<?xi64>
    %ri = arith.index_cast %r : i64 to index
    %v = krnl.load %X[%ri, %j] : memref<?x4xf32>
    krnl.store %v, %Y[%i, %j] : memref<?x4xf32>
  }
  return
}
"""

rng = np.random.default_rng(0)


def _f32(*shape: int) -> np.ndarray[Any, Any]:
    return rng.standard_normal(shape).astype(np.float32)


# (program, function, a consistent call, inconsistent calls with the array, dimension
# and sizes the message must name)
CASES: list[tuple[str, str, dict[str, Any], list[tuple[dict[str, Any], str]]]] = [
    (
        BMM,
        "bmm",
        {"A": _f32(3, 20, 12), "B": _f32(3, 12, 8), "C": _f32(3, 20, 8)},
        [
            (
                {"A": _f32(3, 20, 12), "B": _f32(1, 12, 8), "C": _f32(3, 20, 8)},
                "addresses B up to index 2 along dimension 0: B needs at least 3 elements "
                "there, given 1",
            ),
            (
                {"A": _f32(4, 20, 12), "B": _f32(4, 12, 8), "C": _f32(2, 20, 8)},
                "addresses C up to index 3 along dimension 0: C needs at least 4 elements "
                "there, given 2",
            ),
        ],
    ),
    (
        SHIFTED,
        "shifted",
        {"X": _f32(12), "Y": _f32(10)},
        [
            (
                {"X": _f32(10), "Y": _f32(10)},
                "X up to index 11 along dimension 0: X needs at least 12 elements there, given 10",
            ),
            (
                {"X": _f32(3), "Y": _f32(5)},
                "X up to index 6 along dimension 0: X needs at least 7 elements there, given 3",
            ),
        ],
    ),
    (
        ROWS,
        "rows",
        {"X": _f32(40, 16), "Y": _f32(40, 16)},
        [
            (
                {"X": _f32(40, 16), "Y": _f32(39, 16)},
                "Y needs at least 40 elements there, given 39",
            ),
            (
                {"X": _f32(5, 16), "Y": _f32(5, 15)},
                "argument 'Y' of @rows: expected shape ?x16",
            ),
        ],
    ),
]


def _copy(call: dict[str, Any]) -> dict[str, Any]:
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in call.items()}


def _kernel(text: str, name: str, target: str) -> Any:
    if target == "numba":
        pytest.importorskip("numba")
    if target == "mlir" and missing_tools():
        pytest.skip(f"the MLIR target needs {', '.join(missing_tools())}")
    return pk.compile(pk.parse(text)[name], target=target)


@pytest.mark.parametrize("target", ["numpy", "numba", "mlir"])
@pytest.mark.parametrize("case", range(len(CASES)), ids=[c[1] for c in CASES])
def test_inconsistent_arrays_are_refused_before_any_write(case: int, target: str) -> None:
    text, name, good, bads = CASES[case]
    fn = pk.parse(text)[name]
    kernel = _kernel(text, name, target)
    for call, message in bads:
        with pytest.raises((pk.InterpretError, pk.ArgumentError), match=r"out of bounds|shape"):
            pk.run_reference(fn, **_copy(call))  # the oracle refuses it too
        given = _copy(call)
        # A static dimension that differs is the argument binding's ArgumentError (as in
        # the interpreter); sizes that do not fit the accesses, the guard's BoundsError.
        with pytest.raises(pk.ArgumentError) as err:
            kernel(**given)
        if target == "mlir" and "expected shape" not in message:
            # Checked in Python before the native call (refuse_unsafe), worded by array.
            left = re.search(r"leaves (\w+):", err.value.message)
            assert left is not None and re.search(rf"\b{left.group(1)}\b", message)
        else:
            assert message in err.value.message
        if "expected shape" not in message:
            assert isinstance(err.value, pk.BoundsError) and isinstance(err.value, IndexError)
        for k, v in given.items():  # refused before touching memory
            np.testing.assert_array_equal(v, call[k])
    want, got = _copy(good), _copy(good)
    pk.run_reference(fn, **want)
    kernel(**got)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-5)


def _emitted(tmp_path: Path, text: str, target: str) -> Any:
    src = tmp_path / "prog.mlir"
    src.write_text(text)
    out_file = tmp_path / f"kernels_{target}.py"
    assert (
        main(["emit", target, str(src), "-o", str(out_file)], out=io.StringIO(), err=io.StringIO())
        == 0
    )
    spec = importlib.util.spec_from_file_location(f"kernels_{target}_{id(tmp_path)}", out_file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("target", ["numpy", "numba"])
def test_emitted_modules_refuse_on_their_own(tmp_path: Path, target: str) -> None:
    if target == "numba":
        pytest.importorskip("numba")
    module = _emitted(tmp_path, BMM, target)
    A, B, C = _f32(3, 20, 12), _f32(1, 12, 8), np.zeros((3, 20, 8), np.float32)
    with pytest.raises(IndexError, match="B needs at least 3 elements there, given 1"):
        module.kernel_bmm(A, B, C)
    assert not C.any()
    with pytest.raises(IndexError, match=r"shape \(\?, 12, 8\) in the function's type"):
        module.kernel_bmm(A, _f32(3, 12, 9), C)


@pytest.mark.parametrize("target", ["numpy", "numba"])
@pytest.mark.parametrize("bad", [-1, 10])
def test_gather_index_outside_is_refused_not_wrapped(target: str, bad: int) -> None:
    """NumPy reads index -1 from the end and Numba's own check is lost in prange; the
    interpreter refuses both, so must every kernel."""
    fn = pk.parse(GATHER)["gather"]
    kernel = _kernel(GATHER, "gather", target)
    X, Y = _f32(10, 4), np.zeros((10, 4), np.float32)
    idx = np.arange(10, dtype=np.int64)[::-1].copy()
    kernel(X=X, idx=idx, Y=Y)
    np.testing.assert_array_equal(Y, X[::-1])
    idx[7] = bad
    with pytest.raises(pk.InterpretError, match="out of bounds"):
        pk.run_reference(fn, X=X, idx=idx, Y=Y.copy())
    with pytest.raises(pk.BoundsError, match=f"subscript {bad} along dimension 0 of X"):
        kernel(X=X, idx=idx, Y=Y)


def test_numba_gather_keeps_its_prange_and_its_index_checks() -> None:
    pytest.importorskip("numba")
    kernel = pk.schedule(pk.parse(GATHER)["gather"]).to_numba()
    assert kernel.parallel_loops == {"i": "prange"}
    assert kernel.boundscheck  # a subscript from data: Numba checks every access too
    assert "raise" not in kernel.source.split("prange(")[1].split("\n    if")[0]


def test_numba_bounds_checks_are_off_where_the_guard_proves_every_access() -> None:
    pytest.importorskip("numba")
    kernel = pk.schedule(pk.parse(BMM)["bmm"]).to_numba()
    assert not kernel.boundscheck and "boundscheck=False" in kernel.source
    forced = pk.schedule(pk.parse(BMM)["bmm"]).to_numba(boundscheck=True)
    assert forced.boundscheck


def test_check_bounds_false_drops_the_guard() -> None:
    sched = pk.schedule(pk.parse(BMM)["bmm"])
    assert "PkBoundsError" in sched.to_numpy().source
    unchecked = sched.to_numpy(check_bounds=False)
    assert "PkBoundsError" not in unchecked.source
    A, B, C = _f32(2, 20, 12), _f32(2, 12, 8), np.zeros((2, 20, 8), np.float32)
    unchecked(A=A, B=B, C=C)
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-5)


VECTOR_GATHER = """
func.func @vg(%X: memref<40xf32>, %off: memref<4xi64>, %Y: memref<4x8xf32>) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 4) {
    %o = krnl.load %off[%i] : memref<4xi64>
    %oi = arith.index_cast %o : i64 to index
    %v = vector.load %X[%oi] : memref<40xf32>, vector<8xf32>
    %c0 = arith.constant 0 : index
    vector.store %v, %Y[%i, %c0] : memref<4x8xf32>, vector<8xf32>
  }
  return
}
"""


def test_vector_run_from_data_must_end_inside() -> None:
    """NumPy clips the slice X[33:41] to 7 lanes; the interpreter refuses the load."""
    fn = pk.parse(VECTOR_GATHER)["vg"]
    kernel = pk.compile(fn)
    X, Y = np.arange(40, dtype=np.float32), np.zeros((4, 8), np.float32)
    kernel(X=X, off=np.array([0, 8, 16, 32]), Y=Y)
    np.testing.assert_array_equal(Y[:, 0], [0, 8, 16, 32])
    off = np.array([0, 8, 16, 33])
    with pytest.raises(pk.InterpretError, match="out of bounds"):
        pk.run_reference(fn, X=X, off=off, Y=Y.copy())
    with pytest.raises(pk.BoundsError, match="a run of 8 elements from 33 along dimension 0"):
        kernel(X=X, off=off, Y=Y)


BRANCHY = """
func.func @branchy(%X: memref<?xf32>, %flag: memref<?xi1>, %Y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %X, %c0 : memref<?xf32>
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to %n) {
    %f = krnl.load %flag[%i] : memref<?xi1>
    scf.if %f {
      %j = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
      %v = krnl.load %X[%i] : memref<?xf32>
      krnl.store %v, %Y[%j] : memref<?xf32>
    }
  }
  return
}
"""


@pytest.mark.parametrize("target", ["numpy", "numba"])
def test_access_in_a_branch_on_data_is_checked_where_it_runs(target: str) -> None:
    """Y[i - 1] under `if flag[i]`: out of bounds only if flag[0] is set, which no size
    decides, so the report says "not proven" and the kernel checks the store itself (NumPy
    would write Y[-1], the last element)."""
    fn = pk.parse(BRANCHY)["branchy"]
    report = pk.check(fn)
    assert report.memory is not None and report.memory.array("Y").verdict == "not proven"
    kernel = _kernel(BRANCHY, "branchy", target)
    X = np.arange(4, dtype=np.float32)
    Y = np.zeros(4, np.float32)
    kernel(X=X, flag=np.array([0, 1, 1, 1], bool), Y=Y)
    np.testing.assert_array_equal(Y, [1, 2, 3, 0])
    bad = np.array([1, 0, 1, 1], bool)
    with pytest.raises(pk.InterpretError, match="out of bounds"):
        pk.run_reference(fn, X=X, flag=bad, Y=np.zeros(4, np.float32))
    Y = np.zeros(4, np.float32)
    with pytest.raises(pk.BoundsError, match="subscript -1 along dimension 0 of Y"):
        kernel(X=X, flag=bad, Y=Y)
    assert Y[-1] == 0  # not wrapped around to the last element
