// jacobi-1d: TSTEPS time steps of the 3-point Jacobi stencil on a 1-D grid of N
// points, ping-ponging between A and B (the end points are boundary values).
//
// Follows PolyBench 4.2 stencils/jacobi-1d/jacobi-1d.c (kernel_jacobi_1d): for t <
// TSTEPS: for 1 <= i < N - 1: B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]); then
// for 1 <= i < N - 1: A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]). The constant
// is PolyBench's 0.33333, not 1/3; the sums are evaluated left to right.
//
// @jacobi_1d is that program as written.
// @jacobi_1d_tiled blocks both spatial loops by 32 inside the time loop (ib, il).
// A 1-D loop has nothing to permute, and the time loop cannot be tiled with the
// spatial loops: it carries dependences of distance (1, -1) on the arrays, so a
// rectangular time tile is illegal without skewing, which Krnl cannot express;
// in Krnl, t and i are not even one band (two sibling i loops per time step).
// Strip-mining keeps the order of every instance: legal, bitwise the results of
// @jacobi_1d.
func.func @jacobi_1d(%TSTEPS: index, %N: index, %A: memref<?xf64>, %B: memref<?xf64>) {
  %c = arith.constant 0.33333 : f64
  %tt, %ii, %ii2 = krnl.define_loops 3
  krnl.iterate(%tt) with (%tt -> %t = 0 to %TSTEPS) {
    krnl.iterate(%ii) with (%ii -> %i = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N]) {
      %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
      %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
      %l = krnl.load %A[%im] : memref<?xf64>
      %m = krnl.load %A[%i] : memref<?xf64>
      %r = krnl.load %A[%ip] : memref<?xf64>
      %s1 = arith.addf %l, %m : f64
      %s2 = arith.addf %s1, %r : f64
      %v = arith.mulf %c, %s2 : f64
      krnl.store %v, %B[%i] : memref<?xf64>
    }
    krnl.iterate(%ii2) with (%ii2 -> %i2 = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N]) {
      %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i2)
      %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i2)
      %l = krnl.load %B[%im] : memref<?xf64>
      %m = krnl.load %B[%i2] : memref<?xf64>
      %r = krnl.load %B[%ip] : memref<?xf64>
      %s1 = arith.addf %l, %m : f64
      %s2 = arith.addf %s1, %r : f64
      %v = arith.mulf %c, %s2 : f64
      krnl.store %v, %A[%i2] : memref<?xf64>
    }
  }
  return
}

func.func @jacobi_1d_tiled(%TSTEPS: index, %N: index, %A: memref<?xf64>, %B: memref<?xf64>) {
  %c = arith.constant 0.33333 : f64
  %tt, %ii, %ii2 = krnl.define_loops 3
  %ib, %il = krnl.block %ii 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %ib2, %il2 = krnl.block %ii2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%tt) with (%tt -> %t = 0 to %TSTEPS) {
    krnl.iterate(%ib, %il) with (%ii -> %i = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N]) {
      %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
      %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
      %l = krnl.load %A[%im] : memref<?xf64>
      %m = krnl.load %A[%i] : memref<?xf64>
      %r = krnl.load %A[%ip] : memref<?xf64>
      %s1 = arith.addf %l, %m : f64
      %s2 = arith.addf %s1, %r : f64
      %v = arith.mulf %c, %s2 : f64
      krnl.store %v, %B[%i] : memref<?xf64>
    }
    krnl.iterate(%ib2, %il2) with (%ii2 -> %i2 = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N]) {
      %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i2)
      %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i2)
      %l = krnl.load %B[%im] : memref<?xf64>
      %m = krnl.load %B[%i2] : memref<?xf64>
      %r = krnl.load %B[%ip] : memref<?xf64>
      %s1 = arith.addf %l, %m : f64
      %s2 = arith.addf %s1, %r : f64
      %v = arith.mulf %c, %s2 : f64
      krnl.store %v, %A[%i2] : memref<?xf64>
    }
  }
  return
}
