// polykrnl: semantic
// Covers: krnl.get_linear_offset_index (row-major offsets, static and dynamic first size),
// krnl.prefetch (a hint: no value), krnl.round_even, affine.max / affine.min as clamped
// subscripts (exact in the polyhedral model), and what onnx-mlir writes around a function:
// `#map` aliases, module attributes, krnl.entry_point, loc(...), spaces in shapes.
#clamp_lo = affine_map<(d0) -> (0, d0 - 1)>
#clamp_hi = affine_map<(d0) -> (d0 + 1, 5)>
#ahead = affine_map<(d0) -> (d0 + 2)>
module attributes {llvm.target_triple = "x86_64-unknown-linux-gnu"} {
  // out[i, j] = round_even(a[i, max(j - 1, 0)] + a[i, min(j + 1, 5)]) + offset of (i, j)
  func.func @offsets(%a: memref<? x 6 x f32> loc("a"), %out: memref<? x 6 x f32>) {
    %c0 = arith.constant 0 : index
    %n = memref.dim %a, %c0 : memref<? x 6 x f32>
    %l:2 = krnl.define_loops 2
    krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to %n, %l#1 -> %j = 0 to 6) {
      %ij:2 = krnl.get_induction_var_value(%l#0, %l#1) : (!krnl.loop, !krnl.loop) -> (index, index)
      %next = affine.apply #ahead(%ij#1)
      krnl.prefetch %a[%ij#0, %next], read, locality<3>, data : memref<? x 6 x f32>
      %lo = affine.max #clamp_lo(%j)
      %hi = affine.min #clamp_hi(%j)
      %x = krnl.load %a[%i, %lo] : memref<? x 6 x f32>
      %y = krnl.load %a[%i, %hi] : memref<? x 6 x f32>
      %s = arith.addf %x, %y : f32
      %r = "krnl.round_even"(%s) : (f32) -> f32 loc(#here)
      %off = krnl.get_linear_offset_index %a at [%ij#0, symbol(%j)] : memref<? x 6 x f32>
      %o = arith.index_cast %off : index to i64
      %of = arith.sitofp %o : i64 to f32
      %v = arith.addf %r, %of : f32
      krnl.store %v, %out[%i, %j] : memref<? x 6 x f32>
    }
    return
  }
  // out[k] = offset of the k-th element of a 2x3x4 memref, walked as (k / 12, k / 4 mod 3, k mod 4)
  func.func @flat(%out: memref<24xi64>) {
    %m = memref.alloc() {alignment = 16 : i64} : memref<2x3x4xf32>
    %l = krnl.define_loops 1
    krnl.iterate(%l) with (%l -> %k = 0 to 24) {
      %off = krnl.get_linear_offset_index %m at [%k floordiv 12, (%k floordiv 4) mod 3, %k mod 4] : memref<2x3x4xf32>
      %o = arith.index_cast %off : index to i64
      krnl.store %o, %out[%k] : memref<24xi64>
    }
    return
  }
  "krnl.entry_point"() {func = @offsets, numInputs = 1 : i32, numOutputs = 1 : i32, signature = "[in]@[out]"} : () -> ()
}
#here = loc("model.onnx":12:3)
