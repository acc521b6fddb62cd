// polykrnl: semantic
// Covers: both loop marks in one nest: krnl.parallel (op-reference spelling
// `krnl.parallel %h : !krnl.loop`) on the tile loop of i (0 to 10 by 4, partial
// last tile) and krnl.unroll on the unblocked inner loop j (constant 0 to 4).
func.func @parallel_unroll(%A: memref<10x4xf32>, %B: memref<10x4xf32>) {
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.parallel %ib : !krnl.loop
  krnl.unroll %jj : !krnl.loop
  krnl.iterate(%ib, %il, %jj) with (%ii -> %i = 0 to 10, %jj -> %j = 0 to 4) {
    %v = krnl.load %A[%i, %j] : memref<10x4xf32>
    krnl.store %v, %B[%i, %j] : memref<10x4xf32>
  }
  return
}
