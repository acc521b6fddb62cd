// polykrnl: semantic
// Covers: Views as onnx-mlir writes them: memref.reshape with a shape buffer filled by
// affine.store, memref.reinterpret_cast and memref.cast; writes through a view
// reach the buffer behind it.
func.func @flatten_scale(%arg0: memref<2x3x4xf32>) -> memref<2x12xf32> {
  %c2 = arith.constant 2 : index
  %c12 = arith.constant 12 : index
  %shape = memref.alloc() {alignment = 16 : i64} : memref<2xindex>
  affine.store %c2, %shape[0] : memref<2xindex>
  affine.store %c12, %shape[1] : memref<2xindex>
  %flat = memref.reshape %arg0(%shape) : (memref<2x3x4xf32>, memref<2xindex>) -> memref<2x12xf32>
  %out = memref.alloc() {alignment = 16 : i64} : memref<2x12xf32>
  %two = arith.constant 2.0 : f32
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 2, %l#1 -> %j = 0 to 12) {
    %v = krnl.load %flat[%i, %j] : memref<2x12xf32>
    %w = arith.mulf %v, %two : f32
    krnl.store %w, %out[%i, %j] : memref<2x12xf32>
  }
  return %out : memref<2x12xf32>
}

func.func @transpose_view(%arg0: memref<12xf32>) -> memref<3x4xf32> {
  %out = memref.alloc() {alignment = 16 : i64} : memref<12xf32>
  %t = memref.reinterpret_cast %arg0 to offset: [0], sizes: [3, 4], strides: [1, 3] : memref<12xf32> to memref<3x4xf32, strided<[1, 3]>>
  %o = memref.reinterpret_cast %out to offset: [0], sizes: [3, 4], strides: [4, 1] : memref<12xf32> to memref<3x4xf32>
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 3, %l#1 -> %j = 0 to 4) {
    %v = krnl.load %t[%i, %j] : memref<3x4xf32, strided<[1, 3]>>
    krnl.store %v, %o[%i, %j] : memref<3x4xf32>
  }
  %r = memref.cast %o : memref<3x4xf32> to memref<3x4xf32>
  return %r : memref<3x4xf32>
}
