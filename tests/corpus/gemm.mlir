// polykrnl: semantic
// Covers: GEMM C = alpha * A * B + beta * C, written twice: the plain i, j, k nest
// with an imperfect beta-scaling statement, and a cache-tiled version (i and j
// blocked by 16, k by 8, tile loops permuted outside) over symbolic sizes.
func.func @gemm(%alpha: f32, %beta: f32, %A: memref<20x30xf32>, %B: memref<30x25xf32>, %C: memref<20x25xf32>) {
  %ii, %jj, %kk = krnl.define_loops 3
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 20, %jj -> %j = 0 to 25, %kk -> %k = 0 to 30) {
    %c = krnl.load %C[%i, %j] : memref<20x25xf32>
    %cb = arith.mulf %beta, %c : f32
    krnl.store %cb, %C[%i, %j] : memref<20x25xf32>
    krnl.iterate(%kk) with () {
      %a = krnl.load %A[%i, %k] : memref<20x30xf32>
      %b = krnl.load %B[%k, %j] : memref<30x25xf32>
      %ab = arith.mulf %a, %b : f32
      %aab = arith.mulf %alpha, %ab : f32
      %acc = krnl.load %C[%i, %j] : memref<20x25xf32>
      %sum = arith.addf %acc, %aab : f32
      krnl.store %sum, %C[%i, %j] : memref<20x25xf32>
    }
  }
  return
}

func.func @gemm_tiled(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>, %M: index, %N: index, %K: index) {
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl, %kb, %kl) [0, 3, 1, 4, 2, 5] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %il, %jb, %jl, %kb, %kl) with (%ii -> %i = 0 to %M, %jj -> %j = 0 to %N, %kk -> %k = 0 to %K) {
    %a = krnl.load %A[%i, %k] : memref<?x?xf32>
    %b = krnl.load %B[%k, %j] : memref<?x?xf32>
    %c = krnl.load %C[%i, %j] : memref<?x?xf32>
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    krnl.store %s, %C[%i, %j] : memref<?x?xf32>
  }
  return
}
