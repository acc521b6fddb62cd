// syrk: symmetric rank-k update of the lower triangle, C := alpha * A * A^T + beta * C
// for j <= i, with A N x M and C N x N (the strict upper triangle of C is untouched).
//
// Follows PolyBench 4.2 linear-algebra/blas/syrk/syrk.c (kernel_syrk, BLAS
// UPLO = 'L', TRANS = 'N'): per row i, first C[i][j] *= beta for j <= i, then for
// k, for j <= i: C[i][j] += alpha * A[i][k] * A[j][k] (evaluated as
// C + (alpha * A[i][k]) * A[j][k], as C does). Triangular: j runs to i + 1.
//
// @syrk is that loop nest as written (i { j; k { j } }).
// @syrk_tiled is the same program with the k, j nest of each row written as one
// krnl.iterate (j's bound i + 1 uses only the enclosing i) and unrolled and jammed:
// k is blocked by 4, the point loop moved inside j and unrolled, so each C[i][j] is
// loaded and stored once per four k (gcc -O3 does the same by itself: its
// -floop-unroll-and-jam, without which the C version runs as slowly as the natural
// order in Numba). Legal: inside one row the only dependences are on C[i][j] along k
// (distance (+, 0) in k, j), so the band is permutable, and every C[i][j] still
// sees its k updates in increasing k: the results are bitwise those of @syrk. When
// 4 does not divide M the last k tile is partial; krnl.unroll runs the full tiles
// apart from it. The i loop is not blocked with them: j's bound uses i, so i stays
// outside every j loop.
func.func @syrk(%N: index, %M: index, %alpha: f64, %beta: f64, %C: memref<?x?xf64>, %A: memref<?x?xf64>) {
  %ii, %jj, %kk, %jj2 = krnl.define_loops 4
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    krnl.iterate(%jj) with (%jj -> %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i)) {
      %c = krnl.load %C[%i, %j] : memref<?x?xf64>
      %cb = arith.mulf %c, %beta : f64
      krnl.store %cb, %C[%i, %j] : memref<?x?xf64>
    }
    krnl.iterate(%kk) with (%kk -> %k = 0 to %M) {
      krnl.iterate(%jj2) with (%jj2 -> %j2 = 0 to affine_map<(d0) -> (d0 + 1)>(%i)) {
        %c = krnl.load %C[%i, %j2] : memref<?x?xf64>
        %a1 = krnl.load %A[%i, %k] : memref<?x?xf64>
        %a2 = krnl.load %A[%j2, %k] : memref<?x?xf64>
        %aa = arith.mulf %alpha, %a1 : f64
        %p = arith.mulf %aa, %a2 : f64
        %s = arith.addf %c, %p : f64
        krnl.store %s, %C[%i, %j2] : memref<?x?xf64>
      }
    }
  }
  return
}

func.func @syrk_tiled(%N: index, %M: index, %alpha: f64, %beta: f64, %C: memref<?x?xf64>, %A: memref<?x?xf64>) {
  %ii, %jj, %kk, %jj2 = krnl.define_loops 4
  %kb, %kl = krnl.block %kk 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%kb, %kl, %jj2) [0, 2, 1] : !krnl.loop, !krnl.loop, !krnl.loop
  krnl.unroll %kl : !krnl.loop
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    krnl.iterate(%jj) with (%jj -> %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i)) {
      %c = krnl.load %C[%i, %j] : memref<?x?xf64>
      %cb = arith.mulf %c, %beta : f64
      krnl.store %cb, %C[%i, %j] : memref<?x?xf64>
    }
    krnl.iterate(%kb, %jj2, %kl) with (%kk -> %k = 0 to %M, %jj2 -> %j2 = 0 to affine_map<(d0) -> (d0 + 1)>(%i)) {
      %c = krnl.load %C[%i, %j2] : memref<?x?xf64>
      %a1 = krnl.load %A[%i, %k] : memref<?x?xf64>
      %a2 = krnl.load %A[%j2, %k] : memref<?x?xf64>
      %aa = arith.mulf %alpha, %a1 : f64
      %p = arith.mulf %aa, %a2 : f64
      %s = arith.addf %c, %p : f64
      krnl.store %s, %C[%i, %j2] : memref<?x?xf64>
    }
  }
  return
}
