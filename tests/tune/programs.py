"""Small programs the tuning tests search."""

from __future__ import annotations

MATMUL = """
func.func @mm(%A: memref<48x48xf64>, %B: memref<48x48xf64>, %C: memref<48x48xf64>) {
  %ii, %jj, %kk = krnl.define_loops 3
  krnl.iterate(%ii, %jj, %kk) with (%ii -> %i = 0 to 48, %jj -> %j = 0 to 48, %kk -> %k = 0 to 48) {
    %a = krnl.load %A[%i, %k] : memref<48x48xf64>
    %b = krnl.load %B[%k, %j] : memref<48x48xf64>
    %c = krnl.load %C[%i, %j] : memref<48x48xf64>
    %p = arith.mulf %a, %b : f64
    %s = arith.addf %c, %p : f64
    krnl.store %s, %C[%i, %j] : memref<48x48xf64>
  }
  return
}
"""

# Dependence distance (1, -1): i before j is the only legal order of the band, and it is
# not permutable (a skew of j by i makes it tilable).
SWEEP = """
func.func @sweep(%N: index, %A: memref<?x?xf64>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 1 to %N, %jj -> %j = 0 to affine_map<()[s0] -> (s0 - 1)>()[%N]) {
    %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
    %v = krnl.load %A[%im, %jp] : memref<?x?xf64>
    %w = krnl.load %A[%i, %j] : memref<?x?xf64>
    %s = arith.addf %v, %w : f64
    krnl.store %s, %A[%i, %j] : memref<?x?xf64>
  }
  return
}
"""  # noqa: E501

# The matmul with a Krnl recipe (tiled 16 x 16 x 16, i, j, k tiles then points).
MATMUL_RECIPE = """
func.func @mmr(%N: index, %A: memref<?x?xf64>, %B: memref<?x?xf64>, %C: memref<?x?xf64>) {
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %il, %jl, %kk) with (%ii -> %i = 0 to %N, %jj -> %j = 0 to %N, %kk -> %k = 0 to %N) {
    %a = krnl.load %A[%i, %k] : memref<?x?xf64>
    %b = krnl.load %B[%k, %j] : memref<?x?xf64>
    %c = krnl.load %C[%i, %j] : memref<?x?xf64>
    %p = arith.mulf %a, %b : f64
    %s = arith.addf %c, %p : f64
    krnl.store %s, %C[%i, %j] : memref<?x?xf64>
  }
  return
}
"""  # noqa: E501

RECIPE_SIZES = {"N": 40, "A.0": 40, "A.1": 40, "B.0": 40, "B.1": 40, "C.0": 40, "C.1": 40}
