// polykrnl: semantic
// Covers: krnl.block whose point handle is never used: the point loop runs once, so
// the tile loop is a strided loop (step 3 and step 4) and the body reads the tile
// start with krnl.get_induction_var_value(%tile); and a block whose point loop is
// kept, with a partial last tile (10 by 4).
func.func @every_third(%a: memref<30xf32>, %b: memref<10xf32>) {
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 3 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib) with (%ii -> %i = 0 to 30) {
    %i0 = krnl.get_induction_var_value(%ib) : (!krnl.loop) -> index
    %k = affine.apply affine_map<(d0) -> (d0 floordiv 3)>(%i0)
    %v = krnl.load %a[%i0] : memref<30xf32>
    krnl.store %v, %b[%k] : memref<10xf32>
  }
  return
}

func.func @strided_rows(%m: memref<16x5xf32>, %out: memref<4x5xf32>) {
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %jj) with (%ii -> %i = 0 to 16, %jj -> %j = 0 to 5) {
    %r = krnl.get_induction_var_value(%ib) : (!krnl.loop) -> index
    %q = affine.apply affine_map<(d0) -> (d0 floordiv 4)>(%r)
    %v = krnl.load %m[%r, %j] : memref<16x5xf32>
    krnl.store %v, %out[%q, %j] : memref<4x5xf32>
  }
  return
}

func.func @partial_tile(%a: memref<10xi64>) {
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to 10) {
    %t = krnl.get_induction_var_value(%ib) : (!krnl.loop) -> index
    %ti = arith.index_cast %t : index to i64
    krnl.store %ti, %a[%i] : memref<10xi64>
  }
  return
}
