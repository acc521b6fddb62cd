// polykrnl: semantic
// Covers: an imperfect nest written with a nested krnl.iterate that has its own
// `with` list (the inner handle is defined at top level): two stores before the
// inner iterate and one after it, in the i loop; one store in the j loop.
func.func @imperfect_nested_with(%X: memref<4xf32>, %Y: memref<4xf32>, %W: memref<4xf32>, %Z: memref<4xf32>, %A: memref<4x5xf32>, %B: memref<4x5xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii) with (%ii -> %i = 0 to 4) {
    %x = krnl.load %X[%i] : memref<4xf32>
    krnl.store %x, %Y[%i] : memref<4xf32>
    krnl.store %x, %W[%i] : memref<4xf32>
    krnl.iterate(%jj) with (%jj -> %j = 0 to 5) {
      %v = krnl.load %A[%i, %j] : memref<4x5xf32>
      krnl.store %v, %B[%i, %j] : memref<4x5xf32>
    }
    %y = krnl.load %Y[%i] : memref<4xf32>
    %w = krnl.load %W[%i] : memref<4xf32>
    %s = arith.addf %y, %w : f32
    krnl.store %s, %Z[%i] : memref<4xf32>
  }
  return
}
