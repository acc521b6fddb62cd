// polykrnl: semantic
// Legality kernel: seidel-2d, in-place 9-point Gauss-Seidel with a time loop:
// A[i][j] = (sum of A[i + di][j + dj], di, dj in {-1, 0, 1}) / 9. Reads of row i - 1
// and of A[i][j - 1] see this step's values, the others the previous step's: RAW,
// WAR and WAW dependences with distances (0, 1, -1), (0, 1, 0), (0, 1, 1), (0, 0, 1),
// (1, 0, 0), (1, 0, -1), (1, -1, -1), (1, -1, 0), (1, -1, 1).
func.func @seidel_2d(%A: memref<7x7xf32>) {
  %nine = arith.constant 9.0 : f32
  %tt, %ii, %jj = krnl.define_loops 3
  krnl.iterate(%tt, %ii, %jj) with (%tt -> %t = 0 to 3, %ii -> %i = 1 to 6, %jj -> %j = 1 to 6) {
    %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
    %jm = affine.apply affine_map<(d0) -> (d0 - 1)>(%j)
    %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
    %a00 = krnl.load %A[%im, %jm] : memref<7x7xf32>
    %a01 = krnl.load %A[%im, %j] : memref<7x7xf32>
    %a02 = krnl.load %A[%im, %jp] : memref<7x7xf32>
    %a10 = krnl.load %A[%i, %jm] : memref<7x7xf32>
    %a11 = krnl.load %A[%i, %j] : memref<7x7xf32>
    %a12 = krnl.load %A[%i, %jp] : memref<7x7xf32>
    %a20 = krnl.load %A[%ip, %jm] : memref<7x7xf32>
    %a21 = krnl.load %A[%ip, %j] : memref<7x7xf32>
    %a22 = krnl.load %A[%ip, %jp] : memref<7x7xf32>
    %s1 = arith.addf %a00, %a01 : f32
    %s2 = arith.addf %s1, %a02 : f32
    %s3 = arith.addf %s2, %a10 : f32
    %s4 = arith.addf %s3, %a11 : f32
    %s5 = arith.addf %s4, %a12 : f32
    %s6 = arith.addf %s5, %a20 : f32
    %s7 = arith.addf %s6, %a21 : f32
    %s8 = arith.addf %s7, %a22 : f32
    %v = arith.divf %s8, %nine : f32
    krnl.store %v, %A[%i, %j] : memref<7x7xf32>
  }
  return
}
