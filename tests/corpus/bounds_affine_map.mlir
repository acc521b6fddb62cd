// polykrnl: semantic
// Covers: loop bounds written as affine maps: constant maps `affine_map<() -> (1)>()`,
// symbol-only maps `()[s0] -> (s0 - 1)`, maps with dims and symbols
// `(d0)[s0] -> (d0 + s0)` applied to an enclosing induction variable and a
// function argument, and floordiv / mod / multiplication by constants.
func.func @stencil_3pt(%in: memref<?xf32>, %out: memref<?xf32>, %n: index) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = affine_map<() -> (1)>() to affine_map<()[s0] -> (s0 - 1)>()[%n]) {
    %im1 = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %ip1 = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
    %l = krnl.load %in[%im1] : memref<?xf32>
    %c = krnl.load %in[%i] : memref<?xf32>
    %r = krnl.load %in[%ip1] : memref<?xf32>
    %s0 = arith.addf %l, %c : f32
    %s1 = arith.addf %s0, %r : f32
    krnl.store %s1, %out[%i] : memref<?xf32>
  }
  return
}

// Row i keeps the band of columns [2i, 2i + w) (w <= 10) and copies it to row
// i floordiv 2 of a second buffer (odd rows overwrite the even row before them).
func.func @band(%m: memref<8x24xf32>, %half: memref<4x24xf32>, %w: index) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to affine_map<() -> (8)>()) {
    %jj = krnl.define_loops 1
    krnl.iterate(%jj) with (%jj -> %j = affine_map<(d0) -> (d0 * 2)>(%i) to affine_map<(d0)[s0] -> (d0 * 2 + s0)>(%i)[%w]) {
      %v = krnl.load %m[%i, %j] : memref<8x24xf32>
      %r = affine.apply affine_map<(d0) -> (d0 floordiv 2)>(%i)
      krnl.store %v, %half[%r, %j] : memref<4x24xf32>
    }
  }
  return
}

// a[2i + 1] = i mod 3 for i < n floordiv 2 (n <= 16).
func.func @every_other(%a: memref<16xf32>, %n: index) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to affine_map<()[s0] -> (s0 floordiv 2)>()[%n]) {
    %k = affine.apply affine_map<(d0) -> (d0 * 2 + 1)>(%i)
    %r = affine.apply affine_map<(d0) -> (d0 mod 3)>(%i)
    %f = arith.index_cast %r : index to i32
    %x = arith.sitofp %f : i32 to f32
    krnl.store %x, %a[%k] : memref<16xf32>
  }
  return
}
