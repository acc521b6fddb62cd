// polykrnl: semantic
// Krnl kernels for the PTO emitter (tests/targets/pto/test_pto_emit.py): each is a
// pattern of issue 6, tiled by its recipe, with symbolic sizes where the tile
// grid has partial tiles at the edges.

// B = A^T, 16 x 16 tiles (tile loops outermost), f32.
func.func @transpose_f32(%N: index, %M: index, %A: memref<?x?xf32>, %B: memref<?x?xf32>) {
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb) with (%ii -> %i = 0 to %N, %jj -> %j = 0 to %M) {
    krnl.iterate(%il, %jl) with () {
      %v = krnl.load %A[%i, %j] : memref<?x?xf32>
      krnl.store %v, %B[%j, %i] : memref<?x?xf32>
    }
  }
  return
}

// The same in f16, 16 x 32 tiles.
func.func @transpose_f16(%N: index, %M: index, %A: memref<?x?xf16>, %B: memref<?x?xf16>) {
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb) with (%ii -> %i = 0 to %N, %jj -> %j = 0 to %M) {
    krnl.iterate(%il, %jl) with () {
      %v = krnl.load %A[%i, %j] : memref<?x?xf16>
      krnl.store %v, %B[%j, %i] : memref<?x?xf16>
    }
  }
  return
}

// Y = relu(X * 2 + Z), elementwise, 8 x 32 tiles.
func.func @scale_add_relu(%N: index, %M: index, %X: memref<?x?xf32>, %Z: memref<?x?xf32>, %Y: memref<?x?xf32>) {
  %two = arith.constant 2.0 : f32
  %zero = arith.constant 0.0 : f32
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb) with (%ii -> %i = 0 to %N, %jj -> %j = 0 to %M) {
    krnl.iterate(%il, %jl) with () {
      %x = krnl.load %X[%i, %j] : memref<?x?xf32>
      %z = krnl.load %Z[%i, %j] : memref<?x?xf32>
      %s = arith.mulf %x, %two : f32
      %t = arith.addf %s, %z : f32
      %r = arith.maximumf %t, %zero : f32
      krnl.store %r, %Y[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

// Softmax over the rows of X (N x 40), 8 rows per tile; the reductions carried by
// iter_args as onnx-mlir lowers them.
func.func @softmax(%N: index, %X: memref<?x40xf32>, %Y: memref<?x40xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %rows = krnl.define_loops 1
  %rb, %rl = krnl.block %rows 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%rb, %rl) with (%rows -> %i = 0 to %N) {
    %l0, %l1, %l2 = krnl.define_loops 3
    %mx = krnl.iterate(%l0) with (%l0 -> %j = 0 to 40) iter_args(%m = %ninf) -> (f32) {
      %v = krnl.load %X[%i, %j] : memref<?x40xf32>
      %nm = arith.maximumf %m, %v : f32
      krnl.yield %nm : f32
    }
    %sum = krnl.iterate(%l1) with (%l1 -> %j = 0 to 40) iter_args(%s = %zero) -> (f32) {
      %v = krnl.load %X[%i, %j] : memref<?x40xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      %ns = arith.addf %s, %e : f32
      krnl.yield %ns : f32
    }
    krnl.iterate(%l2) with (%l2 -> %j = 0 to 40) {
      %v = krnl.load %X[%i, %j] : memref<?x40xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      %r = arith.divf %e, %sum : f32
      krnl.store %r, %Y[%i, %j] : memref<?x40xf32>
    }
  }
  return
}

// Layer-norm-like: per row, subtract the mean and divide by sqrt(mean of squares + eps).
func.func @layer_norm(%N: index, %X: memref<?x64xf32>, %Y: memref<?x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 0.015625 : f32
  %eps = arith.constant 1.0e-05 : f32
  %rows = krnl.define_loops 1
  %rb, %rl = krnl.block %rows 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%rb, %rl) with (%rows -> %i = 0 to %N) {
    %l0, %l1, %l2 = krnl.define_loops 3
    %sum = krnl.iterate(%l0) with (%l0 -> %j = 0 to 64) iter_args(%s = %zero) -> (f32) {
      %v = krnl.load %X[%i, %j] : memref<?x64xf32>
      %ns = arith.addf %s, %v : f32
      krnl.yield %ns : f32
    }
    %mean = arith.mulf %sum, %inv : f32
    %sq = krnl.iterate(%l1) with (%l1 -> %j = 0 to 64) iter_args(%q = %zero) -> (f32) {
      %v = krnl.load %X[%i, %j] : memref<?x64xf32>
      %d = arith.subf %v, %mean : f32
      %d2 = arith.mulf %d, %d : f32
      %nq = arith.addf %q, %d2 : f32
      krnl.yield %nq : f32
    }
    %var = arith.mulf %sq, %inv : f32
    %ve = arith.addf %var, %eps : f32
    %sd = math.sqrt %ve : f32
    krnl.iterate(%l2) with (%l2 -> %j = 0 to 64) {
      %v = krnl.load %X[%i, %j] : memref<?x64xf32>
      %d = arith.subf %v, %mean : f32
      %r = arith.divf %d, %sd : f32
      krnl.store %r, %Y[%i, %j] : memref<?x64xf32>
    }
  }
  return
}

// C = A @ B (f16 in, f32 out), 32 x 32 x 32 tiles, C set to 0 before the k loop.
func.func @matmul(%M: index, %N: index, %K: index, %A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf32>) {
  %zero = arith.constant 0.0 : f32
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %il, %jl) with (%ii -> %i = 0 to %M, %jj -> %j = 0 to %N) {
    krnl.store %zero, %C[%i, %j] : memref<?x?xf32>
    krnl.iterate(%kb, %kl) with (%kk -> %k = 0 to %K) {
      %a = krnl.load %A[%i, %k] : memref<?x?xf16>
      %b = krnl.load %B[%k, %j] : memref<?x?xf16>
      %c = krnl.load %C[%i, %j] : memref<?x?xf32>
      %a32 = arith.extf %a : f16 to f32
      %b32 = arith.extf %b : f16 to f32
      %p = arith.mulf %a32, %b32 : f32
      %s = arith.addf %c, %p : f32
      krnl.store %s, %C[%i, %j] : memref<?x?xf32>
    }
  }
  return
}
