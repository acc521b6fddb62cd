// polykrnl: semantic
// Covers: memrefs with a tiled layout map, which the reader normalizes as onnx-mlir's
// --normalize-memrefs does (docs/krnl-semantics.md, "Layout maps"): loads and
// stores through the map, a dynamic allocation, krnl.memcpy and
// krnl.get_linear_offset_index on the normalized memref.
#rows = affine_map<(d0, d1) -> (d0 floordiv 4, d1 floordiv 8, d0 mod 4, d1 mod 8)>
#blocked = affine_map<(d0, d1, d2) -> (d0, d1 floordiv 16, d2 floordiv 8, d2 mod 8, d1 mod 16)>
#pad = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 32, d3 floordiv 32, d2 mod 32, d3 mod 32)>

// Reads a tiled argument element by element and writes its logical order.
func.func @untile(%T: memref<8x16xf32, #rows>, %out: memref<8x16xf32>) {
  %ii:2 = krnl.define_loops 2
  krnl.iterate(%ii#0, %ii#1) with (%ii#0 -> %i = 0 to 8, %ii#1 -> %j = 0 to 16) {
    %v = krnl.load %T[%i, %j] : memref<8x16xf32, #rows>
    %w = arith.mulf %v, %v : f32
    krnl.store %w, %out[%i, %j] : memref<8x16xf32>
  }
  return
}

// Writes a tiled buffer it allocates, with a dynamic outer size, through affine stores.
func.func @tile(%X: memref<?x32x24xf32>, %n: index) -> memref<?x32x24xf32, #blocked> {
  %R = memref.alloc(%n) : memref<?x32x24xf32, #blocked>
  %ii:3 = krnl.define_loops 3
  krnl.iterate(%ii#0, %ii#1, %ii#2) with (%ii#0 -> %b = 0 to %n, %ii#1 -> %i = 0 to 32,
                                          %ii#2 -> %j = 0 to 24) {
    %x = affine.load %X[%b, %i, %j] : memref<?x32x24xf32>
    affine.store %x, %R[%b, %i, %j] : memref<?x32x24xf32, #blocked>
  }
  return %R : memref<?x32x24xf32, #blocked>
}

// onnx-mlir's krnl_normalization.mlir: a flat copy fills the whole padded tiles.
func.func @memcpy_tiled(%src: memref<1x16384xf32>) -> memref<1x16x4x4xf32, #pad> {
  %dst = memref.alloc() : memref<1x16x4x4xf32, #pad>
  %c0 = arith.constant 0 : index
  %count = arith.constant 16384 : i64
  "krnl.memcpy"(%dst, %src, %count, %c0, %c0) : (memref<1x16x4x4xf32, #pad>, memref<1x16384xf32>, i64, index, index) -> ()
  return %dst : memref<1x16x4x4xf32, #pad>
}

// onnx-mlir's get_linear_offset_index.mlir: an offset in the normalized memref, no loop.
func.func @linear_offset(%A: memref<?x32x24xf32, #blocked>, %n: index, %b: index) -> index {
  %c3 = arith.constant 3 : index
  %c17 = arith.constant 17 : index
  %unused = memref.alloc(%n) : memref<?x32x24xf32, #blocked>
  %o = krnl.get_linear_offset_index %A at [%b, %c17, %c3] : memref<?x32x24xf32, #blocked>
  return %o : index
}
