// heat-3d: TSTEPS time steps of the 3-D heat equation (7-point stencil) on an
// N x N x N grid, ping-ponging between A and B (the faces are boundary values).
//
// Follows PolyBench 4.2 stencils/heat-3d/heat-3d.c (kernel_heat_3d): for t = 1 ..
// TSTEPS: for 1 <= i, j, k < N - 1: B[i][j][k] = 0.125 * (A[i+1][j][k] - 2.0 *
// A[i][j][k] + A[i-1][j][k]) + 0.125 * (A[i][j+1][k] - 2.0 * A[i][j][k] +
// A[i][j-1][k]) + 0.125 * (A[i][j][k+1] - 2.0 * A[i][j][k] + A[i][j][k-1]) +
// A[i][j][k]; then the same from B into A. Evaluated as C does (left to right,
// products first); A[i][j][k] is loaded once and 2.0 * A[i][j][k] computed once
// per instance (the same values as C's repeated reads: nothing writes A there).
//
// @heat_3d is that program as written.
// @heat_3d_tiled tiles both spatial nests 16x16x16 inside the time loop (ib, jb,
// kb, il, jl, kl). Legal: inside one time step each nest reads one array and
// writes the other, so its instances are independent. The time loop is not tiled:
// it carries dependences of distance -1 in each spatial direction, illegal for
// rectangular time tiles without skewing (which Krnl cannot express). Every
// instance computes what it computed before: the results are bitwise those of
// @heat_3d.
func.func @heat_3d(%TSTEPS: index, %N: index, %A: memref<?x?x?xf64>, %B: memref<?x?x?xf64>) {
  %eighth = arith.constant 0.125 : f64
  %two = arith.constant 2.0 : f64
  %tt, %ii, %jj, %kk, %ii2, %jj2, %kk2 = krnl.define_loops 7
  krnl.iterate(%tt) with (%tt -> %t = 1 to affine_map<()[s0] -> (s0 + 1)>()[%TSTEPS]) {
    krnl.iterate(%ii, %jj, %kk) with (%ii -> %i = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N], %jj -> %j = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N], %kk -> %k = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N]) {
      %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
      %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
      %jm = affine.apply affine_map<(d0) -> (d0 - 1)>(%j)
      %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
      %km = affine.apply affine_map<(d0) -> (d0 - 1)>(%k)
      %kp = affine.apply affine_map<(d0) -> (d0 + 1)>(%k)
      %c = krnl.load %A[%i, %j, %k] : memref<?x?x?xf64>
      %c2 = arith.mulf %two, %c : f64
      %p1 = krnl.load %A[%ip, %j, %k] : memref<?x?x?xf64>
      %m1 = krnl.load %A[%im, %j, %k] : memref<?x?x?xf64>
      %d1 = arith.subf %p1, %c2 : f64
      %e1 = arith.addf %d1, %m1 : f64
      %t1 = arith.mulf %eighth, %e1 : f64
      %p2 = krnl.load %A[%i, %jp, %k] : memref<?x?x?xf64>
      %m2 = krnl.load %A[%i, %jm, %k] : memref<?x?x?xf64>
      %d2 = arith.subf %p2, %c2 : f64
      %e2 = arith.addf %d2, %m2 : f64
      %t2 = arith.mulf %eighth, %e2 : f64
      %p3 = krnl.load %A[%i, %j, %kp] : memref<?x?x?xf64>
      %m3 = krnl.load %A[%i, %j, %km] : memref<?x?x?xf64>
      %d3 = arith.subf %p3, %c2 : f64
      %e3 = arith.addf %d3, %m3 : f64
      %t3 = arith.mulf %eighth, %e3 : f64
      %s1 = arith.addf %t1, %t2 : f64
      %s2 = arith.addf %s1, %t3 : f64
      %v = arith.addf %s2, %c : f64
      krnl.store %v, %B[%i, %j, %k] : memref<?x?x?xf64>
    }
    krnl.iterate(%ii2, %jj2, %kk2) with (%ii2 -> %i2 = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N], %jj2 -> %j2 = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N], %kk2 -> %k2 = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N]) {
      %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i2)
      %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i2)
      %jm = affine.apply affine_map<(d0) -> (d0 - 1)>(%j2)
      %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j2)
      %km = affine.apply affine_map<(d0) -> (d0 - 1)>(%k2)
      %kp = affine.apply affine_map<(d0) -> (d0 + 1)>(%k2)
      %c = krnl.load %B[%i2, %j2, %k2] : memref<?x?x?xf64>
      %c2 = arith.mulf %two, %c : f64
      %p1 = krnl.load %B[%ip, %j2, %k2] : memref<?x?x?xf64>
      %m1 = krnl.load %B[%im, %j2, %k2] : memref<?x?x?xf64>
      %d1 = arith.subf %p1, %c2 : f64
      %e1 = arith.addf %d1, %m1 : f64
      %t1 = arith.mulf %eighth, %e1 : f64
      %p2 = krnl.load %B[%i2, %jp, %k2] : memref<?x?x?xf64>
      %m2 = krnl.load %B[%i2, %jm, %k2] : memref<?x?x?xf64>
      %d2 = arith.subf %p2, %c2 : f64
      %e2 = arith.addf %d2, %m2 : f64
      %t2 = arith.mulf %eighth, %e2 : f64
      %p3 = krnl.load %B[%i2, %j2, %kp] : memref<?x?x?xf64>
      %m3 = krnl.load %B[%i2, %j2, %km] : memref<?x?x?xf64>
      %d3 = arith.subf %p3, %c2 : f64
      %e3 = arith.addf %d3, %m3 : f64
      %t3 = arith.mulf %eighth, %e3 : f64
      %s1 = arith.addf %t1, %t2 : f64
      %s2 = arith.addf %s1, %t3 : f64
      %v = arith.addf %s2, %c : f64
      krnl.store %v, %A[%i2, %j2, %k2] : memref<?x?x?xf64>
    }
  }
  return
}

func.func @heat_3d_tiled(%TSTEPS: index, %N: index, %A: memref<?x?x?xf64>, %B: memref<?x?x?xf64>) {
  %eighth = arith.constant 0.125 : f64
  %two = arith.constant 2.0 : f64
  %tt, %ii, %jj, %kk, %ii2, %jj2, %kk2 = krnl.define_loops 7
  %ib, %il = krnl.block %ii 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl, %kb, %kl) [0, 3, 1, 4, 2, 5] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  %ib2, %il2 = krnl.block %ii2 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb2, %jl2 = krnl.block %jj2 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb2, %kl2 = krnl.block %kk2 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib2, %il2, %jb2, %jl2, %kb2, %kl2) [0, 3, 1, 4, 2, 5] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%tt) with (%tt -> %t = 1 to affine_map<()[s0] -> (s0 + 1)>()[%TSTEPS]) {
    krnl.iterate(%ib, %jb, %kb, %il, %jl, %kl) with (%ii -> %i = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N], %jj -> %j = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N], %kk -> %k = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N]) {
      %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
      %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
      %jm = affine.apply affine_map<(d0) -> (d0 - 1)>(%j)
      %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
      %km = affine.apply affine_map<(d0) -> (d0 - 1)>(%k)
      %kp = affine.apply affine_map<(d0) -> (d0 + 1)>(%k)
      %c = krnl.load %A[%i, %j, %k] : memref<?x?x?xf64>
      %c2 = arith.mulf %two, %c : f64
      %p1 = krnl.load %A[%ip, %j, %k] : memref<?x?x?xf64>
      %m1 = krnl.load %A[%im, %j, %k] : memref<?x?x?xf64>
      %d1 = arith.subf %p1, %c2 : f64
      %e1 = arith.addf %d1, %m1 : f64
      %t1 = arith.mulf %eighth, %e1 : f64
      %p2 = krnl.load %A[%i, %jp, %k] : memref<?x?x?xf64>
      %m2 = krnl.load %A[%i, %jm, %k] : memref<?x?x?xf64>
      %d2 = arith.subf %p2, %c2 : f64
      %e2 = arith.addf %d2, %m2 : f64
      %t2 = arith.mulf %eighth, %e2 : f64
      %p3 = krnl.load %A[%i, %j, %kp] : memref<?x?x?xf64>
      %m3 = krnl.load %A[%i, %j, %km] : memref<?x?x?xf64>
      %d3 = arith.subf %p3, %c2 : f64
      %e3 = arith.addf %d3, %m3 : f64
      %t3 = arith.mulf %eighth, %e3 : f64
      %s1 = arith.addf %t1, %t2 : f64
      %s2 = arith.addf %s1, %t3 : f64
      %v = arith.addf %s2, %c : f64
      krnl.store %v, %B[%i, %j, %k] : memref<?x?x?xf64>
    }
    krnl.iterate(%ib2, %jb2, %kb2, %il2, %jl2, %kl2) with (%ii2 -> %i2 = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N], %jj2 -> %j2 = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N], %kk2 -> %k2 = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N]) {
      %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i2)
      %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i2)
      %jm = affine.apply affine_map<(d0) -> (d0 - 1)>(%j2)
      %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j2)
      %km = affine.apply affine_map<(d0) -> (d0 - 1)>(%k2)
      %kp = affine.apply affine_map<(d0) -> (d0 + 1)>(%k2)
      %c = krnl.load %B[%i2, %j2, %k2] : memref<?x?x?xf64>
      %c2 = arith.mulf %two, %c : f64
      %p1 = krnl.load %B[%ip, %j2, %k2] : memref<?x?x?xf64>
      %m1 = krnl.load %B[%im, %j2, %k2] : memref<?x?x?xf64>
      %d1 = arith.subf %p1, %c2 : f64
      %e1 = arith.addf %d1, %m1 : f64
      %t1 = arith.mulf %eighth, %e1 : f64
      %p2 = krnl.load %B[%i2, %jp, %k2] : memref<?x?x?xf64>
      %m2 = krnl.load %B[%i2, %jm, %k2] : memref<?x?x?xf64>
      %d2 = arith.subf %p2, %c2 : f64
      %e2 = arith.addf %d2, %m2 : f64
      %t2 = arith.mulf %eighth, %e2 : f64
      %p3 = krnl.load %B[%i2, %j2, %kp] : memref<?x?x?xf64>
      %m3 = krnl.load %B[%i2, %j2, %km] : memref<?x?x?xf64>
      %d3 = arith.subf %p3, %c2 : f64
      %e3 = arith.addf %d3, %m3 : f64
      %t3 = arith.mulf %eighth, %e3 : f64
      %s1 = arith.addf %t1, %t2 : f64
      %s2 = arith.addf %s1, %t3 : f64
      %v = arith.addf %s2, %c : f64
      krnl.store %v, %A[%i2, %j2, %k2] : memref<?x?x?xf64>
    }
  }
  return
}
