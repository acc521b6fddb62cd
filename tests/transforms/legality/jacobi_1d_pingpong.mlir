// polykrnl: semantic
// Legality kernel: jacobi-1d as PolyBench writes it, two arrays and two sibling i loops
// per time step: B[i] = (A[i - 1] + A[i] + A[i + 1]) / 3 (S0, loop i), then
// A[i2] = (B[i2 - 1] + B[i2] + B[i2 + 1]) / 3 (S1, loop i2). Dependences between the
// sibling loops are ordered by the sequence inside t; the t loop carries the rest.
func.func @jacobi_1d_pingpong(%A: memref<10xf32>, %B: memref<10xf32>) {
  %three = arith.constant 3.0 : f32
  %tt, %ii, %ii2 = krnl.define_loops 3
  krnl.iterate(%tt) with (%tt -> %t = 0 to 4) {
    krnl.iterate(%ii) with (%ii -> %i = 1 to 9) {
      %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
      %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
      %l = krnl.load %A[%im] : memref<10xf32>
      %c = krnl.load %A[%i] : memref<10xf32>
      %r = krnl.load %A[%ip] : memref<10xf32>
      %s1 = arith.addf %l, %c : f32
      %s2 = arith.addf %s1, %r : f32
      %v = arith.divf %s2, %three : f32
      krnl.store %v, %B[%i] : memref<10xf32>
    }
    krnl.iterate(%ii2) with (%ii2 -> %i2 = 1 to 9) {
      %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i2)
      %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i2)
      %l = krnl.load %B[%im] : memref<10xf32>
      %c = krnl.load %B[%i2] : memref<10xf32>
      %r = krnl.load %B[%ip] : memref<10xf32>
      %s1 = arith.addf %l, %c : f32
      %s2 = arith.addf %s1, %r : f32
      %v = arith.divf %s2, %three : f32
      krnl.store %v, %A[%i2] : memref<10xf32>
    }
  }
  return
}
