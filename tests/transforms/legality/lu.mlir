// polykrnl: semantic
// Legality kernel: LU decomposition in place, as PolyBench writes it (triangular, i
// outer): for j < i, S0 (loop k < j) A[i][j] -= A[i][k] * A[k][j], then S1
// A[i][j] /= A[j][j]; for j2 >= i, S2 (loop k2 < i) A[i][j2] -= A[i][k2] * A[k2][j2].
// Inside one i, S1(i, j) writes A[i][j] that S0(i, j', k = j) reads for every j' > j:
// the j loop carries a dependence; the k, k2 loops carry the update of A[i][j];
// the second nest (j2, k2) carries nothing else, so it may be interchanged and tiled.
func.func @lu(%A: memref<7x7xf32>) {
  %ii, %jj, %kk, %jj2, %kk2 = krnl.define_loops 5
  krnl.iterate(%ii) with (%ii -> %i = 0 to 7) {
    krnl.iterate(%jj) with (%jj -> %j = 0 to %i) {
      krnl.iterate(%kk) with (%kk -> %k = 0 to %j) {
        %x = krnl.load %A[%i, %j] : memref<7x7xf32>
        %a = krnl.load %A[%i, %k] : memref<7x7xf32>
        %b = krnl.load %A[%k, %j] : memref<7x7xf32>
        %p = arith.mulf %a, %b : f32
        %d = arith.subf %x, %p : f32
        krnl.store %d, %A[%i, %j] : memref<7x7xf32>
      }
      %y = krnl.load %A[%i, %j] : memref<7x7xf32>
      %q = krnl.load %A[%j, %j] : memref<7x7xf32>
      %r = arith.divf %y, %q : f32
      krnl.store %r, %A[%i, %j] : memref<7x7xf32>
    }
    krnl.iterate(%jj2) with (%jj2 -> %j2 = %i to 7) {
      krnl.iterate(%kk2) with (%kk2 -> %k2 = 0 to %i) {
        %x = krnl.load %A[%i, %j2] : memref<7x7xf32>
        %a = krnl.load %A[%i, %k2] : memref<7x7xf32>
        %b = krnl.load %A[%k2, %j2] : memref<7x7xf32>
        %p = arith.mulf %a, %b : f32
        %d = arith.subf %x, %p : f32
        krnl.store %d, %A[%i, %j2] : memref<7x7xf32>
      }
    }
  }
  return
}
