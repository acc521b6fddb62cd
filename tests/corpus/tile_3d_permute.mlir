// polykrnl: semantic
// Covers: the 3-D tiling example of the krnl.permute reference: three loops each
// blocked by 4 (krnl.block), then krnl.permute [0, 3, 1, 4, 2, 5] so that the
// tile loops are outermost, iterated over all six handles. The body (absent in
// the reference) accumulates a 3-D tensor into a 2-D one. Bounds are smaller
// than the reference's 1024 x 2048 x 4096 so that the program can run.
func.func @tile_3d(%t: memref<16x24x8xf32>, %s: memref<16x24xf32>) {
  %ii, %jj, %kk = krnl.define_loops 3
  // Blocking each loop by a factor of 4.
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  // Tile loops outside, intra-tile loops inside.
  krnl.permute(%ib, %il, %jb, %jl, %kb, %kl) [0, 3, 1, 4, 2, 5] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %il, %jb, %jl, %kb, %kl) with (%ii -> %i = 0 to 16, %jj -> %j = 0 to 24, %kk -> %k = 0 to 8) {
    %v = krnl.load %t[%i, %j, %k] : memref<16x24x8xf32>
    %a = krnl.load %s[%i, %j] : memref<16x24xf32>
    %b = arith.addf %a, %v : f32
    krnl.store %b, %s[%i, %j] : memref<16x24xf32>
  }
  return
}

// The permute example of the reference, scatter semantics: permute(%i, %j, %k)
// [1, 2, 0] gives the loop order k, i, j; the iterate lists the handles in that
// order, so that the body sits in the innermost loop (%jj).
func.func @permute_scatter(%t: memref<10x20x30xf32>) {
  %c = arith.constant 1.0 : f32
  %ii, %jj, %kk = krnl.define_loops 3
  krnl.permute(%ii, %jj, %kk) [1, 2, 0] : !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%kk, %ii, %jj) with (%ii -> %i = 0 to 10, %jj -> %j = 0 to 20, %kk -> %k = 0 to 30) {
    krnl.store %c, %t[%i, %j, %k] : memref<10x20x30xf32>
  }
  return
}
