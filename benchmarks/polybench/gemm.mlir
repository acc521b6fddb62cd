// gemm: C := alpha * A * B + beta * C, with A NI x NK, B NK x NJ, C NI x NJ.
//
// Follows PolyBench 4.2 linear-algebra/blas/gemm/gemm.c (kernel_gemm): per row i,
// first C[i][j] *= beta for every j, then for k, for j:
// C[i][j] += alpha * A[i][k] * B[k][j] (evaluated as C + (alpha * A) * B, as C does).
//
// @gemm is that loop nest as written (i { j; k { j } }).
// @gemm_tiled computes the same thing with a Krnl recipe. The beta scaling runs
// first, as its own i, j nest (loop distribution of i; legal: row i is only
// touched by the i-th iteration, and there the scaling comes first), so that
// the update nest i, k, j is perfect and can be tiled 32x32x32 with tile loops
// ib, jb, kb and point loops il, kl, jl. Legal: the only dependences of the
// update are on C[i][j] along k (distance (0, +, 0) in i, k, j), all
// non-negative, so the band is permutable; every C[i][j] still sees its k
// updates in increasing k, so the results are bitwise those of @gemm.
func.func @gemm(%NI: index, %NJ: index, %NK: index, %alpha: f64, %beta: f64, %C: memref<?x?xf64>, %A: memref<?x?xf64>, %B: memref<?x?xf64>) {
  %ii, %jj, %kk, %jj2 = krnl.define_loops 4
  krnl.iterate(%ii) with (%ii -> %i = 0 to %NI) {
    krnl.iterate(%jj) with (%jj -> %j = 0 to %NJ) {
      %c = krnl.load %C[%i, %j] : memref<?x?xf64>
      %cb = arith.mulf %c, %beta : f64
      krnl.store %cb, %C[%i, %j] : memref<?x?xf64>
    }
    krnl.iterate(%kk) with (%kk -> %k = 0 to %NK) {
      krnl.iterate(%jj2) with (%jj2 -> %j2 = 0 to %NJ) {
        %c = krnl.load %C[%i, %j2] : memref<?x?xf64>
        %a = krnl.load %A[%i, %k] : memref<?x?xf64>
        %b = krnl.load %B[%k, %j2] : memref<?x?xf64>
        %aa = arith.mulf %alpha, %a : f64
        %p = arith.mulf %aa, %b : f64
        %s = arith.addf %c, %p : f64
        krnl.store %s, %C[%i, %j2] : memref<?x?xf64>
      }
    }
  }
  return
}

func.func @gemm_tiled(%NI: index, %NJ: index, %NK: index, %alpha: f64, %beta: f64, %C: memref<?x?xf64>, %A: memref<?x?xf64>, %B: memref<?x?xf64>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to %NI, %jj -> %j = 0 to %NJ) {
    %c = krnl.load %C[%i, %j] : memref<?x?xf64>
    %cb = arith.mulf %c, %beta : f64
    krnl.store %cb, %C[%i, %j] : memref<?x?xf64>
  }
  %ii2, %kk, %jj2 = krnl.define_loops 3
  %ib, %il = krnl.block %ii2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %kb, %kl, %jb, %jl) [0, 3, 2, 4, 1, 5] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %kb, %il, %kl, %jl) with (%ii2 -> %i2 = 0 to %NI, %kk -> %k = 0 to %NK, %jj2 -> %j2 = 0 to %NJ) {
    %c = krnl.load %C[%i2, %j2] : memref<?x?xf64>
    %a = krnl.load %A[%i2, %k] : memref<?x?xf64>
    %b = krnl.load %B[%k, %j2] : memref<?x?xf64>
    %aa = arith.mulf %alpha, %a : f64
    %p = arith.mulf %aa, %b : f64
    %s = arith.addf %c, %p : f64
    krnl.store %s, %C[%i2, %j2] : memref<?x?xf64>
  }
  return
}
