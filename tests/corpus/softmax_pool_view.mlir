// polykrnl: semantic
// Covers: a row softmax whose row temporaries live in memref.view's of one i8 pool, as
// onnx-mlir bundles small allocations: the row max and the row sum side by side, then
// the reciprocal of the sum in the bytes of the row max once the max is dead (two views
// of the same bytes, so the model must order them). The result is allocated and returned.
func.func @softmax(%x: memref<6x16xf32>) -> memref<6x16xf32> {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %pool = memref.alloc() {alignment = 16 : i64} : memref<64xi8>
  %mx = memref.view %pool[%c0][] : memref<64xi8> to memref<6xf32>
  %sm = memref.view %pool[%c32][] : memref<64xi8> to memref<6xf32>
  %inv = memref.view %pool[%c0][] : memref<64xi8> to memref<6xf32>
  %out = memref.alloc() {alignment = 16 : i64} : memref<6x16xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 6) {
    krnl.store %ninf, %mx[%i] : memref<6xf32>
    krnl.store %zero, %sm[%i] : memref<6xf32>
  }
  %a:2 = krnl.define_loops 2
  krnl.iterate(%a#0, %a#1) with (%a#0 -> %i = 0 to 6, %a#1 -> %j = 0 to 16) {
    %v = krnl.load %x[%i, %j] : memref<6x16xf32>
    %m = krnl.load %mx[%i] : memref<6xf32>
    %n = arith.maxnumf %m, %v : f32
    krnl.store %n, %mx[%i] : memref<6xf32>
  }
  %b:2 = krnl.define_loops 2
  krnl.iterate(%b#0, %b#1) with (%b#0 -> %i = 0 to 6, %b#1 -> %j = 0 to 16) {
    %v = krnl.load %x[%i, %j] : memref<6x16xf32>
    %m = krnl.load %mx[%i] : memref<6xf32>
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    krnl.store %e, %out[%i, %j] : memref<6x16xf32>
    %s = krnl.load %sm[%i] : memref<6xf32>
    %t = arith.addf %s, %e : f32
    krnl.store %t, %sm[%i] : memref<6xf32>
  }
  %r = krnl.define_loops 1
  krnl.iterate(%r) with (%r -> %i = 0 to 6) {
    %s = krnl.load %sm[%i] : memref<6xf32>
    %q = arith.divf %one, %s : f32
    krnl.store %q, %inv[%i] : memref<6xf32>
  }
  %c:2 = krnl.define_loops 2
  krnl.iterate(%c#0, %c#1) with (%c#0 -> %i = 0 to 6, %c#1 -> %j = 0 to 16) {
    %e = krnl.load %out[%i, %j] : memref<6x16xf32>
    %q = krnl.load %inv[%i] : memref<6xf32>
    %y = arith.mulf %e, %q : f32
    krnl.store %y, %out[%i, %j] : memref<6x16xf32>
  }
  memref.dealloc %pool : memref<64xi8>
  return %out : memref<6x16xf32>
}
