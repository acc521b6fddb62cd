// Kernels for bench_parallel.py: a krnl.parallel loop whose body the vectorizer
// turns into array code but cannot merge with it (the inner bounds use the
// parallel loop), so the parallel loop stays a Python loop that
// `to_numpy(parallel=True)` runs on threads.
//
// band_exp: y[i, j] = exp(x[i, j]) for i <= j < M (compute-bound per element).
// band_scale: x[i, j] = x[i, j] * s for i <= j < M (memory-bound per element).
// Iteration i works on M - i elements.
func.func @band_exp(%N: index, %M: index, %x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  %ii = krnl.define_loops 1
  krnl.parallel %ii : !krnl.loop
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    %jj = krnl.define_loops 1
    krnl.iterate(%jj) with (%jj -> %j = %i to %M) {
      %v = krnl.load %x[%i, %j] : memref<?x?xf32>
      %e = math.exp %v : f32
      krnl.store %e, %y[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

func.func @band_scale(%N: index, %M: index, %s: f64, %x: memref<?x?xf64>) {
  %ii = krnl.define_loops 1
  krnl.parallel %ii : !krnl.loop
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    %jj = krnl.define_loops 1
    krnl.iterate(%jj) with (%jj -> %j = %i to %M) {
      %v = krnl.load %x[%i, %j] : memref<?x?xf64>
      %w = arith.mulf %v, %s : f64
      krnl.store %w, %x[%i, %j] : memref<?x?xf64>
    }
  }
  return
}
