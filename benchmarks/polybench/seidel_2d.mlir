// seidel-2d: TSTEPS sweeps of the in-place 9-point Gauss-Seidel stencil on an
// N x N grid (the border rows and columns are boundary values).
//
// Follows PolyBench 4.2 stencils/seidel-2d/seidel-2d.c (kernel_seidel_2d): for t <
// TSTEPS, for 1 <= i <= N - 2, for 1 <= j <= N - 2: A[i][j] = (A[i-1][j-1] +
// A[i-1][j] + A[i-1][j+1] + A[i][j-1] + A[i][j] + A[i][j+1] + A[i+1][j-1] +
// A[i+1][j] + A[i+1][j+1]) / 9.0, summed left to right, in place: row i - 1 and
// A[i][j-1] are already this sweep's values.
//
// @seidel_2d is that program as written.
// @seidel_2d_tiled blocks i and j by 32 without permuting them (ib, il, jb, jl:
// strip-mining). That is all the tiling Krnl can express legally here: inside one
// sweep the dependences have distances (1, -1), (1, 0), (1, 1) and (0, 1) in
// (i, j), so rectangular i, j tiles (ib, jb, il, jl) are illegal (A[i][j] would
// be computed before A[i-1][j+1] of the same sweep; the test checks that polykrnl
// refuses them), as are time tiles; both would need a skew, which Krnl cannot
// express. Strip-mining keeps the order of every instance: legal, bitwise the
// results of @seidel_2d.
func.func @seidel_2d(%TSTEPS: index, %N: index, %A: memref<?x?xf64>) {
  %nine = arith.constant 9.0 : f64
  %tt, %ii, %jj = krnl.define_loops 3
  krnl.iterate(%tt, %ii, %jj) with (%tt -> %t = 0 to %TSTEPS, %ii -> %i = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N], %jj -> %j = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N]) {
    %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
    %jm = affine.apply affine_map<(d0) -> (d0 - 1)>(%j)
    %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
    %a0 = krnl.load %A[%im, %jm] : memref<?x?xf64>
    %a1 = krnl.load %A[%im, %j] : memref<?x?xf64>
    %a2 = krnl.load %A[%im, %jp] : memref<?x?xf64>
    %a3 = krnl.load %A[%i, %jm] : memref<?x?xf64>
    %a4 = krnl.load %A[%i, %j] : memref<?x?xf64>
    %a5 = krnl.load %A[%i, %jp] : memref<?x?xf64>
    %a6 = krnl.load %A[%ip, %jm] : memref<?x?xf64>
    %a7 = krnl.load %A[%ip, %j] : memref<?x?xf64>
    %a8 = krnl.load %A[%ip, %jp] : memref<?x?xf64>
    %s1 = arith.addf %a0, %a1 : f64
    %s2 = arith.addf %s1, %a2 : f64
    %s3 = arith.addf %s2, %a3 : f64
    %s4 = arith.addf %s3, %a4 : f64
    %s5 = arith.addf %s4, %a5 : f64
    %s6 = arith.addf %s5, %a6 : f64
    %s7 = arith.addf %s6, %a7 : f64
    %s8 = arith.addf %s7, %a8 : f64
    %v = arith.divf %s8, %nine : f64
    krnl.store %v, %A[%i, %j] : memref<?x?xf64>
  }
  return
}

func.func @seidel_2d_tiled(%TSTEPS: index, %N: index, %A: memref<?x?xf64>) {
  %nine = arith.constant 9.0 : f64
  %tt, %ii, %jj = krnl.define_loops 3
  %ib, %il = krnl.block %ii 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%tt, %ib, %il, %jb, %jl) with (%tt -> %t = 0 to %TSTEPS, %ii -> %i = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N], %jj -> %j = 1 to affine_map<()[s0] -> (s0 - 1)>()[%N]) {
    %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
    %jm = affine.apply affine_map<(d0) -> (d0 - 1)>(%j)
    %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
    %a0 = krnl.load %A[%im, %jm] : memref<?x?xf64>
    %a1 = krnl.load %A[%im, %j] : memref<?x?xf64>
    %a2 = krnl.load %A[%im, %jp] : memref<?x?xf64>
    %a3 = krnl.load %A[%i, %jm] : memref<?x?xf64>
    %a4 = krnl.load %A[%i, %j] : memref<?x?xf64>
    %a5 = krnl.load %A[%i, %jp] : memref<?x?xf64>
    %a6 = krnl.load %A[%ip, %jm] : memref<?x?xf64>
    %a7 = krnl.load %A[%ip, %j] : memref<?x?xf64>
    %a8 = krnl.load %A[%ip, %jp] : memref<?x?xf64>
    %s1 = arith.addf %a0, %a1 : f64
    %s2 = arith.addf %s1, %a2 : f64
    %s3 = arith.addf %s2, %a3 : f64
    %s4 = arith.addf %s3, %a4 : f64
    %s5 = arith.addf %s4, %a5 : f64
    %s6 = arith.addf %s5, %a6 : f64
    %s7 = arith.addf %s6, %a7 : f64
    %s8 = arith.addf %s7, %a8 : f64
    %v = arith.divf %s8, %nine : f64
    krnl.store %v, %A[%i, %j] : memref<?x?xf64>
  }
  return
}
