func.func @f(%A: memref<10x12xf32>, %B: memref<13x11xf32>, %C: memref<8xf32>, %N: index) {
  %zero = arith.constant 0.0 : f32
  %hi, %hj = krnl.define_loops 2
  %i_t, %i_p = krnl.block %hi 3 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%i_t, %i_p, %hj) [0, 1, 2] : !krnl.loop, !krnl.loop, !krnl.loop
  %hp, %hq = krnl.define_loops 2
  %p_t, %p_p = krnl.block %hp 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %q_t, %q_p = krnl.block %hq 3 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %hr = krnl.define_loops 1
  %hu, %hv = krnl.define_loops 2
  krnl.permute(%hu, %hv) [1, 0] : !krnl.loop, !krnl.loop
  krnl.unroll %hu : !krnl.loop
  %hw = krnl.define_loops 1
  krnl.iterate(%i_t, %i_p, %hj) with (%hi -> %i = 0 to 4, %hj -> %j = 1 to 7) {
    %x0 = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%i, %j)
    %x1 = affine.apply affine_map<(d0) -> (d0 * 2 + 2)>(%i)
    %v2 = krnl.load %A[%x0, %x1] : memref<10x12xf32>
    %x3 = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
    %x4 = affine.apply affine_map<(d0, d1) -> (d1 + d0 + 2)>(%i, %j)
    %v5 = krnl.load %A[%x3, %x4] : memref<10x12xf32>
    %s6 = arith.addf %v2, %v5 : f32
    krnl.store %s6, %C[%i] : memref<8xf32>
    %x7 = affine.apply affine_map<() -> (0)>()
    %v8 = krnl.load %C[%x7] : memref<8xf32>
    %x9 = affine.apply affine_map<() -> (0)>()
    %v10 = krnl.load %C[%x9] : memref<8xf32>
    %s11 = arith.addf %v8, %v10 : f32
    %x12 = affine.apply affine_map<() -> (0)>()
    krnl.store %s11, %C[%x12] : memref<8xf32>
  }
  krnl.iterate(%p_t, %p_p, %q_t, %q_p) with (%hp -> %p = 0 to 5, %hq -> %q = 2 to 5) {
    %x13 = affine.apply affine_map<(d0) -> (d0 * 2)>(%q)
    %v14 = krnl.load %A[%p, %x13] : memref<10x12xf32>
    %c15 = arith.index_cast %p : index to i64
    %c16 = arith.sitofp %c15 : i64 to f32
    %s17 = arith.addf %v14, %c16 : f32
    %x18 = affine.apply affine_map<(d0) -> (d0 * 2 - 1)>(%q)
    krnl.store %s17, %A[%p, %x18] : memref<10x12xf32>
    %red0 = krnl.iterate(%hr) with (%hr -> %r = 0 to 5) iter_args(%acc0 = %zero) -> (f32) {
      %x19 = affine.apply affine_map<(d0) -> (d0 + 2)>(%q)
      %v20 = krnl.load %C[%x19] : memref<8xf32>
      %x21 = affine.apply affine_map<(d0, d1) -> (d1 + d0 + 1)>(%q, %r)
      %x22 = affine.apply affine_map<(d0) -> (d0 + 2)>(%p)
      %v23 = krnl.load %B[%x21, %x22] : memref<13x11xf32>
      %s24 = arith.addf %acc0, %v20 : f32
      %s25 = arith.addf %s24, %v23 : f32
      krnl.yield %s25 : f32
    }
    %x26 = affine.apply affine_map<() -> (0)>()
    %x27 = affine.apply affine_map<(d0) -> (d0 + 1)>(%q)
    krnl.store %red0, %A[%x26, %x27] : memref<10x12xf32>
  }
  krnl.iterate(%hv, %hu) with (%hu -> %u = 2 to 5, %hv -> %v = 2 to 7) {
    krnl.iterate(%hw) with (%hw -> %w = 0 to 7) {
      %x28 = affine.apply affine_map<(d0) -> (d0 * 2)>(%w)
      %x29 = affine.apply affine_map<(d0, d1) -> (d1 + d0)>(%u, %v)
      %v30 = krnl.load %B[%x28, %x29] : memref<13x11xf32>
      %x31 = affine.apply affine_map<(d0) -> (d0 * 2 - 2)>(%u)
      %v32 = krnl.load %C[%x31] : memref<8xf32>
      %s33 = arith.subf %v30, %v32 : f32
      %x34 = affine.apply affine_map<(d0) -> (d0 + 1)>(%u)
      krnl.store %s33, %A[%x34, %u] : memref<10x12xf32>
    }
    %x35 = affine.apply affine_map<(d0) -> (d0 + 1)>(%v)
    %v36 = krnl.load %C[%x35] : memref<8xf32>
    %c37 = arith.index_cast %v : index to i64
    %c38 = arith.sitofp %c37 : i64 to f32
    %s39 = arith.subf %v36, %c38 : f32
    %x40 = affine.apply affine_map<(d0) -> (d0 + 1)>(%v)
    krnl.store %s39, %C[%x40] : memref<8xf32>
  }
  return
}
