// polykrnl: semantic
// Covers: functions as onnx-mlir's --convert-onnx-to-krnl writes them: each allocates its
// results and returns them (memref.alloc with an alignment); a result that is a view
// computed after the loops (memref.reinterpret_cast, memref.reshape, memref.cast), of an
// argument or of an allocation; several results, one buffer returned twice.
func.func @f(%arg0: memref<10x10xf32>) -> memref<10x10xf32> {
  %0 = memref.alloc() {alignment = 16 : i64} : memref<10x10xf32>
  %1:2 = krnl.define_loops 2
  krnl.iterate(%1#0, %1#1) with (%1#0 -> %i = 0 to 10, %1#1 -> %j = 0 to 10) {
    %2 = krnl.load %arg0[%i, %j] : memref<10x10xf32>
    %3 = math.exp %2 : f32
    krnl.store %3, %0[%i, %j] : memref<10x10xf32>
  }
  return %0 : memref<10x10xf32>
}

// A transpose that moves no data (one of the swapped dimensions has size 1): onnx-mlir
// returns a view of the argument, with no loop at all.
func.func @transpose_as_view(%arg0: memref<?x1x1x8xf32>) -> memref<?x8x1x1xf32> {
  %c0 = arith.constant 0 : index
  %d0 = memref.dim %arg0, %c0 : memref<?x1x1x8xf32>
  %0 = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%d0, 8, 1, 1], strides: [8, 1, 1, 1] : memref<?x1x1x8xf32> to memref<?x8x1x1xf32>
  return %0 : memref<?x8x1x1xf32>
}

// exp(x) and x * x of a 3x4 input: the first result twice, then as a flat view, the
// second through a cast to a dynamic shape.
func.func @several_results(%arg0: memref<3x4xf32>) -> (memref<3x4xf32>, memref<3x4xf32>, memref<12xf32>, memref<?x4xf32>) {
  %c12 = arith.constant 12 : index
  %e = memref.alloc() {alignment = 16 : i64} : memref<3x4xf32>
  %sq = memref.alloc() {alignment = 16 : i64} : memref<3x4xf32>
  %1:2 = krnl.define_loops 2
  krnl.iterate(%1#0, %1#1) with (%1#0 -> %i = 0 to 3, %1#1 -> %j = 0 to 4) {
    %x = krnl.load %arg0[%i, %j] : memref<3x4xf32>
    %y = math.exp %x : f32
    krnl.store %y, %e[%i, %j] : memref<3x4xf32>
    %z = arith.mulf %x, %x : f32
    krnl.store %z, %sq[%i, %j] : memref<3x4xf32>
  }
  %shape = memref.alloc() {alignment = 16 : i64} : memref<1xindex>
  affine.store %c12, %shape[0] : memref<1xindex>
  %flat = memref.reshape %e(%shape) : (memref<3x4xf32>, memref<1xindex>) -> memref<12xf32>
  %dyn = memref.cast %sq : memref<3x4xf32> to memref<?x4xf32>
  return %e, %e, %flat, %dyn : memref<3x4xf32>, memref<3x4xf32>, memref<12xf32>, memref<?x4xf32>
}
