// polykrnl: semantic
// Covers: dynamic shapes as onnx-mlir writes them: loop bounds from memref.dim of the
// arguments, the result allocated with those sizes and returned; a flat loop over
// memref.reshape views with a dynamic size (the shape operand in a memref.alloca filled
// by affine.store, freed by memref.dealloc).
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

func.func @dynamic_add_flat(%a: memref<?x10xf32>, %b: memref<?x10xf32>) -> memref<?x10xf32> {
  %c0 = arith.constant 0 : index
  %d0 = memref.dim %a, %c0 : memref<?x10xf32>
  %n = affine.apply affine_map<()[s0] -> (s0 * 10)>()[%d0]
  %out = memref.alloc(%d0) {alignment = 16 : i64} : memref<?x10xf32>
  %shape = memref.alloca() : memref<1xindex>
  affine.store %n, %shape[0] : memref<1xindex>
  %fa = memref.reshape %a(%shape) : (memref<?x10xf32>, memref<1xindex>) -> memref<?xf32>
  %fb = memref.reshape %b(%shape) : (memref<?x10xf32>, memref<1xindex>) -> memref<?xf32>
  %fo = memref.reshape %out(%shape) : (memref<?x10xf32>, memref<1xindex>) -> memref<?xf32>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %k = 0 to %n) {
    %x = krnl.load %fa[%k] : memref<?xf32>
    %y = krnl.load %fb[%k] : memref<?xf32>
    %s = arith.addf %x, %y : f32
    krnl.store %s, %fo[%k] : memref<?xf32>
  }
  memref.dealloc %shape : memref<1xindex>
  return %out : memref<?x10xf32>
}
