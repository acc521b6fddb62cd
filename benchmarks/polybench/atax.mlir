// atax: y := A^T * (A * x), with A M x N, x and y of size N, tmp of size M.
//
// Follows PolyBench 4.2 linear-algebra/kernels/atax/atax.c (kernel_atax): for i < N:
// y[i] = 0; then for each row i < M: tmp[i] = 0, for j: tmp[i] = tmp[i] + A[i][j] *
// x[j], then for j: y[j] = y[j] + A[i][j] * tmp[i].
//
// @atax is that program as written (the row loop holds the two j loops).
// @atax_tiled computes the same thing with a Krnl recipe. The row loop is
// distributed: tmp = 0, then the whole tmp = A * x nest, then the whole
// y += A^T * tmp nest (legal: the y part of row i only reads tmp[i], final once
// the tmp part of row i has run, and the tmp part never reads y), so that both
// products are perfect i, j nests; each is tiled 32x32 (ib, jb, il, jl). Legal:
// tmp[i] is only carried along j (distance (0, +)), y[j] only along i ((+, 0)),
// so both bands are permutable, and every element still sees its updates in the
// original order: the results are bitwise those of @atax.
func.func @atax(%M: index, %N: index, %A: memref<?x?xf64>, %x: memref<?xf64>, %y: memref<?xf64>, %tmp: memref<?xf64>) {
  %zero = arith.constant 0.0 : f64
  %ii0, %ii, %jj, %jj2 = krnl.define_loops 4
  krnl.iterate(%ii0) with (%ii0 -> %i0 = 0 to %N) {
    krnl.store %zero, %y[%i0] : memref<?xf64>
  }
  krnl.iterate(%ii) with (%ii -> %i = 0 to %M) {
    krnl.store %zero, %tmp[%i] : memref<?xf64>
    krnl.iterate(%jj) with (%jj -> %j = 0 to %N) {
      %t = krnl.load %tmp[%i] : memref<?xf64>
      %a = krnl.load %A[%i, %j] : memref<?x?xf64>
      %xv = krnl.load %x[%j] : memref<?xf64>
      %p = arith.mulf %a, %xv : f64
      %s = arith.addf %t, %p : f64
      krnl.store %s, %tmp[%i] : memref<?xf64>
    }
    krnl.iterate(%jj2) with (%jj2 -> %j2 = 0 to %N) {
      %yv = krnl.load %y[%j2] : memref<?xf64>
      %a = krnl.load %A[%i, %j2] : memref<?x?xf64>
      %t = krnl.load %tmp[%i] : memref<?xf64>
      %p = arith.mulf %a, %t : f64
      %s = arith.addf %yv, %p : f64
      krnl.store %s, %y[%j2] : memref<?xf64>
    }
  }
  return
}

func.func @atax_tiled(%M: index, %N: index, %A: memref<?x?xf64>, %x: memref<?xf64>, %y: memref<?xf64>, %tmp: memref<?xf64>) {
  %zero = arith.constant 0.0 : f64
  %ii0, %ii1 = krnl.define_loops 2
  krnl.iterate(%ii0) with (%ii0 -> %i0 = 0 to %N) {
    krnl.store %zero, %y[%i0] : memref<?xf64>
  }
  krnl.iterate(%ii1) with (%ii1 -> %i1 = 0 to %M) {
    krnl.store %zero, %tmp[%i1] : memref<?xf64>
  }
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %il, %jl) with (%ii -> %i = 0 to %M, %jj -> %j = 0 to %N) {
    %t = krnl.load %tmp[%i] : memref<?xf64>
    %a = krnl.load %A[%i, %j] : memref<?x?xf64>
    %xv = krnl.load %x[%j] : memref<?xf64>
    %p = arith.mulf %a, %xv : f64
    %s = arith.addf %t, %p : f64
    krnl.store %s, %tmp[%i] : memref<?xf64>
  }
  %ii2, %jj2 = krnl.define_loops 2
  %ib2, %il2 = krnl.block %ii2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb2, %jl2 = krnl.block %jj2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib2, %il2, %jb2, %jl2) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib2, %jb2, %il2, %jl2) with (%ii2 -> %i2 = 0 to %M, %jj2 -> %j2 = 0 to %N) {
    %yv = krnl.load %y[%j2] : memref<?xf64>
    %a = krnl.load %A[%i2, %j2] : memref<?x?xf64>
    %t = krnl.load %tmp[%i2] : memref<?xf64>
    %p = arith.mulf %a, %t : f64
    %s = arith.addf %yv, %p : f64
    krnl.store %s, %y[%j2] : memref<?xf64>
  }
  return
}
