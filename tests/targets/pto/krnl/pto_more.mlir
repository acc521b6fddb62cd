// polykrnl: semantic
// Krnl nests without a block recipe: each nest is one tile (static shapes, static valid
// regions). Used by tests/targets/pto/test_pto_emit.py.

func.func @softmax_16x40(%X: memref<16x40xf32>, %Y: memref<16x40xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %rows = krnl.define_loops 1
  krnl.iterate(%rows) with (%rows -> %i = 0 to 16) {
    %l0, %l1, %l2 = krnl.define_loops 3
    %mx = krnl.iterate(%l0) with (%l0 -> %j = 0 to 40) iter_args(%m = %ninf) -> (f32) {
      %v = krnl.load %X[%i, %j] : memref<16x40xf32>
      %nm = arith.maximumf %m, %v : f32
      krnl.yield %nm : f32
    }
    %sum = krnl.iterate(%l1) with (%l1 -> %j = 0 to 40) iter_args(%s = %zero) -> (f32) {
      %v = krnl.load %X[%i, %j] : memref<16x40xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      %ns = arith.addf %s, %e : f32
      krnl.yield %ns : f32
    }
    krnl.iterate(%l2) with (%l2 -> %j = 0 to 40) {
      %v = krnl.load %X[%i, %j] : memref<16x40xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      %r = arith.divf %e, %sum : f32
      krnl.store %r, %Y[%i, %j] : memref<16x40xf32>
    }
  }
  return
}

// Y = max(X - Z, X * Z) on a 6 x 24 nest: 6 rows are not a multiple of 8 (the static rows
// of the tile round up) and 24 f32 columns are 96 bytes (a multiple of 32).
func.func @sub_mul_max_6x24(%X: memref<6x24xf32>, %Z: memref<6x24xf32>, %Y: memref<6x24xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 6, %jj -> %j = 0 to 24) {
    %x = krnl.load %X[%i, %j] : memref<6x24xf32>
    %z = krnl.load %Z[%i, %j] : memref<6x24xf32>
    %d = arith.subf %x, %z : f32
    %p = arith.mulf %x, %z : f32
    %m = arith.maximumf %d, %p : f32
    krnl.store %m, %Y[%i, %j] : memref<6x24xf32>
  }
  return
}
