// polykrnl: semantic
// Covers: Functions shaped as onnx-mlir's --convert-onnx-to-krnl writes them: each allocates
// its results (memref.alloc with an alignment) and returns them.
func.func @exp_result(%arg0: memref<10x10xf32>) -> memref<10x10xf32> {
  %0 = memref.alloc() {alignment = 16 : i64} : memref<10x10xf32>
  %1:2 = krnl.define_loops 2
  krnl.iterate(%1#0, %1#1) with (%1#0 -> %i = 0 to 10, %1#1 -> %j = 0 to 10) {
    %2 = krnl.load %arg0[%i, %j] : memref<10x10xf32>
    %3 = math.exp %2 : f32
    krnl.store %3, %0[%i, %j] : memref<10x10xf32>
  }
  return %0 : memref<10x10xf32>
}

// Two results, the first one twice (the caller gets the same buffer twice).
func.func @split_signs(%arg0: memref<6xf32>) -> (memref<6xf32>, memref<6xf32>, memref<6xf32>) {
  %zero = arith.constant 0.0 : f32
  %pos = memref.alloc() {alignment = 16 : i64} : memref<6xf32>
  %neg = memref.alloc() {alignment = 16 : i64} : memref<6xf32>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 6) {
    %v = krnl.load %arg0[%i] : memref<6xf32>
    %p = arith.maxnumf %v, %zero : f32
    %n = arith.minnumf %v, %zero : f32
    krnl.store %p, %pos[%i] : memref<6xf32>
    krnl.store %n, %neg[%i] : memref<6xf32>
  }
  return %pos, %neg, %pos : memref<6xf32>, memref<6xf32>, memref<6xf32>
}
