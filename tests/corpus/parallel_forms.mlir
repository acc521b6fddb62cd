// polykrnl: semantic
// Covers: both spellings of krnl.parallel: the op reference's `krnl.parallel %h :
// !krnl.loop`, and `krnl.parallel(%a, %b), num_threads(%n) {proc_bind = "..."}`
// with several handles, with and without num_threads, on tile and point loops
// produced by krnl.block / krnl.permute (parallel comes after them).
func.func @relu(%x: memref<64x32xf32>, %y: memref<64x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %ii, %jj = krnl.define_loops 2
  krnl.parallel %ii : !krnl.loop
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 64, %jj -> %j = 0 to 32) {
    %v = krnl.load %x[%i, %j] : memref<64x32xf32>
    %r = arith.maximumf %v, %zero : f32
    krnl.store %r, %y[%i, %j] : memref<64x32xf32>
  }
  return
}

func.func @scale_tiled(%x: memref<64x32xf32>, %s: f32) {
  %nt = arith.constant 8 : i32
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.parallel(%ib, %jb), num_threads(%nt) {proc_bind = "spread"} : !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %il, %jl) with (%ii -> %i = 0 to 64, %jj -> %j = 0 to 32) {
    %v = krnl.load %x[%i, %j] : memref<64x32xf32>
    %w = arith.mulf %v, %s : f32
    krnl.store %w, %x[%i, %j] : memref<64x32xf32>
  }
  return
}

func.func @fill_3d(%t: memref<4x6x8xi32>) {
  %c7 = arith.constant 7 : i32
  %n2 = arith.constant 2 : i32
  %0:3 = krnl.define_loops 3
  krnl.parallel(%0#0) {proc_bind = "close"} : !krnl.loop
  krnl.parallel(%0#1, %0#2) : !krnl.loop, !krnl.loop
  krnl.iterate(%0#0, %0#1, %0#2) with (%0#0 -> %i = 0 to 4, %0#1 -> %j = 0 to 6, %0#2 -> %k = 0 to 8) {
    krnl.store %c7, %t[%i, %j, %k] : memref<4x6x8xi32>
  }
  %ll = krnl.define_loops 1
  krnl.parallel(%ll), num_threads(%n2) : !krnl.loop
  krnl.iterate(%ll) with (%ll -> %i = 0 to 4) {
    %c0 = arith.constant 0 : index
    krnl.store %n2, %t[%i, %c0, %c0] : memref<4x6x8xi32>
  }
  return
}
