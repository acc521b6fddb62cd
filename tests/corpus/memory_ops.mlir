// polykrnl: semantic
// Covers: Krnl memory ops with custom syntax and without: krnl.memset (with and
// without the `delayed` attribute), krnl.memcpy (generic: flat copy with offsets,
// the element count as i64), krnl.dim (generic) giving a loop bound at the top
// level, and memref.alloc / alloca / dealloc around them.
func.func @memset_memcpy(%src: memref<4x6xf32>, %dst: memref<4x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %seven = arith.constant 7.0 : f32
  krnl.memset %dst, %zero : memref<4x6xf32>
  %tmp = memref.alloc() : memref<24xf32>
  krnl.memset %tmp, %seven {delayed = true} : memref<24xf32>
  // Copy rows 1 and 2 of src (12 elements from flat offset 6) to the start of tmp.
  %n = arith.constant 12 : i64
  %c0 = arith.constant 0 : index
  %c6 = arith.constant 6 : index
  "krnl.memcpy"(%tmp, %src, %n, %c0, %c6) : (memref<24xf32>, memref<4x6xf32>, i64, index, index) -> ()
  // And the first 12 elements of tmp to the last two rows of dst.
  %c12 = arith.constant 12 : index
  "krnl.memcpy"(%dst, %tmp, %n, %c12, %c0) : (memref<4x6xf32>, memref<24xf32>, i64, index, index) -> ()
  memref.dealloc %tmp : memref<24xf32>
  return
}

func.func @dim_bound(%m: memref<?x5xi32>, %v: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = "krnl.dim"(%m, %c0) : (memref<?x5xi32>, index) -> index
  %cols = "krnl.dim"(%m, %c1) : (memref<?x5xi32>, index) -> index
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to %rows, %jj -> %j = 0 to %cols) {
    krnl.store %v, %m[%i, %j] : memref<?x5xi32>
  }
  return
}

func.func @scratch_alloca(%a: memref<8xf32>) {
  %buf = memref.alloca() : memref<8xf32>
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii) with (%ii -> %i = 0 to 8) {
    %v = krnl.load %a[%i] : memref<8xf32>
    krnl.store %v, %buf[%i] : memref<8xf32>
  }
  // Reverse a through the scratch buffer.
  krnl.iterate(%jj) with (%jj -> %j = 0 to 8) {
    %r = affine.apply affine_map<(d0) -> (7 - d0)>(%j)
    %v = krnl.load %buf[%r] : memref<8xf32>
    krnl.store %v, %a[%j] : memref<8xf32>
  }
  return
}
