func.func @f(%A: memref<15x10xi64>, %B: memref<10xi64>, %C: memref<5x7xi64>, %N: index) {
  %zero = arith.constant 0 : i64
  %hi, %hj, %hk = krnl.define_loops 3
  %hp, %hq = krnl.define_loops 2
  %q_t, %q_p = krnl.block %hq 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.parallel(%q_t) : !krnl.loop
  %hu = krnl.define_loops 1
  %u_t, %u_p = krnl.block %hu 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %hv = krnl.define_loops 1
  %v_t, %v_p = krnl.block %hv 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.parallel(%v_t) : !krnl.loop
  krnl.iterate(%hi, %hj, %hk) with (%hi -> %i = max affine_map<()[s0] -> (s0 - 6, 1)>()[%N] to 4, %hj -> %j = 0 to 7, %hk -> %k = max affine_map<()[s0] -> (s0 - 5, 1)>()[%N] to 4) {
    %x0 = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
    %v1 = krnl.load %B[%x0] : memref<10xi64>
    %x2 = affine.apply affine_map<(d0) -> (d0 - 1)>(%k)
    %x3 = affine.apply affine_map<() -> (3)>()
    %v4 = krnl.load %C[%x2, %x3] : memref<5x7xi64>
    %s5 = arith.addi %v1, %v4 : i64
    %x6 = affine.apply affine_map<(d0) -> (d0 - 1)>(%k)
    %x7 = affine.apply affine_map<() -> (3)>()
    krnl.store %s5, %C[%x6, %x7] : memref<5x7xi64>
  }
  krnl.iterate(%hp, %q_t, %q_p) with (%hp -> %p = max affine_map<()[s0] -> (s0 - 4, 1)>()[%N] to 7, %hq -> %q = 2 to %N) {
    %x8 = affine.apply affine_map<(d0, d1) -> (d0 + d1 + 2)>(%p, %q)
    %x9 = affine.apply affine_map<() -> (0)>()
    %v10 = krnl.load %A[%x8, %x9] : memref<15x10xi64>
    %x11 = affine.apply affine_map<() -> (2)>()
    %x12 = affine.apply affine_map<(d0) -> (d0 - 2)>(%q)
    krnl.store %v10, %A[%x11, %x12] : memref<15x10xi64>
    %x13 = affine.apply affine_map<(d0) -> (d0 + 1)>(%q)
    %v14 = krnl.load %A[%x13, %q] : memref<15x10xi64>
    %x15 = affine.apply affine_map<(d0, d1) -> (d0 + d1 + 3)>(%p, %q)
    %x16 = affine.apply affine_map<(d0) -> (d0 + 1)>(%p)
    %v17 = krnl.load %A[%x15, %x16] : memref<15x10xi64>
    %s18 = arith.addi %v14, %v17 : i64
    %x19 = affine.apply affine_map<(d0, d1) -> (d0 + d1 + 2)>(%p, %q)
    krnl.store %s18, %A[%x19, %p] : memref<15x10xi64>
  }
  krnl.iterate(%u_t, %u_p) with (%hu -> %u = max affine_map<()[s0] -> (s0 - 5, 1)>()[%N] to 5) {
    %x20 = affine.apply affine_map<(d0) -> (d0 - 1)>(%u)
    %x21 = affine.apply affine_map<(d0) -> (d0 - 1)>(%u)
    %v22 = krnl.load %A[%x20, %x21] : memref<15x10xi64>
    %x23 = affine.apply affine_map<(d0) -> (d0 + 2)>(%u)
    %v24 = krnl.load %A[%x23, %u] : memref<15x10xi64>
    %s25 = arith.addi %v22, %v24 : i64
    %x26 = affine.apply affine_map<(d0) -> (d0 + 1)>(%u)
    krnl.store %s25, %A[%x26, %u] : memref<15x10xi64>
    krnl.iterate(%v_t, %v_p) with (%hv -> %v = max affine_map<(d0) -> (d0 - 2, 0)>(%u) to min affine_map<()[s0] -> (4, s0)>()[%N]) {
      %x27 = affine.apply affine_map<(d0) -> (d0 + 1)>(%v)
      %x28 = affine.apply affine_map<(d0, d1) -> (d0 + d1 - 1)>(%u, %v)
      %v29 = krnl.load %C[%x27, %x28] : memref<5x7xi64>
      %x30 = affine.apply affine_map<(d0, d1) -> (d0 + d1 - 1)>(%u, %v)
      %v31 = krnl.load %C[%v, %x30] : memref<5x7xi64>
      %s32 = arith.addi %v29, %v31 : i64
      %x33 = affine.apply affine_map<(d0, d1) -> (d0 + d1 - 1)>(%u, %v)
      krnl.store %s32, %C[%v, %x33] : memref<5x7xi64>
      %x34 = affine.apply affine_map<(d0, d1) -> (d1 + d0 + 2)>(%u, %v)
      %v35 = krnl.load %B[%x34] : memref<10xi64>
      %c36 = arith.index_cast %v : index to i64
      %s37 = arith.subi %v35, %c36 : i64
      %x38 = affine.apply affine_map<(d0, d1) -> (d0 + d1 + 2)>(%u, %v)
      krnl.store %s37, %B[%x38] : memref<10xi64>
    }
    %x39 = affine.apply affine_map<(d0) -> (d0 + 2)>(%u)
    %x40 = affine.apply affine_map<(d0) -> (d0 + 1)>(%u)
    %v41 = krnl.load %A[%x39, %x40] : memref<15x10xi64>
    %x42 = affine.apply affine_map<(d0) -> (d0 + 1)>(%u)
    %x43 = affine.apply affine_map<(d0) -> (d0 * 2 + 1)>(%u)
    %v44 = krnl.load %A[%x42, %x43] : memref<15x10xi64>
    %s45 = arith.addi %v41, %v44 : i64
    %x46 = affine.apply affine_map<(d0) -> (d0 + 2)>(%u)
    %x47 = affine.apply affine_map<(d0) -> (d0 + 1)>(%u)
    krnl.store %s45, %A[%x46, %x47] : memref<15x10xi64>
  }
  return
}
