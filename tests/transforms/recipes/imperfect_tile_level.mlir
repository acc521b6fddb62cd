// polykrnl: semantic
// Covers: an imperfect blocked nest with statements at tile level: i (0 to 10) is
// blocked by 4; the outer iterate lists only %ib, so its statements go into the
// tile loop: the one before the nested `krnl.iterate(%il, %jj) with ()` runs
// before the point loops, the one after it after them, once per tile, indexed
// by krnl.get_induction_var_value(%ib). The nested body goes into the loop of
// %jj (the unblocked j loop, inside the point loop il).
func.func @imperfect_tile_level(%X: memref<10xf32>, %T: memref<10xf32>, %U: memref<10xf32>, %A: memref<10x8xf32>, %B: memref<10x8xf32>) {
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib) with (%ii -> %i = 0 to 10, %jj -> %j = 0 to 8) {
    %t = krnl.get_induction_var_value(%ib) : (!krnl.loop) -> index
    %x = krnl.load %X[%t] : memref<10xf32>
    krnl.store %x, %T[%t] : memref<10xf32>
    krnl.iterate(%il, %jj) with () {
      %v = krnl.load %A[%i, %j] : memref<10x8xf32>
      krnl.store %v, %B[%i, %j] : memref<10x8xf32>
    }
    %y = krnl.load %T[%t] : memref<10xf32>
    krnl.store %y, %U[%t] : memref<10xf32>
  }
  return
}
