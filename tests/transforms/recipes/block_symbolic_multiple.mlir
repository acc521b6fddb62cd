// polykrnl: semantic
// Covers: krnl.block of a loop whose symbolic trip count is a known multiple of
// the tile size: `0 to 8 * N` (an affine map on the symbol %N) by 8. The largest
// known divisor of the trip count is 8, so the point loop ends at `tile + 8`.
// The arrays are static (128 elements) so that any N <= 16 runs.
func.func @block_symbolic_multiple(%A: memref<128xf32>, %B: memref<128xf32>, %N: index) {
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to affine_map<()[s0] -> (s0 * 8)>()[%N]) {
    %v = krnl.load %A[%i] : memref<128xf32>
    krnl.store %v, %B[%i] : memref<128xf32>
  }
  return
}
