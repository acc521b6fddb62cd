// polykrnl: semantic
// Covers: krnl.iterate results carried by iter_args and krnl.yield: a scalar sum
// returned from the function, two values carried at once (min and max, with the
// arrow list in parentheses), a nested reduction whose inner result feeds the outer
// yield, an integer (i32) accumulator, and a 2-D iterate carrying one value.
func.func @sum(%x: memref<100xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %ii = krnl.define_loops 1
  %s = krnl.iterate(%ii) with (%ii -> %i = 0 to 100) iter_args(%acc = %zero) -> (f32) {
    %v = krnl.load %x[%i] : memref<100xf32>
    %n = arith.addf %acc, %v : f32
    krnl.yield %n : f32
  }
  return %s : f32
}

func.func @min_max(%x: memref<?xf32>, %n: index, %out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %first = krnl.load %x[%c0] : memref<?xf32>
  %ii = krnl.define_loops 1
  %lo, %hi = krnl.iterate(%ii) with (%ii -> %i = 1 to %n) iter_args(%a = %first, %b = %first) -> (f32, f32) {
    %v = krnl.load %x[%i] : memref<?xf32>
    %na = arith.minimumf %a, %v : f32
    %nb = arith.maximumf %b, %v : f32
    krnl.yield %na, %nb : f32, f32
  }
  krnl.store %lo, %out[%c0] : memref<2xf32>
  krnl.store %hi, %out[%c1] : memref<2xf32>
  return
}

// Frobenius norm squared: the row loop carries the total, the column loop the row sum.
func.func @sum_of_squares(%m: memref<8x12xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %ii, %jj = krnl.define_loops 2
  %total = krnl.iterate(%ii) with (%ii -> %i = 0 to 8) iter_args(%t = %zero) -> (f64) {
    %row = krnl.iterate(%jj) with (%jj -> %j = 0 to 12) iter_args(%r = %zero) -> (f64) {
      %v = krnl.load %m[%i, %j] : memref<8x12xf64>
      %sq = arith.mulf %v, %v : f64
      %nr = arith.addf %r, %sq : f64
      krnl.yield %nr : f64
    }
    %nt = arith.addf %t, %row : f64
    krnl.yield %nt : f64
  }
  return %total : f64
}

// Counting the positive entries of a 2-D array with an i32 accumulator.
func.func @count_positive(%m: memref<4x5xf32>) -> i32 {
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %fz = arith.constant 0.0 : f32
  %ii, %jj = krnl.define_loops 2
  %count = krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 5) iter_args(%c = %zero) -> (i32) {
    %v = krnl.load %m[%i, %j] : memref<4x5xf32>
    %pos = arith.cmpf ogt, %v, %fz : f32
    %inc = arith.select %pos, %one, %zero : i32
    %nc = arith.addi %c, %inc : i32
    krnl.yield %nc : i32
  }
  return %count : i32
}
