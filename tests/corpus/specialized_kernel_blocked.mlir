// polykrnl: semantic
// Covers: krnl.specialized_kernel consuming the inner loop of a blocked nest, as in
// onnx-mlir's kernel substitution: the loops it names do not run (onnx-mlir erases
// them) and the op itself, a placeholder, has no effect; the statement at the tile
// level runs once per tile.
func.func @spec(%a: memref<8x6xf32>, %out: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib) with (%ii -> %i = 0 to 8, %jj -> %j = 0 to 6) {
    %t = krnl.get_induction_var_value(%ib) : (!krnl.loop) -> index
    krnl.store %zero, %out[%t] : memref<8xf32>
    krnl.iterate(%il) with () {
      krnl.specialized_kernel(%jj) : !krnl.loop
    }
  }
  return
}
