// bicg: the BiCG sub-kernel s := A^T * r and q := A * p, with A N x M, s and p of
// size M, q and r of size N.
//
// Follows PolyBench 4.2 linear-algebra/kernels/bicg/bicg.c (kernel_bicg): for
// i < M: s[i] = 0; then for each row i < N: q[i] = 0, then for j:
// s[j] = s[j] + r[i] * A[i][j] and q[i] = q[i] + A[i][j] * p[j].
//
// @bicg is that program as written.
// @bicg_tiled computes the same thing with a Krnl recipe. The q[i] = 0 statement
// runs first as its own loop (loop distribution of i; legal: q[i] is only touched
// by row i, where the initialisation comes first), so that the update nest i, j
// is perfect; it is tiled 32x32 (ib, jb, il, jl). Legal: s[j] is only carried
// along i (distance (+, 0)), q[i] only along j ((0, +)), so the band is
// permutable, and every element still sees its updates in the original order:
// the results are bitwise those of @bicg.
func.func @bicg(%M: index, %N: index, %A: memref<?x?xf64>, %s: memref<?xf64>, %q: memref<?xf64>, %p: memref<?xf64>, %r: memref<?xf64>) {
  %zero = arith.constant 0.0 : f64
  %ii0, %ii, %jj = krnl.define_loops 3
  krnl.iterate(%ii0) with (%ii0 -> %i0 = 0 to %M) {
    krnl.store %zero, %s[%i0] : memref<?xf64>
  }
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    krnl.store %zero, %q[%i] : memref<?xf64>
    krnl.iterate(%jj) with (%jj -> %j = 0 to %M) {
      %sv = krnl.load %s[%j] : memref<?xf64>
      %rv = krnl.load %r[%i] : memref<?xf64>
      %a = krnl.load %A[%i, %j] : memref<?x?xf64>
      %ra = arith.mulf %rv, %a : f64
      %s1 = arith.addf %sv, %ra : f64
      krnl.store %s1, %s[%j] : memref<?xf64>
      %qv = krnl.load %q[%i] : memref<?xf64>
      %a2 = krnl.load %A[%i, %j] : memref<?x?xf64>
      %pv = krnl.load %p[%j] : memref<?xf64>
      %ap = arith.mulf %a2, %pv : f64
      %q1 = arith.addf %qv, %ap : f64
      krnl.store %q1, %q[%i] : memref<?xf64>
    }
  }
  return
}

func.func @bicg_tiled(%M: index, %N: index, %A: memref<?x?xf64>, %s: memref<?xf64>, %q: memref<?xf64>, %p: memref<?xf64>, %r: memref<?xf64>) {
  %zero = arith.constant 0.0 : f64
  %ii0, %ii1 = krnl.define_loops 2
  krnl.iterate(%ii0) with (%ii0 -> %i0 = 0 to %M) {
    krnl.store %zero, %s[%i0] : memref<?xf64>
  }
  krnl.iterate(%ii1) with (%ii1 -> %i1 = 0 to %N) {
    krnl.store %zero, %q[%i1] : memref<?xf64>
  }
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %il, %jl) with (%ii -> %i = 0 to %N, %jj -> %j = 0 to %M) {
    %sv = krnl.load %s[%j] : memref<?xf64>
    %rv = krnl.load %r[%i] : memref<?xf64>
    %a = krnl.load %A[%i, %j] : memref<?x?xf64>
    %ra = arith.mulf %rv, %a : f64
    %s1 = arith.addf %sv, %ra : f64
    krnl.store %s1, %s[%j] : memref<?xf64>
    %qv = krnl.load %q[%i] : memref<?xf64>
    %a2 = krnl.load %A[%i, %j] : memref<?x?xf64>
    %pv = krnl.load %p[%j] : memref<?xf64>
    %ap = arith.mulf %a2, %pv : f64
    %q1 = arith.addf %qv, %ap : f64
    krnl.store %q1, %q[%i] : memref<?xf64>
  }
  return
}
