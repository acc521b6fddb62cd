// polykrnl: semantic
// Layout conversions written as Krnl nests, as onnx-mlir writes them: each is one
// TTRANS on ConvTiles (tests/tiles/test_pto_layouts.py). f32: C0 = 8.

// NCHW -> NC1HWC0: Y[n, c1, h, w, c0] = X[n, c1 * 8 + c0, h, w].
func.func @nchw_to_nc1hwc0(%X: memref<1x32x4x8xf32>, %Y: memref<1x4x4x8x8xf32>) {
  %l:5 = krnl.define_loops 5
  krnl.iterate(%l#0, %l#1, %l#2, %l#3, %l#4) with (%l#0 -> %n = 0 to 1, %l#1 -> %c1 = 0 to 4,
      %l#2 -> %h = 0 to 4, %l#3 -> %w = 0 to 8, %l#4 -> %c0 = 0 to 8) {
    %c = affine.apply affine_map<(d0, d1) -> (d0 * 8 + d1)>(%c1, %c0)
    %v = krnl.load %X[%n, %c, %h, %w] : memref<1x32x4x8xf32>
    krnl.store %v, %Y[%n, %c1, %h, %w, %c0] : memref<1x4x4x8x8xf32>
  }
  return
}

// NC1HWC0 -> NCHW: Y[n, c, h, w] = X[n, c floordiv 8, h, w, c mod 8].
func.func @nc1hwc0_to_nchw(%X: memref<2x2x3x8x8xf32>, %Y: memref<2x16x3x8xf32>) {
  %l:4 = krnl.define_loops 4
  krnl.iterate(%l#0, %l#1, %l#2, %l#3) with (%l#0 -> %n = 0 to 2, %l#1 -> %c = 0 to 16,
      %l#2 -> %h = 0 to 3, %l#3 -> %w = 0 to 8) {
    %c1 = affine.apply affine_map<(d0) -> (d0 floordiv 8)>(%c)
    %c0 = affine.apply affine_map<(d0) -> (d0 mod 8)>(%c)
    %v = krnl.load %X[%n, %c1, %h, %w, %c0] : memref<2x2x3x8x8xf32>
    krnl.store %v, %Y[%n, %c, %h, %w] : memref<2x16x3x8xf32>
  }
  return
}

// NCDHW -> FRACTAL_Z_3D [D * C1 * H * W, N1, N0, C0]: N = 16, C = 8, D = H = W = 2.
func.func @ncdhw_to_fractal_z_3d(%X: memref<16x8x2x2x2xf32>, %Y: memref<8x1x16x8xf32>) {
  %l:5 = krnl.define_loops 5
  krnl.iterate(%l#0, %l#1, %l#2, %l#3, %l#4) with (%l#0 -> %n = 0 to 16, %l#1 -> %c = 0 to 8,
      %l#2 -> %d = 0 to 2, %l#3 -> %h = 0 to 2, %l#4 -> %w = 0 to 2) {
    %r = affine.apply affine_map<(d0, d1, d2, d3) -> ((d0 + d1 floordiv 8) * 4 + d2 * 2 + d3)>(%d, %c, %h, %w)
    %n1 = affine.apply affine_map<(d0) -> (d0 floordiv 16)>(%n)
    %n0 = affine.apply affine_map<(d0) -> (d0 mod 16)>(%n)
    %c0 = affine.apply affine_map<(d0) -> (d0 mod 8)>(%c)
    %v = krnl.load %X[%n, %c, %d, %h, %w] : memref<16x8x2x2x2xf32>
    krnl.store %v, %Y[%r, %n1, %n0, %c0] : memref<8x1x16x8xf32>
  }
  return
}

// NCHW -> NC1HWC0 with padding, as onnx-mlir writes it: C = 20 channels into C1 = 3
// blocks of C0 = 8, Y set to 0 first (the last block's 4 padding lanes stay 0).
func.func @nchw_to_nc1hwc0_padded(%X: memref<2x20x2x4xf32>, %Y: memref<2x3x2x4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  krnl.memset %Y, %zero : memref<2x3x2x4x8xf32>
  %l:4 = krnl.define_loops 4
  krnl.iterate(%l#0, %l#1, %l#2, %l#3) with (%l#0 -> %n = 0 to 2, %l#1 -> %c = 0 to 20,
      %l#2 -> %h = 0 to 2, %l#3 -> %w = 0 to 4) {
    %c1 = affine.apply affine_map<(d0) -> (d0 floordiv 8)>(%c)
    %c0 = affine.apply affine_map<(d0) -> (d0 mod 8)>(%c)
    %v = krnl.load %X[%n, %c, %h, %w] : memref<2x20x2x4xf32>
    krnl.store %v, %Y[%n, %c1, %h, %w, %c0] : memref<2x3x2x4x8xf32>
  }
  return
}
