// polykrnl: semantic
// Legality kernel: out-of-place transpose B[j][i] = A[i][j]. A is only read and every
// B element is written once, so there is no dependence at all: every order, tiling
// and parallel loop is legal.
func.func @transpose(%A: memref<6x8xf32>, %B: memref<8x6xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 6, %jj -> %j = 0 to 8) {
    %v = krnl.load %A[%i, %j] : memref<6x8xf32>
    krnl.store %v, %B[%j, %i] : memref<8x6xf32>
  }
  return
}
