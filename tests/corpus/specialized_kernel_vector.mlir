// polykrnl: syntax-only
// Covers: krnl.specialized_kernel (custom syntax, consuming loop handles so that
// the loop nest is replaced by a kernel), krnl.vector_type_cast from scalar to
// vector element memrefs (static and dynamic), and vector loads/stores through
// krnl.load / krnl.store on the cast memrefs.
func.func @specialized(%A: memref<64x16xf32>, %D: memref<?x?xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 64, %jj -> %j = 0 to 16) {
    krnl.specialized_kernel(%ii, %jj) : !krnl.loop, !krnl.loop
  }
  %MV = krnl.vector_type_cast %A : memref<64x16xf32> to memref<64x2xvector<8xf32>>
  %DV = krnl.vector_type_cast %D : memref<?x?xf32> to memref<?x?xvector<8xf32>>
  %kk, %ll = krnl.define_loops 2
  krnl.iterate(%kk, %ll) with (%kk -> %k = 0 to 64, %ll -> %l = 0 to 2) {
    %v = krnl.load %MV[%k, %l] : memref<64x2xvector<8xf32>>
    %w = arith.addf %v, %v : vector<8xf32>
    krnl.store %w, %MV[%k, %l] : memref<64x2xvector<8xf32>>
  }
  return
}
