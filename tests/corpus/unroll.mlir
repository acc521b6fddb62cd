// polykrnl: semantic
// Covers: krnl.unroll: full unrolling of a constant-trip-count loop (a 4-wide inner
// loop), of the point loop of a block whose tile size divides the trip count
// (12 by 4), and unroll combined with permute.
func.func @unroll_inner(%a: memref<8x4xf32>, %b: memref<8x4xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.unroll %jj : !krnl.loop
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 8, %jj -> %j = 0 to 4) {
    %v = krnl.load %a[%i, %j] : memref<8x4xf32>
    %w = arith.negf %v : f32
    krnl.store %w, %b[%i, %j] : memref<8x4xf32>
  }
  return
}

func.func @unroll_point(%a: memref<12xf32>) {
  %c = arith.constant 3.0 : f32
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.unroll %il : !krnl.loop
  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to 12) {
    %v = krnl.load %a[%i] : memref<12xf32>
    %w = arith.mulf %v, %c : f32
    krnl.store %w, %a[%i] : memref<12xf32>
  }
  return
}

func.func @unroll_after_permute(%a: memref<3x16xf32>, %b: memref<16x3xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.permute(%ii, %jj) [1, 0] : !krnl.loop, !krnl.loop
  krnl.unroll %ii : !krnl.loop
  krnl.iterate(%jj, %ii) with (%ii -> %i = 0 to 3, %jj -> %j = 0 to 16) {
    %v = krnl.load %a[%i, %j] : memref<3x16xf32>
    krnl.store %v, %b[%j, %i] : memref<16x3xf32>
  }
  return
}
