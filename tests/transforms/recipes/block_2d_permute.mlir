// polykrnl: semantic
// Covers: 2-D tiling: i (0 to 10, partial last tile) and j (0 to 12, full tiles)
// each blocked by 4, then krnl.permute [0, 2, 1, 3] so that the order is
// tile, tile, point, point (ib, jb, il, jl). The iterate lists the handles in the
// final order; the body goes into the loop of the last one (jl, innermost).
func.func @block_2d_permute(%A: memref<10x12xf32>, %B: memref<10x12xf32>) {
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %il, %jl) with (%ii -> %i = 0 to 10, %jj -> %j = 0 to 12) {
    %v = krnl.load %A[%i, %j] : memref<10x12xf32>
    krnl.store %v, %B[%i, %j] : memref<10x12xf32>
  }
  return
}
