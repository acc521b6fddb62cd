// polykrnl: semantic
// Covers: reductions written as `X[f] = X[f] op e` stored back into memory, one
// per combining op: maximumf (row max), addf of a non-product (column sum of
// exponentials, the reduction loop outside the parallel one), subf (old - e),
// mulf (row product), addi (exact integer sum over two loops), minsi (integer
// min), maxnumf (NaN-ignoring max); and a summand that does not depend on the
// reduction loop (added once per iteration: must not be summed once).
func.func @row_max(%x: memref<6x10xf32>, %out: memref<6xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 6) {
    krnl.store %ninf, %out[%i] : memref<6xf32>
  }
  %i2, %j2 = krnl.define_loops 2
  krnl.iterate(%i2, %j2) with (%i2 -> %i = 0 to 6, %j2 -> %j = 0 to 10) {
    %m = krnl.load %out[%i] : memref<6xf32>
    %v = krnl.load %x[%i, %j] : memref<6x10xf32>
    %n = arith.maximumf %m, %v : f32
    krnl.store %n, %out[%i] : memref<6xf32>
  }
  return
}

func.func @col_sum_exp(%x: memref<6x10xf32>, %s: memref<10xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 6, %jj -> %j = 0 to 10) {
    %v = krnl.load %x[%i, %j] : memref<6x10xf32>
    %e = math.exp %v : f32
    %o = krnl.load %s[%j] : memref<10xf32>
    %n = arith.addf %o, %e : f32
    krnl.store %n, %s[%j] : memref<10xf32>
  }
  return
}

func.func @row_minus(%x: memref<6x10xf64>, %r: memref<6xf64>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 6, %jj -> %j = 0 to 10) {
    %o = krnl.load %r[%i] : memref<6xf64>
    %v = krnl.load %x[%i, %j] : memref<6x10xf64>
    %h = arith.constant 0.5 : f64
    %w = arith.mulf %v, %h : f64
    %n = arith.subf %o, %w : f64
    krnl.store %n, %r[%i] : memref<6xf64>
  }
  return
}

func.func @row_product(%y: memref<6x5xf32>, %p: memref<6xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 6, %jj -> %j = 0 to 5) {
    %v = krnl.load %y[%i, %j] : memref<6x5xf32>
    %o = krnl.load %p[%i] : memref<6xf32>
    %n = arith.mulf %v, %o : f32
    krnl.store %n, %p[%i] : memref<6xf32>
  }
  return
}

func.func @int_sum(%a: memref<7x9xi32>, %total: memref<1xi32>) {
  %c0 = arith.constant 0 : index
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 7, %jj -> %j = 0 to 9) {
    %v = krnl.load %a[%i, %j] : memref<7x9xi32>
    %o = krnl.load %total[%c0] : memref<1xi32>
    %n = arith.addi %o, %v : i32
    krnl.store %n, %total[%c0] : memref<1xi32>
  }
  return
}

func.func @int_min(%a: memref<7x9xi32>, %m: memref<7xi32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 7, %jj -> %j = 0 to 9) {
    %v = krnl.load %a[%i, %j] : memref<7x9xi32>
    %o = krnl.load %m[%i] : memref<7xi32>
    %n = arith.minsi %o, %v : i32
    krnl.store %n, %m[%i] : memref<7xi32>
  }
  return
}

func.func @nan_ignoring_max(%x: memref<4x8xf32>, %out: memref<4xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 8) {
    %v = krnl.load %x[%i, %j] : memref<4x8xf32>
    %l = math.log %v : f32
    %o = krnl.load %out[%i] : memref<4xf32>
    %n = arith.maxnumf %o, %l : f32
    krnl.store %n, %out[%i] : memref<4xf32>
  }
  return
}

func.func @invariant_summand(%b: memref<6xf32>, %c: memref<6xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 6, %jj -> %j = 0 to 4) {
    %v = krnl.load %b[%i] : memref<6xf32>
    %o = krnl.load %c[%i] : memref<6xf32>
    %n = arith.addf %o, %v : f32
    krnl.store %n, %c[%i] : memref<6xf32>
  }
  return
}

// A max over a symbolic number of columns: with %n = 0 the loop runs no
// iteration and out must keep its values (np.max of an empty axis needs `initial`).
func.func @row_max_symbolic(%n: index, %x: memref<6x?xf32>, %out: memref<6xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 6, %jj -> %j = 0 to %n) {
    %m = krnl.load %out[%i] : memref<6xf32>
    %v = krnl.load %x[%i, %j] : memref<6x?xf32>
    %r = arith.maximumf %m, %v : f32
    krnl.store %r, %out[%i] : memref<6xf32>
  }
  return
}
