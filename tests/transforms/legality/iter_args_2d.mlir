// polykrnl: semantic
// Legality kernel: one 2-D krnl.iterate (i, j) carrying a scalar sum in iter_args:
// %acc is one value for the whole nest, so S1(i, j) (the krnl.yield update) depends
// on the instance just before it, also across rows: distances (0, 1) and
// (1, -7) (from S1(i, 7) to S1(i + 1, 0)), all + reduction dependences.
func.func @iter_args_2d(%A: memref<6x8xf32>, %out: memref<1xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %ii, %jj = krnl.define_loops 2
  %s = krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 6, %jj -> %j = 0 to 8) iter_args(%acc = %zero) -> (f32) {
    %v = krnl.load %A[%i, %j] : memref<6x8xf32>
    %n = arith.addf %acc, %v : f32
    krnl.yield %n : f32
  }
  krnl.store %s, %out[%c0] : memref<1xf32>
  return
}
