// polykrnl: semantic
// Covers: the matmul panel example of the krnl.matmul reference: three loops
// blocked twice (10/8/10 then 5/4/5), a nine-handle krnl.permute, an outer
// iterate over (%ib, %jb) binding all three original handles, nested
// `krnl.iterate(%kb) with ()` and `krnl.iterate(%ilb, %jlb, %klb) with ()`,
// krnl.get_induction_var_value on several handles at once, tile buffers filled by
// krnl.copy_to_tile_buffer and written back by krnl.copy_from_tile_buffer, and
// krnl.matmul consuming the three innermost handles. C is pre-zeroed by the caller.
func.func @matmul_panel(%A: memref<40x60xf32>, %B: memref<60x80xf32>, %C: memref<40x80xf32>) {
  %f0 = arith.constant 0.0 : f32
  %c40 = arith.constant 40 : index
  %c80 = arith.constant 80 : index
  %c60 = arith.constant 60 : index
  // 3 tiled loops.
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 10 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 10 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  // 3 subtiles.
  %ilb, %ill = krnl.block %il 5 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jlb, %jll = krnl.block %jl 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %klb, %kll = krnl.block %kl 5 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %ilb, %ill, %jb, %jlb, %jll, %kb, %klb, %kll) [0, 3, 6, 1, 4, 7, 2, 5, 8] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  // Outer 2 for i, j.
  krnl.iterate(%ib, %jb) with (%ii -> %i = 0 to 40, %jj -> %j = 0 to 80, %kk -> %k = 0 to 60) {
    %i1, %j1 = krnl.get_induction_var_value(%ib, %jb) : (!krnl.loop, !krnl.loop) -> (index, index)
    // Fill the C buffer.
    %Cbuff = memref.alloca() : memref<10x8xf32>
    krnl.copy_to_tile_buffer %Cbuff, %C[%i1, %j1], %f0 : memref<10x8xf32>, memref<40x80xf32>
    // Outer 1 for k.
    krnl.iterate(%kb) with () {
      %k1 = krnl.get_induction_var_value(%kb) : (!krnl.loop) -> index
      // Fill the A and B buffers.
      %Abuff = memref.alloca() : memref<10x10xf32>
      %Bbuff = memref.alloca() : memref<10x8xf32>
      krnl.copy_to_tile_buffer %Abuff, %A[%i1, %k1], %f0 : memref<10x10xf32>, memref<40x60xf32>
      krnl.copy_to_tile_buffer %Bbuff, %B[%k1, %j1], %f0 : memref<10x8xf32>, memref<60x80xf32>
      // Inner iterations for subtiles.
      krnl.iterate(%ilb, %jlb, %klb) with () {
        %i2, %j2, %k2 = krnl.get_induction_var_value(%ilb, %jlb, %klb) : (!krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index)
        krnl.matmul %Abuff[%i1, %k1], %Bbuff[%k1, %j1], %Cbuff[%i1, %j1], (%ill, %jll, %kll), (%i2, %j2, %k2), (%c40, %c80, %c60) {computeTileSize = [5, 4, 5], simdize = false, unroll = false} : memref<10x10xf32>, memref<10x8xf32>, memref<10x8xf32>, (!krnl.loop, !krnl.loop, !krnl.loop)
      }
    }
    // Copy the data back into C.
    krnl.copy_from_tile_buffer %Cbuff, %C[%i1, %j1] : memref<10x8xf32>, memref<40x80xf32>
  }
  return
}

// Tile-buffer attributes: tileSize, padToNext and transpose on the copy in, tileSize
// on the copy out (a 7x6 source tiled by 4x4 buffers, with partial edge tiles).
func.func @tile_buffer_attrs(%src: memref<7x6xf32>, %dst: memref<6x7xf32>, %out: memref<7x6xf32>) {
  %pad = arith.constant -1.0 : f32
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %jb) with (%ii -> %i = 0 to 7, %jj -> %j = 0 to 6) {
    %i0, %j0 = krnl.get_induction_var_value(%ib, %jb) : (!krnl.loop, !krnl.loop) -> (index, index)
    %buf = memref.alloca() : memref<4x4xf32>
    krnl.copy_to_tile_buffer %buf, %src[%i0, %j0], %pad {padToNext = [1, 4], tileSize = [4, 4]} : memref<4x4xf32>, memref<7x6xf32>
    krnl.copy_from_tile_buffer %buf, %out[%i0, %j0] {tileSize = [4, 4]} : memref<4x4xf32>, memref<7x6xf32>
    %tbuf = memref.alloca() : memref<4x4xf32>
    krnl.copy_to_tile_buffer %tbuf, %dst[%j0, %i0], %pad {transpose = true} : memref<4x4xf32>, memref<6x7xf32>
  }
  return
}
