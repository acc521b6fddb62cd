// polykrnl: semantic
// Covers: blocking a point loop again: 0 to 10 by 4, then the point loop by 2.
// The second tile loop keeps the point loop's bounds (`%ib` to
// `min(%ib + 4, 10)`) with step 2; the innermost point loop ends at
// `min(%ilb + 2, %ib + 4, 10)`.
func.func @reblock_point(%A: memref<10xf32>, %B: memref<10xf32>) {
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %ilb, %ill = krnl.block %il 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %ilb, %ill) with (%ii -> %i = 0 to 10) {
    %v = krnl.load %A[%i] : memref<10xf32>
    krnl.store %v, %B[%i] : memref<10xf32>
  }
  return
}
