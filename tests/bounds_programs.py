"""Krnl programs the memory-safety tests share (tests/transforms/test_memory_safety.py,
tests/codegen/test_bounds_guard.py): their verdicts are derived by hand there."""

# C[b] += A[b] @ B[b] over a dynamic batch taken from A: B and C must have as many.
BMM = """
func.func @bmm(%A: memref<?x20x12xf32>, %B: memref<?x12x8xf32>, %C: memref<?x20x8xf32>) {
  %c0 = arith.constant 0 : index
  %nb = memref.dim %A, %c0 : memref<?x20x12xf32>
  %b, %i, %j, %k = krnl.define_loops 4
  krnl.iterate(%b, %i, %j, %k) with (%b -> %bb = 0 to %nb, %i -> %ii = 0 to 20,
      %j -> %jj = 0 to 8, %k -> %kk = 0 to 12) {
    %a = krnl.load %A[%bb, %ii, %kk] : memref<?x20x12xf32>
    %x = krnl.load %B[%bb, %kk, %jj] : memref<?x12x8xf32>
    %c = krnl.load %C[%bb, %ii, %jj] : memref<?x20x8xf32>
    %m = arith.mulf %a, %x : f32
    %s = arith.addf %c, %m : f32
    krnl.store %s, %C[%bb, %ii, %jj] : memref<?x20x8xf32>
  }
  return
}
"""

# Y[i] = X[idx[i]] row by row: the row of X is read from data.
GATHER = """
func.func @gather(%X: memref<?x4xf32>, %idx: memref<?xi64>, %Y: memref<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %idx, %c0 : memref<?xi64>
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to %n, %jj -> %j = 0 to 4) {
    %r = krnl.load %idx[%i] : memref<?xi64>
    %ri = arith.index_cast %r : i64 to index
    %v = krnl.load %X[%ri, %j] : memref<?x4xf32>
    krnl.store %v, %Y[%i, %j] : memref<?x4xf32>
  }
  return
}
"""
