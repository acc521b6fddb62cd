"""onnx-mlir's -O3 SIMD form: a tile loop whose body loads, computes and stores whole
vectors at the tile's index, and a scalar remainder loop (codegen/vector_lanes.py).

NumPy: a parallel tile loop with tiles of the vector's width runs as array code, its
vector values (tiles x lanes) arrays; Numba: vector ops run as one loop over the lanes
on scalars. Both equal the reference interpreter bit for bit; where the tile loop must
stay a loop, the kernel says why.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

import polykrnl as pk

RNG = np.random.default_rng(32)

SIMD_1D = """
func.func @simd(%a: memref<{N}xf32>, %b: memref<{N}xf32>) -> memref<{N}xf32> {{
  %out = memref.alloc() : memref<{N}xf32>
  %l = krnl.define_loops 1
  %t, %p = krnl.block %l {S} : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%t) with (%l -> %i = 0 to {main}) {{
    %i0 = krnl.get_induction_var_value(%t) : (!krnl.loop) -> index
    %x = vector.load %a[%i0] : memref<{N}xf32>, vector<{W}xf32>
    %y = vector.load %b[%i0] : memref<{N}xf32>, vector<{W}xf32>
    %s = arith.addf %x, %y : vector<{W}xf32>
    %m = arith.mulf %s, %x : vector<{W}xf32>
    vector.store %m, %out[%i0] : memref<{N}xf32>, vector<{W}xf32>
  }}
  %r = krnl.define_loops 1
  krnl.iterate(%r) with (%r -> %j = {main} to {N}) {{
    %x = krnl.load %a[%j] : memref<{N}xf32>
    %y = krnl.load %b[%j] : memref<{N}xf32>
    %s = arith.addf %x, %y : f32
    %m = arith.mulf %s, %x : f32
    krnl.store %m, %out[%j] : memref<{N}xf32>
  }}
  return %out : memref<{N}xf32>
}}
"""

# Rows x SIMD columns: the vector on the last dimension at [i, t], i vectorized too; a
# scalar of each row (b[i, 0]) broadcast to the lanes, a constant vector.
SIMD_2D = """
func.func @simd2d(%a: memref<{R}x{C}xf32>, %b: memref<{R}x{C}xf32>) -> memref<{R}x{C}xf32> {{
  %out = memref.alloc() : memref<{R}x{C}xf32>
  %c0 = arith.constant 0 : index
  %half = arith.constant dense<0.5> : vector<8xf32>
  %l:2 = krnl.define_loops 2
  %t, %p = krnl.block %l#1 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%l#0, %t) with (%l#0 -> %i = 0 to {R}, %l#1 -> %j = 0 to {main}) {{
    %i0, %j0 = krnl.get_induction_var_value(%l#0, %t) : (!krnl.loop, !krnl.loop) -> (index, index)
    %x = vector.load %a[%i0, %j0] : memref<{R}x{C}xf32>, vector<8xf32>
    %s = krnl.load %b[%i0, %c0] : memref<{R}x{C}xf32>
    %v = vector.broadcast %s : f32 to vector<8xf32>
    %y = arith.mulf %x, %v : vector<8xf32>
    %z = arith.addf %y, %half : vector<8xf32>
    vector.store %z, %out[%i0, %j0] : memref<{R}x{C}xf32>, vector<8xf32>
  }}
  %r:2 = krnl.define_loops 2
  krnl.iterate(%r#0, %r#1) with (%r#0 -> %i = 0 to {R}, %r#1 -> %j = {main} to {C}) {{
    %x = krnl.load %a[%i, %j] : memref<{R}x{C}xf32>
    %s = krnl.load %b[%i, %c0] : memref<{R}x{C}xf32>
    %y = arith.mulf %x, %s : f32
    %h = arith.constant 0.5 : f32
    %z = arith.addf %y, %h : f32
    krnl.store %z, %out[%i, %j] : memref<{R}x{C}xf32>
  }}
  return %out : memref<{R}x{C}xf32>
}}
"""

# Each tile reads what the tile before it wrote: the tile loop carries a dependence.
CARRIED = """
func.func @carried(%a: memref<{N}xf32>) {{
  %l = krnl.define_loops 1
  %t, %p = krnl.block %l 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%t) with (%l -> %i = 8 to {main}) {{
    %i0 = krnl.get_induction_var_value(%t) : (!krnl.loop) -> index
    %prev = affine.apply affine_map<(d0) -> (d0 - 8)>(%i0)
    %x = vector.load %a[%prev] : memref<{N}xf32>, vector<8xf32>
    %y = vector.load %a[%i0] : memref<{N}xf32>, vector<8xf32>
    %s = arith.addf %x, %y : vector<8xf32>
    vector.store %s, %a[%i0] : memref<{N}xf32>, vector<8xf32>
  }}
  return
}}
"""

# A row sum per tile (vector.reduction, lanes first to last) stored at the tile's number.
REDUCTION = """
func.func @tile_sums(%a: memref<{N}xf32>, %sums: memref<{T}xf32>) {{
  %l = krnl.define_loops 1
  %t, %p = krnl.block %l 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%t) with (%l -> %i = 0 to {N}) {{
    %i0 = krnl.get_induction_var_value(%t) : (!krnl.loop) -> index
    %x = vector.load %a[%i0] : memref<{N}xf32>, vector<8xf32>
    %r = vector.reduction <add>, %x : vector<8xf32> into f32
    %k = affine.apply affine_map<(d0) -> (d0 floordiv 8)>(%i0)
    krnl.store %r, %sums[%k] : memref<{T}xf32>
  }}
  return
}}
"""


def simd_1d(n: int, width: int, step: int | None = None) -> pk.Function:
    main = n - n % width
    text = SIMD_1D.format(N=n, W=width, S=step or width, main=main)
    return pk.parse(text).functions[0]


def simd_2d(rows: int, cols: int) -> pk.Function:
    return pk.parse(SIMD_2D.format(R=rows, C=cols, main=cols - cols % 8)).functions[0]


def _inputs(fn: pk.Function) -> dict[str, np.ndarray]:
    out = {}
    for arg in fn.arguments:
        shape = tuple(int(d) for d in str(arg.type).split("<")[1].split("x")[:-1])
        out[arg.name] = RNG.standard_normal(shape).astype(np.float32)
    return out


def _same_as_reference(fn: pk.Function, kernel: Callable[..., object]) -> None:
    args = _inputs(fn)
    ref_args = {k: v.copy() for k, v in args.items()}
    ref = pk.run_reference(fn, **ref_args)
    got_args = {k: v.copy() for k, v in args.items()}
    got = kernel(**got_args)
    if ref is None:
        for k in args:
            np.testing.assert_array_equal(got_args[k], ref_args[k])
    else:
        np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))


def _numpy(fn: pk.Function) -> pk.NumpyKernel:
    return pk.schedule(fn).to_numpy(reassociate=False)


def _numba(fn: pk.Function) -> Callable[..., object]:
    pytest.importorskip("numba", reason="the Numba target needs the extra polykrnl[numba]")
    return pk.schedule(fn).to_numba(cache=False, parallel=False)


def _tile_loop_in_python(source: str) -> bool:
    return re.search(r"^\s*for t\w* in range", source, re.MULTILINE) is not None


@pytest.mark.parametrize(("n", "width"), [(27, 8), (37, 16), (32, 8), (5, 8)])
def test_simd_tile_loop_becomes_array_code(n: int, width: int) -> None:
    fn = simd_1d(n, width)
    kernel = _numpy(fn)
    assert not _tile_loop_in_python(kernel.source), kernel.source
    if n >= width and n % width:  # the run and its remainder, one slice
        assert "its remainder loop j merged" in kernel.source
        assert f"a[0:{n}]" in kernel.source
    elif n >= width:  # else isl drops the empty tile loop
        assert "loops t vectorized (parallel)" in kernel.source
        assert f"(n_t, {width})" in kernel.source  # tiles x lanes
    _same_as_reference(fn, kernel)


@pytest.mark.parametrize(("n", "width"), [(27, 8), (37, 16), (5, 8)])
def test_simd_numba_lane_loop(n: int, width: int) -> None:
    fn = simd_1d(n, width)
    kernel = _numba(fn)
    source = kernel.source  # type: ignore[attr-defined]
    # Vector values are scalars of one lane: no array per tile, and the tiles of lanes
    # one flat loop over the tiled part (targets/numba/lanes.py).
    assert ".copy()" not in source
    assert "for lane in range(" not in source
    assert (f"for t in range(0, {n - n % width}):" in source) == (n >= width)
    _same_as_reference(fn, kernel)


def test_simd_16_lanes_with_remainder_numba_compiles_at_a_large_size() -> None:
    fn = simd_1d(2**12 + 5, 16)
    _same_as_reference(fn, _numba(fn))


@pytest.mark.parametrize(("rows", "cols"), [(5, 35), (3, 16), (1, 7)])
def test_simd_rows_by_columns(rows: int, cols: int) -> None:
    fn = simd_2d(rows, cols)
    kernel = _numpy(fn)
    if cols >= 8:
        assert not _tile_loop_in_python(kernel.source), kernel.source
        assert "np.broadcast_to(np.asarray(" in kernel.source  # the row's scalar, to lanes
    _same_as_reference(fn, kernel)
    _same_as_reference(fn, _numba(fn))


def test_simd_tile_loop_with_gaps_stays_a_loop() -> None:
    # vector<8xf32> at tiles of 16: parallel, but the runs leave gaps between them.
    fn = simd_1d(37, 8, step=16)
    kernel = _numpy(fn)
    assert _tile_loop_in_python(kernel.source)
    assert "stays a loop: a vector of 8 lanes at a loop of step 16: its tiles leave gaps" in (
        kernel.source
    )
    _same_as_reference(fn, kernel)
    _same_as_reference(fn, _numba(fn))


def test_simd_tile_loop_carrying_a_dependence_stays_a_loop() -> None:
    fn = pk.parse(CARRIED.format(N=43, main=40)).functions[0]
    kernel = _numpy(fn)
    assert _tile_loop_in_python(kernel.source)
    assert re.search(r"# loop t stays (scalar|a loop): ", kernel.source), kernel.source
    _same_as_reference(fn, kernel)
    _same_as_reference(fn, _numba(fn))


def test_simd_reduction_folds_the_lanes_in_order() -> None:
    fn = pk.parse(REDUCTION.format(N=40, T=5)).functions[0]
    kernel = _numpy(fn)
    assert not _tile_loop_in_python(kernel.source), kernel.source
    assert "np.add(np.add(x[..., 0], x[..., 1]), x[..., 2])" in kernel.source
    _same_as_reference(fn, kernel)
    # Numba folds the lanes in a loop on scalars, in the same order.
    numba = _numba(fn)
    assert "for lane in range(1, 8):" in numba.source, numba.source
    _same_as_reference(fn, numba)
