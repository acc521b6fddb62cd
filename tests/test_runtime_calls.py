"""onnx-mlir's runtime calls `omTensorSort` and `omTensorTopK`, built into the reference
interpreter and the NumPy and Numba kernels.

The program fills an order tensor with 0..n-1 along the last axis and calls the
runtime, as onnx-mlir's NonMaxSuppression and TopK lowerings do. NumPy's stable argsort
is the oracle: ascending is `argsort(x, kind="stable")`, descending
`argsort(-x, kind="stable")` (equal values keep their index order, smaller first, as
onnx-mlir's comparison makes its sort stable).
"""

from __future__ import annotations

import numpy as np
import pytest

import polykrnl as pk

SORT = """
func.func @sort(%x: memref<3x6x{t}>, %asc: i64) -> memref<3x6xindex> {{
  %axis = arith.constant 1 : i64
  %order = memref.alloc() : memref<3x6xindex>
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 3, %l#1 -> %j = 0 to 6) {{
    krnl.store %j, %order[%i, %j] : memref<3x6xindex>
  }}
  "krnl.call"(%order, %x, %axis, %asc) {{funcName = "omTensorSort", numOfOutput = 1 : si64}}
    : (memref<3x6xindex>, memref<3x6x{t}>, i64, i64) -> ()
  return %order : memref<3x6xindex>
}}

func.func @topk(%x: memref<3x6x{t}>, %asc: i64, %k: i64) -> memref<3x6xindex> {{
  %axis = arith.constant 1 : i64
  %sorted = arith.constant 1 : i64
  %order = memref.alloc() : memref<3x6xindex>
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 3, %l#1 -> %j = 0 to 6) {{
    krnl.store %j, %order[%i, %j] : memref<3x6xindex>
  }}
  "krnl.call"(%order, %x, %axis, %asc, %k, %sorted)
    {{funcName = "omTensorTopK", numOfOutput = 1 : si64}}
    : (memref<3x6xindex>, memref<3x6x{t}>, i64, i64, i64, i64) -> ()
  return %order : memref<3x6xindex>
}}

func.func @wrong_axis(%x: memref<3x6x{t}>) -> memref<3x6xindex> {{
  %axis = arith.constant 0 : i64
  %asc = arith.constant 1 : i64
  %order = memref.alloc() : memref<3x6xindex>
  krnl.memset %order, %{zero} : memref<3x6xindex>
  "krnl.call"(%order, %x, %axis, %asc) {{funcName = "omTensorSort", numOfOutput = 1 : si64}}
    : (memref<3x6xindex>, memref<3x6x{t}>, i64, i64) -> ()
  return %order : memref<3x6xindex>
}}
"""


def _module(t: str) -> pk.Module:
    text = SORT.format(t=t, zero="c0").replace(
        "  krnl.memset %order, %c0", "  %c0 = arith.constant 0 : index\n  krnl.memset %order, %c0"
    )
    return pk.parse(text)


# Rows with ties (kept in index order), negative values and a constant row.
DATA = np.array(
    [[3, 1, 2, 1, 3, 0], [-1, 5, -1, 5, 2, -7], [4, 4, 4, 4, 4, 4]],
)


def _kernels(fn: pk.Function, target: str) -> list[object]:
    sched = pk.schedule(fn)
    if target == "numba":
        pytest.importorskip("numba", reason="the Numba target needs polykrnl[numba]")
        return [sched.to_numba(cache=False)]
    return [sched.to_numpy(), sched.to_numpy(vectorize=False)]


@pytest.mark.parametrize("t", ["f32", "i32"])
@pytest.mark.parametrize("target", ["numpy", "numba"])
def test_sort_is_numpys_stable_argsort(t: str, target: str) -> None:
    fn = _module(t)["sort"]
    x = DATA.astype(np.float32 if t == "f32" else np.int32)
    for asc, key in ((1, x), (0, -x)):
        expected = np.argsort(key, axis=1, kind="stable")
        got = pk.run_reference(fn, x=x, asc=asc)
        assert np.array_equal(got, expected), (asc, got)
        for kernel in _kernels(fn, target):
            assert np.array_equal(kernel(x=x, asc=asc), expected)  # type: ignore[operator]


@pytest.mark.parametrize("target", ["numpy", "numba"])
def test_topk_puts_the_k_best_first_in_order(target: str) -> None:
    fn = _module("f32")["topk"]
    rng = np.random.default_rng(7)
    x = rng.integers(-3, 3, size=(3, 6)).astype(np.float32)  # many ties
    for asc, key in ((0, -x), (1, x)):
        for k in (0, 1, 3, 6):
            best = np.argsort(key, axis=1, kind="stable")[:, :k]
            got = pk.run_reference(fn, x=x, asc=asc, k=k)
            assert np.array_equal(got[:, :k], best)
            # The rest of each row is a permutation of the other indices.
            assert np.array_equal(np.sort(got, axis=1), np.tile(np.arange(6), (3, 1)))
            for kernel in _kernels(fn, target):
                assert np.array_equal(kernel(x=x, asc=asc, k=k), got)  # type: ignore[operator]


@pytest.mark.parametrize("target", ["numpy", "numba"])
def test_nan_sorts_above_every_number(target: str) -> None:
    fn = _module("f32")["sort"]
    x = np.array([[1, np.nan, -1, np.nan, 0, 2]] * 3, dtype=np.float32)
    ascending = pk.run_reference(fn, x=x, asc=1)
    assert ascending[0].tolist() == [2, 4, 0, 5, 1, 3]
    descending = pk.run_reference(fn, x=x, asc=0)
    assert descending[0].tolist() == [1, 3, 5, 0, 4, 2]
    for kernel in _kernels(fn, target):
        assert np.array_equal(kernel(x=x, asc=1), ascending)  # type: ignore[operator]
        assert np.array_equal(kernel(x=x, asc=0), descending)  # type: ignore[operator]


def test_misuse_is_a_located_error_that_says_how_to_call_it() -> None:
    module = _module("f32")
    x = DATA.astype(np.float32)
    with pytest.raises(pk.InterpretError, match="sorts along the last axis only") as e:
        pk.run_reference(module["wrong_axis"], x=x)
    assert "(order, data, axis, ascending" in (e.value.hint or "")
    with pytest.raises(pk.InterpretError, match="TopK needs k >= 0"):
        pk.run_reference(module["topk"], x=x, asc=1, k=-1)


def test_built_in_calls_need_no_registration() -> None:
    from polykrnl.interpreter import registered_calls

    assert "omTensorSort" not in registered_calls()
    fn = _module("f32")["sort"]
    assert "_pk_om_sort" in pk.schedule(fn).to_numpy().source
