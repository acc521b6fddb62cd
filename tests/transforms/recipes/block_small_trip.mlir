// polykrnl: semantic
// Covers: krnl.block of a loop whose constant trip count (3) is smaller than the
// tile size (4): one tile, and the point loop ends at `tile + 3` (no min).
func.func @block_small_trip(%A: memref<3xf32>, %B: memref<3xf32>) {
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to 3) {
    %v = krnl.load %A[%i] : memref<3xf32>
    krnl.store %v, %B[%i] : memref<3xf32>
  }
  return
}
