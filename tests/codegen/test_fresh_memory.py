"""Allocations without their fill, and values computed into their memory.

The interpreter fills fresh memory with NaN (zeros for integers) so that a read before
any write shows. A kernel allocates with np.empty only where isl's dataflow analysis
proves that nothing observes the fill (transforms/fresh_memory.py), and computes a stored
value by its last ufunc into the memory (codegen/destination.py). Each kernel here is held
to the interpreter: bit for bit (NaN where it has NaN) unless a float sum is reassociated.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.transforms.fresh_memory import fill_verdicts
from tests.scripts import onnx_shapes

RNG = np.random.default_rng(11)
ROOT = Path(__file__).resolve().parents[2]


# onnx-mlir's SIMD form: a vector loop then a scalar remainder writing the rest.
SIMD = """
func.func @f(%a: memref<27xf32>, %b: memref<27xf32>) -> memref<27xf32> {{
  %out = memref.alloc() {{alignment = 16 : i64}} : memref<27xf32>
  krnl.iterate() with () {{
    %l = krnl.define_loops 1
    %t, %p = krnl.block %l 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    krnl.iterate(%t) with (%l -> %i = 0 to 20) {{
      %i0 = krnl.get_induction_var_value(%t) : (!krnl.loop) -> index
      %x = vector.load %a[%i0] : memref<27xf32>, vector<8xf32>
      %y = vector.load %b[%i0] : memref<27xf32>, vector<8xf32>
      %r = {op} %x, %y : vector<8xf32>
      vector.store %r, %out[%i0] : memref<27xf32>, vector<8xf32>
    }}
    %q = krnl.define_loops 1
    krnl.iterate(%q) with (%q -> %j = 24 to {end}) {{
      %i0 = krnl.get_induction_var_value(%q) : (!krnl.loop) -> index
      %x = krnl.load %a[%i0] : memref<27xf32>
      %y = krnl.load %b[%i0] : memref<27xf32>
      %r = {op} %x, %y : f32
      krnl.store %r, %out[%i0] : memref<27xf32>
    }}
  }}
  return %out : memref<27xf32>
}}
"""

# A temporary row read before the loop that writes it (the first iteration reads NaN).
READ_FIRST = """
func.func @f(%x: memref<4x6xf32>) -> memref<4x6xf32> {
  %t = memref.alloc() : memref<6xf32>
  %out = memref.alloc() : memref<4x6xf32>
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 4, %l#1 -> %j = 0 to 6) {
    %old = krnl.load %t[%j] : memref<6xf32>
    krnl.store %old, %out[%i, %j] : memref<4x6xf32>
    %v = krnl.load %x[%i, %j] : memref<4x6xf32>
    krnl.store %v, %t[%j] : memref<6xf32>
  }
  return %out : memref<4x6xf32>
}
"""

# A buffer per row, allocated inside the loop, written whole then read.
PER_ROW = """
func.func @f(%x: memref<4x6xf32>) -> memref<4x6xf32> {
  %out = memref.alloc() : memref<4x6xf32>
  %rows = krnl.define_loops 1
  krnl.iterate(%rows) with (%rows -> %i = 0 to 4) {
    %t = memref.alloc() : memref<6xf32>
    %a = krnl.define_loops 1
    krnl.iterate(%a) with (%a -> %j = 0 to 6) {
      %v = krnl.load %x[%i, %j] : memref<4x6xf32>
      %w = arith.mulf %v, %v : f32
      krnl.store %w, %t[%j] : memref<6xf32>
    }
    %b = krnl.define_loops 1
    krnl.iterate(%b) with (%b -> %j = 0 to 6) {
      %w = krnl.load %t[%j] : memref<6xf32>
      %v = krnl.load %x[%i, %j] : memref<4x6xf32>
      %s = arith.subf %w, %v : f32
      krnl.store %s, %out[%i, %j] : memref<4x6xf32>
    }
    memref.dealloc %t : memref<6xf32>
  }
  return %out : memref<4x6xf32>
}
"""

# Signed zeros, NaN and infinities in both operands, and ties of each. Not a tie of +0.0
# and -0.0: the interpreter takes np.fmax / np.maximum's, which NumPy leaves to the loop
# it runs (its vector and scalar loops answer differently), and MLIR allows either.
EDGES = np.array(
    [
        *(0.0, -0.0, 0.0, -0.0, np.nan, 1.0, np.nan, -np.inf, np.inf, 2.5, -1.0, 3.0),
        *(-0.0, 0.0, 1.0, 1.0, 0.0, -2.0, -0.0, 5.0, np.nan, 0.0, -0.0, 7.0, 8.0, -8.0, 0.0),
    ],
    dtype=np.float32,
)


def _same(a: np.ndarray, b: np.ndarray) -> None:
    """Bit for bit (NaN payloads aside, signed zeros included)."""
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    ok = ~np.isnan(a)
    np.testing.assert_array_equal(a[ok].view(np.uint32), b[ok].view(np.uint32))


@pytest.mark.parametrize(
    "op", ["arith.addf", "arith.maxnumf", "arith.minnumf", "arith.maximumf", "arith.minimumf"]
)
def test_simd_output_starts_empty_and_is_computed_into(op: str) -> None:
    fn = pk.parse(SIMD.format(op=op, end=27))["f"]
    a = EDGES.copy()
    b = np.roll(EDGES, 5).copy()
    b[:2] = EDGES[:2]  # ties of +0.0 and of -0.0
    mixed = (a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))
    b[mixed] = 4.0
    ref = pk.run_reference(fn, a=a, b=b)
    for reassociate in (True, False):
        kernel = pk.schedule(fn).to_numpy(reassociate=reassociate)
        assert "np.full" not in kernel.source, kernel.source
        assert "# out starts empty: written whole, never read" in kernel.source
        assert "np.empty((27,), dtype=np.float32)" in kernel.source
        # The vector loop and its remainder, merged (simd_remainder.py), go straight into
        # the output.
        assert "out=out_1[0:27])" in kernel.source
        _same(kernel(a=a, b=b), ref)


def test_partly_written_output_keeps_its_nan() -> None:
    fn = pk.parse(SIMD.format(op="arith.addf", end=26))["f"]  # element 26 never written
    a, b = (RNG.standard_normal(27).astype(np.float32) for _ in range(2))
    ref = pk.run_reference(fn, a=a, b=b)
    assert np.isnan(ref[26])
    kernel = pk.compile(fn)
    assert "returned without every element written first" in kernel.source
    assert "np.full((27,), np.nan, dtype=np.float32)" in kernel.source
    _same(kernel(a=a, b=b), ref)


def test_read_before_write_keeps_the_fill() -> None:
    fn = pk.parse(READ_FIRST)["f"]
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    ref = pk.run_reference(fn, x=x)
    assert np.isnan(ref[0]).all() and not np.isnan(ref[1:]).any()
    verdicts = fill_verdicts(pk.poly_program(fn))
    assert not verdicts["t"].empty and "may read an element before it is written" in (
        verdicts["t"].why
    )
    assert verdicts["out"].empty
    for target in ("numpy", "numba"):
        kernel = pk.compile(fn, target=target)
        assert "np.full((6,), np.nan, dtype=np.float32)" in kernel.source, kernel.source
        _same(kernel(x=x), ref)


def test_buffer_allocated_per_row_starts_empty() -> None:
    fn = pk.parse(PER_ROW)["f"]
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    ref = pk.run_reference(fn, x=x)
    assert all(v.empty for v in fill_verdicts(pk.poly_program(fn)).values())
    for target in ("numpy", "numba"):
        kernel = pk.compile(fn, target=target)
        assert "np.full" not in kernel.source, kernel.source
        _same(kernel(x=x), ref)


def test_softmax_pool_and_output_start_empty() -> None:
    shapes = onnx_shapes()
    fn = pk.parse(shapes.softmax_text(6, 10))["softmax"]
    x = RNG.standard_normal((6, 10)).astype(np.float32)
    ref = pk.run_reference(fn, x=x)
    verdicts = fill_verdicts(pk.poly_program(fn))
    # The pool's two float views are set before the loops that read them.
    assert verdicts["pool"].empty and verdicts["out"].empty, verdicts
    exact = pk.schedule(fn).to_numpy(reassociate=False)
    assert "np.empty((48,), dtype=np.int8)" in exact.source
    _same(exact(x=x), ref)
    np.testing.assert_allclose(pk.compile(fn)(x=x), ref, rtol=1e-6)


def test_vector_accumulator_is_a_sum_over_the_tiles() -> None:
    """onnx-mlir's ReduceSum over the last axis at -O3: a vector<8xf32> accumulator in
    iter_args of the tile loop, then vector.reduction. Reassociating: one array expression
    over all rows and tiles; reassociate=False: the tiles in order, then the lanes."""
    shapes = onnx_shapes()
    fn = pk.parse(shapes.reduce_sum_last_text(5, 48))["reduce_sum_last"]
    # Magnitudes 2^24 apart: any other order of the sum gives other bits.
    x = (RNG.standard_normal((5, 48)) * 2.0 ** RNG.integers(-12, 12, (5, 48))).astype(np.float32)
    ref = pk.run_reference(fn, x=x)
    fast = pk.compile(fn)
    assert not fast.exact
    assert "reduction over ct as np.matmul by ones" in fast.source, fast.source
    assert "for " not in fast.source.split("def kernel_", 1)[1], fast.source
    np.testing.assert_allclose(fast(x=x), ref, rtol=1e-5, atol=1e-3)
    exact = pk.schedule(fn).to_numpy(reassociate=False)
    assert exact.exact
    assert "reassociate=False keeps the order of a float reduction" in exact.source
    _same(exact(x=x), ref)


def test_splat_constant_operand_is_a_scalar() -> None:
    """relu at -O3: maxnumf of each run with a zero vector. Its lanes as a (16,) array
    against (tiles, 16) made NumPy run one inner loop per tile; the constant is one value,
    and max with +0.0 needs no tie test (test_minmax_constant.py)."""
    # 48 elements: no remainder loop to merge the run with (simd_remainder.py).
    fn = pk.parse(onnx_shapes().relu_text(48))["relu"]
    a = np.resize(EDGES[EDGES != 0], 48)  # NaN and infinities; no signed-zero tie
    a[7] = 0.0
    ref = pk.run_reference(fn, a=a)
    kernel = pk.compile(fn)
    assert "_maxnumf0(x, out=np.reshape(out_1[0:n_t * 16]" in kernel.source
    _same(kernel(a=a), ref)


def test_negation_into_a_column_stays_an_assignment() -> None:
    """NumPy 2.4's float32 np.negative with a strided input and a strided `out` reads the
    input as if contiguous: `-v` keeps its temporary (found by the unrolled corpus case)."""
    fn = pk.load(ROOT / "tests" / "corpus" / "unroll.mlir")["unroll_inner"]
    a = RNG.standard_normal((8, 4)).astype(np.float32)
    ref_b = np.zeros((8, 4), np.float32)
    pk.run_reference(fn, a=a, b=ref_b)
    kernel = pk.compile(fn)
    assert "np.negative" not in kernel.source
    b = np.zeros((8, 4), np.float32)
    kernel(a=a, b=b)
    _same(b, ref_b)
