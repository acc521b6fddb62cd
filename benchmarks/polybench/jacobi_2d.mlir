// jacobi-2d: TSTEPS time steps of the 5-point Jacobi stencil on an N x N grid,
// ping-ponging between A and B (the border rows and columns are boundary values).
//
// Follows PolyBench 4.2 stencils/jacobi-2d/jacobi-2d.c (kernel_jacobi_2d): for t <
// TSTEPS: for 1 <= i, j < N - 1: B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] +
// A[i][1 + j] + A[1 + i][j] + A[i - 1][j]); then the same from B into A. The sums
// are evaluated left to right, in PolyBench's operand order.
//
// @jacobi_2d is that program as written.
// @jacobi_2d_tiled tiles both spatial nests 32x32 inside the time loop (ib, jb,
// il, jl). Legal: inside one time step each nest reads one array and writes the
// other, so its instances are independent. The time loop is not tiled: it carries
// dependences of distance (1, -1, 0) and (1, 0, -1), illegal for rectangular time
// tiles without skewing (which Krnl cannot express), and t is not in one band
// with the sibling spatial nests anyway. Every instance computes what it computed
// before: the results are bitwise those of @jacobi_2d.
func.func @jacobi_2d(%TSTEPS: index, %N: index, %A: memref<?x?xf64>, %B: memref<?x?xf64>) {
  %c = arith.constant 0.2 : f64
  %tt, %ii, %jj, %ii2, %jj2 = krnl.define_loops 5
  krnl.iterate(%tt) with (%tt -> %t = 0 to %TSTEPS) {
    krnl.iterate(%ii, %jj) with (%ii -> %i = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N], %jj -> %j = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N]) {
      %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
      %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
      %jm = affine.apply affine_map<(d0) -> (d0 - 1)>(%j)
      %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
      %a0 = krnl.load %A[%i, %j] : memref<?x?xf64>
      %a1 = krnl.load %A[%i, %jm] : memref<?x?xf64>
      %a2 = krnl.load %A[%i, %jp] : memref<?x?xf64>
      %a3 = krnl.load %A[%ip, %j] : memref<?x?xf64>
      %a4 = krnl.load %A[%im, %j] : memref<?x?xf64>
      %s1 = arith.addf %a0, %a1 : f64
      %s2 = arith.addf %s1, %a2 : f64
      %s3 = arith.addf %s2, %a3 : f64
      %s4 = arith.addf %s3, %a4 : f64
      %v = arith.mulf %c, %s4 : f64
      krnl.store %v, %B[%i, %j] : memref<?x?xf64>
    }
    krnl.iterate(%ii2, %jj2) with (%ii2 -> %i2 = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N], %jj2 -> %j2 = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N]) {
      %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i2)
      %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i2)
      %jm = affine.apply affine_map<(d0) -> (d0 - 1)>(%j2)
      %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j2)
      %b0 = krnl.load %B[%i2, %j2] : memref<?x?xf64>
      %b1 = krnl.load %B[%i2, %jm] : memref<?x?xf64>
      %b2 = krnl.load %B[%i2, %jp] : memref<?x?xf64>
      %b3 = krnl.load %B[%ip, %j2] : memref<?x?xf64>
      %b4 = krnl.load %B[%im, %j2] : memref<?x?xf64>
      %s1 = arith.addf %b0, %b1 : f64
      %s2 = arith.addf %s1, %b2 : f64
      %s3 = arith.addf %s2, %b3 : f64
      %s4 = arith.addf %s3, %b4 : f64
      %v = arith.mulf %c, %s4 : f64
      krnl.store %v, %A[%i2, %j2] : memref<?x?xf64>
    }
  }
  return
}

func.func @jacobi_2d_tiled(%TSTEPS: index, %N: index, %A: memref<?x?xf64>, %B: memref<?x?xf64>) {
  %c = arith.constant 0.2 : f64
  %tt, %ii, %jj, %ii2, %jj2 = krnl.define_loops 5
  %ib, %il = krnl.block %ii 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  %ib2, %il2 = krnl.block %ii2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb2, %jl2 = krnl.block %jj2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib2, %il2, %jb2, %jl2) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%tt) with (%tt -> %t = 0 to %TSTEPS) {
    krnl.iterate(%ib, %jb, %il, %jl) with (%ii -> %i = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N], %jj -> %j = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N]) {
      %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
      %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
      %jm = affine.apply affine_map<(d0) -> (d0 - 1)>(%j)
      %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
      %a0 = krnl.load %A[%i, %j] : memref<?x?xf64>
      %a1 = krnl.load %A[%i, %jm] : memref<?x?xf64>
      %a2 = krnl.load %A[%i, %jp] : memref<?x?xf64>
      %a3 = krnl.load %A[%ip, %j] : memref<?x?xf64>
      %a4 = krnl.load %A[%im, %j] : memref<?x?xf64>
      %s1 = arith.addf %a0, %a1 : f64
      %s2 = arith.addf %s1, %a2 : f64
      %s3 = arith.addf %s2, %a3 : f64
      %s4 = arith.addf %s3, %a4 : f64
      %v = arith.mulf %c, %s4 : f64
      krnl.store %v, %B[%i, %j] : memref<?x?xf64>
    }
    krnl.iterate(%ib2, %jb2, %il2, %jl2) with (%ii2 -> %i2 = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N], %jj2 -> %j2 = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N]) {
      %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i2)
      %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i2)
      %jm = affine.apply affine_map<(d0) -> (d0 - 1)>(%j2)
      %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j2)
      %b0 = krnl.load %B[%i2, %j2] : memref<?x?xf64>
      %b1 = krnl.load %B[%i2, %jm] : memref<?x?xf64>
      %b2 = krnl.load %B[%i2, %jp] : memref<?x?xf64>
      %b3 = krnl.load %B[%ip, %j2] : memref<?x?xf64>
      %b4 = krnl.load %B[%im, %j2] : memref<?x?xf64>
      %s1 = arith.addf %b0, %b1 : f64
      %s2 = arith.addf %s1, %b2 : f64
      %s3 = arith.addf %s2, %b3 : f64
      %s4 = arith.addf %s3, %b4 : f64
      %v = arith.mulf %c, %s4 : f64
      krnl.store %v, %A[%i2, %j2] : memref<?x?xf64>
    }
  }
  return
}
