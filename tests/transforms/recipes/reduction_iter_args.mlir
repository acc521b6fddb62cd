// polykrnl: semantic
// Covers: an iter_args reduction in a nest: for each row i, the inner krnl.iterate
// (its own `with` list) sums A[i, j] over j into the scalar %acc carried by
// iter_args / krnl.yield (initialized to 0 before the j loop), and the result is
// stored into B[i] after the inner iterate, in the i loop.
func.func @reduction_iter_args(%A: memref<4x5xf32>, %B: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii) with (%ii -> %i = 0 to 4) {
    %s = krnl.iterate(%jj) with (%jj -> %j = 0 to 5) iter_args(%acc = %zero) -> (f32) {
      %v = krnl.load %A[%i, %j] : memref<4x5xf32>
      %n = arith.addf %acc, %v : f32
      krnl.yield %n : f32
    }
    krnl.store %s, %B[%i] : memref<4xf32>
  }
  return
}
