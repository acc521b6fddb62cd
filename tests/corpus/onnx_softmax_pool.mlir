// polykrnl: semantic
// Covers: A row softmax whose row temporaries (max, sum) are views of one i8 memory pool,
// as onnx-mlir bundles small allocations; the result is allocated and returned.
func.func @softmax(%x: memref<4x8xf32>) -> memref<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %pool = memref.alloc() {alignment = 16 : i64} : memref<32xi8>
  %mx = memref.view %pool[%c0][] : memref<32xi8> to memref<4xf32>
  %sm = memref.view %pool[%c16][] : memref<32xi8> to memref<4xf32>
  %out = memref.alloc() {alignment = 16 : i64} : memref<4x8xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %l:1 = krnl.define_loops 1
  krnl.iterate(%l#0) with (%l#0 -> %i = 0 to 4) {
    krnl.store %ninf, %mx[%i] : memref<4xf32>
    krnl.store %zero, %sm[%i] : memref<4xf32>
  }
  %a:2 = krnl.define_loops 2
  krnl.iterate(%a#0, %a#1) with (%a#0 -> %i = 0 to 4, %a#1 -> %j = 0 to 8) {
    %v = krnl.load %x[%i, %j] : memref<4x8xf32>
    %m = krnl.load %mx[%i] : memref<4xf32>
    %n = arith.maxnumf %m, %v : f32
    krnl.store %n, %mx[%i] : memref<4xf32>
  }
  %b:2 = krnl.define_loops 2
  krnl.iterate(%b#0, %b#1) with (%b#0 -> %i = 0 to 4, %b#1 -> %j = 0 to 8) {
    %v = krnl.load %x[%i, %j] : memref<4x8xf32>
    %m = krnl.load %mx[%i] : memref<4xf32>
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    krnl.store %e, %out[%i, %j] : memref<4x8xf32>
    %s = krnl.load %sm[%i] : memref<4xf32>
    %t = arith.addf %s, %e : f32
    krnl.store %t, %sm[%i] : memref<4xf32>
  }
  %c:2 = krnl.define_loops 2
  krnl.iterate(%c#0, %c#1) with (%c#0 -> %i = 0 to 4, %c#1 -> %j = 0 to 8) {
    %e = krnl.load %out[%i, %j] : memref<4x8xf32>
    %s = krnl.load %sm[%i] : memref<4xf32>
    %r = arith.divf %e, %s : f32
    krnl.store %r, %out[%i, %j] : memref<4x8xf32>
  }
  memref.dealloc %pool : memref<32xi8>
  return %out : memref<4x8xf32>
}
