// polykrnl: syntax-only
// Covers: module-level and runtime ops of a compiled ONNX model, generic form:
// krnl.entry_point (func symbol, numInputs / numOutputs, signature string with
// escapes), krnl.global constants (dense value, shape, alignment, offset),
// krnl.getref into a memory pool, krnl.runtime_instrument, and krnl.call with
// numOfOutput, with and without a result.
module {
  "krnl.entry_point"() {func = @main_graph, numInputs = 1 : i32, numOutputs = 1 : i32, signature = "[ { \22type\22 : \22f32\22 , \22dims\22 : [2 , 2] } ]\00@[ { \22type\22 : \22f32\22 } ]\00"} : () -> ()
  func.func @main_graph(%x: memref<2x2xf32>) -> memref<2x2xf32> {
    "krnl.runtime_instrument"() {nodeName = "add0", opName = "onnx.Add", tag = 5 : i64} : () -> ()
    %w = "krnl.global"() {name = "constant_0", shape = [2, 2], value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : () -> memref<2x2xf32>
    %s = "krnl.global"() {alignment = 64 : i64, name = "constant_1", shape = [], value = dense<0.5> : tensor<f32>} : () -> memref<f32>
    %bias = "krnl.global"() {name = "constant_2", offset = 128 : i64, shape = [4], value = dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>} : () -> memref<4xf32>
    %pool = memref.alloc() : memref<64xi8>
    %off = arith.constant 16 : i64
    %y = "krnl.getref"(%pool, %off) : (memref<64xi8>, i64) -> memref<2x2xf32>
    %ii, %jj = krnl.define_loops 2
    krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 2, %jj -> %j = 0 to 2) {
      %a = krnl.load %x[%i, %j] : memref<2x2xf32>
      %b = krnl.load %w[%i, %j] : memref<2x2xf32>
      %c = krnl.load %s[] : memref<f32>
      %d = arith.addf %a, %b : f32
      %e = arith.mulf %d, %c : f32
      krnl.store %e, %y[%i, %j] : memref<2x2xf32>
    }
    "krnl.call"(%y, %x) {funcName = "external_relu", numOfOutput = 1 : si64} : (memref<2x2xf32>, memref<2x2xf32>) -> ()
    %nthreads = "krnl.call"() {funcName = "omp_get_max_threads", numOfOutput = 0 : si64} : () -> i32
    "krnl.runtime_instrument"() {nodeName = "add0", opName = "onnx.Add", tag = 6 : i64} : () -> ()
    %r = memref.alloc() : memref<2x2xf32>
    "memref.copy"(%y, %r) : (memref<2x2xf32>, memref<2x2xf32>) -> ()
    memref.dealloc %pool : memref<64xi8>
    return %r : memref<2x2xf32>
  }
}
