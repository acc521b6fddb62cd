// mvt: two matrix-vector products, x1 := x1 + A * y1 and x2 := x2 + A^T * y2,
// with A N x N and vectors of size N.
//
// Follows PolyBench 4.2 linear-algebra/kernels/mvt/mvt.c (kernel_mvt): for i, j:
// x1[i] = x1[i] + A[i][j] * y_1[j]; then for i, j: x2[i] = x2[i] + A[j][i] * y_2[j].
// PolyBench's y_1 and y_2 are called y1 and y2 here: polykrnl (through xDSL)
// reads an SSA name ending in `_<digits>` as a numbered copy of the name before
// it, so %y_1 and %y_2 would both become arguments named "y".
//
// @mvt is that program as written.
// @mvt_tiled tiles both nests 32x32: the first as ib, jb, il, jl, the second as
// ib, jb, jl, il (its point loops interchanged, so that the innermost loop walks
// the rows of A[j][i] with stride 1). Legal: x1[i] and x2[i] are only carried
// along j (distance (0, +) in i, j), so both bands are permutable, and every
// element still sees its j updates in increasing j: the results are bitwise those
// of @mvt.
func.func @mvt(%N: index, %x1: memref<?xf64>, %x2: memref<?xf64>, %y1: memref<?xf64>, %y2: memref<?xf64>, %A: memref<?x?xf64>) {
  %ii, %jj, %ii2, %jj2 = krnl.define_loops 4
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to %N, %jj -> %j = 0 to %N) {
    %x = krnl.load %x1[%i] : memref<?xf64>
    %a = krnl.load %A[%i, %j] : memref<?x?xf64>
    %y = krnl.load %y1[%j] : memref<?xf64>
    %p = arith.mulf %a, %y : f64
    %s = arith.addf %x, %p : f64
    krnl.store %s, %x1[%i] : memref<?xf64>
  }
  krnl.iterate(%ii2, %jj2) with (%ii2 -> %i2 = 0 to %N, %jj2 -> %j2 = 0 to %N) {
    %x = krnl.load %x2[%i2] : memref<?xf64>
    %a = krnl.load %A[%j2, %i2] : memref<?x?xf64>
    %y = krnl.load %y2[%j2] : memref<?xf64>
    %p = arith.mulf %a, %y : f64
    %s = arith.addf %x, %p : f64
    krnl.store %s, %x2[%i2] : memref<?xf64>
  }
  return
}

func.func @mvt_tiled(%N: index, %x1: memref<?xf64>, %x2: memref<?xf64>, %y1: memref<?xf64>, %y2: memref<?xf64>, %A: memref<?x?xf64>) {
  %ii, %jj, %ii2, %jj2 = krnl.define_loops 4
  %ib, %il = krnl.block %ii 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %il, %jl) with (%ii -> %i = 0 to %N, %jj -> %j = 0 to %N) {
    %x = krnl.load %x1[%i] : memref<?xf64>
    %a = krnl.load %A[%i, %j] : memref<?x?xf64>
    %y = krnl.load %y1[%j] : memref<?xf64>
    %p = arith.mulf %a, %y : f64
    %s = arith.addf %x, %p : f64
    krnl.store %s, %x1[%i] : memref<?xf64>
  }
  %ib2, %il2 = krnl.block %ii2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb2, %jl2 = krnl.block %jj2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib2, %il2, %jb2, %jl2) [0, 3, 1, 2] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib2, %jb2, %jl2, %il2) with (%ii2 -> %i2 = 0 to %N, %jj2 -> %j2 = 0 to %N) {
    %x = krnl.load %x2[%i2] : memref<?xf64>
    %a = krnl.load %A[%j2, %i2] : memref<?x?xf64>
    %y = krnl.load %y2[%j2] : memref<?xf64>
    %p = arith.mulf %a, %y : f64
    %s = arith.addf %x, %p : f64
    krnl.store %s, %x2[%i2] : memref<?xf64>
  }
  return
}
