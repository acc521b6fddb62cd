// polykrnl: semantic
// Covers: krnl.block of a loop with a non-zero lower bound whose trip count (not
// its upper bound) is a multiple of the tile size: `2 to 10` by 4 has trip count
// 8, so there is no partial tile and the point loop ends at `tile + 4`, although
// 4 does not divide the upper bound 10.
func.func @block_lower_bound_divisible(%A: memref<10xf32>, %B: memref<10xf32>) {
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %il) with (%ii -> %i = 2 to 10) {
    %v = krnl.load %A[%i] : memref<10xf32>
    krnl.store %v, %B[%i] : memref<10xf32>
  }
  return
}
