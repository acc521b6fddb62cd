// polykrnl: semantic
// Covers: krnl.block of a loop with a non-zero lower bound, `2 to 11` by 4: the
// tile loop starts at 2 (tiles 2, 6, 10), the trip count 9 is not a multiple of
// 4, so the point loop ends at `min(tile + 4, 11)` (last tile: 10 only).
func.func @block_lower_bound(%A: memref<11xf32>, %B: memref<11xf32>) {
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %il) with (%ii -> %i = 2 to 11) {
    %v = krnl.load %A[%i] : memref<11xf32>
    krnl.store %v, %B[%i] : memref<11xf32>
  }
  return
}
