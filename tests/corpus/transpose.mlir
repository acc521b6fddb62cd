// polykrnl: semantic
// Covers: transposes. A 2-D transpose with the loops swapped by
// krnl.permute [1, 0] (the iterate lists the handles in the new order), and a blocked 2-D transpose (32x48 by 8x8 tiles, tile loops
// outside), and a 3-D transpose (0, 2, 1) on dynamic sizes taken with memref.dim.
func.func @transpose_2d(%in: memref<12x9xf32>, %out: memref<9x12xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.permute(%ii, %jj) [1, 0] : !krnl.loop, !krnl.loop
  krnl.iterate(%jj, %ii) with (%ii -> %i = 0 to 12, %jj -> %j = 0 to 9) {
    %v = krnl.load %in[%i, %j] : memref<12x9xf32>
    krnl.store %v, %out[%j, %i] : memref<9x12xf32>
  }
  return
}

func.func @transpose_blocked(%in: memref<32x48xf32>, %out: memref<48x32xf32>) {
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %il, %jl) with (%ii -> %i = 0 to 32, %jj -> %j = 0 to 48) {
    %v = krnl.load %in[%i, %j] : memref<32x48xf32>
    krnl.store %v, %out[%j, %i] : memref<48x32xf32>
  }
  return
}

func.func @transpose_021(%in: memref<?x?x?xi32>, %out: memref<?x?x?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %d0 = memref.dim %in, %c0 : memref<?x?x?xi32>
  %d1 = memref.dim %in, %c1 : memref<?x?x?xi32>
  %d2 = memref.dim %in, %c2 : memref<?x?x?xi32>
  %ii, %jj, %kk = krnl.define_loops 3
  krnl.iterate(%ii, %jj, %kk) with (%ii -> %i = 0 to %d0, %jj -> %j = 0 to %d1, %kk -> %k = 0 to %d2) {
    %v = krnl.load %in[%i, %j, %k] : memref<?x?x?xi32>
    krnl.store %v, %out[%i, %k, %j] : memref<?x?x?xi32>
  }
  return
}
