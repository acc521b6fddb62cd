// polykrnl: semantic
// Legality kernel: 2mm as two sibling nests, T[i][j] += A[i][k] * B[k][j] (S0, loops
// i, j, k) then D[i2][j2] += T[i2][k2] * C[k2][j2] (S1, loops i2, j2, k2). Each nest
// has only its own + reduction, distance (0, 0, +); the RAW on T from S0 to S1 is
// ordered by the top-level sequence, which no block/permute/parallel changes.
func.func @two_mm(%A: memref<6x8xf32>, %B: memref<8x7xf32>, %T: memref<6x7xf32>, %C: memref<7x9xf32>, %D: memref<6x9xf32>) {
  %ii, %jj, %kk = krnl.define_loops 3
  krnl.iterate(%ii, %jj, %kk) with (%ii -> %i = 0 to 6, %jj -> %j = 0 to 7, %kk -> %k = 0 to 8) {
    %a = krnl.load %A[%i, %k] : memref<6x8xf32>
    %b = krnl.load %B[%k, %j] : memref<8x7xf32>
    %t = krnl.load %T[%i, %j] : memref<6x7xf32>
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %t, %p : f32
    krnl.store %s, %T[%i, %j] : memref<6x7xf32>
  }
  %ii2, %jj2, %kk2 = krnl.define_loops 3
  krnl.iterate(%ii2, %jj2, %kk2) with (%ii2 -> %i2 = 0 to 6, %jj2 -> %j2 = 0 to 9, %kk2 -> %k2 = 0 to 7) {
    %t = krnl.load %T[%i2, %k2] : memref<6x7xf32>
    %c = krnl.load %C[%k2, %j2] : memref<7x9xf32>
    %d = krnl.load %D[%i2, %j2] : memref<6x9xf32>
    %p = arith.mulf %t, %c : f32
    %s = arith.addf %d, %p : f32
    krnl.store %s, %D[%i2, %j2] : memref<6x9xf32>
  }
  return
}
