// polykrnl: semantic
// Legality kernel: Floyd-Warshall, P[i][j] = min(P[i][j], P[i][k] + P[k][j]) in the
// k, i, j order. From the accesses alone (no knowledge that P[k][k] >= 0), the k-th
// sweep writes row k and column k that it also reads: distances (0, 0, +), (0, +, 0)
// inside one k (RAW from S0(k, i, k) and S0(k, k, j), WAR towards them), and
// (1, *, *) between sweeps, e.g. (1, -1, 0) and (1, 0, -1).
func.func @floyd_warshall(%P: memref<6x6xf32>) {
  %kk, %ii, %jj = krnl.define_loops 3
  krnl.iterate(%kk, %ii, %jj) with (%kk -> %k = 0 to 6, %ii -> %i = 0 to 6, %jj -> %j = 0 to 6) {
    %pij = krnl.load %P[%i, %j] : memref<6x6xf32>
    %pik = krnl.load %P[%i, %k] : memref<6x6xf32>
    %pkj = krnl.load %P[%k, %j] : memref<6x6xf32>
    %s = arith.addf %pik, %pkj : f32
    %m = arith.minimumf %pij, %s : f32
    krnl.store %m, %P[%i, %j] : memref<6x6xf32>
  }
  return
}
