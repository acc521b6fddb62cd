// polykrnl: semantic
// Legality kernel: gemm, C[i][j] += A[i][k] * B[k][j] in the plain i, j, k order.
// One statement S0(i, j, k) reads A[i][k], B[k][j], C[i][j] and writes C[i][j].
// Dependences (RAW, WAR, WAW, all a + reduction on C[i][j]): distance (0, 0, +).
func.func @gemm(%A: memref<6x8xf32>, %B: memref<8x7xf32>, %C: memref<6x7xf32>) {
  %ii, %jj, %kk = krnl.define_loops 3
  krnl.iterate(%ii, %jj, %kk) with (%ii -> %i = 0 to 6, %jj -> %j = 0 to 7, %kk -> %k = 0 to 8) {
    %a = krnl.load %A[%i, %k] : memref<6x8xf32>
    %b = krnl.load %B[%k, %j] : memref<8x7xf32>
    %c = krnl.load %C[%i, %j] : memref<6x7xf32>
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    krnl.store %s, %C[%i, %j] : memref<6x7xf32>
  }
  return
}
