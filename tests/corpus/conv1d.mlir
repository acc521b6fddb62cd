// polykrnl: semantic
// Covers: a 1-D convolution (valid padding) and a 2x2 max pooling with stride 2:
// memory indices computed with affine.apply from several induction variables
// (i + k, 2 * i + di), a reduction loop nested imperfectly (init before it), loops
// over output positions whose upper bound is an affine map of a symbol
// (n - kw + 1), and the stride written as a tile loop whose point handle is unused.
// x has n >= 3 elements, y at least n - 2.
func.func @conv1d(%x: memref<?xf32>, %w: memref<3xf32>, %y: memref<?xf32>, %n: index) {
  %zero = arith.constant 0.0 : f32
  %ii, %kk = krnl.define_loops 2
  krnl.iterate(%ii) with (%ii -> %i = 0 to affine_map<()[s0] -> (s0 - 2)>()[%n]) {
    krnl.store %zero, %y[%i] : memref<?xf32>
    krnl.iterate(%kk) with (%kk -> %k = 0 to 3) {
      %xi = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%i, %k)
      %a = krnl.load %x[%xi] : memref<?xf32>
      %b = krnl.load %w[%k] : memref<3xf32>
      %p = arith.mulf %a, %b : f32
      %acc = krnl.load %y[%i] : memref<?xf32>
      %s = arith.addf %acc, %p : f32
      krnl.store %s, %y[%i] : memref<?xf32>
    }
  }
  return
}

func.func @maxpool_2x2(%x: memref<8x12xf32>, %y: memref<4x6xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %ii, %jj, %di, %dj = krnl.define_loops 4
  %ib, %il = krnl.block %ii 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %jb) with (%ii -> %i = 0 to 8, %jj -> %j = 0 to 12) {
    %i0, %j0 = krnl.get_induction_var_value(%ib, %jb) : (!krnl.loop, !krnl.loop) -> (index, index)
    %oi = affine.apply affine_map<(d0) -> (d0 floordiv 2)>(%i0)
    %oj = affine.apply affine_map<(d0) -> (d0 floordiv 2)>(%j0)
    krnl.store %ninf, %y[%oi, %oj] : memref<4x6xf32>
    krnl.iterate(%di, %dj) with (%di -> %a = 0 to 2, %dj -> %b = 0 to 2) {
      %xi = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%i0, %a)
      %xj = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%j0, %b)
      %v = krnl.load %x[%xi, %xj] : memref<8x12xf32>
      %m = krnl.load %y[%oi, %oj] : memref<4x6xf32>
      %nm = arith.maximumf %m, %v : f32
      krnl.store %nm, %y[%oi, %oj] : memref<4x6xf32>
    }
  }
  return
}
