// gemver: A := A + u1 * v1^T + u2 * v2^T, x := x + beta * A^T * y + z,
// w := w + alpha * A * x, with A N x N and vectors of size N.
//
// Follows PolyBench 4.2 linear-algebra/blas/gemver/gemver.c (kernel_gemver), four
// loop nests in this order: for i, j: A[i][j] = A[i][j] + u1[i] * v1[j] + u2[i] *
// v2[j]; for i, j: x[i] = x[i] + beta * A[j][i] * y[j]; for i: x[i] = x[i] + z[i];
// for i, j: w[i] = w[i] + alpha * A[i][j] * x[j]. (Evaluated left to right as C
// does: (A + u1 * v1) + u2 * v2, x + (beta * A) * y, w + (alpha * A) * x.)
//
// @gemver is that program as written.
// @gemver_tiled tiles the three 2-D nests 32x32: the first and the last as ib, jb,
// il, jl, the second (which reads A[j][i]) as ib, jb, jl, il, so that its innermost
// loop walks rows of A with stride 1; the 1-D x += z loop stays as it is. Legal:
// the first nest has no dependence between its instances, the others only carry
// x[i] / w[i] along j (distance (0, +) in i, j), so every band is permutable, and
// every element still sees its updates in the original order: the results are
// bitwise those of @gemver.
func.func @gemver(%N: index, %alpha: f64, %beta: f64, %A: memref<?x?xf64>, %u1: memref<?xf64>, %v1: memref<?xf64>, %u2: memref<?xf64>, %v2: memref<?xf64>, %w: memref<?xf64>, %x: memref<?xf64>, %y: memref<?xf64>, %z: memref<?xf64>) {
  %ii, %jj, %ii2, %jj2, %ii3, %ii4, %jj4 = krnl.define_loops 7
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to %N, %jj -> %j = 0 to %N) {
    %a = krnl.load %A[%i, %j] : memref<?x?xf64>
    %u1i = krnl.load %u1[%i] : memref<?xf64>
    %v1j = krnl.load %v1[%j] : memref<?xf64>
    %u2i = krnl.load %u2[%i] : memref<?xf64>
    %v2j = krnl.load %v2[%j] : memref<?xf64>
    %p1 = arith.mulf %u1i, %v1j : f64
    %s1 = arith.addf %a, %p1 : f64
    %p2 = arith.mulf %u2i, %v2j : f64
    %s2 = arith.addf %s1, %p2 : f64
    krnl.store %s2, %A[%i, %j] : memref<?x?xf64>
  }
  krnl.iterate(%ii2, %jj2) with (%ii2 -> %i2 = 0 to %N, %jj2 -> %j2 = 0 to %N) {
    %xi = krnl.load %x[%i2] : memref<?xf64>
    %a = krnl.load %A[%j2, %i2] : memref<?x?xf64>
    %yj = krnl.load %y[%j2] : memref<?xf64>
    %ba = arith.mulf %beta, %a : f64
    %p = arith.mulf %ba, %yj : f64
    %s = arith.addf %xi, %p : f64
    krnl.store %s, %x[%i2] : memref<?xf64>
  }
  krnl.iterate(%ii3) with (%ii3 -> %i3 = 0 to %N) {
    %xi = krnl.load %x[%i3] : memref<?xf64>
    %zi = krnl.load %z[%i3] : memref<?xf64>
    %s = arith.addf %xi, %zi : f64
    krnl.store %s, %x[%i3] : memref<?xf64>
  }
  krnl.iterate(%ii4, %jj4) with (%ii4 -> %i4 = 0 to %N, %jj4 -> %j4 = 0 to %N) {
    %wi = krnl.load %w[%i4] : memref<?xf64>
    %a = krnl.load %A[%i4, %j4] : memref<?x?xf64>
    %xj = krnl.load %x[%j4] : memref<?xf64>
    %aa = arith.mulf %alpha, %a : f64
    %p = arith.mulf %aa, %xj : f64
    %s = arith.addf %wi, %p : f64
    krnl.store %s, %w[%i4] : memref<?xf64>
  }
  return
}

func.func @gemver_tiled(%N: index, %alpha: f64, %beta: f64, %A: memref<?x?xf64>, %u1: memref<?xf64>, %v1: memref<?xf64>, %u2: memref<?xf64>, %v2: memref<?xf64>, %w: memref<?xf64>, %x: memref<?xf64>, %y: memref<?xf64>, %z: memref<?xf64>) {
  %ii, %jj, %ii2, %jj2, %ii3, %ii4, %jj4 = krnl.define_loops 7
  %ib, %il = krnl.block %ii 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %il, %jl) with (%ii -> %i = 0 to %N, %jj -> %j = 0 to %N) {
    %a = krnl.load %A[%i, %j] : memref<?x?xf64>
    %u1i = krnl.load %u1[%i] : memref<?xf64>
    %v1j = krnl.load %v1[%j] : memref<?xf64>
    %u2i = krnl.load %u2[%i] : memref<?xf64>
    %v2j = krnl.load %v2[%j] : memref<?xf64>
    %p1 = arith.mulf %u1i, %v1j : f64
    %s1 = arith.addf %a, %p1 : f64
    %p2 = arith.mulf %u2i, %v2j : f64
    %s2 = arith.addf %s1, %p2 : f64
    krnl.store %s2, %A[%i, %j] : memref<?x?xf64>
  }
  %ib2, %il2 = krnl.block %ii2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb2, %jl2 = krnl.block %jj2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib2, %il2, %jb2, %jl2) [0, 3, 1, 2] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib2, %jb2, %jl2, %il2) with (%ii2 -> %i2 = 0 to %N, %jj2 -> %j2 = 0 to %N) {
    %xi = krnl.load %x[%i2] : memref<?xf64>
    %a = krnl.load %A[%j2, %i2] : memref<?x?xf64>
    %yj = krnl.load %y[%j2] : memref<?xf64>
    %ba = arith.mulf %beta, %a : f64
    %p = arith.mulf %ba, %yj : f64
    %s = arith.addf %xi, %p : f64
    krnl.store %s, %x[%i2] : memref<?xf64>
  }
  krnl.iterate(%ii3) with (%ii3 -> %i3 = 0 to %N) {
    %xi = krnl.load %x[%i3] : memref<?xf64>
    %zi = krnl.load %z[%i3] : memref<?xf64>
    %s = arith.addf %xi, %zi : f64
    krnl.store %s, %x[%i3] : memref<?xf64>
  }
  %ib4, %il4 = krnl.block %ii4 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb4, %jl4 = krnl.block %jj4 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib4, %il4, %jb4, %jl4) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib4, %jb4, %il4, %jl4) with (%ii4 -> %i4 = 0 to %N, %jj4 -> %j4 = 0 to %N) {
    %wi = krnl.load %w[%i4] : memref<?xf64>
    %a = krnl.load %A[%i4, %j4] : memref<?x?xf64>
    %xj = krnl.load %x[%j4] : memref<?xf64>
    %aa = arith.mulf %alpha, %a : f64
    %p = arith.mulf %aa, %xj : f64
    %s = arith.addf %wi, %p : f64
    krnl.store %s, %w[%i4] : memref<?xf64>
  }
  return
}
