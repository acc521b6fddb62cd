// polykrnl: semantic
// Legality kernel: Cholesky in place, right-looking (k outer, lower triangle):
// S0 A[k][k] = sqrt(|A[k][k]|) (absf only keeps random inputs free of NaN);
// S1 (loop i > k) A[i][k] /= A[k][k];
// S2 (loops i2 > k, k < j <= i2) A[i2][j] -= A[i2][k] * A[j][k].
// Inside one k, S0 -> S1 -> S2 are ordered by the sequence, and S2 writes only
// columns j > k while it reads column k: the i, i2 and j loops carry nothing; the
// k loop carries everything (e.g. S2(k, i2, j = k + 1) -> S0(k + 1)).
func.func @cholesky(%A: memref<7x7xf32>) {
  %kk, %ii, %ii2, %jj = krnl.define_loops 4
  krnl.iterate(%kk) with (%kk -> %k = 0 to 7) {
    %akk = krnl.load %A[%k, %k] : memref<7x7xf32>
    %abs = math.absf %akk : f32
    %sq = math.sqrt %abs : f32
    krnl.store %sq, %A[%k, %k] : memref<7x7xf32>
    krnl.iterate(%ii) with (%ii -> %i = affine_map<(d0) -> (d0 + 1)>(%k) to 7) {
      %x = krnl.load %A[%i, %k] : memref<7x7xf32>
      %d = krnl.load %A[%k, %k] : memref<7x7xf32>
      %q = arith.divf %x, %d : f32
      krnl.store %q, %A[%i, %k] : memref<7x7xf32>
    }
    krnl.iterate(%ii2) with (%ii2 -> %i2 = affine_map<(d0) -> (d0 + 1)>(%k) to 7) {
      krnl.iterate(%jj) with (%jj -> %j = affine_map<(d0) -> (d0 + 1)>(%k) to affine_map<(d0) -> (d0 + 1)>(%i2)) {
        %y = krnl.load %A[%i2, %j] : memref<7x7xf32>
        %a = krnl.load %A[%i2, %k] : memref<7x7xf32>
        %b = krnl.load %A[%j, %k] : memref<7x7xf32>
        %p = arith.mulf %a, %b : f32
        %s = arith.subf %y, %p : f32
        krnl.store %s, %A[%i2, %j] : memref<7x7xf32>
      }
    }
  }
  return
}
