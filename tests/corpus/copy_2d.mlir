// polykrnl: semantic
// Covers: the basic Krnl nest. `%a, %b = krnl.define_loops 2`, one krnl.iterate
// binding both handles with integer bounds, krnl.load / krnl.store with one index
// per memref dimension, and func.func / func.return around it.
module {
  func.func @copy_2d(%src: memref<6x10xf32>, %dst: memref<6x10xf32>) {
    %ii, %jj = krnl.define_loops 2
    krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 6, %jj -> %j = 0 to 10) {
      %v = krnl.load %src[%i, %j] : memref<6x10xf32>
      krnl.store %v, %dst[%i, %j] : memref<6x10xf32>
    }
    return
  }
}
