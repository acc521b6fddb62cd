"""Vector accumulators carried through iter_args in Numba kernels (onnx-mlir's ReduceSum
at -O3): the yield updates the accumulator's array lane by lane in place, and the
per-row dictionary entry becomes a local of the row loop. Every kernel against the
interpreter, bit for bit (NaN where NaN)."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.targets.numba.promote import localize_per_iteration
from tests.scripts import onnx_shapes

pytest.importorskip("numba", reason="the Numba target needs the extra polykrnl[numba]")

RNG = np.random.default_rng(33)

# Two accumulators that swap through the yield (%a' = %b + v, %b' = %a) and a max one:
# a lane must read every old value before it stores a new one.
SWAP = """
func.func @swap(%x: memref<?x?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  %out = memref.alloc(%rows) : memref<?xf32>
  %z = arith.constant dense<0.000000e+00> : vector<8xf32>
  %o = arith.constant dense<1.000000e+00> : vector<8xf32>
  %n = arith.constant dense<0xFF800000> : vector<8xf32>
  %r = krnl.define_loops 1
  krnl.iterate(%r) with (%r -> %i = 0 to affine_map<(d0) -> (d0)>(%rows)) {
    %i0 = krnl.get_induction_var_value(%r) : (!krnl.loop) -> index
    %c1 = arith.constant 1 : index
    %cols = memref.dim %x, %c1 : memref<?x?xf32>
    %l = krnl.define_loops 1
    %t, %p = krnl.block %l 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    %acc:3 = krnl.iterate(%t) with (%l -> %j = 0 to affine_map<(d0) -> (d0)>(%cols))
        iter_args(%a = %z, %b = %o, %m = %n) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>) {
      %j0 = krnl.get_induction_var_value(%t) : (!krnl.loop) -> index
      %v = vector.load %x[%i0, %j0] : memref<?x?xf32>, vector<8xf32>
      %s = arith.addf %b, %v : vector<8xf32>
      %mx = arith.maxnumf %m, %v : vector<8xf32>
      krnl.yield %s, %a, %mx : vector<8xf32>, vector<8xf32>, vector<8xf32>
    }
    %u = arith.mulf %acc#0, %acc#1 : vector<8xf32>
    %w = arith.addf %u, %acc#2 : vector<8xf32>
    %red = vector.reduction <add>, %w : vector<8xf32> into f32
    krnl.store %red, %out[%i0] : memref<?xf32>
  }
  return %out : memref<?xf32>
}
"""


def _same(got: Any, ref: Any) -> None:
    got, ref = np.asarray(got), np.asarray(ref)
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan)
    assert got[~nan].tobytes() == ref[~nan].tobytes()


def _kernel_source(fn: pk.Function) -> tuple[Any, str]:
    kernel = pk.schedule(fn).to_numba(parallel=False, cache=False)
    return kernel, kernel.function_source


@pytest.mark.parametrize(("rows", "cols"), [(5, 32), (1, 8), (3, 1024)])
def test_reduce_sum_last_accumulates_in_place(rows: int, cols: int) -> None:
    fn = pk.parse(onnx_shapes().reduce_sum_last_text(rows, cols)).functions[0]
    x = RNG.standard_normal((rows, cols)).astype(np.float32)
    x[0, :3] = [np.nan, np.inf, -0.0]
    kernel, source = _kernel_source(fn)
    _same(kernel(x=x.copy()), pk.run_reference(fn, x=x.copy()))
    body = source[source.index("def kernel") :]
    assert "_m_at" not in body, body  # the row's accumulator is a local of the row loop
    if cols > 8:
        # its lanes written out (lane_accumulators.py), each a local over the column
        # loop, stored once after it (one tile of columns: no loop to carry them)
        assert "for lane in range(8)" not in body, body
        assert all(f"m[{k}] = _e{k}" in body for k in range(8)), body


@pytest.mark.parametrize("shape", [(4, 24), (2, 8), (0, 8), (3, 0)])
def test_accumulators_that_swap_read_every_lane_first(shape: tuple[int, int]) -> None:
    fn = pk.parse(SWAP)["swap"]
    x = RNG.standard_normal(shape).astype(np.float32)
    if x.size:
        x.flat[0] = np.nan
    kernel, source = _kernel_source(fn)
    _same(kernel(x=x.copy()), pk.run_reference(fn, x=x.copy()))
    loop = source[source.index("for t in range(0, x_d1, 8):") :]
    # per lane, the three old values read before the first new one is stored (the
    # lanes written out, each accumulator's lane a local: `b_1 = _e0` reads, `_e0 = `
    # stores)
    lanes = loop.split("v = x[")[1:]
    assert len(lanes) == 8, loop
    for lane in lanes:
        lines = [line.strip() for line in lane.splitlines()[1:7]]
        reads = [k for k, line in enumerate(lines) if line.split(" = ")[1].startswith("_e")]
        writes = [k for k, line in enumerate(lines) if line.startswith("_e")]
        assert len(reads) == 3 and len(writes) == 3 and max(reads) < min(writes), lane


def _run(src: str, n: int) -> list[Any]:
    scope: dict[str, Any] = {}
    exec(compile(src, "<test>", "exec"), scope)
    return list(scope["f"](n))


WRITTEN_FIRST = """
def f(n):
    _a_at = {}
    out = []
    for t in range(2):
        for i in range(n):
            _a_at[i,] = i * 2 + t
            out.append(_a_at[i,] + 1)
    return out
"""
# The second pass over i reads what the first pass wrote under the same key.
READ_FIRST = """
def f(n):
    _a_at = {}
    out = []
    for t in range(2):
        for i in range(n):
            x = _a_at[i,] if t else 0
            _a_at[i,] = x + i
            out.append(x)
    return out
"""
# A key that changes inside the iteration: the read is another iteration's entry.
KEY_CHANGES = """
def f(n):
    _a_at = {}
    out = []
    for i in range(n):
        k = i
        _a_at[k,] = i
        k = i - 1
        out.append(_a_at[k,] if i else 0)
    return out
"""


@pytest.mark.parametrize(
    ("src", "localized"), [(WRITTEN_FIRST, True), (READ_FIRST, False), (KEY_CHANGES, False)]
)
def test_a_dictionary_becomes_a_local_only_when_written_first(src: str, localized: bool) -> None:
    tree = ast.parse(src)
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef)
    localize_per_iteration(fn)
    after = ast.unparse(tree)
    assert ("_a_at" not in after) == localized, after
    assert _run(after, 4) == _run(src, 4)
