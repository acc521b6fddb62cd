// polykrnl: semantic
// Covers: krnl.block of a loop with a symbolic upper bound (`0 to %N`, an index
// argument) by 4: the largest known divisor of the trip count N is 1, so the
// point loop ends at `min(tile + 4, %N)`.
func.func @block_symbolic(%A: memref<?xf32>, %B: memref<?xf32>, %N: index) {
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to %N) {
    %v = krnl.load %A[%i] : memref<?xf32>
    krnl.store %v, %B[%i] : memref<?xf32>
  }
  return
}
