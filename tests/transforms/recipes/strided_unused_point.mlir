// polykrnl: semantic
// Covers: the strided-loop idiom: krnl.block by 3 whose point handle %il is never
// used again, so the point loop runs once (0 to 1) and the tile loop is a loop
// of step 3; the body (in the tile loop, the last handle of the iterate) reads
// the tile start with krnl.get_induction_var_value(%ib) and uses it as index.
func.func @strided_unused_point(%A: memref<10xf32>, %B: memref<10xf32>) {
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 3 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib) with (%ii -> %i = 0 to 10) {
    %t = krnl.get_induction_var_value(%ib) : (!krnl.loop) -> index
    %v = krnl.load %A[%t] : memref<10xf32>
    krnl.store %v, %B[%t] : memref<10xf32>
  }
  return
}
