// polykrnl: semantic
// Covers: a softmax-like row reduction as onnx-mlir lowers it: per row, a max
// reduction and a sum-of-exponentials reduction carried by iter_args / krnl.yield,
// then a normalisation loop; handles for the inner loops defined inside the row
// loop; math.exp, arith.maximumf, arith.subf / divf.
func.func @softmax_rows(%x: memref<6x10xf32>, %y: memref<6x10xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %rows = krnl.define_loops 1
  krnl.iterate(%rows) with (%rows -> %i = 0 to 6) {
    %l0, %l1, %l2 = krnl.define_loops 3
    %mx = krnl.iterate(%l0) with (%l0 -> %j = 0 to 10) iter_args(%m = %ninf) -> (f32) {
      %v = krnl.load %x[%i, %j] : memref<6x10xf32>
      %nm = arith.maximumf %m, %v : f32
      krnl.yield %nm : f32
    }
    %sum = krnl.iterate(%l1) with (%l1 -> %j = 0 to 10) iter_args(%s = %zero) -> (f32) {
      %v = krnl.load %x[%i, %j] : memref<6x10xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      krnl.store %e, %y[%i, %j] : memref<6x10xf32>
      %ns = arith.addf %s, %e : f32
      krnl.yield %ns : f32
    }
    krnl.iterate(%l2) with (%l2 -> %j = 0 to 10) {
      %e = krnl.load %y[%i, %j] : memref<6x10xf32>
      %r = arith.divf %e, %sum : f32
      krnl.store %r, %y[%i, %j] : memref<6x10xf32>
    }
  }
  return
}

// The same computation with the reductions written as loads and stores into a
// per-row scratch buffer instead of iter_args (the older onnx-mlir style).
func.func @softmax_rows_scratch(%x: memref<6x10xf32>, %y: memref<6x10xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %red = memref.alloc() : memref<2xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = krnl.define_loops 1
  krnl.iterate(%rows) with (%rows -> %i = 0 to 6) {
    krnl.store %ninf, %red[%c0] : memref<2xf32>
    krnl.store %zero, %red[%c1] : memref<2xf32>
    %l0, %l1, %l2 = krnl.define_loops 3
    krnl.iterate(%l0) with (%l0 -> %j = 0 to 10) {
      %v = krnl.load %x[%i, %j] : memref<6x10xf32>
      %m = krnl.load %red[%c0] : memref<2xf32>
      %nm = arith.maximumf %m, %v : f32
      krnl.store %nm, %red[%c0] : memref<2xf32>
    }
    %mx = krnl.load %red[%c0] : memref<2xf32>
    krnl.iterate(%l1) with (%l1 -> %j = 0 to 10) {
      %v = krnl.load %x[%i, %j] : memref<6x10xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      krnl.store %e, %y[%i, %j] : memref<6x10xf32>
      %s = krnl.load %red[%c1] : memref<2xf32>
      %ns = arith.addf %s, %e : f32
      krnl.store %ns, %red[%c1] : memref<2xf32>
    }
    %sum = krnl.load %red[%c1] : memref<2xf32>
    krnl.iterate(%l2) with (%l2 -> %j = 0 to 10) {
      %e = krnl.load %y[%i, %j] : memref<6x10xf32>
      %r = arith.divf %e, %sum : f32
      krnl.store %r, %y[%i, %j] : memref<6x10xf32>
    }
  }
  memref.dealloc %red : memref<2xf32>
  return
}
