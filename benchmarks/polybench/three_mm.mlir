// 3mm: G := (A * B) * (C * D) through E := A * B and F := C * D, with
// A NI x NK, B NK x NJ, E NI x NJ, C NJ x NM, D NM x NL, F NJ x NL, G NI x NL.
//
// Follows PolyBench 4.2 linear-algebra/kernels/3mm/3mm.c (kernel_3mm): three
// products one after the other, each written for i, j: X[i][j] = 0, then for k:
// X[i][j] += Y[i][k] * Z[k][j] (evaluated as X + Y * Z, as C does).
//
// @three_mm is that program as written.
// @three_mm_tiled computes the same thing with a Krnl recipe. In each product the
// zero initialisation runs first as its own i, j nest (loop distribution of i, j;
// legal: element (i, j) is only touched by iteration (i, j), where the
// initialisation comes first), so that the update nests i, j, k are perfect; each
// is tiled 32x32x32 with tile loops ib, jb, kb and point loops il, kl, jl. Legal:
// the only dependences inside an update nest are on its target element along k
// (distance (0, 0, +) in i, j, k), so the band is permutable, and every element
// still sees its k updates in increasing k: the results are bitwise those of
// @three_mm.
func.func @three_mm(%NI: index, %NJ: index, %NK: index, %NL: index, %NM: index, %E: memref<?x?xf64>, %A: memref<?x?xf64>, %B: memref<?x?xf64>, %F: memref<?x?xf64>, %C: memref<?x?xf64>, %D: memref<?x?xf64>, %G: memref<?x?xf64>) {
  %zero = arith.constant 0.0 : f64
  %ii, %jj, %kk, %ii2, %jj2, %kk2, %ii3, %jj3, %kk3 = krnl.define_loops 9
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to %NI, %jj -> %j = 0 to %NJ) {
    krnl.store %zero, %E[%i, %j] : memref<?x?xf64>
    krnl.iterate(%kk) with (%kk -> %k = 0 to %NK) {
      %e = krnl.load %E[%i, %j] : memref<?x?xf64>
      %a = krnl.load %A[%i, %k] : memref<?x?xf64>
      %b = krnl.load %B[%k, %j] : memref<?x?xf64>
      %p = arith.mulf %a, %b : f64
      %s = arith.addf %e, %p : f64
      krnl.store %s, %E[%i, %j] : memref<?x?xf64>
    }
  }
  krnl.iterate(%ii2, %jj2) with (%ii2 -> %i2 = 0 to %NJ, %jj2 -> %j2 = 0 to %NL) {
    krnl.store %zero, %F[%i2, %j2] : memref<?x?xf64>
    krnl.iterate(%kk2) with (%kk2 -> %k2 = 0 to %NM) {
      %f = krnl.load %F[%i2, %j2] : memref<?x?xf64>
      %c = krnl.load %C[%i2, %k2] : memref<?x?xf64>
      %d = krnl.load %D[%k2, %j2] : memref<?x?xf64>
      %p = arith.mulf %c, %d : f64
      %s = arith.addf %f, %p : f64
      krnl.store %s, %F[%i2, %j2] : memref<?x?xf64>
    }
  }
  krnl.iterate(%ii3, %jj3) with (%ii3 -> %i3 = 0 to %NI, %jj3 -> %j3 = 0 to %NL) {
    krnl.store %zero, %G[%i3, %j3] : memref<?x?xf64>
    krnl.iterate(%kk3) with (%kk3 -> %k3 = 0 to %NJ) {
      %g = krnl.load %G[%i3, %j3] : memref<?x?xf64>
      %e = krnl.load %E[%i3, %k3] : memref<?x?xf64>
      %f = krnl.load %F[%k3, %j3] : memref<?x?xf64>
      %p = arith.mulf %e, %f : f64
      %s = arith.addf %g, %p : f64
      krnl.store %s, %G[%i3, %j3] : memref<?x?xf64>
    }
  }
  return
}

func.func @three_mm_tiled(%NI: index, %NJ: index, %NK: index, %NL: index, %NM: index, %E: memref<?x?xf64>, %A: memref<?x?xf64>, %B: memref<?x?xf64>, %F: memref<?x?xf64>, %C: memref<?x?xf64>, %D: memref<?x?xf64>, %G: memref<?x?xf64>) {
  %zero = arith.constant 0.0 : f64
  %ii0, %jj0 = krnl.define_loops 2
  krnl.iterate(%ii0, %jj0) with (%ii0 -> %i0 = 0 to %NI, %jj0 -> %j0 = 0 to %NJ) {
    krnl.store %zero, %E[%i0, %j0] : memref<?x?xf64>
  }
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl, %kb, %kl) [0, 3, 1, 5, 2, 4] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %kb, %il, %kl, %jl) with (%ii -> %i = 0 to %NI, %jj -> %j = 0 to %NJ, %kk -> %k = 0 to %NK) {
    %e = krnl.load %E[%i, %j] : memref<?x?xf64>
    %a = krnl.load %A[%i, %k] : memref<?x?xf64>
    %b = krnl.load %B[%k, %j] : memref<?x?xf64>
    %p = arith.mulf %a, %b : f64
    %s = arith.addf %e, %p : f64
    krnl.store %s, %E[%i, %j] : memref<?x?xf64>
  }
  %ii1, %jj1 = krnl.define_loops 2
  krnl.iterate(%ii1, %jj1) with (%ii1 -> %i1 = 0 to %NJ, %jj1 -> %j1 = 0 to %NL) {
    krnl.store %zero, %F[%i1, %j1] : memref<?x?xf64>
  }
  %ii2, %jj2, %kk2 = krnl.define_loops 3
  %ib2, %il2 = krnl.block %ii2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb2, %jl2 = krnl.block %jj2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb2, %kl2 = krnl.block %kk2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib2, %il2, %jb2, %jl2, %kb2, %kl2) [0, 3, 1, 5, 2, 4] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib2, %jb2, %kb2, %il2, %kl2, %jl2) with (%ii2 -> %i2 = 0 to %NJ, %jj2 -> %j2 = 0 to %NL, %kk2 -> %k2 = 0 to %NM) {
    %f = krnl.load %F[%i2, %j2] : memref<?x?xf64>
    %c = krnl.load %C[%i2, %k2] : memref<?x?xf64>
    %d = krnl.load %D[%k2, %j2] : memref<?x?xf64>
    %p = arith.mulf %c, %d : f64
    %s = arith.addf %f, %p : f64
    krnl.store %s, %F[%i2, %j2] : memref<?x?xf64>
  }
  %ii4, %jj4 = krnl.define_loops 2
  krnl.iterate(%ii4, %jj4) with (%ii4 -> %i4 = 0 to %NI, %jj4 -> %j4 = 0 to %NL) {
    krnl.store %zero, %G[%i4, %j4] : memref<?x?xf64>
  }
  %ii3, %jj3, %kk3 = krnl.define_loops 3
  %ib3, %il3 = krnl.block %ii3 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb3, %jl3 = krnl.block %jj3 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb3, %kl3 = krnl.block %kk3 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib3, %il3, %jb3, %jl3, %kb3, %kl3) [0, 3, 1, 5, 2, 4] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib3, %jb3, %kb3, %il3, %kl3, %jl3) with (%ii3 -> %i3 = 0 to %NI, %jj3 -> %j3 = 0 to %NL, %kk3 -> %k3 = 0 to %NJ) {
    %g = krnl.load %G[%i3, %j3] : memref<?x?xf64>
    %e = krnl.load %E[%i3, %k3] : memref<?x?xf64>
    %f = krnl.load %F[%k3, %j3] : memref<?x?xf64>
    %p = arith.mulf %e, %f : f64
    %s = arith.addf %g, %p : f64
    krnl.store %s, %G[%i3, %j3] : memref<?x?xf64>
  }
  return
}
