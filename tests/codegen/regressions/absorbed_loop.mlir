func.func @f(%A: memref<10x8x8xf32>, %B: memref<12xf32>, %C: memref<12x7x8xf32>, %N: index) {
  %zero = arith.constant 0.0 : f32
  %hi, %hj = krnl.define_loops 2
  %i_t, %i_p = krnl.block %hi 3 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%i_t, %i_p, %hj) [0, 1, 2] : !krnl.loop, !krnl.loop, !krnl.loop
  %hp = krnl.define_loops 1
  %p_t, %p_p = krnl.block %hp 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%p_t, %p_p) [0, 1] : !krnl.loop, !krnl.loop
  %hq = krnl.define_loops 1
  %hu = krnl.define_loops 1
  %hv, %hw = krnl.define_loops 2
  %w_t, %w_p = krnl.block %hw 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%hv, %w_t, %w_p) [1, 0, 2] : !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%i_t, %i_p, %hj) with (%hi -> %i = 0 to 4, %hj -> %j = 0 to min affine_map<()[s0] -> (5, s0)>()[%N]) {
    %x0 = affine.apply affine_map<(d0, d1) -> (d1 + d0 + 2)>(%i, %j)
    %x1 = affine.apply affine_map<(d0) -> (d0 + 2)>(%j)
    %v2 = krnl.load %A[%x0, %j, %x1] : memref<10x8x8xf32>
    %x3 = affine.apply affine_map<(d0) -> (d0 + 2)>(%j)
    %x4 = affine.apply affine_map<(d0) -> (d0 + 2)>(%j)
    %x5 = affine.apply affine_map<() -> (1)>()
    krnl.store %v2, %A[%x3, %x4, %x5] : memref<10x8x8xf32>
    %x6 = affine.apply affine_map<() -> (1)>()
    %v7 = krnl.load %B[%x6] : memref<12xf32>
    %x8 = affine.apply affine_map<() -> (3)>()
    krnl.store %v7, %B[%x8] : memref<12xf32>
  }
  krnl.iterate(%p_t, %p_p) with (%hp -> %p = 2 to 7) {
    %x9 = affine.apply affine_map<(d0) -> (d0 - 1)>(%p)
    %x10 = affine.apply affine_map<() -> (0)>()
    %v11 = krnl.load %A[%x9, %x10, %p] : memref<10x8x8xf32>
    %c12 = arith.index_cast %p : index to i64
    %c13 = arith.sitofp %c12 : i64 to f32
    %s14 = arith.subf %v11, %c13 : f32
    %x15 = affine.apply affine_map<() -> (3)>()
    %x16 = affine.apply affine_map<() -> (1)>()
    %x17 = affine.apply affine_map<(d0) -> (d0 - 2)>(%p)
    krnl.store %s14, %C[%x15, %x16, %x17] : memref<12x7x8xf32>
    krnl.iterate(%hq) with (%hq -> %q = max affine_map<()[s0] -> (s0 - 4, 1)>()[%N] to 7) {
      %x18 = affine.apply affine_map<(d0, d1) -> (d1 + d0 - 1)>(%p, %q)
      %v19 = krnl.load %B[%x18] : memref<12xf32>
      %x20 = affine.apply affine_map<(d0) -> (d0 - 1)>(%q)
      %v21 = krnl.load %B[%x20] : memref<12xf32>
      %s22 = arith.addf %v19, %v21 : f32
      %x23 = affine.apply affine_map<(d0) -> (d0 - 2)>(%q)
      krnl.store %s22, %B[%x23] : memref<12xf32>
      %x24 = affine.apply affine_map<(d0) -> (d0 + 2)>(%q)
      %v25 = krnl.load %B[%x24] : memref<12xf32>
      %x26 = affine.apply affine_map<() -> (1)>()
      %x27 = affine.apply affine_map<(d0) -> (d0 - 1)>(%p)
      %x28 = affine.apply affine_map<() -> (3)>()
      %v29 = krnl.load %C[%x26, %x27, %x28] : memref<12x7x8xf32>
      %c30 = arith.index_cast %q : index to i64
      %c31 = arith.sitofp %c30 : i64 to f32
      %s32 = arith.addf %v25, %v29 : f32
      %s33 = arith.subf %s32, %c31 : f32
      %x34 = affine.apply affine_map<(d0, d1) -> (d0 + d1 - 1)>(%p, %q)
      %x35 = affine.apply affine_map<(d0) -> (d0 - 2)>(%q)
      %x36 = affine.apply affine_map<(d0) -> (d0 + 1)>(%q)
      krnl.store %s33, %C[%x34, %x35, %x36] : memref<12x7x8xf32>
    }
    %v37 = krnl.load %A[%p, %p, %p] : memref<10x8x8xf32>
    %c38 = arith.index_cast %p : index to i64
    %c39 = arith.sitofp %c38 : i64 to f32
    %s40 = arith.addf %v37, %c39 : f32
    %x41 = affine.apply affine_map<(d0) -> (d0 + 1)>(%p)
    %x42 = affine.apply affine_map<(d0) -> (d0 + 1)>(%p)
    %x43 = affine.apply affine_map<(d0) -> (d0 + 1)>(%p)
    krnl.store %s40, %A[%x41, %x42, %x43] : memref<10x8x8xf32>
  }
  krnl.iterate(%hu) with (%hu -> %u = max affine_map<()[s0] -> (s0 - 6, 1)>()[%N] to 7) {
    krnl.iterate(%w_t, %hv, %w_p) with (%hv -> %v = max affine_map<()[s0] -> (s0 - 5, 1)>()[%N] to 5, %hw -> %w = affine_map<(d0) -> (d0)>(%u) to affine_map<(d0) -> (d0 + 1)>(%u)) {
      %x44 = affine.apply affine_map<() -> (1)>()
      %x45 = affine.apply affine_map<(d0) -> (d0 - 1)>(%u)
      %x46 = affine.apply affine_map<(d0) -> (d0 - 1)>(%u)
      %v47 = krnl.load %C[%x44, %x45, %x46] : memref<12x7x8xf32>
      %x48 = affine.apply affine_map<(d0) -> (d0 + 1)>(%v)
      %v49 = krnl.load %B[%x48] : memref<12xf32>
      %s50 = arith.subf %v47, %v49 : f32
      %x51 = affine.apply affine_map<() -> (0)>()
      %x52 = affine.apply affine_map<(d0) -> (d0 - 1)>(%u)
      %x53 = affine.apply affine_map<(d0) -> (d0 - 1)>(%u)
      krnl.store %s50, %C[%x51, %x52, %x53] : memref<12x7x8xf32>
      %x54 = affine.apply affine_map<(d0) -> (d0 - 1)>(%w)
      %v55 = krnl.load %B[%x54] : memref<12xf32>
      %x56 = affine.apply affine_map<(d0) -> (d0 - 1)>(%w)
      %v57 = krnl.load %B[%x56] : memref<12xf32>
      %s58 = arith.addf %v55, %v57 : f32
      %x59 = affine.apply affine_map<(d0) -> (d0 - 1)>(%w)
      krnl.store %s58, %B[%x59] : memref<12xf32>
    }
    %x60 = affine.apply affine_map<(d0) -> (d0 + 2)>(%u)
    %x61 = affine.apply affine_map<(d0) -> (d0 + 1)>(%u)
    %x62 = affine.apply affine_map<() -> (2)>()
    %v63 = krnl.load %A[%x60, %x61, %x62] : memref<10x8x8xf32>
    %x64 = affine.apply affine_map<(d0) -> (d0 + 1)>(%u)
    %x65 = affine.apply affine_map<() -> (2)>()
    krnl.store %v63, %C[%x64, %u, %x65] : memref<12x7x8xf32>
  }
  return
}
