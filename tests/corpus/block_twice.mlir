// polykrnl: semantic
// Covers: blocking a point loop again (10 by 4, then the point loop by 2, the
// `min(i1 + 2, i0 + 4, 10)` case), a blocked loop with symbolic bounds (N by 8), and
// krnl.get_induction_var_value on the innermost tile handle.
func.func @block_twice(%a: memref<10xf32>, %starts: memref<10xindex>) {
  %one = arith.constant 1.0 : f32
  %ii = krnl.define_loops 1
  %i0, %i1 = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %i1a, %i1b = krnl.block %i1 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%i0, %i1a, %i1b) with (%ii -> %i = 0 to 10) {
    %t = krnl.get_induction_var_value(%i1a) : (!krnl.loop) -> index
    krnl.store %t, %starts[%i] : memref<10xindex>
    %v = krnl.load %a[%i] : memref<10xf32>
    %w = arith.addf %v, %one : f32
    krnl.store %w, %a[%i] : memref<10xf32>
  }
  return
}

func.func @block_symbolic(%a: memref<?xf32>, %n: index) {
  %two = arith.constant 2.0 : f32
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to %n) {
    %v = krnl.load %a[%i] : memref<?xf32>
    %w = arith.mulf %v, %two : f32
    krnl.store %w, %a[%i] : memref<?xf32>
  }
  return
}
