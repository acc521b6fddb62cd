// polykrnl: semantic
// Covers: an imperfect nest without any recipe: the outer iterate binds both
// loops (`with` list i, j) but lists only %ii, so its statements go into the i
// loop; the nested `krnl.iterate(%jj) with ()` marks where the j loop goes: the
// store before it runs before the j loop, the store after it after the j loop.
func.func @imperfect_untransformed(%X: memref<4xf32>, %Y: memref<4xf32>, %Z: memref<4xf32>, %A: memref<4x5xf32>, %B: memref<4x5xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii) with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 5) {
    %x = krnl.load %X[%i] : memref<4xf32>
    krnl.store %x, %Y[%i] : memref<4xf32>
    krnl.iterate(%jj) with () {
      %v = krnl.load %A[%i, %j] : memref<4x5xf32>
      %y = krnl.load %Y[%i] : memref<4xf32>
      %w = arith.addf %v, %y : f32
      krnl.store %w, %B[%i, %j] : memref<4x5xf32>
    }
    %b = krnl.load %B[%i, %i] : memref<4x5xf32>
    krnl.store %b, %Z[%i] : memref<4xf32>
  }
  return
}
