// polykrnl: semantic
// Programs of several nests that pass values through function-level temporaries,
// as onnx-mlir writes a softmax or a layer normalization: the PTO backend fuses
// the nests that share a temporary into one loop over row tiles and keeps the
// temporary in UB (tests/targets/pto/test_pto_fused.py).

// Row softmax in five nests: the row max and the row sum in two temporaries
// (set by the first nest, reduced through loads and stores by the second and the
// fourth), exp(x - max) stored into Y and read back, then divided by the sum.
// Every nest's rows are blocked by 8 (N rows: a partial last tile).
func.func @softmax5(%N: index, %X: memref<?x40xf32>, %Y: memref<?x40xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %mx = memref.alloc(%N) : memref<?xf32>
  %sm = memref.alloc(%N) : memref<?xf32>
  %a = krnl.define_loops 1
  %ab, %al = krnl.block %a 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ab, %al) with (%a -> %i = 0 to %N) {
    krnl.store %ninf, %mx[%i] : memref<?xf32>
    krnl.store %zero, %sm[%i] : memref<?xf32>
  }
  %b0, %b1 = krnl.define_loops 2
  %bb, %bl = krnl.block %b0 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%bb, %bl, %b1) with (%b0 -> %i = 0 to %N, %b1 -> %j = 0 to 40) {
    %x = krnl.load %X[%i, %j] : memref<?x40xf32>
    %m = krnl.load %mx[%i] : memref<?xf32>
    %n = arith.maximumf %m, %x : f32
    krnl.store %n, %mx[%i] : memref<?xf32>
  }
  %c0, %c1 = krnl.define_loops 2
  %cb, %cl = krnl.block %c0 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%cb, %cl, %c1) with (%c0 -> %i = 0 to %N, %c1 -> %j = 0 to 40) {
    %x = krnl.load %X[%i, %j] : memref<?x40xf32>
    %m = krnl.load %mx[%i] : memref<?xf32>
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    krnl.store %e, %Y[%i, %j] : memref<?x40xf32>
  }
  %d0, %d1 = krnl.define_loops 2
  %db, %dl = krnl.block %d0 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%db, %dl, %d1) with (%d0 -> %i = 0 to %N, %d1 -> %j = 0 to 40) {
    %e = krnl.load %Y[%i, %j] : memref<?x40xf32>
    %s = krnl.load %sm[%i] : memref<?xf32>
    %t = arith.addf %s, %e : f32
    krnl.store %t, %sm[%i] : memref<?xf32>
  }
  %e0, %e1 = krnl.define_loops 2
  %eb, %el = krnl.block %e0 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%eb, %el, %e1) with (%e0 -> %i = 0 to %N, %e1 -> %j = 0 to 40) {
    %e = krnl.load %Y[%i, %j] : memref<?x40xf32>
    %s = krnl.load %sm[%i] : memref<?xf32>
    %r = arith.divf %e, %s : f32
    krnl.store %r, %Y[%i, %j] : memref<?x40xf32>
  }
  memref.dealloc %mx : memref<?xf32>
  memref.dealloc %sm : memref<?xf32>
  return
}

// Layer normalization in three nests (no blocking: the 13 x 64 array is one tile):
// the row mean and the reciprocal standard deviation in temporaries (sums carried by
// iter_args, as onnx-mlir writes them), then the normalization.
func.func @layernorm3(%X: memref<13x64xf32>, %Y: memref<13x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %inv = arith.constant 0.015625 : f32
  %eps = arith.constant 1.0e-05 : f32
  %mean = memref.alloc() : memref<13xf32>
  %rstd = memref.alloc() : memref<13xf32>
  %l0 = krnl.define_loops 1
  krnl.iterate(%l0) with (%l0 -> %i = 0 to 13) {
    %l1 = krnl.define_loops 1
    %s = krnl.iterate(%l1) with (%l1 -> %j = 0 to 64) iter_args(%acc = %zero) -> (f32) {
      %v = krnl.load %X[%i, %j] : memref<13x64xf32>
      %t = arith.addf %acc, %v : f32
      krnl.yield %t : f32
    }
    %m = arith.mulf %s, %inv : f32
    krnl.store %m, %mean[%i] : memref<13xf32>
  }
  %l2 = krnl.define_loops 1
  krnl.iterate(%l2) with (%l2 -> %i = 0 to 13) {
    %m = krnl.load %mean[%i] : memref<13xf32>
    %l3 = krnl.define_loops 1
    %s = krnl.iterate(%l3) with (%l3 -> %j = 0 to 64) iter_args(%acc = %zero) -> (f32) {
      %v = krnl.load %X[%i, %j] : memref<13x64xf32>
      %d = arith.subf %v, %m : f32
      %sq = arith.mulf %d, %d : f32
      %t = arith.addf %acc, %sq : f32
      krnl.yield %t : f32
    }
    %var = arith.mulf %s, %inv : f32
    %ve = arith.addf %var, %eps : f32
    %sd = math.sqrt %ve : f32
    %r = arith.divf %one, %sd : f32
    krnl.store %r, %rstd[%i] : memref<13xf32>
  }
  %l4, %l5 = krnl.define_loops 2
  krnl.iterate(%l4, %l5) with (%l4 -> %i = 0 to 13, %l5 -> %j = 0 to 64) {
    %v = krnl.load %X[%i, %j] : memref<13x64xf32>
    %m = krnl.load %mean[%i] : memref<13xf32>
    %r = krnl.load %rstd[%i] : memref<13xf32>
    %d = arith.subf %v, %m : f32
    %o = arith.mulf %d, %r : f32
    krnl.store %o, %Y[%i, %j] : memref<13x64xf32>
  }
  memref.dealloc %mean : memref<13xf32>
  memref.dealloc %rstd : memref<13xf32>
  return
}

// Two elementwise nests through a whole-array temporary T (rows blocked by 8, columns
// by 16: every tile keeps its part of T in UB), then a third nest that shares nothing
// and keeps its own tile loop.
func.func @through_array(%N: index, %M: index, %X: memref<?x?xf32>, %Y: memref<?x?xf32>, %Z: memref<?x?xf32>) {
  %two = arith.constant 2.0 : f32
  %T = memref.alloc(%N, %M) : memref<?x?xf32>
  %a0, %a1 = krnl.define_loops 2
  %ab, %al = krnl.block %a0 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %cb, %cl = krnl.block %a1 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ab, %al, %cb, %cl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ab, %cb, %al, %cl) with (%a0 -> %i = 0 to %N, %a1 -> %j = 0 to %M) {
    %x = krnl.load %X[%i, %j] : memref<?x?xf32>
    %t = arith.mulf %x, %two : f32
    krnl.store %t, %T[%i, %j] : memref<?x?xf32>
  }
  %b0, %b1 = krnl.define_loops 2
  %bb, %bl = krnl.block %b0 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %db, %dl = krnl.block %b1 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%bb, %bl, %db, %dl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%bb, %db, %bl, %dl) with (%b0 -> %i = 0 to %N, %b1 -> %j = 0 to %M) {
    %t = krnl.load %T[%i, %j] : memref<?x?xf32>
    %x = krnl.load %X[%i, %j] : memref<?x?xf32>
    %y = arith.addf %t, %x : f32
    krnl.store %y, %Y[%i, %j] : memref<?x?xf32>
  }
  memref.dealloc %T : memref<?x?xf32>
  %c0, %c1 = krnl.define_loops 2
  %eb, %el = krnl.block %c0 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %fb, %fl = krnl.block %c1 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%eb, %el, %fb, %fl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%eb, %fb, %el, %fl) with (%c0 -> %i = 0 to %N, %c1 -> %j = 0 to %M) {
    %y = krnl.load %Y[%i, %j] : memref<?x?xf32>
    %z = math.exp %y : f32
    krnl.store %z, %Z[%i, %j] : memref<?x?xf32>
  }
  return
}

// onnx-mlir's layer normalization (tests/corpus/onnx_layernorm.mlir) with the result
// as an argument: the row mean and reciprocal standard deviation in temporaries, the
// scale and the bias one value per column (TCOLEXPANDMUL, TCOLEXPANDADD); rows
// blocked by 4.
func.func @layernorm_affine(%x: memref<?x16xf32>, %scale: memref<16xf32>, %bias: memref<16xf32>, %y: memref<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %inv = arith.constant 6.250000e-02 : f32
  %eps = arith.constant 9.99999974E-6 : f32
  %rows = memref.dim %x, %c0 : memref<?x16xf32>
  %mean = memref.alloc(%rows) {alignment = 16 : i64} : memref<?xf32>
  %rstd = memref.alloc(%rows) {alignment = 16 : i64} : memref<?xf32>
  %l0 = krnl.define_loops 1
  %l0b, %l0l = krnl.block %l0 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%l0b, %l0l) with (%l0 -> %i = 0 to %rows) {
    %r = krnl.get_induction_var_value(%l0l) : (!krnl.loop) -> index
    %l1 = krnl.define_loops 1
    %s = krnl.iterate(%l1) with (%l1 -> %j = 0 to 16) iter_args(%acc = %zero) -> (f32) {
      %c = krnl.get_induction_var_value(%l1) : (!krnl.loop) -> index
      %v = krnl.load %x[%r, %c] : memref<?x16xf32>
      %t = arith.addf %acc, %v : f32
      krnl.yield %t : f32
    }
    %m = arith.mulf %s, %inv : f32
    krnl.store %m, %mean[%r] : memref<?xf32>
  }
  %l2 = krnl.define_loops 1
  %l2b, %l2l = krnl.block %l2 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%l2b, %l2l) with (%l2 -> %i = 0 to %rows) {
    %r = krnl.get_induction_var_value(%l2l) : (!krnl.loop) -> index
    %m = krnl.load %mean[%r] : memref<?xf32>
    %l3 = krnl.define_loops 1
    %s = krnl.iterate(%l3) with (%l3 -> %j = 0 to 16) iter_args(%acc = %zero) -> (f32) {
      %c = krnl.get_induction_var_value(%l3) : (!krnl.loop) -> index
      %v = krnl.load %x[%r, %c] : memref<?x16xf32>
      %d = arith.subf %v, %m : f32
      %sq = arith.mulf %d, %d : f32
      %t = arith.addf %acc, %sq : f32
      krnl.yield %t : f32
    }
    %var = arith.mulf %s, %inv : f32
    %ve = arith.addf %var, %eps : f32
    %sd = math.sqrt %ve : f32
    %rs = arith.divf %one, %sd : f32
    krnl.store %rs, %rstd[%r] : memref<?xf32>
  }
  %l4:2 = krnl.define_loops 2
  %l4b, %l4l = krnl.block %l4#0 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%l4b, %l4l, %l4#1) with (%l4#0 -> %i = 0 to %rows, %l4#1 -> %j = 0 to 16) {
    %iv:2 = krnl.get_induction_var_value(%l4l, %l4#1) : (!krnl.loop, !krnl.loop) -> (index, index)
    %v = krnl.load %x[%iv#0, %iv#1] : memref<?x16xf32>
    %m = krnl.load %mean[%iv#0] : memref<?xf32>
    %rs = krnl.load %rstd[%iv#0] : memref<?xf32>
    %g = krnl.load %scale[%iv#1] : memref<16xf32>
    %b = krnl.load %bias[%iv#1] : memref<16xf32>
    %d = arith.subf %v, %m : f32
    %nv = arith.mulf %d, %rs : f32
    %sv = arith.mulf %nv, %g : f32
    %o = arith.addf %sv, %b : f32
    krnl.store %o, %y[%iv#0, %iv#1] : memref<?x16xf32>
  }
  memref.dealloc %mean : memref<?xf32>
  memref.dealloc %rstd : memref<?xf32>
  return
}

// Two nests share the temporary T but block their rows by 8 and by 4: one loop over
// row tiles cannot run both, so T stays in global memory (a workspace argument).
func.func @fused_tiling(%N: index, %X: memref<?x16xf32>, %Y: memref<?x16xf32>) {
  %T = memref.alloc(%N) : memref<?x16xf32>
  %a0, %a1 = krnl.define_loops 2
  %ab, %al = krnl.block %a0 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ab, %al, %a1) with (%a0 -> %i = 0 to %N, %a1 -> %j = 0 to 16) {
    %x = krnl.load %X[%i, %j] : memref<?x16xf32>
    %e = math.exp %x : f32
    krnl.store %e, %T[%i, %j] : memref<?x16xf32>
  }
  %b0, %b1 = krnl.define_loops 2
  %bb, %bl = krnl.block %b0 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%bb, %bl, %b1) with (%b0 -> %i = 0 to %N, %b1 -> %j = 0 to 16) {
    %t = krnl.load %T[%i, %j] : memref<?x16xf32>
    %y = arith.addf %t, %t : f32
    krnl.store %y, %Y[%i, %j] : memref<?x16xf32>
  }
  memref.dealloc %T : memref<?x16xf32>
  return
}

// Nests linked by the temporary S, where the second also reads Y transposed, which
// the first writes: a row tile of the second nest needs columns of Y that later row
// tiles of the first nest write, so they are not fused and S stays in global memory.
func.func @fused_window(%X: memref<16x16xf32>, %Y: memref<16x16xf32>, %Z: memref<16x16xf32>) {
  %S = memref.alloc() : memref<16x16xf32>
  %a0, %a1 = krnl.define_loops 2
  %ab, %al = krnl.block %a0 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ab, %al, %a1) with (%a0 -> %i = 0 to 16, %a1 -> %j = 0 to 16) {
    %x = krnl.load %X[%i, %j] : memref<16x16xf32>
    %e = math.exp %x : f32
    krnl.store %e, %Y[%i, %j] : memref<16x16xf32>
    krnl.store %e, %S[%i, %j] : memref<16x16xf32>
  }
  %b0, %b1 = krnl.define_loops 2
  %bb, %bl = krnl.block %b0 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%bb, %bl, %b1) with (%b0 -> %i = 0 to 16, %b1 -> %j = 0 to 16) {
    %s = krnl.load %S[%i, %j] : memref<16x16xf32>
    %y = krnl.load %Y[%j, %i] : memref<16x16xf32>
    %z = arith.addf %s, %y : f32
    krnl.store %z, %Z[%i, %j] : memref<16x16xf32>
  }
  memref.dealloc %S : memref<16x16xf32>
  return
}
