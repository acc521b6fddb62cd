// 2mm: D := alpha * A * B * C + beta * D, through tmp := alpha * A * B, with
// A NI x NK, B NK x NJ, tmp NI x NJ, C NJ x NL, D NI x NL.
//
// Follows PolyBench 4.2 linear-algebra/kernels/2mm/2mm.c (kernel_2mm): for i, j:
// tmp[i][j] = 0, then for k: tmp[i][j] += alpha * A[i][k] * B[k][j]; then for i, j:
// D[i][j] *= beta, then for k: D[i][j] += tmp[i][k] * C[k][j]. (`x += e` is
// evaluated as x + e, `alpha * A * B` as (alpha * A) * B, as C does.)
//
// @two_mm is that program as written.
// @two_mm_tiled computes the same thing with a Krnl recipe. In each product the
// initialisation (tmp = 0, D *= beta) runs first as its own i, j nest (loop
// distribution of i, j; legal: element (i, j) is only touched by iteration (i, j),
// where the initialisation comes first), so that the update nests i, j, k are
// perfect; each is tiled 32x32x32 with tile loops ib, jb, kb and point loops
// il, kl, jl. Legal: the only dependences inside an update nest are on its target
// element along k (distance (0, 0, +) in i, j, k), so the band is permutable, and
// every element still sees its k updates in increasing k: the results are
// bitwise those of @two_mm.
func.func @two_mm(%NI: index, %NJ: index, %NK: index, %NL: index, %alpha: f64, %beta: f64, %tmp: memref<?x?xf64>, %A: memref<?x?xf64>, %B: memref<?x?xf64>, %C: memref<?x?xf64>, %D: memref<?x?xf64>) {
  %zero = arith.constant 0.0 : f64
  %ii, %jj, %kk, %ii2, %jj2, %kk2 = krnl.define_loops 6
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to %NI, %jj -> %j = 0 to %NJ) {
    krnl.store %zero, %tmp[%i, %j] : memref<?x?xf64>
    krnl.iterate(%kk) with (%kk -> %k = 0 to %NK) {
      %t = krnl.load %tmp[%i, %j] : memref<?x?xf64>
      %a = krnl.load %A[%i, %k] : memref<?x?xf64>
      %b = krnl.load %B[%k, %j] : memref<?x?xf64>
      %aa = arith.mulf %alpha, %a : f64
      %p = arith.mulf %aa, %b : f64
      %s = arith.addf %t, %p : f64
      krnl.store %s, %tmp[%i, %j] : memref<?x?xf64>
    }
  }
  krnl.iterate(%ii2, %jj2) with (%ii2 -> %i2 = 0 to %NI, %jj2 -> %j2 = 0 to %NL) {
    %d = krnl.load %D[%i2, %j2] : memref<?x?xf64>
    %db = arith.mulf %d, %beta : f64
    krnl.store %db, %D[%i2, %j2] : memref<?x?xf64>
    krnl.iterate(%kk2) with (%kk2 -> %k2 = 0 to %NJ) {
      %d2 = krnl.load %D[%i2, %j2] : memref<?x?xf64>
      %t = krnl.load %tmp[%i2, %k2] : memref<?x?xf64>
      %c = krnl.load %C[%k2, %j2] : memref<?x?xf64>
      %p = arith.mulf %t, %c : f64
      %s = arith.addf %d2, %p : f64
      krnl.store %s, %D[%i2, %j2] : memref<?x?xf64>
    }
  }
  return
}

func.func @two_mm_tiled(%NI: index, %NJ: index, %NK: index, %NL: index, %alpha: f64, %beta: f64, %tmp: memref<?x?xf64>, %A: memref<?x?xf64>, %B: memref<?x?xf64>, %C: memref<?x?xf64>, %D: memref<?x?xf64>) {
  %zero = arith.constant 0.0 : f64
  %ii0, %jj0 = krnl.define_loops 2
  krnl.iterate(%ii0, %jj0) with (%ii0 -> %i0 = 0 to %NI, %jj0 -> %j0 = 0 to %NJ) {
    krnl.store %zero, %tmp[%i0, %j0] : memref<?x?xf64>
  }
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl, %kb, %kl) [0, 3, 1, 5, 2, 4] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %kb, %il, %kl, %jl) with (%ii -> %i = 0 to %NI, %jj -> %j = 0 to %NJ, %kk -> %k = 0 to %NK) {
    %t = krnl.load %tmp[%i, %j] : memref<?x?xf64>
    %a = krnl.load %A[%i, %k] : memref<?x?xf64>
    %b = krnl.load %B[%k, %j] : memref<?x?xf64>
    %aa = arith.mulf %alpha, %a : f64
    %p = arith.mulf %aa, %b : f64
    %s = arith.addf %t, %p : f64
    krnl.store %s, %tmp[%i, %j] : memref<?x?xf64>
  }
  %ii1, %jj1 = krnl.define_loops 2
  krnl.iterate(%ii1, %jj1) with (%ii1 -> %i1 = 0 to %NI, %jj1 -> %j1 = 0 to %NL) {
    %d = krnl.load %D[%i1, %j1] : memref<?x?xf64>
    %db = arith.mulf %d, %beta : f64
    krnl.store %db, %D[%i1, %j1] : memref<?x?xf64>
  }
  %ii2, %jj2, %kk2 = krnl.define_loops 3
  %ib2, %il2 = krnl.block %ii2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb2, %jl2 = krnl.block %jj2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb2, %kl2 = krnl.block %kk2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib2, %il2, %jb2, %jl2, %kb2, %kl2) [0, 3, 1, 5, 2, 4] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib2, %jb2, %kb2, %il2, %kl2, %jl2) with (%ii2 -> %i2 = 0 to %NI, %jj2 -> %j2 = 0 to %NL, %kk2 -> %k2 = 0 to %NJ) {
    %d2 = krnl.load %D[%i2, %j2] : memref<?x?xf64>
    %t = krnl.load %tmp[%i2, %k2] : memref<?x?xf64>
    %c = krnl.load %C[%k2, %j2] : memref<?x?xf64>
    %p = arith.mulf %t, %c : f64
    %s = arith.addf %d2, %p : f64
    krnl.store %s, %D[%i2, %j2] : memref<?x?xf64>
  }
  return
}
