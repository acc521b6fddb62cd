// polykrnl: semantic
// Covers: onnx-mlir style dynamic shapes: sizes from memref.dim, the result allocated with them.
func.func @dynamic_add(%a: memref<?x?xf32>, %b: memref<?x?xf32>) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = memref.dim %a, %c0 : memref<?x?xf32>
  %d1 = memref.dim %a, %c1 : memref<?x?xf32>
  %out = memref.alloc(%d0, %d1) {alignment = 16 : i64} : memref<?x?xf32>
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to %d0, %l#1 -> %j = 0 to %d1) {
    %x = krnl.load %a[%i, %j] : memref<?x?xf32>
    %y = krnl.load %b[%i, %j] : memref<?x?xf32>
    %s = arith.addf %x, %y : f32
    krnl.store %s, %out[%i, %j] : memref<?x?xf32>
  }
  return %out : memref<?x?xf32>
}
