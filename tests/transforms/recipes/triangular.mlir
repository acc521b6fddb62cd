// polykrnl: semantic
// Covers: a triangular nest: the inner krnl.iterate (its own `with` list) has the
// upper bound `affine_map<(d0) -> (d0 + 1)>(%i)` on the enclosing induction
// variable, so j runs over 0..i (lower triangle including the diagonal).
func.func @triangular(%A: memref<6x6xf32>, %B: memref<6x6xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii) with (%ii -> %i = 0 to 6) {
    krnl.iterate(%jj) with (%jj -> %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i)) {
      %v = krnl.load %A[%i, %j] : memref<6x6xf32>
      krnl.store %v, %B[%i, %j] : memref<6x6xf32>
    }
  }
  return
}
