"""The reference interpreter against NumPy formulas computed independently here.

Each program is small Krnl text whose expected result was worked out by hand;
float64 is used where the result must be exact, and every tolerance says why
it is what it is.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.cli import main
from polykrnl.inputs import make_inputs
from polykrnl.interpreter import unregister_call


def fn(text: str, name: str) -> pk.Function:
    return pk.parse(text, "<test>")[name]


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line of `text` containing `needle`."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


RNG = np.random.default_rng(1234)

# ------------------------------------------------------------------ gemm

GEMM_BODY = """
    %a = krnl.load %A[%i, %k] : memref<?x?xf64>
    %b = krnl.load %B[%k, %j] : memref<?x?xf64>
    %c = krnl.load %C[%i, %j] : memref<?x?xf64>
    %p = arith.mulf %a, %b : f64
    %s = arith.addf %c, %p : f64
    krnl.store %s, %C[%i, %j] : memref<?x?xf64>
"""

GEMM_HEAD = """
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %N = memref.dim %A, %c0 : memref<?x?xf64>
  %K = memref.dim %A, %c1 : memref<?x?xf64>
  %M = memref.dim %B, %c1 : memref<?x?xf64>
  %ii, %jj, %kk = krnl.define_loops 3
"""

GEMM = f"""
func.func @gemm(%A: memref<?x?xf64>, %B: memref<?x?xf64>, %C: memref<?x?xf64>) {{
{GEMM_HEAD}
  krnl.iterate(%ii, %jj, %kk) with (%ii -> %i = 0 to %N, %jj -> %j = 0 to %M,
                                    %kk -> %k = 0 to %K) {{
{GEMM_BODY}
  }}
  return
}}

func.func @gemm_tiled(%A: memref<?x?xf64>, %B: memref<?x?xf64>, %C: memref<?x?xf64>) {{
{GEMM_HEAD}
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 3 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl, %kb, %kl) [0, 3, 1, 4, 2, 5] :
    !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %kb, %il, %jl, %kl) with (%ii -> %i = 0 to %N,
      %jj -> %j = 0 to %M, %kk -> %k = 0 to %K) {{
{GEMM_BODY}
  }}
  return
}}
"""


def test_gemm_plain_and_tiled_match_numpy() -> None:
    # 10x7x9 is a multiple of none of the tile sizes 4/3/2: partial tiles everywhere.
    a, b, c0 = (
        RNG.standard_normal((10, 7)),
        RNG.standard_normal((7, 9)),
        RNG.standard_normal((10, 9)),
    )
    plain, tiled = c0.copy(), c0.copy()
    assert pk.run_reference(fn(GEMM, "gemm"), A=a, B=b, C=plain) is None
    pk.run_reference(fn(GEMM, "gemm_tiled"), A=a, B=b, C=tiled)
    # NumPy's matmul sums in another order: float64 rounding differs by a few ulp.
    np.testing.assert_allclose(plain, c0 + a @ b, rtol=1e-12, atol=1e-12)
    # Both orders add the products of one C element in increasing k: bit-identical.
    assert np.array_equal(plain, tiled)


ORDER = """
func.func @order(%T: memref<10x7xindex>) -> index {
  %z = arith.constant 0 : index
  %one = arith.constant 1 : index
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 3 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  %n = krnl.iterate(%ib, %jb, %il, %jl) with (%ii -> %i = 0 to 10, %jj -> %j = 0 to 7)
      iter_args(%c = %z) -> (index) {
    krnl.store %c, %T[%i, %j] : memref<10x7xindex>
    %c1 = arith.addi %c, %one : index
    krnl.yield %c1 : index
  }
  return %n : index
}
"""


def test_tiled_nest_visits_points_tile_by_tile() -> None:
    t = np.full((10, 7), -1, dtype=np.int64)
    n = pk.run_reference(fn(ORDER, "order"), T=t)
    expected = np.full((10, 7), -1, dtype=np.int64)
    step = 0
    for ib in range(0, 10, 4):
        for jb in range(0, 7, 3):
            for i in range(ib, min(ib + 4, 10)):
                for j in range(jb, min(jb + 3, 7)):
                    expected[i, j] = step
                    step += 1
    assert n == 70 and isinstance(n, int)
    assert np.array_equal(t, expected)


# ------------------------------------------------------------------ simple nests

TRANSPOSE = """
func.func @transpose(%A: memref<3x5xf32>, %B: memref<5x3xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 3, %jj -> %j = 0 to 5) {
    %x = krnl.load %A[%i, %j] : memref<3x5xf32>
    krnl.store %x, %B[%j, %i] : memref<5x3xf32>
  }
  return
}
"""


def test_transpose() -> None:
    a = RNG.standard_normal((3, 5)).astype(np.float32)
    b = np.zeros((5, 3), dtype=np.float32)
    pk.run_reference(fn(TRANSPOSE, "transpose"), A=a, B=b)
    assert np.array_equal(b, a.T)


REDUCE = """
func.func @rows(%A: memref<?x?xf64>, %S: memref<?xf64>, %M: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %A, %c0 : memref<?x?xf64>
  %m = memref.dim %A, %c1 : memref<?x?xf64>
  %zero = arith.constant 0.0 : f64
  %low = arith.constant -1.0e300 : f64
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to %n) {
    %jj = krnl.define_loops 1
    %s = krnl.iterate(%jj) with (%jj -> %j = 0 to %m) iter_args(%acc = %zero) -> (f64) {
      %x = krnl.load %A[%i, %j] : memref<?x?xf64>
      %y = arith.addf %acc, %x : f64
      krnl.yield %y : f64
    }
    krnl.store %s, %S[%i] : memref<?xf64>
    %kk = krnl.define_loops 1
    %mx = krnl.iterate(%kk) with (%kk -> %k = 0 to %m) iter_args(%best = %low) -> (f64) {
      %x2 = krnl.load %A[%i, %k] : memref<?x?xf64>
      %y2 = arith.maximumf %best, %x2 : f64
      krnl.yield %y2 : f64
    }
    krnl.store %mx, %M[%i] : memref<?xf64>
  }
  return
}
"""


def test_row_reductions_with_iter_args() -> None:
    a = RNG.standard_normal((6, 11))
    s, m = np.zeros(6), np.zeros(6)
    pk.run_reference(fn(REDUCE, "rows"), A=a, S=s, M=m)
    # cumsum adds left to right, as the loop does: the sums are bit-identical.
    assert np.array_equal(s, np.cumsum(a, axis=1)[:, -1])
    assert np.array_equal(m, a.max(axis=1))


SOFTMAX = """
func.func @softmax(%X: memref<4x6xf32>, %Y: memref<4x6xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 4) {
    %l1 = krnl.define_loops 1
    %mx = krnl.iterate(%l1) with (%l1 -> %j = 0 to 6) iter_args(%m = %ninf) -> (f32) {
      %x = krnl.load %X[%i, %j] : memref<4x6xf32>
      %m2 = arith.maximumf %m, %x : f32
      krnl.yield %m2 : f32
    }
    %l2 = krnl.define_loops 1
    %sum = krnl.iterate(%l2) with (%l2 -> %j2 = 0 to 6) iter_args(%s = %zero) -> (f32) {
      %x2 = krnl.load %X[%i, %j2] : memref<4x6xf32>
      %d = arith.subf %x2, %mx : f32
      %e = math.exp %d : f32
      krnl.store %e, %Y[%i, %j2] : memref<4x6xf32>
      %s2 = arith.addf %s, %e : f32
      krnl.yield %s2 : f32
    }
    %l3 = krnl.define_loops 1
    krnl.iterate(%l3) with (%l3 -> %j3 = 0 to 6) {
      %e3 = krnl.load %Y[%i, %j3] : memref<4x6xf32>
      %q = arith.divf %e3, %sum : f32
      krnl.store %q, %Y[%i, %j3] : memref<4x6xf32>
    }
  }
  return
}
"""


def test_softmax_over_rows() -> None:
    x = (3 * RNG.standard_normal((4, 6))).astype(np.float32)
    y = np.zeros_like(x)
    pk.run_reference(fn(SOFTMAX, "softmax"), X=x, Y=y)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    expected = e / e.sum(axis=1, keepdims=True)
    assert y.dtype == np.float32
    # f32: about one rounding per exp, six per sum and one per divide, each
    # <= 2**-24 relative: 1e-6 leaves room and would catch any real mistake.
    np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-7)


TRIANGULAR = """
func.func @tri(%A: memref<?x?xf64>, %L: memref<?x?xf64>, %U: memref<?x?xf64>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %A, %c0 : memref<?x?xf64>
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to %n) {
    %jj = krnl.define_loops 1
    %jb, %jl = krnl.block %jj 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    krnl.iterate(%jb, %jl) with (%jj -> %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i)) {
      %x = krnl.load %A[%i, %j] : memref<?x?xf64>
      krnl.store %x, %L[%i, %j] : memref<?x?xf64>
    }
    %kk = krnl.define_loops 1
    krnl.iterate(%kk) with (%kk -> %k = %i to %n) {
      %y = krnl.load %A[%i, %k] : memref<?x?xf64>
      krnl.store %y, %U[%i, %k] : memref<?x?xf64>
    }
  }
  return
}
"""


def test_triangular_nest() -> None:
    a = RNG.standard_normal((7, 7))
    low, up = np.zeros_like(a), np.zeros_like(a)
    pk.run_reference(fn(TRIANGULAR, "tri"), A=a, L=low, U=up)
    assert np.array_equal(low, np.tril(a))
    assert np.array_equal(up, np.triu(a))


IMPERFECT = """
func.func @imperfect(%A: memref<10xf64>, %B: memref<10xf64>, %P: memref<10xf64>,
                     %Q: memref<10xf64>) {
  %one = arith.constant 1.0 : f64
  %two = arith.constant 2.0 : f64
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib) with (%ii -> %i = 0 to 10) {
    %t = krnl.get_induction_var_value(%ib) : (!krnl.loop) -> index
    %before = krnl.load %B[%t] : memref<10xf64>
    krnl.store %before, %P[%t] : memref<10xf64>
    krnl.iterate(%il) with () {
      %a = krnl.load %A[%i] : memref<10xf64>
      %b = arith.mulf %a, %two : f64
      krnl.store %b, %B[%i] : memref<10xf64>
    }
    %after = krnl.load %B[%t] : memref<10xf64>
    %q = arith.addf %after, %one : f64
    krnl.store %q, %Q[%t] : memref<10xf64>
  }
  return
}

func.func @strided(%A: memref<10xf64>, %S: memref<3xf64>) {
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib) with (%ii -> %i = 0 to 10) {
    %t = krnl.get_induction_var_value(%ib) : (!krnl.loop) -> index
    %x = krnl.load %A[%t] : memref<10xf64>
    %q = affine.apply affine_map<(d0) -> (d0 floordiv 4)>(%t)
    krnl.store %x, %S[%q] : memref<3xf64>
  }
  return
}
"""


def test_imperfect_nest_statements_at_tile_level() -> None:
    a = RNG.standard_normal(10)
    b = np.full(10, -7.0)
    p, q = np.full(10, np.inf), np.full(10, np.inf)
    pk.run_reference(fn(IMPERFECT, "imperfect"), A=a, B=b, P=p, Q=q)
    starts = [0, 4, 8]
    others = [i for i in range(10) if i not in starts]
    assert np.array_equal(b, 2 * a)
    # Before the point loop of its tile, B still holds its old value ...
    assert np.array_equal(p[starts], [-7.0] * 3) and np.all(np.isinf(p[others]))
    # ... after it, the doubled one.
    assert np.array_equal(q[starts], 2 * a[starts] + 1) and np.all(np.isinf(q[others]))


TRIVIAL = """
func.func @trivial(%S: memref<3xindex>) -> index {
  %z = arith.constant 0 : index
  %one = arith.constant 1 : index
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %n = krnl.iterate() with (%ii -> %i = 0 to 10) iter_args(%c = %z) -> (index) {
    krnl.store %i, %S[%c] : memref<3xindex>
    %c1 = arith.addi %c, %one : index
    krnl.yield %c1 : index
  }
  return %n : index
}
"""


def test_unused_point_loop_runs_once_with_iv_zero() -> None:
    # onnx-mlir gives the point loop of an unused handle the bounds 0 to 1, and
    # the original induction variable becomes that loop's: 0, once per tile.
    s = np.full(3, -1, dtype=np.int64)
    assert pk.run_reference(fn(TRIVIAL, "trivial"), S=s) == 3
    assert s.tolist() == [0, 0, 0]


def test_unused_point_loop_makes_a_strided_loop() -> None:
    a = RNG.standard_normal(10)
    s = np.zeros(3)
    pk.run_reference(fn(IMPERFECT, "strided"), A=a, S=s)
    assert np.array_equal(s, a[[0, 4, 8]])


# ------------------------------------------------------------------ tile buffers

TO_BUFFER = """
func.func @pad_full(%S: memref<5x7xf64>, %buf: memref<4x4xf64>, %i: index, %j: index, %pad: f64) {
  krnl.copy_to_tile_buffer %buf, %S[%i, %j], %pad {padToNext = [4, 4]}
      : memref<4x4xf64>, memref<5x7xf64>
  return
}
func.func @pad_rows(%S: memref<5x7xf64>, %buf: memref<4x4xf64>, %i: index, %j: index, %pad: f64) {
  krnl.copy_to_tile_buffer %buf, %S[%i, %j], %pad {padToNext = [2, 1]}
      : memref<4x4xf64>, memref<5x7xf64>
  return
}
func.func @no_pad(%S: memref<5x7xf64>, %buf: memref<4x4xf64>, %i: index, %j: index, %pad: f64) {
  krnl.copy_to_tile_buffer %buf, %S[%i, %j], %pad : memref<4x4xf64>, memref<5x7xf64>
  return
}
func.func @transposed(%S: memref<5x7xf64>, %buf: memref<4x4xf64>, %i: index, %j: index, %pad: f64) {
  krnl.copy_to_tile_buffer %buf, %S[%i, %j], %pad {padToNext = [4, 4], transpose = true}
      : memref<4x4xf64>, memref<5x7xf64>
  return
}
func.func @tile_size(%S: memref<5x7xf64>, %buf: memref<4x4xf64>, %i: index, %j: index, %pad: f64) {
  krnl.copy_to_tile_buffer %buf, %S[%i, %j], %pad {tileSize = [2, 3], padToNext = [2, 3]}
      : memref<4x4xf64>, memref<5x7xf64>
  return
}
func.func @prefix(%S: memref<2x5x7xf64>, %buf: memref<4x4xf64>, %b: index, %i: index,
                  %j: index, %pad: f64) {
  krnl.copy_to_tile_buffer %buf, %S[%b, %i, %j], %pad {padToNext = [1, 4]}
      : memref<4x4xf64>, memref<2x5x7xf64>
  return
}
"""

S57 = np.arange(35, dtype=np.float64).reshape(5, 7) + 100  # S[r, c] = 100 + 7r + c
PAD = -1.0
OLD = 99.0  # what the buffer held before: elements left alone keep it


def to_buffer(name: str, i: int, j: int, source: np.ndarray | None = None) -> np.ndarray:
    buf = np.full((4, 4), OLD)
    args: dict[str, Any] = {"S": S57 if source is None else source, "buf": buf, "pad": PAD}
    if name == "prefix":
        args["b"] = 1
    pk.run_reference(fn(TO_BUFFER, name), i=i, j=j, **args)
    return buf


def test_copy_to_tile_buffer_full_tile() -> None:
    assert np.array_equal(to_buffer("pad_full", 0, 0), S57[0:4, 0:4])


def test_copy_to_tile_buffer_partial_tiles_and_padding() -> None:
    # At [4, 4] only 1 row (5 - 4) and 3 columns (7 - 4) remain in the source.
    expected = np.full((4, 4), PAD)  # padToNext = 4 = the tile: pad the whole buffer
    expected[0, :3] = S57[4, 4:7]
    assert np.array_equal(to_buffer("pad_full", 4, 4), expected)
    # padToNext [2, 1]: rows up to the next multiple of 2, columns not extended.
    expected = np.full((4, 4), OLD)
    expected[0, :3] = S57[4, 4:7]
    expected[1, :3] = PAD
    assert np.array_equal(to_buffer("pad_rows", 4, 4), expected)
    # No padToNext: only the data is copied.
    expected = np.full((4, 4), OLD)
    expected[0, :3] = S57[4, 4:7]
    assert np.array_equal(to_buffer("no_pad", 4, 4), expected)


def test_copy_to_tile_buffer_transpose() -> None:
    # buf[a, b] = S[i + b, j + a]: buffer dim 0 runs along source columns.
    # At [4, 0]: 4 columns (0..3) and 1 row (row 4) are available.
    expected = np.full((4, 4), PAD)
    expected[:, 0] = S57[4, 0:4]
    assert np.array_equal(to_buffer("transposed", 4, 0), expected)
    # At [0, 4]: 3 columns (4..6) and 4 rows.
    expected = np.full((4, 4), PAD)
    expected[:3, :] = S57[0:4, 4:7].T
    assert np.array_equal(to_buffer("transposed", 0, 4), expected)


def test_copy_to_tile_buffer_tile_size_and_prefix_dims() -> None:
    # tileSize [2, 3] inside a 4x4 buffer: at most 2x3 elements, padded within 2x3.
    expected = np.full((4, 4), OLD)
    expected[:2, :3] = S57[0:2, 0:3]
    assert np.array_equal(to_buffer("tile_size", 0, 0), expected)
    expected = np.full((4, 4), OLD)
    expected[0, :3] = S57[4, 4:7]
    expected[1, :3] = PAD
    assert np.array_equal(to_buffer("tile_size", 4, 4), expected)
    # A 3-D source: the leading start is a fixed index.
    s3 = np.stack([S57, S57 + 1000])
    expected = np.full((4, 4), OLD)
    expected[0, :3] = s3[1, 4, 4:7]
    expected[0, 3] = PAD
    assert np.array_equal(to_buffer("prefix", 4, 4, s3), expected)


FROM_BUFFER = """
func.func @from_buf(%buf: memref<4x4xf64>, %D: memref<5x7xf64>, %i: index, %j: index) {
  krnl.copy_from_tile_buffer %buf, %D[%i, %j] : memref<4x4xf64>, memref<5x7xf64>
  return
}
func.func @from_small(%buf: memref<4x4xf64>, %D: memref<5x7xf64>, %i: index, %j: index) {
  krnl.copy_from_tile_buffer %buf, %D[%i, %j] {tileSize = [2, 2]} : memref<4x4xf64>, memref<5x7xf64>
  return
}
func.func @from_3d(%buf: memref<4x4xf64>, %D: memref<2x5x7xf64>, %b: index, %i: index, %j: index) {
  krnl.copy_from_tile_buffer %buf, %D[%b, %i, %j] : memref<4x4xf64>, memref<2x5x7xf64>
  return
}
"""


def test_copy_from_tile_buffer_partial_tiles() -> None:
    buf = np.arange(16, dtype=np.float64).reshape(4, 4)

    def run(name: str, i: int, j: int, shape: tuple[int, ...] = (5, 7), **kw: int) -> np.ndarray:
        d = np.zeros(shape)
        pk.run_reference(fn(FROM_BUFFER, name), buf=buf, D=d, i=i, j=j, **kw)
        return d

    expected = np.zeros((5, 7))
    expected[0:4, 0:4] = buf
    assert np.array_equal(run("from_buf", 0, 0), expected)
    expected = np.zeros((5, 7))
    expected[4, 4:7] = buf[0, :3]  # only the part inside the destination
    assert np.array_equal(run("from_buf", 4, 4), expected)
    expected = np.zeros((5, 7))
    expected[0:2, 4:6] = buf[:2, :2]
    assert np.array_equal(run("from_small", 0, 4), expected)
    expected = np.zeros((2, 5, 7))
    expected[1, 4, 4:7] = buf[0, :3]
    assert np.array_equal(run("from_3d", 4, 4, (2, 5, 7), b=1), expected)


# ------------------------------------------------------------------ krnl.matmul


def matmul_panel(n: int, m: int, kdim: int, elem: str) -> str:
    """The op reference's panel example for A: n x kdim, B: kdim x m (tiles 10/8/10, 5/4/5)."""
    a, b, c = f"memref<{n}x{kdim}x{elem}>", f"memref<{kdim}x{m}x{elem}>", f"memref<{n}x{m}x{elem}>"
    loops3 = "!krnl.loop, !krnl.loop, !krnl.loop"
    return f"""
func.func @matmul(%A: {a}, %B: {b}, %C: {c}) {{
  %f0 = arith.constant 0.0 : {elem}
  %cn = arith.constant {n} : index
  %cm = arith.constant {m} : index
  %ck = arith.constant {kdim} : index
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 10 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 10 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %ilb, %ill = krnl.block %il 5 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jlb, %jll = krnl.block %jl 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %klb, %kll = krnl.block %kl 5 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %ilb, %ill, %jb, %jlb, %jll, %kb, %klb, %kll)
      [0, 3, 6, 1, 4, 7, 2, 5, 8] : {loops3}, {loops3}, {loops3}
  krnl.iterate(%ib, %jb) with (%ii -> %i = 0 to {n}, %jj -> %j = 0 to {m},
                               %kk -> %k = 0 to {kdim}) {{
    %i1, %j1 = krnl.get_induction_var_value(%ib, %jb) : (!krnl.loop, !krnl.loop) -> (index, index)
    %Cbuff = memref.alloca() : memref<10x8x{elem}>
    krnl.copy_to_tile_buffer %Cbuff, %C[%i1, %j1], %f0 : memref<10x8x{elem}>, {c}
    krnl.iterate(%kb) with () {{
      %k1 = krnl.get_induction_var_value(%kb) : (!krnl.loop) -> index
      %Abuff = memref.alloca() : memref<10x10x{elem}>
      %Bbuff = memref.alloca() : memref<10x8x{elem}>
      krnl.copy_to_tile_buffer %Abuff, %A[%i1, %k1], %f0 : memref<10x10x{elem}>, {a}
      krnl.copy_to_tile_buffer %Bbuff, %B[%k1, %j1], %f0 : memref<10x8x{elem}>, {b}
      krnl.iterate(%ilb, %jlb, %klb) with () {{
        %i2, %j2, %k2 = krnl.get_induction_var_value(%ilb, %jlb, %klb) :
            ({loops3}) -> (index, index, index)
        krnl.matmul %Abuff[%i1, %k1], %Bbuff[%k1, %j1], %Cbuff[%i1, %j1],
            (%ill, %jll, %kll), (%i2, %j2, %k2), (%cn, %cm, %ck)
            {{computeTileSize = [5, 4, 5], simdize = false, unroll = false}} :
            memref<10x10x{elem}>, memref<10x8x{elem}>, memref<10x8x{elem}>, ({loops3})
      }}
    }}
    krnl.copy_from_tile_buffer %Cbuff, %C[%i1, %j1] : memref<10x8x{elem}>, {c}
  }}
  return
}}
"""


def test_matmul_panel_example_of_the_op_reference() -> None:
    a = RNG.uniform(-1, 1, (40, 60)).astype(np.float32)
    b = RNG.uniform(-1, 1, (60, 80)).astype(np.float32)
    c = np.zeros((40, 80), dtype=np.float32)
    pk.run_reference(fn(matmul_panel(40, 80, 60, "f32"), "matmul"), A=a, B=b, C=c)
    # 60 f32 products and sums of terms |ab| <= 1: the error is at most about
    # 60 * 60 * 2**-24 = 2e-4 in the worst case; 1e-4 relative or absolute is ample
    # for random signs and still catches a missing or doubled tile (error ~0.1).
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), atol=1e-4)


def test_matmul_partial_tiles() -> None:
    # 37 x 53 x 29 divides by none of 10/8/10 (or 5/4/5): every edge tile is partial.
    a, b = RNG.standard_normal((37, 29)), RNG.standard_normal((29, 53))
    c0 = RNG.standard_normal((37, 53))
    c = c0.copy()
    pk.run_reference(fn(matmul_panel(37, 53, 29, "f64"), "matmul"), A=a, B=b, C=c)
    np.testing.assert_allclose(c, c0 + a @ b, rtol=1e-12, atol=1e-12)  # summation order only


# ------------------------------------------------------------------ memory and scalar ops

MEMORY = """
func.func @mem(%D: memref<3x4xf64>, %S: memref<2x5xf64>, %E: memref<6xf64>, %v: f64, %n: i64) {
  %d0 = arith.constant 3 : index
  %s0 = arith.constant 2 : index
  krnl.memset %E, %v : memref<6xf64>
  "krnl.memcpy"(%D, %S, %n, %d0, %s0) : (memref<3x4xf64>, memref<2x5xf64>, i64, index, index) -> ()
  return
}
"""


def test_memset_and_memcpy() -> None:
    d, s, e = np.zeros((3, 4)), RNG.standard_normal((2, 5)), np.zeros(6)
    pk.run_reference(fn(MEMORY, "mem"), D=d, S=s, E=e, v=3.5, n=5)
    assert np.array_equal(e, np.full(6, 3.5))
    expected = np.zeros(12)
    expected[3:8] = s.ravel()[2:7]  # flat, row-major positions
    assert np.array_equal(d.ravel(), expected)


def test_memcpy_out_of_bounds_is_an_error() -> None:
    d, s, e = np.zeros((3, 4)), np.zeros((2, 5)), np.zeros(6)
    with pytest.raises(pk.InterpretError, match=r"reads elements \[2, 12\)"):
        pk.run_reference(fn(MEMORY, "mem"), D=d, S=s, E=e, v=1.0, n=10)


MATH = """
func.func @math(%X: memref<6xf64>, %Y: memref<8x6xf64>, %Z: memref<6xf32>) {
  %two = arith.constant 2.0 : f64
  %half = arith.constant 0.5 : f64
  %r0 = arith.constant 0 : index
  %r1 = arith.constant 1 : index
  %r2 = arith.constant 2 : index
  %r3 = arith.constant 3 : index
  %r4 = arith.constant 4 : index
  %r5 = arith.constant 5 : index
  %r6 = arith.constant 6 : index
  %r7 = arith.constant 7 : index
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 6) {
    %x = krnl.load %X[%i] : memref<6xf64>
    %x2 = arith.addf %x, %two : f64
    %xh = arith.mulf %x, %half : f64
    %y0 = "krnl.acos"(%x) : (f64) -> f64
    %y1 = "krnl.acosh"(%x2) : (f64) -> f64
    %y2 = "krnl.asin"(%x) : (f64) -> f64
    %y3 = "krnl.asinh"(%x) : (f64) -> f64
    %y4 = "krnl.atan"(%x) : (f64) -> f64
    %y5 = "krnl.atanh"(%xh) : (f64) -> f64
    %y6 = "krnl.tan"(%x) : (f64) -> f64
    %y7 = "krnl.erf"(%x) : (f64) -> f64
    krnl.store %y0, %Y[%r0, %i] : memref<8x6xf64>
    krnl.store %y1, %Y[%r1, %i] : memref<8x6xf64>
    krnl.store %y2, %Y[%r2, %i] : memref<8x6xf64>
    krnl.store %y3, %Y[%r3, %i] : memref<8x6xf64>
    krnl.store %y4, %Y[%r4, %i] : memref<8x6xf64>
    krnl.store %y5, %Y[%r5, %i] : memref<8x6xf64>
    krnl.store %y6, %Y[%r6, %i] : memref<8x6xf64>
    krnl.store %y7, %Y[%r7, %i] : memref<8x6xf64>
    %xf = arith.truncf %x : f64 to f32
    %z = "krnl.erf"(%xf) : (f32) -> f32
    krnl.store %z, %Z[%i] : memref<6xf32>
  }
  return
}

func.func @preds(%X: memref<5xf32>, %I: memref<5xi1>, %N: memref<5xi1>) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 5) {
    %x = krnl.load %X[%i] : memref<5xf32>
    %a = "krnl.isinf"(%x) : (f32) -> i1
    %b = "krnl.isnan"(%x) : (f32) -> i1
    krnl.store %a, %I[%i] : memref<5xi1>
    krnl.store %b, %N[%i] : memref<5xi1>
  }
  return
}
"""


def test_krnl_scalar_math() -> None:
    x = np.array([-0.9, -0.5, -0.1, 0.0, 0.3, 0.8])
    y, z = np.zeros((8, 6)), np.zeros(6, dtype=np.float32)
    pk.run_reference(fn(MATH, "math"), X=x, Y=y, Z=z)
    erf = np.array([math.erf(v) for v in x])
    expected = [
        np.arccos(x),
        np.arccosh(x + 2),
        np.arcsin(x),
        np.arcsinh(x),
        np.arctan(x),
        np.arctanh(x / 2),
        np.tan(x),
        erf,
    ]
    # float64 in, float64 out: at most an ulp or two between libm implementations.
    np.testing.assert_allclose(y, np.array(expected), rtol=1e-14, atol=1e-15)
    # f32 erf: erf of the f32-rounded input, rounded once to f32 (within one f32 ulp).
    erf32 = np.array([math.erf(float(np.float32(v))) for v in x])
    assert z.dtype == np.float32
    np.testing.assert_allclose(z, erf32, rtol=2**-23, atol=0)


def test_isinf_and_isnan() -> None:
    x = np.array([1.0, np.inf, -np.inf, np.nan, 0.0], dtype=np.float32)
    i, n = np.zeros(5, dtype=bool), np.zeros(5, dtype=bool)
    pk.run_reference(fn(MATH, "preds"), X=x, I=i, N=n)
    assert i.tolist() == [False, True, True, False, False]
    assert n.tolist() == [False, False, False, True, False]


SCALARS = """
func.func @ints(%a: i8, %b: i8, %c: i8) -> (i8, i8, i8, i8, i32, i32, index) {
  %s = arith.addi %a, %a : i8
  %d = arith.divsi %b, %c : i8
  %r = arith.remsi %b, %c : i8
  %f = arith.floordivsi %b, %c : i8
  %e = arith.extsi %b : i8 to i32
  %u = arith.extui %b : i8 to i32
  %x = arith.index_cast %b : i8 to index
  return %s, %d, %r, %f, %e, %u, %x : i8, i8, i8, i8, i32, i32, index
}

func.func @f32add(%x: f32, %y: f32) -> f32 {
  %s = arith.addf %x, %y : f32
  return %s : f32
}

func.func @div0(%a: i32, %b: i32) -> i32 {
  %q = arith.divsi %a, %b : i32
  return %q : i32
}
"""


def test_integer_ops_wrap_and_round_toward_zero() -> None:
    out = pk.run_reference(fn(SCALARS, "ints"), a=100, b=-7, c=2)
    assert out == (-56, -3, -1, -4, -7, 249, -7)  # 200 wraps to -56 in i8; -7 is 0xF9
    assert [type(v) for v in out] == [np.int8] * 4 + [np.int32] * 2 + [int]


def test_f32_arithmetic_rounds_to_f32() -> None:
    s = pk.run_reference(fn(SCALARS, "f32add"), x=1.0, y=1e-8)
    assert isinstance(s, np.float32) and s == np.float32(1.0)  # 1 + 1e-8 in f64 is not 1


def test_integer_division_by_zero_is_an_error() -> None:
    with pytest.raises(pk.InterpretError, match="division by zero") as e:
        pk.run_reference(fn(SCALARS, "div0"), a=1, b=0)
    assert e.value.location is not None
    assert e.value.location.line == line_of(SCALARS, "arith.divsi %a, %b : i32")


COMPANION = """
func.func @sq(%x: f64) -> f64 {
  %y = arith.mulf %x, %x : f64
  return %y : f64
}

func.func @companion(%A: memref<6xf64>, %B: memref<6xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f64
  scf.for %i = %c0 to %c6 step %c1 {
    %x = memref.load %A[%i] : memref<6xf64>
    %neg = arith.cmpf olt, %x, %zero : f64
    %y = scf.if %neg -> (f64) {
      %s = func.call @sq(%x) : (f64) -> f64
      scf.yield %s : f64
    } else {
      scf.yield %x : f64
    }
    memref.store %y, %B[%i] : memref<6xf64>
  }
  affine.for %j = 0 to 6 step 2 {
    %v = affine.load %B[%j] : memref<6xf64>
    %w = arith.addf %v, %v : f64
    affine.store %w, %B[%j] : memref<6xf64>
  }
  return
}
"""


def test_scf_affine_and_func_call() -> None:
    a = np.array([-2.0, 3.0, -0.5, 4.0, 0.0, -1.5])
    b = np.zeros(6)
    pk.run_reference(fn(COMPANION, "companion"), A=a, B=b)
    expected = np.where(a < 0, a * a, a)
    expected[::2] *= 2
    assert np.array_equal(b, expected)


# ------------------------------------------------------------------ runtime-backed krnl ops

RANDOM = """
func.func @rand(%O: memref<2000xf64>, %n: index, %seed: f64) {
  %mean = arith.constant 3.0 : f64
  %scale = arith.constant 0.5 : f64
  "krnl.random_normal"(%O, %n, %mean, %scale, %seed)
      : (memref<2000xf64>, index, f64, f64, f64) -> ()
  return
}
"""


def test_random_normal_is_deterministic_per_seed() -> None:
    f = fn(RANDOM, "rand")
    first, again, other = np.zeros(2000), np.zeros(2000), np.zeros(2000)
    pk.run_reference(f, O=first, n=2000, seed=7.0)
    pk.run_reference(f, O=again, n=2000, seed=7.0)
    pk.run_reference(f, O=other, n=2000, seed=8.0)
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other)
    # mean 3, scale 0.5: the sample mean of 2000 values is within 5 standard errors
    # (5 * 0.5 / sqrt(2000) = 0.056) and so is the sample deviation (5 * 0.5 / sqrt(4000)).
    assert abs(first.mean() - 3.0) < 0.056
    assert abs(first.std() - 0.5) < 0.04
    partial = np.full(2000, -1.0)
    pk.run_reference(f, O=partial, n=10, seed=7.0)
    assert np.array_equal(partial[:10], first[:10]) and np.all(partial[10:] == -1.0)


CALL = """
func.func @call(%A: memref<4xf64>, %B: memref<4xf64>) {
  "krnl.call"(%B, %A) {funcName = "pk_test_axpy", numOfOutput = 1 : si64, alpha = 2.5 : f64} :
      (memref<4xf64>, memref<4xf64>) -> ()
  return
}

func.func @missing(%A: memref<4xf64>) {
  "krnl.call"(%A) {funcName = "pk_test_not_registered", numOfOutput = 1 : si64} :
      (memref<4xf64>) -> ()
  return
}
"""


@pytest.fixture
def axpy() -> Iterator[None]:
    def f(out: np.ndarray, x: np.ndarray, alpha: float) -> None:
        out += alpha * x

    pk.register_call("pk_test_axpy", f)
    yield
    unregister_call("pk_test_axpy")


def test_krnl_call_runs_a_registered_function(axpy: None) -> None:
    a, b = RNG.standard_normal(4), RNG.standard_normal(4)
    expected = b + 2.5 * a  # the op's `alpha` attribute arrives as a keyword argument
    pk.run_reference(fn(CALL, "call"), A=a, B=b)
    assert np.array_equal(b, expected)


def test_unknown_krnl_call_is_an_error(axpy: None) -> None:
    with pytest.raises(
        pk.InterpretError, match="'pk_test_not_registered', which is not registered"
    ) as e:
        pk.run_reference(fn(CALL, "missing"), A=np.zeros(4))
    assert e.value.hint is not None
    assert "register_call" in e.value.hint and "pk_test_axpy" in e.value.hint
    assert e.value.location is not None
    assert e.value.location.line == line_of(CALL, "pk_test_not_registered")


def fnv(hval: int, data: bytes) -> int:
    """The 32-bit FNV variant of onnx-mlir's OMIndexLookup.c (`char` is signed)."""
    prime = 0x01000193
    hval = hval or prime
    for byte in data:
        hval = (hval * prime) % 2**32
        hval ^= (byte - 256 if byte > 127 else byte) % 2**32
    return hval


def perfect_hash(keys: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """G, V such that find_index(keys[v]) == v (a textbook two-level construction).

    The table size is the number of keys; keep it odd, since FNV modulo a power
    of two only sees the low bits.
    """
    n = len(keys)
    g = np.zeros(n, dtype=np.int32)
    v = np.full(n, -1, dtype=np.int32)
    buckets: dict[int, list[int]] = {}
    for idx, key in enumerate(keys):
        buckets.setdefault(fnv(0, key) % n, []).append(idx)
    for b, members in sorted(buckets.items(), key=lambda kv: -len(kv[1])):
        if len(members) == 1:
            continue
        for d in range(1, 100_000):
            slots = [fnv(d, keys[m]) % n for m in members]
            if len(set(slots)) == len(slots) and all(v[s] < 0 for s in slots):
                break
        else:
            raise AssertionError("no perfect hash found: choose other test keys")
        g[b] = d
        for m, s in zip(members, slots, strict=True):
            v[s] = m
    free = iter(i for i in range(n) if v[i] < 0)
    for b, members in buckets.items():
        if len(members) == 1:
            s = next(free)
            g[b] = -s - 1
            v[s] = members[0]
    return g, v


FIND = """
func.func @by_string(%key: !krnl.string, %G: memref<9xi32>, %V: memref<9xi32>) -> index {
  %n = arith.constant 9 : i32
  %r = "krnl.find_index"(%key, %G, %V, %n)
      : (!krnl.string, memref<9xi32>, memref<9xi32>, i32) -> index
  return %r : index
}
func.func @by_int(%key: i64, %G: memref<9xi32>, %V: memref<9xi32>) -> index {
  %n = arith.constant 9 : i32
  %r = "krnl.find_index"(%key, %G, %V, %n) : (i64, memref<9xi32>, memref<9xi32>, i32) -> index
  return %r : index
}
"""


def test_find_index_perfect_hash() -> None:
    # Bytes >= 0x80 hash as negative `char`s: the non-ASCII words check that too.
    words = ["cat", "dog", "éclair", "zebra", "ñandú", "größe", "日本", "café", "ox"]
    g, v = perfect_hash([w.encode() for w in words])
    for idx, w in enumerate(words):
        assert pk.run_reference(fn(FIND, "by_string"), key=w, G=g, V=v) == idx
    numbers = [-7, 0, 42, 1000, 123456789, -(2**40), 8, 65536, 3]
    g, v = perfect_hash([str(x).encode() for x in numbers])
    for idx, x in enumerate(numbers):
        assert pk.run_reference(fn(FIND, "by_int"), key=x, G=g, V=v) == idx


SEQUENCE = """
func.func @seq(%A: memref<3xf64>, %O: memref<3xf64>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %big = arith.constant 99.0 : f64
  %s = "krnl.seqalloc"(%c2) : (index) -> memref<?xmemref<?xf64>>
  %a = "memref.cast"(%A) : (memref<3xf64>) -> memref<?xf64>
  "krnl.seqstore"(%a, %s, %c0) : (memref<?xf64>, memref<?xmemref<?xf64>>, index) -> ()
  memref.store %big, %A[%c0] : memref<3xf64>
  %e = "krnl.seqextract"(%s, %c0) {copy = 1 : ui1}
      : (memref<?xmemref<?xf64>>, index) -> memref<?xf64>
  %o = "memref.cast"(%O) : (memref<3xf64>) -> memref<?xf64>
  "memref.copy"(%e, %o) : (memref<?xf64>, memref<?xf64>) -> ()
  "krnl.seqdealloc"(%s) : (memref<?xmemref<?xf64>>) -> ()
  return
}

func.func @unset(%O: memref<3xf64>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %s = "krnl.seqalloc"(%c2) : (index) -> memref<?xmemref<?xf64>>
  %e = "krnl.seqextract"(%s, %c1) {copy = 1 : ui1}
      : (memref<?xmemref<?xf64>>, index) -> memref<?xf64>
  return
}
"""


def test_sequences_store_copies() -> None:
    a, o = np.array([1.0, 2.0, 3.0]), np.zeros(3)
    pk.run_reference(fn(SEQUENCE, "seq"), A=a, O=o)
    assert a[0] == 99.0
    assert np.array_equal(o, [1.0, 2.0, 3.0])  # the sequence kept the stored copy
    with pytest.raises(pk.InterpretError, match=r"element 1 .* never stored"):
        pk.run_reference(fn(SEQUENCE, "unset"), O=o)


PRINT = """
func.func @show(%t: memref<2x2xf32>, %x: f32) {
  "krnl.print"(%x) {format = "x = %f\\n"} : (f32) -> ()
  "krnl.print"() {format = "100%%\\n"} : () -> ()
  "krnl.print_tensor"(%t) {msg = "t: %t\\n"} : (memref<2x2xf32>) -> ()
  "krnl.print_tensor"(%t) {msg = "%d"} : (memref<2x2xf32>) -> ()
  return
}
"""


def test_print_ops_write_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    t = np.array([[1, 2], [3, 4]], dtype=np.float32)
    pk.run_reference(fn(PRINT, "show"), t=t, x=0.5)
    assert capsys.readouterr().out == (
        "x = 0.500000\n100%\nt: 2x2xfloat\n\tdata: ([[1.000000, 2.000000], [3.000000, 4.000000]])\n"
    )


# ------------------------------------------------------------------ errors


def test_wrong_shape_is_refused() -> None:
    with pytest.raises(
        pk.ArgumentError, match=r"argument 'A' .* expected shape 3x5 .* got 5x3"
    ) as e:
        pk.run_reference(
            fn(TRANSPOSE, "transpose"),
            A=np.zeros((5, 3), np.float32),
            B=np.zeros((5, 3), np.float32),
        )
    assert e.value.hint is not None and "`?`" in e.value.hint


def test_dynamic_dims_accept_any_size_but_not_another_rank() -> None:
    with pytest.raises(pk.ArgumentError, match=r"expected shape \?x\? .* got 4"):
        pk.run_reference(fn(GEMM, "gemm"), A=np.zeros(4), B=np.zeros((4, 4)), C=np.zeros((4, 4)))


def test_wrong_dtype_is_refused() -> None:
    with pytest.raises(
        pk.ArgumentError, match=r"argument 'A' .* expected dtype float32 .* got float64"
    ) as e:
        pk.run_reference(
            fn(TRANSPOSE, "transpose"), A=np.zeros((3, 5)), B=np.zeros((5, 3), np.float32)
        )
    assert e.value.hint is not None and "astype(np.float32)" in e.value.hint


def test_missing_argument_is_refused() -> None:
    with pytest.raises(pk.ArgumentError, match="missing argument 'B' of @transpose") as e:
        pk.run_reference(fn(TRANSPOSE, "transpose"), A=np.zeros((3, 5), np.float32))
    assert e.value.hint is not None and "A: memref<3x5xf32>, B: memref<5x3xf32>" in e.value.hint


def test_unknown_argument_is_refused() -> None:
    a, b = np.zeros((3, 5), np.float32), np.zeros((5, 3), np.float32)
    with pytest.raises(pk.ArgumentError, match="@transpose has no argument named 'X'"):
        pk.run_reference(fn(TRANSPOSE, "transpose"), A=a, B=b, X=a)


OOB = """
func.func @past_end(%A: memref<10xf64>, %B: memref<10xf64>) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 11) {
    %x = krnl.load %A[%i] : memref<10xf64>
    krnl.store %x, %B[%i] : memref<10xf64>
  }
  return
}

func.func @before_start(%A: memref<10xf64>, %B: memref<10xf64>) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 10) {
    %x = krnl.load %A[%i] : memref<10xf64>
    %j = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    krnl.store %x, %B[%j] : memref<10xf64>
  }
  return
}
"""


def test_out_of_bounds_load_is_an_error_at_the_op() -> None:
    a, b = RNG.standard_normal(10), np.zeros(10)
    with pytest.raises(
        pk.InterpretError,
        match=r"krnl.load out of bounds: index 10 in dimension 0 of %A \(size 10\)",
    ) as e:
        pk.run_reference(fn(OOB, "past_end"), A=a, B=b)
    assert e.value.location is not None
    assert e.value.location.line == line_of(OOB, "%x = krnl.load %A[%i]")
    assert np.array_equal(b, a)  # everything before the bad access happened


def test_negative_index_does_not_wrap() -> None:
    a, b = RNG.standard_normal(10), np.zeros(10)
    with pytest.raises(
        pk.InterpretError, match=r"krnl\.store out of bounds: index -1 in dimension 0 of %B"
    ):
        pk.run_reference(fn(OOB, "before_start"), A=a, B=b)
    assert np.all(b == 0)  # NumPy would have written B[9]


UNSUPPORTED = """
func.func @ptr(%A: memref<4xf32>) -> index {
  %p = "memref.extract_aligned_pointer_as_index"(%A) : (memref<4xf32>) -> index
  return %p : index
}
"""


def test_unsupported_op_is_named() -> None:
    with pytest.raises(
        pk.UnsupportedError,
        match=r"`memref\.extract_aligned_pointer_as_index` is not supported by the reference "
        r"interpreter",
    ) as e:
        pk.run_reference(fn(UNSUPPORTED, "ptr"), A=np.zeros(4, np.float32))
    assert e.value.location is not None and e.value.location.line == 3


VIEWS = """
func.func @views(%pool: memref<16xi8>, %M: memref<2x8xf32>, %S: memref<2xindex>) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %off = arith.constant 8 : i64
  %v = arith.constant 5.0 : f32
  %r = "krnl.getref"(%pool, %off) : (memref<16xi8>, i64) -> memref<2xf32>
  krnl.store %v, %r[%c1] : memref<2xf32>
  %mv = krnl.vector_type_cast %M : memref<2x8xf32> to memref<2x2xvector<4xf32>>
  %vec = krnl.load %mv[%c1, %c1] : memref<2x2xvector<4xf32>>
  %twice = arith.addf %vec, %vec : vector<4xf32>
  krnl.store %twice, %mv[%c0, %c0] : memref<2x2xvector<4xf32>>
  %shape = "krnl.shape"(%M) : (memref<2x8xf32>) -> memref<2xindex>
  "memref.copy"(%shape, %S) : (memref<2xindex>, memref<2xindex>) -> ()
  %d = "krnl.dim"(%mv, %c1) : (memref<2x2xvector<4xf32>>, index) -> index
  return %d : index
}
"""


def test_getref_vector_cast_shape_and_dim_are_views() -> None:
    pool = np.zeros(16, dtype=np.int8)
    m = RNG.standard_normal((2, 8)).astype(np.float32)
    old = m.copy()
    shape = np.zeros(2, dtype=np.int64)
    d = pk.run_reference(fn(VIEWS, "views"), pool=pool, M=m, S=shape)
    assert pool[12:16].view(np.float32)[0] == 5.0 and not pool[:12].any()
    expected = old.copy()
    expected[0, 0:4] = 2 * old[1, 4:8]  # vector [1, 1] is M[1, 4:8]; [0, 0] is M[0, 0:4]
    assert np.array_equal(m, expected)
    assert shape.tolist() == [2, 8] and d == 2


ERRORS = """
func.func @types(%A: memref<2xf32>, %n: index, %b: i8, %x: f32, %s: !krnl.string) {
  return
}

func.func @iv_outside(%A: memref<8xf64>) {
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib) with (%ii -> %i = 0 to 8) {
    %x = krnl.load %A[%i] : memref<8xf64>
    krnl.iterate(%il) with () {
    }
  }
  return
}

func.func @iv_value_outside(%A: memref<8xindex>) {
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib) with (%ii -> %i = 0 to 8) {
    %p = krnl.get_induction_var_value(%il) : (!krnl.loop) -> index
    krnl.iterate(%il) with () {
    }
  }
  return
}

func.func @shift(%a: i32, %b: i32) -> i32 {
  %r = arith.shli %a, %b : i32
  return %r : i32
}

func.func @to_int(%x: f32) -> i32 {
  %r = arith.fptosi %x : f32 to i32
  return %r : i32
}

func.func @overflow(%a: i32, %b: i32) -> i32 {
  %r = arith.divsi %a, %b : i32
  return %r : i32
}

func.func @neg_start(%S: memref<5x7xf64>, %buf: memref<4x4xf64>, %i: index, %pad: f64) {
  krnl.copy_to_tile_buffer %buf, %S[%i, %i], %pad : memref<4x4xf64>, memref<5x7xf64>
  return
}

func.func @big_tile(%S: memref<5x7xf64>, %buf: memref<4x4xf64>, %i: index, %pad: f64) {
  krnl.copy_to_tile_buffer %buf, %S[%i, %i], %pad {tileSize = [8, 4]}
      : memref<4x4xf64>, memref<5x7xf64>
  return
}

func.func @matmul_oob(%A: memref<4x4xf64>, %B: memref<4x4xf64>, %C: memref<4x4xf64>, %s: index) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %l:3 = krnl.define_loops 3
  krnl.matmul %A[%c0, %c0], %B[%c0, %c0], %C[%c0, %c0], (%l#0, %l#1, %l#2), (%s, %c0, %c0),
      (%c8, %c8, %c8) : memref<4x4xf64>, memref<4x4xf64>, memref<4x4xf64>,
      (!krnl.loop, !krnl.loop, !krnl.loop)
  return
}

func.func @rand_count(%O: memref<4xf64>, %n: index) {
  %m = arith.constant 0.0 : f64
  "krnl.random_normal"(%O, %n, %m, %m, %m) : (memref<4xf64>, index, f64, f64, f64) -> ()
  return
}

func.func @bad_format(%x: f64) {
  "krnl.print"(%x) {format = "%d and %d"} : (f64) -> ()
  return
}

func.func @raises(%A: memref<4xf64>) {
  "krnl.call"(%A) {funcName = "pk_test_raises", numOfOutput = 1 : si64} : (memref<4xf64>) -> ()
  return
}

func.func @const_store(%v: f32) {
  %c0 = arith.constant 0 : index
  %g = "krnl.global"() {name = "w", shape = [2], value = dense<[1.0, 2.0]> : tensor<2xf32>}
      : () -> memref<2xf32>
  krnl.store %v, %g[%c0] : memref<2xf32>
  return
}

func.func @seq_oob(%A: memref<3xf64>, %i: index) {
  %c2 = arith.constant 2 : index
  %s = "krnl.seqalloc"(%c2) : (index) -> memref<?xmemref<3xf64>>
  "krnl.seqstore"(%A, %s, %i) : (memref<3xf64>, memref<?xmemref<3xf64>>, index) -> ()
  return
}

func.func @find_bad(%key: i64, %G: memref<3xi32>, %V: memref<3xi32>) -> index {
  %n = arith.constant 3 : i32
  %r = "krnl.find_index"(%key, %G, %V, %n) : (i64, memref<3xi32>, memref<3xi32>, i32) -> index
  return %r : index
}

func.func @memcpy_dest(%D: memref<4xf64>, %S: memref<8xf64>, %n: i64) {
  %c0 = arith.constant 0 : index
  "krnl.memcpy"(%D, %S, %n, %c0, %c0) : (memref<4xf64>, memref<8xf64>, i64, index, index) -> ()
  return
}

func.func @getref_oob(%pool: memref<16xi8>, %off: i64) -> memref<2xf32> {
  %r = "krnl.getref"(%pool, %off) : (memref<16xi8>, i64) -> memref<2xf32>
  return %r : memref<2xf32>
}
"""

TYPES_OK: dict[str, Any] = {
    "A": np.zeros(2, np.float32),
    "n": 3,
    "b": 5,
    "x": 1.5,
    "s": "word",
}
F64 = np.zeros((5, 7))
BUF = np.zeros((4, 4))
SQ = np.zeros((4, 4))


@pytest.mark.parametrize(
    ("name", "args", "error", "message"),
    [
        ("types", {"A": [1.0, 2.0]}, pk.ArgumentError, "expected a NumPy array for memref<2xf32>"),
        (
            "types",
            {"n": True},
            pk.ArgumentError,
            "'n' .* expected an integer for index, got a bool",
        ),
        ("types", {"n": 1.5}, pk.ArgumentError, "expected an integer for index, got float"),
        ("types", {"b": 300}, pk.ArgumentError, r"300 does not fit in i8 \[-128, 127\]"),
        ("types", {"x": "1"}, pk.ArgumentError, "expected a number for f32, got str"),
        ("types", {"s": 3}, pk.ArgumentError, "expected a str for !krnl.string, got int"),
        (
            "iv_outside",
            {"A": np.zeros(8)},
            pk.InterpretError,
            "induction variable %i is used where",
        ),
        (
            "iv_value_outside",
            {"A": np.zeros(8, np.int64)},
            pk.InterpretError,
            r"get_induction_var_value\(%il\) is read outside the loop of %il",
        ),
        ("shift", {"a": 1, "b": 40}, pk.InterpretError, "shift by 40 bits of a 32-bit integer"),
        ("to_int", {"x": float("nan")}, pk.InterpretError, "fptosi of nan"),
        ("to_int", {"x": 3e9}, pk.InterpretError, "does not fit in i32"),
        ("overflow", {"a": -(2**31), "b": -1}, pk.InterpretError, "signed division overflow"),
        (
            "neg_start",
            {"S": F64, "buf": BUF, "i": -1, "pad": 0.0},
            pk.InterpretError,
            "negative start -1 in dimension 0 of %S",
        ),
        (
            "big_tile",
            {"S": F64, "buf": BUF, "i": 0, "pad": 0.0},
            pk.InterpretError,
            "tileSize 8 exceeds the buffer size 4",
        ),
        (
            "matmul_oob",
            {"A": SQ, "B": SQ, "C": SQ, "s": 2},
            pk.InterpretError,
            r"krnl.matmul out of bounds: the tile reads indices \[2, 6\) in dimension 0 of %A",
        ),
        (
            "rand_count",
            {"O": np.zeros(4), "n": 5},
            pk.InterpretError,
            "random_normal of 5 values into %O, which has 4",
        ),
        ("bad_format", {"x": 1.0}, pk.InterpretError, "krnl.print cannot format '%d and %d'"),
        (
            "raises",
            {"A": np.zeros(4)},
            pk.InterpretError,
            "registered for krnl.call 'pk_test_raises' raised RuntimeError: boom",
        ),
        (
            "const_store",
            {"v": 1.0},
            pk.InterpretError,
            "krnl.store writes into %g, which is read-only",
        ),
        (
            "seq_oob",
            {"A": np.zeros(3), "i": 2},
            pk.InterpretError,
            r"krnl.seqstore out of bounds: index 2 in dimension 0 of %s \(size 2\)",
        ),
        (
            "find_bad",
            {"key": 1, "G": np.array([-3, -3, -3], np.int32), "V": np.array([5, 5, 5], np.int32)},
            pk.InterpretError,
            r"the table gives 5, outside \[0, 3\)",
        ),
        (
            "memcpy_dest",
            {"D": np.zeros(4), "S": np.zeros(8), "n": 6},
            pk.InterpretError,
            r"writes elements \[0, 6\) of %D, which has 4",
        ),
        (
            "getref_oob",
            {"pool": np.zeros(16, np.int8), "off": 12},
            pk.InterpretError,
            r"bytes \[12, 20\) of the 16-byte pool %pool",
        ),
    ],
)
def test_error_messages(
    name: str, args: dict[str, Any], error: type[Exception], message: str
) -> None:
    f = fn(ERRORS, name)
    full = {**TYPES_OK, **args} if name == "types" else args

    def boom(a: np.ndarray) -> None:
        raise RuntimeError("boom")

    pk.register_call("pk_test_raises", boom)
    try:
        with pytest.raises(error, match=message) as e:
            pk.run_reference(f, **full)
    finally:
        unregister_call("pk_test_raises")
    assert getattr(e.value, "location", None) is not None


def test_register_call_checks_its_arguments() -> None:
    with pytest.raises(pk.ArgumentError, match="non-empty function name"):
        pk.register_call("", print)
    with pytest.raises(pk.ArgumentError, match="needs a callable, got int"):
        pk.register_call("pk_test_bad", 3)  # type: ignore[arg-type]


# ------------------------------------------------------------------ polykrnl run


@pytest.fixture
def gemm_file(tmp_path: Path) -> Path:
    p = tmp_path / "gemm.mlir"
    p.write_text(GEMM)
    return p


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_cli_run_reference(gemm_file: Path) -> None:
    # B.0 is not given: it takes --size 5, which A.1 matches.
    params = {"A.0": 6, "A.1": 5, "B.1": 4, "C.0": 6, "C.1": 4}
    argv = [x for key, v in params.items() for x in ("--param", f"{key}={v}")]
    code, out, err = run_cli(
        "run",
        str(gemm_file),
        "--func",
        "gemm_tiled",
        "--reference",
        "--size",
        "5",
        "--seed",
        "3",
        *argv,
    )
    assert code == 0, err
    assert "@gemm_tiled: reference interpreter, seed 3" in out
    assert "inputs: A 6x5 float64, B 5x4 float64, C 6x4 float64" in out
    inputs = make_inputs(pk.load(gemm_file)["gemm_tiled"], params, seed=3, size=5)
    expected = inputs["C"] + inputs["A"] @ inputs["B"]
    m = re.search(r"output C: 6x4 float64  checksum=(\S+)  min=(\S+)  max=(\S+)", out)
    assert m is not None, out
    # printed with 7 significant digits
    assert float(m.group(1)) == pytest.approx(expected.sum(), rel=1e-6)
    assert float(m.group(2)) == pytest.approx(expected.min(), rel=1e-5)
    assert float(m.group(3)) == pytest.approx(expected.max(), rel=1e-5)
    assert "output A" not in out and "output B" not in out  # inputs only


def test_cli_run_without_reference_runs_the_numpy_kernel(gemm_file: Path) -> None:
    code, out, err = run_cli("run", str(gemm_file), "--func", "gemm")
    assert code == 0, err
    assert out.startswith("@gemm: NumPy kernel, seed 0\n")


def test_cli_run_rejects_unknown_params(gemm_file: Path) -> None:
    code, _, err = run_cli(
        "run", str(gemm_file), "--func", "gemm", "--reference", "--param", "Z.0=3"
    )
    assert code == 2
    assert "no argument 'Z'" in err and "A.0, A.1, B.0, B.1, C.0, C.1" in err
    code, _, err = run_cli("run", str(gemm_file), "--reference")
    assert code == 2 and "--func NAME" in err and "gemm, gemm_tiled" in err


def test_argument_names_keep_a_digit_suffix() -> None:
    # xDSL's name hints drop `_1`; arguments are named as the source writes them.
    text = """
func.func @f(%y_1: memref<4xf64>, %y_2: memref<4xf64>) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 4) {
    %v = krnl.load %y_1[%i] : memref<4xf64>
    krnl.store %v, %y_2[%i] : memref<4xf64>
  }
  return
}
"""
    f = pk.parse(text)["f"]
    assert [a.name for a in f.arguments] == ["y_1", "y_2"]
    a, b = np.arange(4.0), np.zeros(4)
    pk.run_reference(f, y_1=a, y_2=b)
    assert np.array_equal(a, b)
