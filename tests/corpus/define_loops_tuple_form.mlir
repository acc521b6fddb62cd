// polykrnl: semantic
// Covers: the `%l:N = krnl.define_loops N` result form (handles used as %l#0,
// %l#1, %0#2), next to the `%a, %b = ...` form, and an outer-product nest
// whose three loops come from a single tuple result.
func.func @outer_product(%x: memref<5xf32>, %y: memref<7xf32>, %out: memref<5x7xf32>) {
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 5, %l#1 -> %j = 0 to 7) {
    %a = krnl.load %x[%i] : memref<5xf32>
    %b = krnl.load %y[%j] : memref<7xf32>
    %p = arith.mulf %a, %b : f32
    krnl.store %p, %out[%i, %j] : memref<5x7xf32>
  }
  return
}

func.func @scale_3d(%t: memref<2x3x4xf32>, %s: f32) {
  %0:3 = krnl.define_loops 3
  krnl.iterate(%0#0, %0#1, %0#2) with (%0#0 -> %i = 0 to 2, %0#1 -> %j = 0 to 3, %0#2 -> %k = 0 to 4) {
    %v = krnl.load %t[%i, %j, %k] : memref<2x3x4xf32>
    %w = arith.mulf %v, %s : f32
    krnl.store %w, %t[%i, %j, %k] : memref<2x3x4xf32>
  }
  return
}
