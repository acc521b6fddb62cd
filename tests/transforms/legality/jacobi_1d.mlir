// polykrnl: semantic
// Legality kernel: jacobi-1d with a time loop, written as a perfect t, i nest over a
// time-expanded array: A[t + 1][i] = (A[t][i - 1] + A[t][i] + A[t][i + 1]) / 3.
// Row 0 of A is the input, row t + 1 the result of step t; every element is written
// once, so the only dependences are RAW with distances (1, -1), (1, 0), (1, 1).
func.func @jacobi_1d(%A: memref<5x10xf32>) {
  %three = arith.constant 3.0 : f32
  %tt, %ii = krnl.define_loops 2
  krnl.iterate(%tt, %ii) with (%tt -> %t = 0 to 4, %ii -> %i = 1 to 9) {
    %tn = affine.apply affine_map<(d0) -> (d0 + 1)>(%t)
    %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
    %l = krnl.load %A[%t, %im] : memref<5x10xf32>
    %c = krnl.load %A[%t, %i] : memref<5x10xf32>
    %r = krnl.load %A[%t, %ip] : memref<5x10xf32>
    %s1 = arith.addf %l, %c : f32
    %s2 = arith.addf %s1, %r : f32
    %v = arith.divf %s2, %three : f32
    krnl.store %v, %A[%tn, %i] : memref<5x10xf32>
  }
  return
}
