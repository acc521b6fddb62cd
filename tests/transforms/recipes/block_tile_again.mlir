// polykrnl: semantic
// Covers: krnl.block of a TILE handle (10 by 2, then the tile loop by 2): the new
// point loop steps by 2 inside the new tile loop (step 4), and the first point loop
// follows the value of the tile loop it was made from (its bounds use %ibp).
func.func @block_tile_again(%A: memref<10xf32>, %B: memref<10xf32>) {
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %ibb, %ibp = krnl.block %ib 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ibb, %ibp, %il) with (%ii -> %i = 0 to 10) {
    %v = krnl.load %A[%i] : memref<10xf32>
    krnl.store %v, %B[%i] : memref<10xf32>
  }
  return
}
