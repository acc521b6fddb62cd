// polykrnl: semantic
// Covers: krnl.parallel (parenthesized form) on the tile loop of a krnl.block
// (i 0 to 8 by 4), after the block. The body is an element-wise copy, so the tile
// loop is really parallel. Parallel marks do not change the (sequential) trace.
func.func @parallel_tile(%A: memref<8x5xf32>, %B: memref<8x5xf32>) {
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.parallel(%ib) : !krnl.loop
  krnl.iterate(%ib, %il, %jj) with (%ii -> %i = 0 to 8, %jj -> %j = 0 to 5) {
    %v = krnl.load %A[%i, %j] : memref<8x5xf32>
    krnl.store %v, %B[%i, %j] : memref<8x5xf32>
  }
  return
}
