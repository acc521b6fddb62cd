// polykrnl: semantic
// Covers: 3-D tiling: i, j, k each blocked by 4, then krnl.permute of
// (ib, il, jb, jl, kb, kl) by [0, 3, 1, 4, 2, 5] (scatter: il goes to position 3,
// jb to 1, ...), giving the order ib, jb, kb, il, jl, kl. The three extents show
// the three point-loop forms: i 0 to 6 (partial tile, min), j 0 to 8 (4 divides
// 8: tile + 4), k 0 to 3 (trip count below the tile size: tile + 3). The iterate
// lists the handles in operand order; the last one (kl) is innermost.
func.func @tile_3d_permute(%A: memref<6x8x3xf32>, %B: memref<6x8x3xf32>) {
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl, %kb, %kl) [0, 3, 1, 4, 2, 5] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %il, %jb, %jl, %kb, %kl) with (%ii -> %i = 0 to 6, %jj -> %j = 0 to 8, %kk -> %k = 0 to 3) {
    %v = krnl.load %A[%i, %j, %k] : memref<6x8x3xf32>
    krnl.store %v, %B[%i, %j, %k] : memref<6x8x3xf32>
  }
  return
}
