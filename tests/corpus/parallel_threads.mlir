// polykrnl: semantic
// Covers: krnl.parallel loops that stay Python loops around array code (the
// inner loop's bounds use the parallel one: one array expression would be a
// masked one over the bounding box): with `to_numpy(parallel=True)` the
// parallel loop runs on threads over its rows instead. A triangular scaling (row i touches columns 0..i), and a per-row
// prefix sum (the inner loop carries a dependence, the rows are independent)
// over a symbolic number of columns.
func.func @tril_exp(%N: index, %x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  %ii = krnl.define_loops 1
  krnl.parallel %ii : !krnl.loop
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    %jj = krnl.define_loops 1
    krnl.iterate(%jj) with (%jj -> %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i)) {
      %v = krnl.load %x[%i, %j] : memref<?x?xf32>
      %e = math.exp %v : f32
      krnl.store %e, %y[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

func.func @band_rows(%N: index, %M: index, %x: memref<?x?xf64>) {
  %ii = krnl.define_loops 1
  krnl.parallel %ii : !krnl.loop
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    %jj = krnl.define_loops 1
    krnl.iterate(%jj) with (%jj -> %j = %i to %M) {
      %v = krnl.load %x[%i, %j] : memref<?x?xf64>
      %w = arith.mulf %v, %v : f64
      krnl.store %w, %x[%i, %j] : memref<?x?xf64>
    }
  }
  return
}
