func.func @f(%A: memref<1x1xf32>, %B: memref<1xf32>, %C: memref<1x1xf32>, %N: index) {
  %zero = arith.constant 0.0 : f32
  %hi, %hj, %hk = krnl.define_loops 3
  %k_t, %k_p = krnl.block %hk 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%hi, %hj, %k_t, %k_p) [3, 1, 0, 2] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%k_t, %hj, %k_p, %hi) with (%hi -> %i = 2 to min affine_map<()[s0] -> (3, s0)>()[%N], %hj -> %j = 2 to 6, %hk -> %k = 0 to 6) {
    %x0 = affine.apply affine_map<(d0, d1) -> (d0 + d1 + 1)>(%i, %k)
    %x1 = affine.apply affine_map<(d0) -> (d0 + 2)>(%k)
    %v2 = krnl.load %A[%x0, %x1] : memref<1x1xf32>
    %x3 = affine.apply affine_map<() -> (2)>()
    %x4 = affine.apply affine_map<(d0) -> (d0 + 2)>(%k)
    %v5 = krnl.load %A[%x3, %x4] : memref<1x1xf32>
    %c6 = arith.index_cast %i : index to i64
    %c7 = arith.sitofp %c6 : i64 to f32
    %s8 = arith.addf %v2, %v5 : f32
    %s9 = arith.subf %s8, %c7 : f32
    %x10 = affine.apply affine_map<(d0) -> (d0 - 2)>(%i)
    %x11 = affine.apply affine_map<(d0) -> (d0 + 1)>(%k)
    krnl.store %s9, %A[%x10, %x11] : memref<1x1xf32>
  }
  return
}
