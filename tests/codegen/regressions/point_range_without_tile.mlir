func.func @f(%A: memref<10x7xi64>, %B: memref<7x11x6xi64>, %C: memref<11x6xi64>, %N: index) {
  %zero = arith.constant 0 : i64
  %hi, %hj = krnl.define_loops 2
  krnl.permute(%hi, %hj) [0, 1] : !krnl.loop, !krnl.loop
  krnl.unroll %hj : !krnl.loop
  %hk = krnl.define_loops 1
  %hp = krnl.define_loops 1
  %hq, %hr = krnl.define_loops 2
  %r_t, %r_p = krnl.block %hr 3 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%hi, %hj) with (%hi -> %i = max affine_map<()[s0] -> (s0 - 6, 0)>()[%N] to 5, %hj -> %j = 0 to 5) {
    %x0 = affine.apply affine_map<(d0) -> (d0 * 2 + 2)>(%i)
    %v1 = krnl.load %C[%x0, %i] : memref<11x6xi64>
    %x2 = affine.apply affine_map<(d0) -> (d0 * 2 + 2)>(%i)
    %x3 = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
    %v4 = krnl.load %C[%x2, %x3] : memref<11x6xi64>
    %s5 = arith.subi %v1, %v4 : i64
    %x6 = affine.apply affine_map<(d0) -> (d0 * 2 + 2)>(%i)
    %x7 = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
    krnl.store %s5, %C[%x6, %x7] : memref<11x6xi64>
    %red0 = krnl.iterate(%hk) with (%hk -> %k = affine_map<(d0) -> (d0 - 1)>(%i) to affine_map<(d0) -> (d0 + 1)>(%i)) iter_args(%acc0 = %zero) -> (i64) {
      %x8 = affine.apply affine_map<(d0) -> (d0 + 2)>(%j)
      %x9 = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
      %v10 = krnl.load %B[%x8, %j, %x9] : memref<7x11x6xi64>
      %x11 = affine.apply affine_map<(d0) -> (d0 * 2 + 1)>(%j)
      %x12 = affine.apply affine_map<() -> (1)>()
      %v13 = krnl.load %A[%x11, %x12] : memref<10x7xi64>
      %s14 = arith.addi %acc0, %v10 : i64
      %s15 = arith.addi %s14, %v13 : i64
      krnl.yield %s15 : i64
    }
    %x16 = affine.apply affine_map<(d0) -> (d0 * 2 + 2)>(%i)
    %v17 = krnl.load %B[%i, %x16, %i] : memref<7x11x6xi64>
    %x18 = affine.apply affine_map<(d0) -> (d0 + 2)>(%i)
    %v19 = krnl.load %C[%x18, %i] : memref<11x6xi64>
    %s20 = arith.addi %v17, %v19 : i64
    %s21 = arith.addi %s20, %red0 : i64
    %x22 = affine.apply affine_map<() -> (2)>()
    krnl.store %s21, %C[%x22, %i] : memref<11x6xi64>
  }
  krnl.iterate(%hp) with (%hp -> %p = 2 to 6) {
    krnl.iterate(%hq, %r_t, %r_p) with (%hq -> %q = affine_map<(d0) -> (d0)>(%p) to affine_map<(d0) -> (d0 + 1)>(%p), %hr -> %r = affine_map<(d0) -> (d0)>(%p) to min affine_map<(d0)[s0] -> (d0 + 2, s0)>(%p)[%N]) {
      %x23 = affine.apply affine_map<(d0) -> (d0 - 2)>(%r)
      %x24 = affine.apply affine_map<(d0) -> (d0 * 2)>(%q)
      %v25 = krnl.load %B[%x23, %r, %x24] : memref<7x11x6xi64>
      %x26 = affine.apply affine_map<(d0) -> (d0 - 2)>(%p)
      %v27 = krnl.load %B[%x26, %q, %r] : memref<7x11x6xi64>
      %s28 = arith.subi %v25, %v27 : i64
      %x29 = affine.apply affine_map<(d0) -> (d0 - 1)>(%p)
      %x30 = affine.apply affine_map<(d0) -> (d0 - 1)>(%r)
      krnl.store %s28, %B[%x29, %q, %x30] : memref<7x11x6xi64>
    }
    %x31 = affine.apply affine_map<() -> (1)>()
    %x32 = affine.apply affine_map<(d0) -> (d0 - 2)>(%p)
    %v33 = krnl.load %A[%x31, %x32] : memref<10x7xi64>
    %x34 = affine.apply affine_map<(d0) -> (d0 + 2)>(%p)
    %x35 = affine.apply affine_map<(d0) -> (d0 + 1)>(%p)
    krnl.store %v33, %A[%x34, %x35] : memref<10x7xi64>
  }
  return
}
