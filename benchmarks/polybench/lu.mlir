// lu: LU decomposition without pivoting, in place: A = L * U with L unit lower
// triangular (stored below the diagonal) and U upper triangular (on and above it),
// A N x N.
//
// Follows PolyBench 4.2 linear-algebra/solvers/lu/lu.c (kernel_lu), row by row:
// for i: for j < i: (for k < j: A[i][j] -= A[i][k] * A[k][j]), then A[i][j] /=
// A[j][j]; then for i <= j < N: for k < i: A[i][j] -= A[i][k] * A[k][j].
// Triangular bounds (k < j, j < i, j >= i, k < i), all updates in place. The inputs
// must not need pivoting (PolyBench factors a symmetric positive definite matrix;
// see sizes.py).
//
// @lu is that program as written.
// @lu_tiled tiles the second nest of each row (j = i .. N - 1, k < i) 32x32 as
// kb, jb, kl, jl (k outside j, so that the innermost loop updates a stretch of row
// i); j and k are written as one krnl.iterate (their bounds use only the enclosing
// i). Legal: inside one row, that nest only reads rows k < i and A[i][k] for k < i
// (final once the first nest of the row has run) and only writes A[i][j] for
// j >= i, so its only dependence is on A[i][j] along k (distance (0, +) in j, k);
// the band is permutable, and every A[i][j] still sees its k updates in increasing
// k: the results are bitwise those of @lu. The first nest is not transformed (k's
// bound uses j, and the division after the k loop makes j, k imperfect), nor is
// i (it carries the factorisation: row i reads the rows before it).
func.func @lu(%N: index, %A: memref<?x?xf64>) {
  %ii, %jj, %kk, %jj2, %kk2 = krnl.define_loops 5
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    krnl.iterate(%jj) with (%jj -> %j = 0 to %i) {
      krnl.iterate(%kk) with (%kk -> %k = 0 to %j) {
        %x = krnl.load %A[%i, %j] : memref<?x?xf64>
        %a = krnl.load %A[%i, %k] : memref<?x?xf64>
        %b = krnl.load %A[%k, %j] : memref<?x?xf64>
        %p = arith.mulf %a, %b : f64
        %d = arith.subf %x, %p : f64
        krnl.store %d, %A[%i, %j] : memref<?x?xf64>
      }
      %y = krnl.load %A[%i, %j] : memref<?x?xf64>
      %q = krnl.load %A[%j, %j] : memref<?x?xf64>
      %r = arith.divf %y, %q : f64
      krnl.store %r, %A[%i, %j] : memref<?x?xf64>
    }
    krnl.iterate(%jj2) with (%jj2 -> %j2 = %i to %N) {
      krnl.iterate(%kk2) with (%kk2 -> %k2 = 0 to %i) {
        %x = krnl.load %A[%i, %j2] : memref<?x?xf64>
        %a = krnl.load %A[%i, %k2] : memref<?x?xf64>
        %b = krnl.load %A[%k2, %j2] : memref<?x?xf64>
        %p = arith.mulf %a, %b : f64
        %d = arith.subf %x, %p : f64
        krnl.store %d, %A[%i, %j2] : memref<?x?xf64>
      }
    }
  }
  return
}

func.func @lu_tiled(%N: index, %A: memref<?x?xf64>) {
  %ii, %jj, %kk, %jj2, %kk2 = krnl.define_loops 5
  %jb2, %jl2 = krnl.block %jj2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb2, %kl2 = krnl.block %kk2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%jb2, %jl2, %kb2, %kl2) [1, 3, 0, 2] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    krnl.iterate(%jj) with (%jj -> %j = 0 to %i) {
      krnl.iterate(%kk) with (%kk -> %k = 0 to %j) {
        %x = krnl.load %A[%i, %j] : memref<?x?xf64>
        %a = krnl.load %A[%i, %k] : memref<?x?xf64>
        %b = krnl.load %A[%k, %j] : memref<?x?xf64>
        %p = arith.mulf %a, %b : f64
        %d = arith.subf %x, %p : f64
        krnl.store %d, %A[%i, %j] : memref<?x?xf64>
      }
      %y = krnl.load %A[%i, %j] : memref<?x?xf64>
      %q = krnl.load %A[%j, %j] : memref<?x?xf64>
      %r = arith.divf %y, %q : f64
      krnl.store %r, %A[%i, %j] : memref<?x?xf64>
    }
    krnl.iterate(%kb2, %jb2, %kl2, %jl2) with (%jj2 -> %j2 = %i to %N, %kk2 -> %k2 = 0 to %i) {
      %x = krnl.load %A[%i, %j2] : memref<?x?xf64>
      %a = krnl.load %A[%i, %k2] : memref<?x?xf64>
      %b = krnl.load %A[%k2, %j2] : memref<?x?xf64>
      %p = arith.mulf %a, %b : f64
      %d = arith.subf %x, %p : f64
      krnl.store %d, %A[%i, %j2] : memref<?x?xf64>
    }
  }
  return
}
