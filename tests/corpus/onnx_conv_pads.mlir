// polykrnl: semantic
// Covers: a padded 2-D convolution and a padded average pooling as onnx-mlir writes
// them. The convolution (3x3 kernel, pads 1, stride 1, dynamic image size from
// memref.dim) keeps the kernel window inside the image with loop bounds `max` of
// an affine map (-oh + 1, 0) and `min` of another (-oh + H + 1, 3), reduces over
// input channels and the window with iter_args, and adds a bias. The pooling (3x3
// window, pads 1) runs its inner loops from 0 to the window's length, a `min` of four
// expressions, reads at affine.max (kh, oh + kh - 1), sums into an alloca'd scalar,
// and divides by the window's element count, computed from affine.max / affine.min
// ops (index -> i64 -> f32). Both results are allocated and returned.
#lb = affine_map<(d0) -> (-d0 + 1, 0)>
#ub = affine_map<(d0)[s0] -> (-d0 + s0 + 1, 3)>
#in = affine_map<(d0, d1) -> (d0 + d1 - 1)>
func.func @conv2d_pads(%x: memref<1x2x?x?xf32>, %w: memref<3x2x3x3xf32>, %b: memref<3xf32>)
    -> memref<1x3x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.000000e+00 : f32
  %h = memref.dim %x, %c2 : memref<1x2x?x?xf32>
  %wd = memref.dim %x, %c3 : memref<1x2x?x?xf32>
  %y = memref.alloc(%h, %wd) {alignment = 16 : i64} : memref<1x3x?x?xf32>
  %lo:3 = krnl.define_loops 3
  krnl.iterate(%lo#0, %lo#1, %lo#2) with (%lo#0 -> %co = 0 to 3, %lo#1 -> %oh = 0 to %h,
      %lo#2 -> %ow = 0 to %wd) {
    %o:3 = krnl.get_induction_var_value(%lo#0, %lo#1, %lo#2)
      : (!krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index)
    %lr:3 = krnl.define_loops 3
    %acc = krnl.iterate(%lr#0, %lr#1, %lr#2) with (%lr#0 -> %ci = 0 to 2,
        %lr#1 -> %kh = max #lb(%o#1) to min #ub(%o#1)[%h],
        %lr#2 -> %kw = max #lb(%o#2) to min #ub(%o#2)[%wd]) iter_args(%s = %zero) -> (f32) {
      %r:3 = krnl.get_induction_var_value(%lr#0, %lr#1, %lr#2)
        : (!krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index)
      %ih = affine.apply #in(%o#1, %r#1)
      %iw = affine.apply #in(%o#2, %r#2)
      %xv = krnl.load %x[%c0, %r#0, %ih, %iw] : memref<1x2x?x?xf32>
      %wv = krnl.load %w[%o#0, %r#0, %r#1, %r#2] : memref<3x2x3x3xf32>
      %p = arith.mulf %xv, %wv : f32
      %t = arith.addf %s, %p : f32
      krnl.yield %t : f32
    }
    %bv = krnl.load %b[%o#0] : memref<3xf32>
    %out = arith.addf %acc, %bv : f32
    krnl.store %out, %y[%c0, %o#0, %o#1, %o#2] : memref<1x3x?x?xf32>
  }
  return %y : memref<1x3x?x?xf32>
}

#start = affine_map<(d0) -> (0, d0 - 1)>
#end_h = affine_map<(d0)[s0] -> (s0, d0 + 2)>
#end_w = affine_map<(d0) -> (8, d0 + 2)>
#len_h = affine_map<(d0)[s0] -> (s0, s0 - d0 + 1, d0 + 2, 3)>
#len_w = affine_map<(d0) -> (8, 9 - d0, d0 + 2, 3)>
#at = affine_map<(d0, d1) -> (d1, d0 + d1 - 1)>
func.func @avgpool_pads(%x: memref<1x2x?x8xf32>) -> memref<1x2x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.000000e+00 : f32
  %h = memref.dim %x, %c2 : memref<1x2x?x8xf32>
  %y = memref.alloc(%h) {alignment = 16 : i64} : memref<1x2x?x8xf32>
  %sum = memref.alloca() : memref<f32>
  %lo:3 = krnl.define_loops 3
  krnl.iterate(%lo#0, %lo#1, %lo#2) with (%lo#0 -> %c = 0 to 2, %lo#1 -> %oh = 0 to %h,
      %lo#2 -> %ow = 0 to 8) {
    %o:3 = krnl.get_induction_var_value(%lo#0, %lo#1, %lo#2)
      : (!krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index)
    krnl.store %zero, %sum[] : memref<f32>
    %hs = affine.max #start(%o#1)
    %he = affine.min #end_h(%o#1)[%h]
    %ws = affine.max #start(%o#2)
    %we = affine.min #end_w(%o#2)
    %nh = arith.subi %he, %hs : index
    %nw = arith.subi %we, %ws : index
    %lw:2 = krnl.define_loops 2
    krnl.iterate(%lw#0, %lw#1) with (%lw#0 -> %kh = 0 to min #len_h(%o#1)[%h],
        %lw#1 -> %kw = 0 to min #len_w(%o#2)) {
      %k:2 = krnl.get_induction_var_value(%lw#0, %lw#1) : (!krnl.loop, !krnl.loop) -> (index, index)
      %ih = affine.max #at(%o#1, %k#0)
      %iw = affine.max #at(%o#2, %k#1)
      %xv = krnl.load %x[%c0, %o#0, %ih, %iw] : memref<1x2x?x8xf32>
      %sv = krnl.load %sum[] : memref<f32>
      %t = arith.addf %sv, %xv : f32
      krnl.store %t, %sum[] : memref<f32>
    }
    %total = krnl.load %sum[] : memref<f32>
    %count = arith.muli %nh, %nw : index
    %ci = arith.index_cast %count : index to i64
    %cf = arith.sitofp %ci : i64 to f32
    %avg = arith.divf %total, %cf : f32
    krnl.store %avg, %y[%c0, %o#0, %o#1, %o#2] : memref<1x2x?x8xf32>
  }
  return %y : memref<1x2x?x8xf32>
}
