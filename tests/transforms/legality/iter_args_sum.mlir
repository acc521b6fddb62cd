// polykrnl: semantic
// Legality kernel: an iter_args reduction. Per row i, the inner krnl.iterate sums
// A[i][j] over j into %acc (init S0 at the iterate, update S1 at the krnl.yield),
// and S2 stores the result into B[i]. %acc is a virtual array indexed by i: the
// + reduction S1(i, j) -> S1(i, j + 1) has distance (0, 1); nothing crosses rows.
func.func @iter_args_sum(%A: memref<6x8xf32>, %B: memref<6xf32>) {
  %zero = arith.constant 0.0 : f32
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii) with (%ii -> %i = 0 to 6) {
    %s = krnl.iterate(%jj) with (%jj -> %j = 0 to 8) iter_args(%acc = %zero) -> (f32) {
      %v = krnl.load %A[%i, %j] : memref<6x8xf32>
      %n = arith.addf %acc, %v : f32
      krnl.yield %n : f32
    }
    krnl.store %s, %B[%i] : memref<6xf32>
  }
  return
}
