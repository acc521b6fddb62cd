// polykrnl: semantic
// Covers: loop names when the handles of krnl.block have no SSA name (`%0:2`):
// the tile loop is named `<blocked loop>_t` (`i_t`) and the point loop keeps the
// blocked loop's name (`i`). Same loop as block_partial (0 to 10 by 4).
func.func @block_unnamed(%A: memref<10xf32>, %B: memref<10xf32>) {
  %ii = krnl.define_loops 1
  %0:2 = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%0#0, %0#1) with (%ii -> %i = 0 to 10) {
    %v = krnl.load %A[%i] : memref<10xf32>
    krnl.store %v, %B[%i] : memref<10xf32>
  }
  return
}
