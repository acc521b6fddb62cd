// polykrnl: semantic
// Covers: krnl.block of a constant loop whose trip count (8) the tile size (4)
// divides: no partial tile, so the point loop ends at `tile + 4` (no min).
func.func @block_divisible(%A: memref<8xf32>, %B: memref<8xf32>) {
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to 8) {
    %v = krnl.load %A[%i] : memref<8xf32>
    krnl.store %v, %B[%i] : memref<8xf32>
  }
  return
}
