// polykrnl: semantic
// Covers: every Krnl scalar math op, in the generic form (they have no custom
// syntax): krnl.acos, acosh, asin, asinh, atan, atanh, tan, erf on f32 and f64, and
// the predicates krnl.isinf / krnl.isnan returning i1, applied elementwise in loops.
func.func @inverse_trig(%x: memref<16xf32>, %out: memref<5x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 16) {
    // Inputs are expected in (-1, 1).
    %v = krnl.load %x[%i] : memref<16xf32>
    %a = "krnl.acos"(%v) : (f32) -> f32
    %b = "krnl.asin"(%v) : (f32) -> f32
    %c = "krnl.atan"(%v) : (f32) -> f32
    %d = "krnl.atanh"(%v) : (f32) -> f32
    %e = "krnl.tan"(%v) : (f32) -> f32
    krnl.store %a, %out[%c0, %i] : memref<5x16xf32>
    krnl.store %b, %out[%c1, %i] : memref<5x16xf32>
    krnl.store %c, %out[%c2, %i] : memref<5x16xf32>
    krnl.store %d, %out[%c3, %i] : memref<5x16xf32>
    krnl.store %e, %out[%c4, %i] : memref<5x16xf32>
  }
  return
}

func.func @hyperbolic_erf(%x: memref<4x4xf64>, %y: memref<4x4xf64>) {
  %one = arith.constant 1.0 : f64
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 4) {
    %v = krnl.load %x[%i, %j] : memref<4x4xf64>
    %sh = "krnl.asinh"(%v) : (f64) -> f64
    // acosh needs an argument >= 1: use 1 + v * v.
    %v2 = arith.mulf %v, %v : f64
    %w = arith.addf %v2, %one : f64
    %ch = "krnl.acosh"(%w) : (f64) -> f64
    %er = "krnl.erf"(%v) : (f64) -> f64
    %s0 = arith.addf %sh, %ch : f64
    %s1 = arith.addf %s0, %er : f64
    krnl.store %s1, %y[%i, %j] : memref<4x4xf64>
  }
  return
}

// Replace infinities and NaNs by zero and record where they were.
func.func @sanitize(%x: memref<32xf32>, %bad: memref<32xi1>) {
  %zero = arith.constant 0.0 : f32
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 32) {
    %v = krnl.load %x[%i] : memref<32xf32>
    %inf = "krnl.isinf"(%v) : (f32) -> i1
    %nan = "krnl.isnan"(%v) : (f32) -> i1
    %either = arith.ori %inf, %nan : i1
    %clean = arith.select %either, %zero, %v : f32
    krnl.store %clean, %x[%i] : memref<32xf32>
    krnl.store %either, %bad[%i] : memref<32xi1>
  }
  return
}
