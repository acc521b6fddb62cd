// polykrnl: semantic
// Tile-buffer copies as onnx-mlir writes tiled copies (tests/targets/pto/test_pto_buffers.py):
// the tile loops' bodies fill a buffer with krnl.copy_to_tile_buffer (partial tiles at
// the edges padded with 0) and write it back with krnl.copy_from_tile_buffer.

// out = src (13 x 21), through 8 x 8 buffers; the padding is not copied back.
func.func @copy_padded(%src: memref<13x21xf32>, %out: memref<13x21xf32>) {
  %pad = arith.constant 0.0 : f32
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb) with (%ii -> %i = 0 to 13, %jj -> %j = 0 to 21) {
    %i0, %j0 = krnl.get_induction_var_value(%ib, %jb) : (!krnl.loop, !krnl.loop) -> (index, index)
    %buf = memref.alloca() : memref<8x8xf32>
    krnl.copy_to_tile_buffer %buf, %src[%i0, %j0], %pad : memref<8x8xf32>, memref<13x21xf32>
    krnl.copy_from_tile_buffer %buf, %out[%i0, %j0] : memref<8x8xf32>, memref<13x21xf32>
  }
  return
}

// out = src^T (src 13 x 21, out 21 x 13): the buffer holds the transposed tile of src.
func.func @copy_transposed(%src: memref<13x21xf32>, %out: memref<21x13xf32>) {
  %pad = arith.constant 0.0 : f32
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb) with (%ii -> %i = 0 to 21, %jj -> %j = 0 to 13) {
    %i0, %j0 = krnl.get_induction_var_value(%ib, %jb) : (!krnl.loop, !krnl.loop) -> (index, index)
    %buf = memref.alloca() : memref<8x8xf32>
    krnl.copy_to_tile_buffer %buf, %src[%j0, %i0], %pad {transpose = true} : memref<8x8xf32>, memref<13x21xf32>
    krnl.copy_from_tile_buffer %buf, %out[%i0, %j0] : memref<8x8xf32>, memref<21x13xf32>
  }
  return
}
