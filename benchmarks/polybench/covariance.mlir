// covariance: the covariance matrix of N observations of M variables: mean[j] =
// column means of data, data := data - mean (centred in place), then
// cov[i][j] = cov[j][i] = sum_k data[k][i] * data[k][j] / (float_n - 1) for j >= i,
// with data N x M, cov M x M, mean of size M and float_n = N (a float argument,
// as in PolyBench).
//
// Follows PolyBench 4.2 datamining/covariance/covariance.c (kernel_covariance):
// for j: mean[j] = 0, for i: mean[j] += data[i][j], then mean[j] /= float_n; for
// i, j: data[i][j] -= mean[j]; for i, for j = i .. M - 1: cov[i][j] = 0, for k:
// cov[i][j] += data[k][i] * data[k][j], then cov[i][j] /= (float_n - 1.0) and
// cov[j][i] = cov[i][j]. The loop-invariant float_n - 1.0 is computed once at the
// top (the same value).
//
// @covariance is that program as written.
// @covariance_tiled computes the same thing with a Krnl recipe:
// - the column-mean loop is distributed (mean = 0; the sum nest; the division),
//   and the sum nest j, i is tiled 32x32 and ordered ib, jb, il, jl (row-wise
//   over data). Legal: mean[j] is only carried along i, every mean[j] still
//   sees its i updates in increasing i, and the distribution keeps each column's
//   zeroing before its sum before its division;
// - the centring nest i, j is tiled 32x32 (ib, jb, il, jl): no dependence
//   between its instances;
// - in the triangular nest, for each row i, the j loop is distributed (cov = 0;
//   the j, k product; the division and the mirror store), so that j and k form
//   one perfect nest, tiled 32x32 as kb, jb, kl, jl. Legal: inside one row the
//   product only carries cov[i][j] along k; the distribution is legal because
//   the statements of (i, j) only touch cov[i][j], except the mirror store to
//   cov[j][i] (j > i: below the diagonal, which no later statement of the nest
//   reads or writes; j = i: it stores cov[i][i] back after its division). i
//   stays outside the j loops (their bound j >= i uses it).
// Every element sees the same operations in the same order: the results are
// bitwise those of @covariance.
func.func @covariance(%M: index, %N: index, %float_n: f64, %data: memref<?x?xf64>, %cov: memref<?x?xf64>, %mean: memref<?xf64>) {
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %n1 = arith.subf %float_n, %one : f64
  %jj, %ii, %ii2, %jj2, %ii3, %jj3, %kk3 = krnl.define_loops 7
  krnl.iterate(%jj) with (%jj -> %j = 0 to %M) {
    krnl.store %zero, %mean[%j] : memref<?xf64>
    krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
      %m = krnl.load %mean[%j] : memref<?xf64>
      %d = krnl.load %data[%i, %j] : memref<?x?xf64>
      %s = arith.addf %m, %d : f64
      krnl.store %s, %mean[%j] : memref<?xf64>
    }
    %m = krnl.load %mean[%j] : memref<?xf64>
    %q = arith.divf %m, %float_n : f64
    krnl.store %q, %mean[%j] : memref<?xf64>
  }
  krnl.iterate(%ii2, %jj2) with (%ii2 -> %i2 = 0 to %N, %jj2 -> %j2 = 0 to %M) {
    %d = krnl.load %data[%i2, %j2] : memref<?x?xf64>
    %m = krnl.load %mean[%j2] : memref<?xf64>
    %s = arith.subf %d, %m : f64
    krnl.store %s, %data[%i2, %j2] : memref<?x?xf64>
  }
  krnl.iterate(%ii3) with (%ii3 -> %i3 = 0 to %M) {
    krnl.iterate(%jj3) with (%jj3 -> %j3 = %i3 to %M) {
      krnl.store %zero, %cov[%i3, %j3] : memref<?x?xf64>
      krnl.iterate(%kk3) with (%kk3 -> %k3 = 0 to %N) {
        %c = krnl.load %cov[%i3, %j3] : memref<?x?xf64>
        %a = krnl.load %data[%k3, %i3] : memref<?x?xf64>
        %b = krnl.load %data[%k3, %j3] : memref<?x?xf64>
        %p = arith.mulf %a, %b : f64
        %s = arith.addf %c, %p : f64
        krnl.store %s, %cov[%i3, %j3] : memref<?x?xf64>
      }
      %c = krnl.load %cov[%i3, %j3] : memref<?x?xf64>
      %q = arith.divf %c, %n1 : f64
      krnl.store %q, %cov[%i3, %j3] : memref<?x?xf64>
      %c2 = krnl.load %cov[%i3, %j3] : memref<?x?xf64>
      krnl.store %c2, %cov[%j3, %i3] : memref<?x?xf64>
    }
  }
  return
}

func.func @covariance_tiled(%M: index, %N: index, %float_n: f64, %data: memref<?x?xf64>, %cov: memref<?x?xf64>, %mean: memref<?xf64>) {
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %n1 = arith.subf %float_n, %one : f64
  %jj0, %jj, %ii, %jj1 = krnl.define_loops 4
  krnl.iterate(%jj0) with (%jj0 -> %j0 = 0 to %M) {
    krnl.store %zero, %mean[%j0] : memref<?xf64>
  }
  %jb, %jl = krnl.block %jj 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %ib, %il = krnl.block %ii 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%jb, %jl, %ib, %il) [1, 3, 0, 2] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %il, %jl) with (%jj -> %j = 0 to %M, %ii -> %i = 0 to %N) {
    %m = krnl.load %mean[%j] : memref<?xf64>
    %d = krnl.load %data[%i, %j] : memref<?x?xf64>
    %s = arith.addf %m, %d : f64
    krnl.store %s, %mean[%j] : memref<?xf64>
  }
  krnl.iterate(%jj1) with (%jj1 -> %j1 = 0 to %M) {
    %m = krnl.load %mean[%j1] : memref<?xf64>
    %q = arith.divf %m, %float_n : f64
    krnl.store %q, %mean[%j1] : memref<?xf64>
  }
  %ii2, %jj2 = krnl.define_loops 2
  %ib2, %il2 = krnl.block %ii2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb2, %jl2 = krnl.block %jj2 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib2, %il2, %jb2, %jl2) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib2, %jb2, %il2, %jl2) with (%ii2 -> %i2 = 0 to %N, %jj2 -> %j2 = 0 to %M) {
    %d = krnl.load %data[%i2, %j2] : memref<?x?xf64>
    %m = krnl.load %mean[%j2] : memref<?xf64>
    %s = arith.subf %d, %m : f64
    krnl.store %s, %data[%i2, %j2] : memref<?x?xf64>
  }
  %ii3, %jj3, %jj4, %kk4, %jj5 = krnl.define_loops 5
  %jb4, %jl4 = krnl.block %jj4 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb4, %kl4 = krnl.block %kk4 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%jb4, %jl4, %kb4, %kl4) [1, 3, 0, 2] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ii3) with (%ii3 -> %i3 = 0 to %M) {
    krnl.iterate(%jj3) with (%jj3 -> %j3 = %i3 to %M) {
      krnl.store %zero, %cov[%i3, %j3] : memref<?x?xf64>
    }
    krnl.iterate(%kb4, %jb4, %kl4, %jl4) with (%jj4 -> %j4 = %i3 to %M, %kk4 -> %k4 = 0 to %N) {
      %c = krnl.load %cov[%i3, %j4] : memref<?x?xf64>
      %a = krnl.load %data[%k4, %i3] : memref<?x?xf64>
      %b = krnl.load %data[%k4, %j4] : memref<?x?xf64>
      %p = arith.mulf %a, %b : f64
      %s = arith.addf %c, %p : f64
      krnl.store %s, %cov[%i3, %j4] : memref<?x?xf64>
    }
    krnl.iterate(%jj5) with (%jj5 -> %j5 = %i3 to %M) {
      %c = krnl.load %cov[%i3, %j5] : memref<?x?xf64>
      %q = arith.divf %c, %n1 : f64
      krnl.store %q, %cov[%i3, %j5] : memref<?x?xf64>
      %c2 = krnl.load %cov[%i3, %j5] : memref<?x?xf64>
      krnl.store %c2, %cov[%j5, %i3] : memref<?x?xf64>
    }
  }
  return
}
