// polykrnl: semantic
// Covers: the SIMD shape of onnx-mlir's elementwise ops at -O3: inside an empty
// krnl.iterate() with (), a loop blocked by the vector length whose tile loop alone
// runs (its point loop is unused), vector.load / arith on vector<8xf32> / vector.store
// on the tile's index, up to n - 7; then a scalar remainder loop from n - n mod 8 to n.
// Dynamic size from memref.dim, result allocated and returned.
func.func @simd_add(%a: memref<?xf32>, %b: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %out = memref.alloc(%n) {alignment = 16 : i64} : memref<?xf32>
  krnl.iterate() with () {
    %l = krnl.define_loops 1
    %t, %p = krnl.block %l 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    krnl.iterate(%t) with (%l -> %i = 0 to affine_map<()[s0] -> (s0 - 7)>()[%n]) {
      %i0 = krnl.get_induction_var_value(%t) : (!krnl.loop) -> index
      %x = vector.load %a[%i0] : memref<?xf32>, vector<8xf32>
      %y = vector.load %b[%i0] : memref<?xf32>, vector<8xf32>
      %s = arith.addf %x, %y : vector<8xf32>
      vector.store %s, %out[%i0] : memref<?xf32>, vector<8xf32>
    }
    %r = krnl.define_loops 1
    krnl.iterate(%r) with (%r -> %j = affine_map<()[s0] -> (s0 - s0 mod 8)>()[%n] to %n) {
      %j0 = krnl.get_induction_var_value(%r) : (!krnl.loop) -> index
      %x = krnl.load %a[%j0] : memref<?xf32>
      %y = krnl.load %b[%j0] : memref<?xf32>
      %s = arith.addf %x, %y : f32
      krnl.store %s, %out[%j0] : memref<?xf32>
    }
  }
  return %out : memref<?xf32>
}

// A row-wise maximum as a SIMD reduction: a vector accumulator carried through
// iter_args, combined with vector.reduction <maxnumf> at the end of the row.
func.func @row_max(%x: memref<4x32xf32>) -> memref<4xf32> {
  %out = memref.alloc() {alignment = 16 : i64} : memref<4xf32>
  %ninf = arith.constant dense<0xFF800000> : vector<8xf32>
  %rows = krnl.define_loops 1
  krnl.iterate(%rows) with (%rows -> %i = 0 to 4) {
    %cols = krnl.define_loops 1
    %ct, %cp = krnl.block %cols 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    %acc = krnl.iterate(%ct) with (%cols -> %j = 0 to 32) iter_args(%m = %ninf) -> (vector<8xf32>) {
      %j0 = krnl.get_induction_var_value(%ct) : (!krnl.loop) -> index
      %v = vector.load %x[%i, %j0] : memref<4x32xf32>, vector<8xf32>
      %n = arith.maxnumf %m, %v : vector<8xf32>
      krnl.yield %n : vector<8xf32>
    }
    %r = vector.reduction <maxnumf>, %acc : vector<8xf32> into f32
    krnl.store %r, %out[%i] : memref<4xf32>
  }
  return %out : memref<4xf32>
}
