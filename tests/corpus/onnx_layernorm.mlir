// polykrnl: semantic
// Covers: a layer normalization over the last axis (epsilon 1e-5, scale and bias per
// column) in the shape onnx-mlir gives it: rows from a dynamic dimension, the row
// mean and the row's reciprocal standard deviation in function-level allocations
// filled by one nest each (sums carried by iter_args), then an elementwise nest that
// normalizes into the allocated, returned result; math.sqrt and divf for 1/sqrt.
func.func @layernorm(%x: memref<?x16xf32>, %scale: memref<16xf32>, %bias: memref<16xf32>)
    -> memref<?x16xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %n = arith.constant 1.600000e+01 : f32
  %eps = arith.constant 9.99999974E-6 : f32
  %rows = memref.dim %x, %c0 : memref<?x16xf32>
  %mean = memref.alloc(%rows) {alignment = 16 : i64} : memref<?xf32>
  %rstd = memref.alloc(%rows) {alignment = 16 : i64} : memref<?xf32>
  %y = memref.alloc(%rows) {alignment = 16 : i64} : memref<?x16xf32>
  %l0 = krnl.define_loops 1
  krnl.iterate(%l0) with (%l0 -> %i = 0 to %rows) {
    %r = krnl.get_induction_var_value(%l0) : (!krnl.loop) -> index
    %l1 = krnl.define_loops 1
    %s = krnl.iterate(%l1) with (%l1 -> %j = 0 to 16) iter_args(%acc = %zero) -> (f32) {
      %c = krnl.get_induction_var_value(%l1) : (!krnl.loop) -> index
      %v = krnl.load %x[%r, %c] : memref<?x16xf32>
      %t = arith.addf %acc, %v : f32
      krnl.yield %t : f32
    }
    %m = arith.divf %s, %n : f32
    krnl.store %m, %mean[%r] : memref<?xf32>
  }
  %l2 = krnl.define_loops 1
  krnl.iterate(%l2) with (%l2 -> %i = 0 to %rows) {
    %r = krnl.get_induction_var_value(%l2) : (!krnl.loop) -> index
    %m = krnl.load %mean[%r] : memref<?xf32>
    %l3 = krnl.define_loops 1
    %s = krnl.iterate(%l3) with (%l3 -> %j = 0 to 16) iter_args(%acc = %zero) -> (f32) {
      %c = krnl.get_induction_var_value(%l3) : (!krnl.loop) -> index
      %v = krnl.load %x[%r, %c] : memref<?x16xf32>
      %d = arith.subf %v, %m : f32
      %sq = arith.mulf %d, %d : f32
      %t = arith.addf %acc, %sq : f32
      krnl.yield %t : f32
    }
    %var = arith.divf %s, %n : f32
    %ve = arith.addf %var, %eps : f32
    %sd = math.sqrt %ve : f32
    %inv = arith.divf %one, %sd : f32
    krnl.store %inv, %rstd[%r] : memref<?xf32>
  }
  %l4:2 = krnl.define_loops 2
  krnl.iterate(%l4#0, %l4#1) with (%l4#0 -> %i = 0 to %rows, %l4#1 -> %j = 0 to 16) {
    %iv:2 = krnl.get_induction_var_value(%l4#0, %l4#1) : (!krnl.loop, !krnl.loop) -> (index, index)
    %v = krnl.load %x[%iv#0, %iv#1] : memref<?x16xf32>
    %m = krnl.load %mean[%iv#0] : memref<?xf32>
    %inv = krnl.load %rstd[%iv#0] : memref<?xf32>
    %g = krnl.load %scale[%iv#1] : memref<16xf32>
    %b = krnl.load %bias[%iv#1] : memref<16xf32>
    %d = arith.subf %v, %m : f32
    %nv = arith.mulf %d, %inv : f32
    %sv = arith.mulf %nv, %g : f32
    %o = arith.addf %sv, %b : f32
    krnl.store %o, %y[%iv#0, %iv#1] : memref<?x16xf32>
  }
  memref.dealloc %mean : memref<?xf32>
  memref.dealloc %rstd : memref<?xf32>
  return %y : memref<?x16xf32>
}
