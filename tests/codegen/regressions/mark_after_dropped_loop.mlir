func.func @f(%A: memref<7x8xf32>, %B: memref<17x13xf32>, %C: memref<9x7xf32>, %N: index) {
  %zero = arith.constant 0.0 : f32
  %hi = krnl.define_loops 1
  %hj, %hk = krnl.define_loops 2
  %hp = krnl.define_loops 1
  %hq = krnl.define_loops 1
  %hu, %hv = krnl.define_loops 2
  %hw = krnl.define_loops 1
  krnl.iterate(%hi) with (%hi -> %i = 0 to 4) {
    %red0 = krnl.iterate(%hj, %hk) with (%hj -> %j = max affine_map<(d0) -> (d0 - 2, 0)>(%i) to 7, %hk -> %k = affine_map<(d0) -> (d0)>(%i) to affine_map<(d0) -> (d0 + 1)>(%i)) iter_args(%acc0 = %zero) -> (f32) {
      %x0 = affine.apply affine_map<() -> (1)>()
      %x1 = affine.apply affine_map<(d0) -> (d0 + 1)>(%k)
      %v2 = krnl.load %B[%x0, %x1] : memref<17x13xf32>
      %x3 = affine.apply affine_map<(d0) -> (d0 + 2)>(%i)
      %v4 = krnl.load %C[%x3, %k] : memref<9x7xf32>
      %s5 = arith.addf %acc0, %v2 : f32
      %s6 = arith.addf %s5, %v4 : f32
      krnl.yield %s6 : f32
    }
    %x7 = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
    krnl.store %red0, %C[%x7, %i] : memref<9x7xf32>
  }
  krnl.iterate(%hp) with (%hp -> %p = 0 to 7) {
    %red1 = krnl.iterate(%hq) with (%hq -> %q = 0 to affine_map<(d0) -> (d0 + 1)>(%p)) iter_args(%acc1 = %zero) -> (f32) {
      %x8 = affine.apply affine_map<() -> (1)>()
      %x9 = affine.apply affine_map<(d0, d1) -> (d1 + d0)>(%p, %q)
      %v10 = krnl.load %B[%x8, %x9] : memref<17x13xf32>
      %x11 = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%p, %q)
      %x12 = affine.apply affine_map<() -> (1)>()
      %v13 = krnl.load %B[%x11, %x12] : memref<17x13xf32>
      %s14 = arith.addf %acc1, %v10 : f32
      %s15 = arith.addf %s14, %v13 : f32
      krnl.yield %s15 : f32
    }
    %x16 = affine.apply affine_map<(d0) -> (d0 + 2)>(%p)
    %v17 = krnl.load %C[%x16, %p] : memref<9x7xf32>
    %c18 = arith.index_cast %p : index to i64
    %c19 = arith.sitofp %c18 : i64 to f32
    %s20 = arith.addf %v17, %red1 : f32
    %s21 = arith.addf %s20, %c19 : f32
    %x22 = affine.apply affine_map<() -> (3)>()
    krnl.store %s21, %A[%p, %x22] : memref<7x8xf32>
  }
  krnl.iterate(%hu, %hv) with (%hu -> %u = max affine_map<()[s0] -> (s0 - 5, 1)>()[%N] to %N, %hv -> %v = max affine_map<()[s0] -> (s0 - 6, 0)>()[%N] to 5) {
    %x23 = affine.apply affine_map<(d0) -> (d0 - 2)>(%u)
    %x24 = affine.apply affine_map<(d0) -> (d0 - 1)>(%u)
    %v25 = krnl.load %C[%x23, %x24] : memref<9x7xf32>
    %x26 = affine.apply affine_map<(d0) -> (d0 - 2)>(%v)
    %x27 = affine.apply affine_map<(d0) -> (d0 - 2)>(%u)
    %v28 = krnl.load %C[%x26, %x27] : memref<9x7xf32>
    %s29 = arith.addf %v25, %v28 : f32
    %x30 = affine.apply affine_map<(d0) -> (d0 - 2)>(%u)
    %x31 = affine.apply affine_map<(d0) -> (d0 - 1)>(%u)
    krnl.store %s29, %C[%x30, %x31] : memref<9x7xf32>
    krnl.iterate(%hw) with (%hw -> %w = affine_map<(d0) -> (d0)>(%u) to 5) {
      %x32 = affine.apply affine_map<(d0) -> (d0 - 1)>(%v)
      %x33 = affine.apply affine_map<(d0) -> (d0 + 1)>(%v)
      %v34 = krnl.load %A[%x32, %x33] : memref<7x8xf32>
      %x35 = affine.apply affine_map<(d0) -> (d0 - 2)>(%v)
      %x36 = affine.apply affine_map<(d0) -> (d0 + 3)>(%v)
      %v37 = krnl.load %A[%x35, %x36] : memref<7x8xf32>
      %s38 = arith.addf %v34, %v37 : f32
      %x39 = affine.apply affine_map<(d0) -> (d0 - 2)>(%v)
      %x40 = affine.apply affine_map<(d0) -> (d0 + 2)>(%v)
      krnl.store %s38, %A[%x39, %x40] : memref<7x8xf32>
    }
    %x41 = affine.apply affine_map<(d0) -> (d0 * 2 + 1)>(%u)
    %x42 = affine.apply affine_map<(d0) -> (d0 - 2)>(%v)
    %v43 = krnl.load %B[%x41, %x42] : memref<17x13xf32>
    %x44 = affine.apply affine_map<(d0) -> (d0 * 2 + 2)>(%u)
    %x45 = affine.apply affine_map<(d0) -> (d0 - 2)>(%v)
    krnl.store %v43, %B[%x44, %x45] : memref<17x13xf32>
  }
  return
}
