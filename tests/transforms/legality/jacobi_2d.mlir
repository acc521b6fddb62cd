// polykrnl: semantic
// Legality kernel: jacobi-2d (5-point) with a time loop, a perfect t, i, j nest over a
// time-expanded array: A[t + 1][i][j] = (A[t][i][j] + A[t][i - 1][j] + A[t][i + 1][j]
// + A[t][i][j - 1] + A[t][i][j + 1]) / 5. Every element is written once: only RAW
// dependences, distances (1, 0, 0), (1, 1, 0), (1, -1, 0), (1, 0, 1), (1, 0, -1).
func.func @jacobi_2d(%A: memref<4x8x8xf32>) {
  %five = arith.constant 5.0 : f32
  %tt, %ii, %jj = krnl.define_loops 3
  krnl.iterate(%tt, %ii, %jj) with (%tt -> %t = 0 to 3, %ii -> %i = 1 to 7, %jj -> %j = 1 to 7) {
    %tn = affine.apply affine_map<(d0) -> (d0 + 1)>(%t)
    %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
    %jm = affine.apply affine_map<(d0) -> (d0 - 1)>(%j)
    %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
    %c = krnl.load %A[%t, %i, %j] : memref<4x8x8xf32>
    %n = krnl.load %A[%t, %im, %j] : memref<4x8x8xf32>
    %s = krnl.load %A[%t, %ip, %j] : memref<4x8x8xf32>
    %w = krnl.load %A[%t, %i, %jm] : memref<4x8x8xf32>
    %e = krnl.load %A[%t, %i, %jp] : memref<4x8x8xf32>
    %a1 = arith.addf %c, %n : f32
    %a2 = arith.addf %a1, %s : f32
    %a3 = arith.addf %a2, %w : f32
    %a4 = arith.addf %a3, %e : f32
    %v = arith.divf %a4, %five : f32
    krnl.store %v, %A[%tn, %i, %j] : memref<4x8x8xf32>
  }
  return
}
