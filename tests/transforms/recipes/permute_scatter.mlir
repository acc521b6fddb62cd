// polykrnl: semantic
// Covers: krnl.permute scatter semantics without blocking: permute(%ii, %jj, %kk)
// [1, 2, 0] sends i to position 1, j to 2 and k to 0, giving the order k, i, j.
// The iterate lists the handles in that order so that the body is innermost (j).
func.func @permute_scatter(%A: memref<2x3x4xf32>, %B: memref<2x3x4xf32>) {
  %ii, %jj, %kk = krnl.define_loops 3
  krnl.permute(%ii, %jj, %kk) [1, 2, 0] : !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%kk, %ii, %jj) with (%ii -> %i = 0 to 2, %jj -> %j = 0 to 3, %kk -> %k = 0 to 4) {
    %v = krnl.load %A[%i, %j, %k] : memref<2x3x4xf32>
    krnl.store %v, %B[%i, %j, %k] : memref<2x3x4xf32>
  }
  return
}
