// polykrnl: semantic
// Covers: a static elementwise add in the shape onnx-mlir gives SIMD code at -O3. The
// loop over the elements is blocked by the vector length 8; only the tile loop runs
// (its point loop is left unused), from 0 to n - 7, loading, adding and storing a
// vector<8xf32> at the tile's index; a scalar remainder loop covers 8 * (n floordiv 8)
// to n. With n = 1000 (a multiple of 8) the remainder loop is empty; with n = 1003 it
// adds the last 3 elements.
func.func @simd_add_1000(%a: memref<1000xf32>, %b: memref<1000xf32>) -> memref<1000xf32> {
  %out = memref.alloc() {alignment = 16 : i64} : memref<1000xf32>
  krnl.iterate() with () {
    %l = krnl.define_loops 1
    %tile, %lane = krnl.block %l 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    krnl.iterate(%tile) with (%l -> %i = 0 to 993) {
      %i0 = krnl.get_induction_var_value(%tile) : (!krnl.loop) -> index
      %x = vector.load %a[%i0] : memref<1000xf32>, vector<8xf32>
      %y = vector.load %b[%i0] : memref<1000xf32>, vector<8xf32>
      %s = arith.addf %x, %y : vector<8xf32>
      vector.store %s, %out[%i0] : memref<1000xf32>, vector<8xf32>
    }
    %r = krnl.define_loops 1
    krnl.iterate(%r) with (%r -> %j = 1000 to 1000) {
      %j0 = krnl.get_induction_var_value(%r) : (!krnl.loop) -> index
      %x = krnl.load %a[%j0] : memref<1000xf32>
      %y = krnl.load %b[%j0] : memref<1000xf32>
      %s = arith.addf %x, %y : f32
      krnl.store %s, %out[%j0] : memref<1000xf32>
    }
  }
  return %out : memref<1000xf32>
}

func.func @simd_add_1003(%a: memref<1003xf32>, %b: memref<1003xf32>) -> memref<1003xf32> {
  %out = memref.alloc() {alignment = 16 : i64} : memref<1003xf32>
  krnl.iterate() with () {
    %l = krnl.define_loops 1
    %tile, %lane = krnl.block %l 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    krnl.iterate(%tile) with (%l -> %i = 0 to 996) {
      %i0 = krnl.get_induction_var_value(%tile) : (!krnl.loop) -> index
      %x = vector.load %a[%i0] : memref<1003xf32>, vector<8xf32>
      %y = vector.load %b[%i0] : memref<1003xf32>, vector<8xf32>
      %s = arith.addf %x, %y : vector<8xf32>
      vector.store %s, %out[%i0] : memref<1003xf32>, vector<8xf32>
    }
    %r = krnl.define_loops 1
    krnl.iterate(%r) with (%r -> %j = 1000 to 1003) {
      %j0 = krnl.get_induction_var_value(%r) : (!krnl.loop) -> index
      %x = krnl.load %a[%j0] : memref<1003xf32>
      %y = krnl.load %b[%j0] : memref<1003xf32>
      %s = arith.addf %x, %y : f32
      krnl.store %s, %out[%j0] : memref<1003xf32>
    }
  }
  return %out : memref<1003xf32>
}
