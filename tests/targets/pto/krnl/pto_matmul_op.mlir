// polykrnl: semantic
// krnl.matmul as onnx-mlir writes a MatMul (tests/targets/pto/test_pto_matmul_op.py): the
// result allocated, set to 0 by krnl.memset, then one krnl.matmul per (i, j, k) tile on
// the whole tensors, k innermost; 20 x 24 x 18 in 16 x 16 x 8 tiles (partial edges).
func.func @matmul_op(%A: memref<20x24xf32>, %B: memref<24x18xf32>) -> memref<20x18xf32> {
  %c0 = arith.constant 0 : index
  %c20 = arith.constant 20 : index
  %c18 = arith.constant 18 : index
  %c24 = arith.constant 24 : index
  %zero = arith.constant 0.0 : f32
  %C = memref.alloc() {alignment = 16 : i64} : memref<20x18xf32>
  krnl.memset %C, %zero : memref<20x18xf32>
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl, %kb, %kl) [0, 3, 1, 4, 2, 5] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %kb) with (%ii -> %i = 0 to 20, %jj -> %j = 0 to 18, %kk -> %k = 0 to 24) {
    %iv:3 = krnl.get_induction_var_value(%ib, %jb, %kb) : (!krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index)
    krnl.matmul %A[%c0, %c0], %B[%c0, %c0], %C[%c0, %c0], (%il, %jl, %kl), (%iv#0, %iv#1, %iv#2), (%c20, %c18, %c24) {computeTileSize = [16, 16, 8]} : memref<20x24xf32>, memref<24x18xf32>, memref<20x18xf32>, (!krnl.loop, !krnl.loop, !krnl.loop)
  }
  return %C : memref<20x18xf32>
}

// The same with symbolic sizes (M x K times K x N, an argument C) and f16 inputs.
func.func @matmul_op_dynamic(%M: index, %N: index, %K: index, %A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  krnl.memset %C, %zero : memref<?x?xf32>
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl, %kb, %kl) [0, 3, 1, 4, 2, 5] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %kb) with (%ii -> %i = 0 to %M, %jj -> %j = 0 to %N, %kk -> %k = 0 to %K) {
    %iv:3 = krnl.get_induction_var_value(%ib, %jb, %kb) : (!krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index)
    krnl.matmul %A[%c0, %c0], %B[%c0, %c0], %C[%c0, %c0], (%il, %jl, %kl), (%iv#0, %iv#1, %iv#2), (%M, %N, %K) {computeTileSize = [32, 16, 32]} : memref<?x?xf16>, memref<?x?xf16>, memref<?x?xf32>, (!krnl.loop, !krnl.loop, !krnl.loop)
  }
  return
}

// Without the memset, krnl.matmul's own semantics: C += A * B (the sum from L0C is added
// to what C holds by an atomic-add store).
func.func @matmul_op_not_zeroed(%A: memref<16x16xf32>, %B: memref<16x16xf32>, %C: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl, %kb, %kl) [0, 3, 1, 4, 2, 5] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %kb) with (%ii -> %i = 0 to 16, %jj -> %j = 0 to 16, %kk -> %k = 0 to 16) {
    %iv:3 = krnl.get_induction_var_value(%ib, %jb, %kb) : (!krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index)
    krnl.matmul %A[%c0, %c0], %B[%c0, %c0], %C[%c0, %c0], (%il, %jl, %kl), (%iv#0, %iv#1, %iv#2), (%c16, %c16, %c16) {computeTileSize = [16, 16, 16]} : memref<16x16xf32>, memref<16x16xf32>, memref<16x16xf32>, (!krnl.loop, !krnl.loop, !krnl.loop)
  }
  return
}
