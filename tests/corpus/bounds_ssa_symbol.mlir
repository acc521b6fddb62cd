// polykrnl: semantic
// Covers: SSA-value loop bounds: a function argument (%n), a value computed at the
// function's top level (memref.dim of a dynamic memref, arith.constant), used as
// lower and upper bounds; dynamic memrefs (memref<?xf32>, memref<?x?xf32>).
func.func @add_vectors(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>, %n: index) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to %n) {
    %x = krnl.load %a[%i] : memref<?xf32>
    %y = krnl.load %b[%i] : memref<?xf32>
    %z = arith.addf %x, %y : f32
    krnl.store %z, %c[%i] : memref<?xf32>
  }
  return
}

func.func @fill_interior(%m: memref<?x?xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %m, %c0 : memref<?x?xf32>
  %cols = memref.dim %m, %c1 : memref<?x?xf32>
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = %c1 to %rows, %jj -> %j = %c0 to %cols) {
    krnl.store %v, %m[%i, %j] : memref<?x?xf32>
  }
  return
}
