func.func @f(%A: memref<16x9x8xf32>, %B: memref<1x5x9xf32>, %C: memref<10x15x7xf32>, %N: index) {
  %zero = arith.constant 0.0 : f32
  %hi, %hj = krnl.define_loops 2
  %j_t, %j_p = krnl.block %hj 3 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %hk = krnl.define_loops 1
  krnl.parallel(%hk) : !krnl.loop
  krnl.iterate(%hi, %j_t, %j_p) with (%hi -> %i = 2 to 7, %hj -> %j = 0 to 7) {
    %x0 = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
    %v1 = krnl.load %A[%j, %x0, %j] : memref<16x9x8xf32>
    %c2 = arith.index_cast %j : index to i64
    %c3 = arith.sitofp %c2 : i64 to f32
    %s4 = arith.addf %v1, %c3 : f32
    %x5 = affine.apply affine_map<(d0) -> (d0 + 2)>(%i)
    %x6 = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
    krnl.store %s4, %A[%j, %x5, %x6] : memref<16x9x8xf32>
    krnl.iterate(%hk) with (%hk -> %k = affine_map<(d0) -> (d0)>(%i) to min affine_map<(d0)[s0] -> (d0 + 3, s0)>(%i)[%N]) {
      %x7 = affine.apply affine_map<(d0) -> (d0 * 2 + 1)>(%i)
      %x8 = affine.apply affine_map<(d0, d1) -> (d0 + d1 + 2)>(%j, %k)
      %x9 = affine.apply affine_map<(d0) -> (d0 + 1)>(%k)
      %v10 = krnl.load %C[%x7, %x8, %x9] : memref<10x15x7xf32>
      %x11 = affine.apply affine_map<() -> (0)>()
      %x12 = affine.apply affine_map<(d0) -> (d0 + 2)>(%j)
      %v13 = krnl.load %B[%x11, %k, %x12] : memref<1x5x9xf32>
      %s14 = arith.addf %v10, %v13 : f32
      %x15 = affine.apply affine_map<(d0) -> (d0 * 2 + 2)>(%j)
      %x16 = affine.apply affine_map<(d0) -> (d0 + 2)>(%k)
      krnl.store %s14, %C[%k, %x15, %x16] : memref<10x15x7xf32>
    }
    %x17 = affine.apply affine_map<(d0) -> (d0 * 2 + 3)>(%i)
    %x18 = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %v19 = krnl.load %A[%x17, %x18, %j] : memref<16x9x8xf32>
    %x20 = affine.apply affine_map<(d0) -> (d0 * 2 + 2)>(%i)
    krnl.store %v19, %A[%x20, %i, %j] : memref<16x9x8xf32>
  }
  return
}
