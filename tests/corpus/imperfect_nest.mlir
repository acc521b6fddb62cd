// polykrnl: semantic
// Covers: imperfect nests. A blocked k loop whose point loop is placed by a nested
// `krnl.iterate(%kl) with ()`: statements before it run once per (i, tile of k)
// and statements after it once more, outside the point loop; and a matrix-vector
// product whose init and final store sit before/after the nested reduction loop.
func.func @matvec(%a: memref<16x24xf32>, %x: memref<24xf32>, %y: memref<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %ii, %kk = krnl.define_loops 2
  krnl.iterate(%ii) with (%ii -> %i = 0 to 16, %kk -> %k = 0 to 24) {
    krnl.store %zero, %y[%i] : memref<16xf32>
    krnl.iterate(%kk) with () {
      %aik = krnl.load %a[%i, %k] : memref<16x24xf32>
      %xk = krnl.load %x[%k] : memref<24xf32>
      %acc = krnl.load %y[%i] : memref<16xf32>
      %p = arith.mulf %aik, %xk : f32
      %s = arith.addf %acc, %p : f32
      krnl.store %s, %y[%i] : memref<16xf32>
    }
    %r = krnl.load %y[%i] : memref<16xf32>
    %d = arith.constant 2.0 : f32
    %h = arith.divf %r, %d : f32
    krnl.store %h, %y[%i] : memref<16xf32>
  }
  return
}

// Partial sums per tile of 8 columns: the tile handle %kb carries the statements
// that run once per tile, the point handle %kl the element loop.
func.func @tile_sums(%a: memref<4x32xf32>, %sums: memref<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %ii, %kk = krnl.define_loops 2
  %kb, %kl = krnl.block %kk 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ii, %kb) with (%ii -> %i = 0 to 4, %kk -> %k = 0 to 32) {
    %k0 = krnl.get_induction_var_value(%kb) : (!krnl.loop) -> index
    %t = affine.apply affine_map<(d0) -> (d0 floordiv 8)>(%k0)
    krnl.store %zero, %sums[%i, %t] : memref<4x4xf32>
    krnl.iterate(%kl) with () {
      %v = krnl.load %a[%i, %k] : memref<4x32xf32>
      %s = krnl.load %sums[%i, %t] : memref<4x4xf32>
      %n = arith.addf %s, %v : f32
      krnl.store %n, %sums[%i, %t] : memref<4x4xf32>
    }
  }
  return
}
