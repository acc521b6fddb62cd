// krnl.memset of a constant on its own: one tile filled (TEXPANDS), stored over every window.

// Rows dynamic, whole rows per window.
func.func @fill(%Y: memref<?x40xf32>) {
  %c = arith.constant 1.5 : f32
  krnl.memset %Y, %c : memref<?x40xf32>
  return
}

// Rows longer than a window: a column loop too, partial windows at both edges.
func.func @fill_wide(%Y: memref<37x2500xf16>) {
  %c = arith.constant -2.0 : f16
  krnl.memset %Y, %c : memref<37x2500xf16>
  return
}

// Rank 3: the leading dimensions are the rows.
func.func @fill_3d(%Y: memref<3x5x24xi32>) {
  %c = arith.constant 7 : i32
  krnl.memset %Y, %c : memref<3x5x24xi32>
  return
}

// The identity of an accumulation, then the nest that reads it: its loads wait for the
// memset's stores.
func.func @accumulate(%N: index, %X: memref<?x40xf32>, %Y: memref<?x40xf32>) {
  %zero = arith.constant 0.0 : f32
  krnl.memset %Y, %zero : memref<?x40xf32>
  %i, %j = krnl.define_loops 2
  %ib, %il = krnl.block %i 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %il, %j) with (%i -> %x = 0 to %N, %j -> %y = 0 to 40) {
    %a = krnl.load %X[%x, %y] : memref<?x40xf32>
    %b = krnl.load %Y[%x, %y] : memref<?x40xf32>
    %s = arith.addf %a, %b : f32
    %t = arith.mulf %s, %a : f32
    krnl.store %t, %Y[%x, %y] : memref<?x40xf32>
  }
  return
}
