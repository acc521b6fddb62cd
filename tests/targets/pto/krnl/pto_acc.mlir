// polykrnl: semantic
// Two forms that read what was there before (tests/targets/pto/test_pto_acc.py): a matmul that
// adds to C's old values, and krnl.memset of temporaries that the nests after it
// accumulate into, kept in UB.

// C += A * B as a k-reduction nest, without zeroing C: the sum of the k tiles is added
// to C's values by the store from L0C. f16 factors, f32 C; 32 x 32 x 32 tiles (partial
// tiles at every edge for sizes that are not multiples of 32).
func.func @gemm_acc(%M: index, %N: index, %K: index, %A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf32>) {
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %il, %jl) with (%ii -> %i = 0 to %M, %jj -> %j = 0 to %N) {
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

// The same in f32 with static sizes, the rows and columns blocked by 16 (20 x 18: partial
// edge tiles) and k not blocked (one k tile of 24: TMATMUL only).
func.func @gemm_acc_f32(%A: memref<20x24xf32>, %B: memref<24x18xf32>, %C: memref<20x18xf32>) {
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %il, %jl) with (%ii -> %i = 0 to 20, %jj -> %j = 0 to 18) {
    krnl.iterate(%kk) with (%kk -> %k = 0 to 24) {
      %a = krnl.load %A[%i, %k] : memref<20x24xf32>
      %b = krnl.load %B[%k, %j] : memref<24x18xf32>
      %c = krnl.load %C[%i, %j] : memref<20x18xf32>
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %c, %p : f32
      krnl.store %s, %C[%i, %j] : memref<20x18xf32>
    }
  }
  return
}

// krnl.matmul on an argument C without a memset before it: its own semantics, C += A * B.
// 20 x 24 times 24 x 18 in 16 x 16 x 8 tiles (partial edges in i, j; three k tiles).
func.func @matmul_op_acc(%A: memref<20x24xf32>, %B: memref<24x18xf32>, %C: memref<20x18xf32>) {
  %c0 = arith.constant 0 : index
  %c20 = arith.constant 20 : index
  %c18 = arith.constant 18 : index
  %c24 = arith.constant 24 : index
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl, %kb, %kl) [0, 3, 1, 4, 2, 5] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %kb) with (%ii -> %i = 0 to 20, %jj -> %j = 0 to 18, %kk -> %k = 0 to 24) {
    %iv:3 = krnl.get_induction_var_value(%ib, %jb, %kb) : (!krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index)
    krnl.matmul %A[%c0, %c0], %B[%c0, %c0], %C[%c0, %c0], (%il, %jl, %kl), (%iv#0, %iv#1, %iv#2), (%c20, %c18, %c24) {computeTileSize = [16, 16, 8]} : memref<20x24xf32>, memref<24x18xf32>, memref<20x18xf32>, (!krnl.loop, !krnl.loop, !krnl.loop)
  }
  return
}

// Layer normalization whose row mean and variance start from krnl.memset 0 and are
// accumulated through loads and stores by the next nests (T[i] = T[i] + e); then the
// normalization. The rows blocked by 8 (N rows: a partial last tile), 32 columns.
func.func @layernorm_memset(%N: index, %X: memref<?x32xf32>, %Y: memref<?x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 0.03125 : f32
  %eps = arith.constant 1.0e-05 : f32
  %mean = memref.alloc(%N) : memref<?xf32>
  %var = memref.alloc(%N) : memref<?xf32>
  krnl.memset %mean, %zero : memref<?xf32>
  krnl.memset %var, %zero : memref<?xf32>
  %a0, %a1 = krnl.define_loops 2
  %ab, %al = krnl.block %a0 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ab, %al, %a1) with (%a0 -> %i = 0 to %N, %a1 -> %j = 0 to 32) {
    %x = krnl.load %X[%i, %j] : memref<?x32xf32>
    %m = krnl.load %mean[%i] : memref<?xf32>
    %s = arith.addf %m, %x : f32
    krnl.store %s, %mean[%i] : memref<?xf32>
  }
  %b0, %b1 = krnl.define_loops 2
  %bb, %bl = krnl.block %b0 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%bb, %bl, %b1) with (%b0 -> %i = 0 to %N, %b1 -> %j = 0 to 32) {
    %x = krnl.load %X[%i, %j] : memref<?x32xf32>
    %m = krnl.load %mean[%i] : memref<?xf32>
    %mu = arith.mulf %m, %inv : f32
    %d = arith.subf %x, %mu : f32
    %sq = arith.mulf %d, %d : f32
    %v = krnl.load %var[%i] : memref<?xf32>
    %s = arith.addf %v, %sq : f32
    krnl.store %s, %var[%i] : memref<?xf32>
  }
  %c0, %c1 = krnl.define_loops 2
  %cb, %cl = krnl.block %c0 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%cb, %cl, %c1) with (%c0 -> %i = 0 to %N, %c1 -> %j = 0 to 32) {
    %x = krnl.load %X[%i, %j] : memref<?x32xf32>
    %m = krnl.load %mean[%i] : memref<?xf32>
    %mu = arith.mulf %m, %inv : f32
    %v = krnl.load %var[%i] : memref<?xf32>
    %vm = arith.mulf %v, %inv : f32
    %ve = arith.addf %vm, %eps : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %x, %mu : f32
    %o = arith.mulf %d, %r : f32
    krnl.store %o, %Y[%i, %j] : memref<?x32xf32>
  }
  memref.dealloc %mean : memref<?xf32>
  memref.dealloc %var : memref<?xf32>
  return
}

// Row softmax whose max and sum start from krnl.memset (-inf, and 1.0, not the identity
// of the sum: the row sum is then combined with it), one nest each for the max, the
// exponentials with their sum, and the division; 40 columns, rows blocked by 8.
func.func @softmax_memset(%N: index, %X: memref<?x40xf32>, %Y: memref<?x40xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %one = arith.constant 1.0 : f32
  %mx = memref.alloc(%N) : memref<?xf32>
  %sm = memref.alloc(%N) : memref<?xf32>
  krnl.memset %mx, %ninf : memref<?xf32>
  krnl.memset %sm, %one : memref<?xf32>
  %b0, %b1 = krnl.define_loops 2
  %bb, %bl = krnl.block %b0 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%bb, %bl, %b1) with (%b0 -> %i = 0 to %N, %b1 -> %j = 0 to 40) {
    %x = krnl.load %X[%i, %j] : memref<?x40xf32>
    %m = krnl.load %mx[%i] : memref<?xf32>
    %n = arith.maxnumf %m, %x : f32
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

// A memset temporary shared by nests blocked differently (8 rows, then 4): not fused, so
// the temporary is a workspace in global memory and its memset is lowered like a
// tensor's (TEXPANDS, TSTOREs), before the nests that accumulate into it and read it.
func.func @memset_workspace(%N: index, %X: memref<?x16xf32>, %Y: memref<?x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %T = memref.alloc(%N) : memref<?xf32>
  krnl.memset %T, %zero : memref<?xf32>
  %a0 = krnl.define_loops 1
  %ab, %al = krnl.block %a0 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ab, %al) with (%a0 -> %i = 0 to %N) {
    %a1 = krnl.define_loops 1
    %s = krnl.iterate(%a1) with (%a1 -> %j = 0 to 16) iter_args(%acc = %zero) -> (f32) {
      %x = krnl.load %X[%i, %j] : memref<?x16xf32>
      %u = arith.addf %acc, %x : f32
      krnl.yield %u : f32
    }
    %t = krnl.load %T[%i] : memref<?xf32>
    %v = arith.addf %t, %s : f32
    krnl.store %v, %T[%i] : memref<?xf32>
  }
  %b0, %b1 = krnl.define_loops 2
  %bb, %bl = krnl.block %b0 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%bb, %bl, %b1) with (%b0 -> %i = 0 to %N, %b1 -> %j = 0 to 16) {
    %x = krnl.load %X[%i, %j] : memref<?x16xf32>
    %t = krnl.load %T[%i] : memref<?xf32>
    %y = arith.addf %x, %t : f32
    krnl.store %y, %Y[%i, %j] : memref<?x16xf32>
  }
  memref.dealloc %T : memref<?xf32>
  return
}

// C += A * B as one 16 x 16 x 16 tile (no blocking), f16 factors: the nest that
// pto_errors.mlir refused as matmul_not_zeroed while the cube could not add to C.
func.func @matmul_not_zeroed(%A: memref<16x16xf16>, %B: memref<16x16xf16>, %C: memref<16x16xf32>) {
  %ii, %jj, %kk = krnl.define_loops 3
  krnl.iterate(%ii, %jj, %kk) with (%ii -> %i = 0 to 16, %jj -> %j = 0 to 16, %kk -> %k = 0 to 16) {
    %a = krnl.load %A[%i, %k] : memref<16x16xf16>
    %b = krnl.load %B[%k, %j] : memref<16x16xf16>
    %c = krnl.load %C[%i, %j] : memref<16x16xf32>
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %p = arith.mulf %a32, %b32 : f32
    %s = arith.addf %c, %p : f32
    krnl.store %s, %C[%i, %j] : memref<16x16xf32>
  }
  return
}
