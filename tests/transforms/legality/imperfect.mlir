// polykrnl: semantic
// Legality kernel: an imperfect nest with a statement before the inner loop. Per row
// i: S0 r[i] = r[i - 1] + b[i] (a running sum: RAW on r, distance 1, carried by i),
// then the j loop S1 A[i][j] = A[i][j] * r[i] (reads the r[i] that S0 of the same i
// wrote: ordered by the sequence inside i). The j loop carries nothing.
func.func @imperfect(%r: memref<7xf32>, %b: memref<7xf32>, %A: memref<7x8xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii) with (%ii -> %i = 1 to 7, %jj -> %j = 0 to 8) {
    %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %p = krnl.load %r[%im] : memref<7xf32>
    %bi = krnl.load %b[%i] : memref<7xf32>
    %s = arith.addf %p, %bi : f32
    krnl.store %s, %r[%i] : memref<7xf32>
    krnl.iterate(%jj) with () {
      %a = krnl.load %A[%i, %j] : memref<7x8xf32>
      %ri = krnl.load %r[%i] : memref<7xf32>
      %m = arith.mulf %a, %ri : f32
      krnl.store %m, %A[%i, %j] : memref<7x8xf32>
    }
  }
  return
}
