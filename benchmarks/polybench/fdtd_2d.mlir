// fdtd-2d: TMAX time steps of the 2-D finite-difference time-domain kernel
// (Yee scheme) on NX x NY fields ex, ey, hz, with the source _fict_[t] driving
// the first row of ey.
//
// Follows PolyBench 4.2 stencils/fdtd-2d/fdtd-2d.c (kernel_fdtd_2d): for t <
// TMAX: for j: ey[0][j] = _fict_[t]; for 1 <= i < NX, j < NY: ey[i][j] =
// ey[i][j] - 0.5 * (hz[i][j] - hz[i-1][j]); for i < NX, 1 <= j < NY: ex[i][j] =
// ex[i][j] - 0.5 * (hz[i][j] - hz[i][j-1]); for i < NX - 1, j < NY - 1:
// hz[i][j] = hz[i][j] - 0.7 * (ex[i][j+1] - ex[i][j] + ey[i+1][j] - ey[i][j]).
// All updates in place, evaluated left to right as C does.
//
// @fdtd_2d is that program as written.
// @fdtd_2d_tiled tiles the three 2-D nests 32x32 inside the time loop (ib, jb, il,
// jl); the 1-D row update stays as it is. Legal: inside one time step, each nest
// writes one field at (i, j) from the other fields and its own (i, j) element, so
// its instances are independent (the nests stay in their order). The time loop
// is not tiled: it carries dependences between the fields with spatial distances
// of -1 (e.g. hz[i][j] at t is read as hz[i-1][j] by ey at t + 1), illegal for
// rectangular time tiles without skewing (which Krnl cannot express). Every
// instance computes what it computed before: the results are bitwise those of
// @fdtd_2d.
func.func @fdtd_2d(%TMAX: index, %NX: index, %NY: index, %ex: memref<?x?xf64>, %ey: memref<?x?xf64>, %hz: memref<?x?xf64>, %_fict_: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %half = arith.constant 0.5 : f64
  %seven = arith.constant 0.7 : f64
  %tt, %jj0, %ii1, %jj1, %ii2, %jj2, %ii3, %jj3 = krnl.define_loops 8
  krnl.iterate(%tt) with (%tt -> %t = 0 to %TMAX) {
    krnl.iterate(%jj0) with (%jj0 -> %j0 = 0 to %NY) {
      %f = krnl.load %_fict_[%t] : memref<?xf64>
      krnl.store %f, %ey[%c0, %j0] : memref<?x?xf64>
    }
    krnl.iterate(%ii1, %jj1) with (%ii1 -> %i1 = 1 to %NX, %jj1 -> %j1 = 0 to %NY) {
      %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i1)
      %e = krnl.load %ey[%i1, %j1] : memref<?x?xf64>
      %h = krnl.load %hz[%i1, %j1] : memref<?x?xf64>
      %hm = krnl.load %hz[%im, %j1] : memref<?x?xf64>
      %d = arith.subf %h, %hm : f64
      %p = arith.mulf %half, %d : f64
      %v = arith.subf %e, %p : f64
      krnl.store %v, %ey[%i1, %j1] : memref<?x?xf64>
    }
    krnl.iterate(%ii2, %jj2) with (%ii2 -> %i2 = 0 to %NX, %jj2 -> %j2 = 1 to %NY) {
      %jm = affine.apply affine_map<(d0) -> (d0 - 1)>(%j2)
      %e = krnl.load %ex[%i2, %j2] : memref<?x?xf64>
      %h = krnl.load %hz[%i2, %j2] : memref<?x?xf64>
      %hm = krnl.load %hz[%i2, %jm] : memref<?x?xf64>
      %d = arith.subf %h, %hm : f64
      %p = arith.mulf %half, %d : f64
      %v = arith.subf %e, %p : f64
      krnl.store %v, %ex[%i2, %j2] : memref<?x?xf64>
    }
    krnl.iterate(%ii3, %jj3) with (%ii3 -> %i3 = 0 to affine_map<()[s0] -> (s0 - 1)>()[%NX], %jj3 -> %j3 = 0 to affine_map<()[s0] -> (s0 - 1)>()[%NY]) {
      %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i3)
      %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j3)
      %h = krnl.load %hz[%i3, %j3] : memref<?x?xf64>
      %x1 = krnl.load %ex[%i3, %jp] : memref<?x?xf64>
      %x0 = krnl.load %ex[%i3, %j3] : memref<?x?xf64>
      %y1 = krnl.load %ey[%ip, %j3] : memref<?x?xf64>
      %y0 = krnl.load %ey[%i3, %j3] : memref<?x?xf64>
      %s1 = arith.subf %x1, %x0 : f64
      %s2 = arith.addf %s1, %y1 : f64
      %s3 = arith.subf %s2, %y0 : f64
      %p = arith.mulf %seven, %s3 : f64
      %v = arith.subf %h, %p : f64
      krnl.store %v, %hz[%i3, %j3] : memref<?x?xf64>
    }
  }
  return
}

func.func @fdtd_2d_tiled(%TMAX: index, %NX: index, %NY: index, %ex: memref<?x?xf64>, %ey: memref<?x?xf64>, %hz: memref<?x?xf64>, %_fict_: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %half = arith.constant 0.5 : f64
  %seven = arith.constant 0.7 : f64
  %tt, %jj0, %ii1, %jj1, %ii2, %jj2, %ii3, %jj3 = krnl.define_loops 8
  %ib1, %il1 = krnl.block %ii1 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb1, %jl1 = krnl.block %jj1 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib1, %il1, %jb1, %jl1) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  %ib2, %il2 = krnl.block %ii2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb2, %jl2 = krnl.block %jj2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib2, %il2, %jb2, %jl2) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  %ib3, %il3 = krnl.block %ii3 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb3, %jl3 = krnl.block %jj3 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib3, %il3, %jb3, %jl3) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%tt) with (%tt -> %t = 0 to %TMAX) {
    krnl.iterate(%jj0) with (%jj0 -> %j0 = 0 to %NY) {
      %f = krnl.load %_fict_[%t] : memref<?xf64>
      krnl.store %f, %ey[%c0, %j0] : memref<?x?xf64>
    }
    krnl.iterate(%ib1, %jb1, %il1, %jl1) with (%ii1 -> %i1 = 1 to %NX, %jj1 -> %j1 = 0 to %NY) {
      %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i1)
      %e = krnl.load %ey[%i1, %j1] : memref<?x?xf64>
      %h = krnl.load %hz[%i1, %j1] : memref<?x?xf64>
      %hm = krnl.load %hz[%im, %j1] : memref<?x?xf64>
      %d = arith.subf %h, %hm : f64
      %p = arith.mulf %half, %d : f64
      %v = arith.subf %e, %p : f64
      krnl.store %v, %ey[%i1, %j1] : memref<?x?xf64>
    }
    krnl.iterate(%ib2, %jb2, %il2, %jl2) with (%ii2 -> %i2 = 0 to %NX, %jj2 -> %j2 = 1 to %NY) {
      %jm = affine.apply affine_map<(d0) -> (d0 - 1)>(%j2)
      %e = krnl.load %ex[%i2, %j2] : memref<?x?xf64>
      %h = krnl.load %hz[%i2, %j2] : memref<?x?xf64>
      %hm = krnl.load %hz[%i2, %jm] : memref<?x?xf64>
      %d = arith.subf %h, %hm : f64
      %p = arith.mulf %half, %d : f64
      %v = arith.subf %e, %p : f64
      krnl.store %v, %ex[%i2, %j2] : memref<?x?xf64>
    }
    krnl.iterate(%ib3, %jb3, %il3, %jl3) with (%ii3 -> %i3 = 0 to affine_map<()[s0] -> (s0 - 1)>()[%NX], %jj3 -> %j3 = 0 to affine_map<()[s0] -> (s0 - 1)>()[%NY]) {
      %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i3)
      %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j3)
      %h = krnl.load %hz[%i3, %j3] : memref<?x?xf64>
      %x1 = krnl.load %ex[%i3, %jp] : memref<?x?xf64>
      %x0 = krnl.load %ex[%i3, %j3] : memref<?x?xf64>
      %y1 = krnl.load %ey[%ip, %j3] : memref<?x?xf64>
      %y0 = krnl.load %ey[%i3, %j3] : memref<?x?xf64>
      %s1 = arith.subf %x1, %x0 : f64
      %s2 = arith.addf %s1, %y1 : f64
      %s3 = arith.subf %s2, %y0 : f64
      %p = arith.mulf %seven, %s3 : f64
      %v = arith.subf %h, %p : f64
      krnl.store %v, %hz[%i3, %j3] : memref<?x?xf64>
    }
  }
  return
}
