// polykrnl: semantic
// Covers: a loop bound read from memory the function writes (onnx-mlir's NonZero and
// Compress: count the kept elements, then loop up to the count). The kernels compute
// the count where the program does, after the counting nest, not at their start.
func.func @count(%x: memref<8xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %cnt = memref.alloca() : memref<index>
  krnl.store %c0, %cnt[] : memref<index>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 8) {
    %v = krnl.load %x[%i] : memref<8xf32>
    %p = arith.cmpf ogt, %v, %zero : f32
    %one = arith.select %p, %c1, %c0 : index
    %n0 = krnl.load %cnt[] : memref<index>
    %n1 = arith.addi %n0, %one : index
    krnl.store %n1, %cnt[] : memref<index>
  }
  %n = krnl.load %cnt[] : memref<index>
  %m = krnl.define_loops 1
  krnl.iterate(%m) with (%m -> %j = 0 to %n) {
    %w = krnl.load %x[%j] : memref<8xf32>
    krnl.store %w, %out[%j] : memref<8xf32>
  }
  return
}
