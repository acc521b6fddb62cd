"""A gather of whole rows by indices read from data, in array code (statements.py: rows):
`x[_ix[..., 0], 0:n]` instead of one integer index per element, and the index chain
named once; against the reference interpreter, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import polykrnl as pk

# Rows of a V x 2 x D table by a B x S index, normalized (negative: from the end) and,
# when `clamp`, clamped into [0, V) as onnx-mlir's Gather does.
GATHER = """
func.func @gather(%x: memref<7x2x5xf32>, %idx: memref<3x4xi64>) -> memref<3x4x2x5xf32> {{
  %c0 = arith.constant 0 : index
  %cV = arith.constant 7 : index
  %cL = arith.constant 6 : index
  %res = memref.alloc() : memref<3x4x2x5xf32>
  %l:4 = krnl.define_loops 4
  krnl.iterate(%l#0, %l#1, %l#2, %l#3) with (%l#0 -> %i = 0 to 3, %l#1 -> %j = 0 to 4,
      %l#2 -> %c = 0 to 2, %l#3 -> %k = 0 to 5) {{
    %iv:4 = krnl.get_induction_var_value(%l#0, %l#1, %l#2, %l#3)
      : (!krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index, index)
    %a = krnl.load %idx[%iv#0, %iv#1] : memref<3x4xi64>
    %b = arith.index_cast %a : i64 to index
    %neg = arith.cmpi slt, %b, %c0 : index
    %up = arith.addi %b, %cV : index
    %n = arith.select %neg, %up, %b : index
{clamp}
    %v = krnl.load %x[%row, {sub}] : memref<7x2x5xf32>
    krnl.store %v, %res[%iv#0, %iv#1, %iv#2, %iv#3] : memref<3x4x2x5xf32>
  }}
  return %res : memref<3x4x2x5xf32>
}}
"""

CLAMP = """    %low = arith.cmpi slt, %n, %c0 : index
    %n1 = arith.select %low, %c0, %n : index
    %high = arith.cmpi sge, %n1, %cV : index
    %row = arith.select %high, %cL, %n1 : index"""

NO_CLAMP = "    %row = arith.addi %n, %c0 : index"

EDGE = np.array([[-7, -1, 0, 6], [7, 8, 100, -8], [-100, 3, -4, 2]], dtype=np.int64)


def kernel_and_fn(clamp: str, sub: str = "%iv#2, %iv#3") -> tuple[pk.Function, str]:
    fn = pk.parse(GATHER.format(clamp=clamp, sub=sub))["gather"]
    return fn, pk.schedule(fn).to_numpy(reassociate=False).source


def same(fn: pk.Function, idx: np.ndarray) -> None:
    x = np.arange(70, dtype=np.float32).reshape(7, 2, 5)
    for kernel in (pk.compile(fn), pk.schedule(fn).to_numpy(reassociate=False)):
        got = kernel(x=x, idx=idx)
        want = pk.run_reference(fn, x=x, idx=idx)
        assert got.tobytes() == want.tobytes()


def test_whole_rows_are_gathered_by_one_index_each_and_the_clamp_is_named_once() -> None:
    fn, source = kernel_and_fn(CLAMP)
    # gathered into the result's slice: no temporary of the result's size copied again
    assert "np.take(x[:, 0:2, 0:5], _ix[..., 0, 0], axis=0, out=res_1[" in source
    assert "np.arange" not in source
    assert source.count("np.where") == 3  # one per select of the chain
    same(fn, EDGE)
    same(fn, np.random.default_rng(0).integers(-20, 20, size=(3, 4), dtype=np.int64))


@pytest.mark.parametrize(
    "change",
    [
        # the row read twice: a value, not a copy into the result
        (
            "krnl.store %v, %res",
            "%w = arith.addf %v, %v : f32\n    krnl.store %w, %res",
        ),
        # one index per i, broadcast along j: the rows are fewer than the result's
        ("%idx[%iv#0, %iv#1]", "%idx[%iv#0, %c0]"),
    ],
)
def test_rows_that_are_not_the_stored_slice_are_indexed(change: tuple[str, str]) -> None:
    text = GATHER.format(clamp=CLAMP, sub="%iv#2, %iv#3").replace(*change)
    fn = pk.parse(text)["gather"]
    source = pk.schedule(fn).to_numpy(reassociate=False).source
    assert "np.take" not in source and "0:2, 0:5]" in source
    same(fn, EDGE)


def test_rows_outside_the_table_are_refused_without_the_clamp() -> None:
    fn, source = kernel_and_fn(NO_CLAMP)
    assert "0:2, 0:5]" in source
    good = np.array([[-7, -1, 0, 6]] * 3, dtype=np.int64)
    same(fn, good)
    x = np.zeros((7, 2, 5), dtype=np.float32)
    for bad in (7, -8):
        idx = good.copy()
        idx[2, 1] = bad
        with pytest.raises(pk.BoundsError):
            pk.schedule(fn).to_numpy(reassociate=False)(x=x, idx=idx)
        with pytest.raises(pk.PolykrnlError):
            pk.run_reference(fn, x=x, idx=idx)


@pytest.mark.parametrize("sub", ["%iv#3, %iv#2", "%iv#2, %iv#2"])
def test_inner_subscripts_out_of_the_loops_order_keep_integer_indexing(sub: str) -> None:
    """x[row, k, c] (transposed) or x[row, c, c] are no runs of the inner loops."""
    text = GATHER.format(clamp=CLAMP, sub=sub).replace("7x2x5xf32", "7x5x5xf32")
    text = text.replace("%l#2 -> %c = 0 to 2", "%l#2 -> %c = 0 to 5").replace("3x4x2x5", "3x4x5x5")
    fn = pk.parse(text)["gather"]
    source = pk.schedule(fn).to_numpy(reassociate=False).source
    assert "[..., 0, 0]" not in source
    x = np.arange(175, dtype=np.float32).reshape(7, 5, 5)
    got = pk.compile(fn)(x=x, idx=EDGE)
    assert got.tobytes() == pk.run_reference(fn, x=x, idx=EDGE).tobytes()
