// polykrnl: semantic
// Covers: blocking a point loop again when every tile is full: 0 to 8 by 4 (the
// point loop `%ib to %ib + 4` has the constant trip count 4), then the point
// loop by 2 (2 divides 4): no min anywhere.
func.func @reblock_point_divisible(%A: memref<8xf32>, %B: memref<8xf32>) {
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %ilb, %ill = krnl.block %il 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %ilb, %ill) with (%ii -> %i = 0 to 8) {
    %v = krnl.load %A[%i] : memref<8xf32>
    krnl.store %v, %B[%i] : memref<8xf32>
  }
  return
}
