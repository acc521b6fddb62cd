// polykrnl: semantic
// Covers: krnl.unroll on the point loop of a block with a constant trip count:
// j (0 to 8) blocked by 4, the point loop `%jb to %jb + 4` (4 iterations) is
// unrolled. Unrolling does not change the order of the instances.
func.func @unroll_point(%A: memref<3x8xf32>, %B: memref<3x8xf32>) {
  %ii, %jj = krnl.define_loops 2
  %jb, %jl = krnl.block %jj 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.unroll %jl : !krnl.loop
  krnl.iterate(%ii, %jb, %jl) with (%ii -> %i = 0 to 3, %jj -> %j = 0 to 8) {
    %v = krnl.load %A[%i, %j] : memref<3x8xf32>
    krnl.store %v, %B[%i, %j] : memref<3x8xf32>
  }
  return
}
