// polykrnl: semantic
// Covers: krnl.block whose tile size (4) does not divide the constant trip count
// (10): the last tile is partial, the point loop ends at `min(tile + 4, 10)`.
func.func @block_partial(%A: memref<10xf32>, %B: memref<10xf32>) {
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to 10) {
    %v = krnl.load %A[%i] : memref<10xf32>
    krnl.store %v, %B[%i] : memref<10xf32>
  }
  return
}
