// polykrnl: semantic
// Legality kernel: the (1, -1) stencil A[i][j] = A[i - 1][j + 1] + 1. The element
// written by S0(i, j) is read by S0(i + 1, j - 1): one RAW dependence, distance
// (1, -1), carried by i. Interchange and rectangular i, j tiling reverse it (MLIR's
// affine tiling check misses this constant negative component); j is parallel.
func.func @stencil_skew(%A: memref<8x9xf32>) {
  %one = arith.constant 1.0 : f32
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 1 to 8, %jj -> %j = 0 to 8) {
    %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
    %v = krnl.load %A[%im, %jp] : memref<8x9xf32>
    %w = arith.addf %v, %one : f32
    krnl.store %w, %A[%i, %j] : memref<8x9xf32>
  }
  return
}
