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
// krnl.iterate (j's bound i + 1 uses only the enclosing i) and tiled 32x32 as
// kb, jb, kl, jl. Legal: inside one row the only dependences are on C[i][j]
// along k (distance (+, 0) in k, j), so the band is permutable, and every
// C[i][j] still sees its k updates in increasing k: the results are bitwise those
// of @syrk. The i loop is not tiled with them: j's bound uses i, so i stays
// outside every j loop; and a 3-D order such as ib, kb, il, jb, kl, jl (with the
// scaling distributed out, i and k in one krnl.iterate and j in the nested one
// that its bound needs) is refused by polykrnl, whose
// krnl.permute only reorders loops of one krnl.iterate ("krnl.permute operands
// must form a perfectly nested chain in the current order, but %jb is not
// directly inside %kl"), although the concrete loop of %jb is the only thing
// in the loop of %kl.
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
  %kb, %kl = krnl.block %kk 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%kb, %kl, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    krnl.iterate(%jj) with (%jj -> %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i)) {
      %c = krnl.load %C[%i, %j] : memref<?x?xf64>
      %cb = arith.mulf %c, %beta : f64
      krnl.store %cb, %C[%i, %j] : memref<?x?xf64>
    }
    krnl.iterate(%kb, %jb, %kl, %jl) with (%kk -> %k = 0 to %M, %jj2 -> %j2 = 0 to affine_map<(d0) -> (d0 + 1)>(%i)) {
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
