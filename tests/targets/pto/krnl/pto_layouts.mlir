// polykrnl: semantic
// Layout conversions written as Krnl nests, as onnx-mlir writes them: each is one
// TTRANS on ConvTiles (tests/targets/pto/test_pto_layouts.py). f32: C0 = 8; f16: C0 = 16.

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

// GNCHW -> GNC1HWC0, f16 (C0 = 16): Y[g, n, c1, h, w, c0] = X[g, n, c1 * 16 + c0, h, w].
func.func @gnchw_to_gnc1hwc0(%X: memref<2x2x32x2x4xf16>, %Y: memref<2x2x2x2x4x16xf16>) {
  %l:6 = krnl.define_loops 6
  krnl.iterate(%l#0, %l#1, %l#2, %l#3, %l#4, %l#5) with (%l#0 -> %g = 0 to 2,
      %l#1 -> %n = 0 to 2, %l#2 -> %c1 = 0 to 2, %l#3 -> %h = 0 to 2, %l#4 -> %w = 0 to 4,
      %l#5 -> %c0 = 0 to 16) {
    %c = affine.apply affine_map<(d0, d1) -> (d0 * 16 + d1)>(%c1, %c0)
    %v = krnl.load %X[%g, %n, %c, %h, %w] : memref<2x2x32x2x4xf16>
    krnl.store %v, %Y[%g, %n, %c1, %h, %w, %c0] : memref<2x2x2x2x4x16xf16>
  }
  return
}

// NC1HWC0 -> FRACTAL_Z [C1 * H * W, N1, N0, C0]: N = 32, C1 = 2, H = 2, W = 3, C0 = 8,
// Y[(c1 * 2 + h) * 3 + w, n floordiv 16, n mod 16, c0] = X[n, c1, h, w, c0].
func.func @nc1hwc0_to_fractal_z(%X: memref<32x2x2x3x8xf32>, %Y: memref<12x2x16x8xf32>) {
  %l:5 = krnl.define_loops 5
  krnl.iterate(%l#0, %l#1, %l#2, %l#3, %l#4) with (%l#0 -> %n = 0 to 32, %l#1 -> %c1 = 0 to 2,
      %l#2 -> %h = 0 to 2, %l#3 -> %w = 0 to 3, %l#4 -> %c0 = 0 to 8) {
    %r = affine.apply affine_map<(d0, d1, d2) -> (d0 * 6 + d1 * 3 + d2)>(%c1, %h, %w)
    %n1 = affine.apply affine_map<(d0) -> (d0 floordiv 16)>(%n)
    %n0 = affine.apply affine_map<(d0) -> (d0 mod 16)>(%n)
    %v = krnl.load %X[%n, %c1, %h, %w, %c0] : memref<32x2x2x3x8xf32>
    krnl.store %v, %Y[%r, %n1, %n0, %c0] : memref<12x2x16x8xf32>
  }
  return
}

// NC1HWC0 -> FRACTAL_Z with padding: N = 20 into N1 = 2 blocks of N0 = 16, Y set to 0
// first (the last block's 12 padding rows of C0 lanes stay 0).
func.func @nc1hwc0_to_fractal_z_padded(%X: memref<20x1x2x2x8xf32>, %Y: memref<4x2x16x8xf32>) {
  %zero = arith.constant 0.0 : f32
  krnl.memset %Y, %zero : memref<4x2x16x8xf32>
  %l:5 = krnl.define_loops 5
  krnl.iterate(%l#0, %l#1, %l#2, %l#3, %l#4) with (%l#0 -> %n = 0 to 20, %l#1 -> %c1 = 0 to 1,
      %l#2 -> %h = 0 to 2, %l#3 -> %w = 0 to 2, %l#4 -> %c0 = 0 to 8) {
    %r = affine.apply affine_map<(d0, d1, d2) -> (d0 * 4 + d1 * 2 + d2)>(%c1, %h, %w)
    %n1 = affine.apply affine_map<(d0) -> (d0 floordiv 16)>(%n)
    %n0 = affine.apply affine_map<(d0) -> (d0 mod 16)>(%n)
    %v = krnl.load %X[%n, %c1, %h, %w, %c0] : memref<20x1x2x2x8xf32>
    krnl.store %v, %Y[%r, %n1, %n0, %c0] : memref<4x2x16x8xf32>
  }
  return
}

// GNC1HWC0 -> FRACTAL_Z [G * C1 * H * W, N1, N0, C0], f16 (C0 = 16): G = 2, N = 16,
// C1 = 2, H = 1, W = 3, Y[((g * 2 + c1) * 1 + h) * 3 + w, n floordiv 16, n mod 16, c0] =
// X[g, n, c1, h, w, c0].
func.func @gnc1hwc0_to_fractal_z(%X: memref<2x16x2x1x3x16xf16>, %Y: memref<12x1x16x16xf16>) {
  %l:6 = krnl.define_loops 6
  krnl.iterate(%l#0, %l#1, %l#2, %l#3, %l#4, %l#5) with (%l#0 -> %g = 0 to 2,
      %l#1 -> %n = 0 to 16, %l#2 -> %c1 = 0 to 2, %l#3 -> %h = 0 to 1, %l#4 -> %w = 0 to 3,
      %l#5 -> %c0 = 0 to 16) {
    %r = affine.apply affine_map<(d0, d1, d2, d3) -> (d0 * 6 + d1 * 3 + d2 * 3 + d3)>(%g, %c1, %h, %w)
    %n1 = affine.apply affine_map<(d0) -> (d0 floordiv 16)>(%n)
    %n0 = affine.apply affine_map<(d0) -> (d0 mod 16)>(%n)
    %v = krnl.load %X[%g, %n, %c1, %h, %w, %c0] : memref<2x16x2x1x3x16xf16>
    krnl.store %v, %Y[%r, %n1, %n0, %c0] : memref<12x1x16x16xf16>
  }
  return
}
