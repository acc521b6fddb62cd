// polykrnl: semantic
// Covers: triangular nests, i.e. inner bounds that use the induction variable of an
// enclosing krnl.iterate: as a bare SSA bound (`%j = 0 to %i`), inside an affine
// map (`affine_map<(d0) -> (d0 + 1)>(%i)`), and a three-deep nest j in [i, n),
// k in [i, j] mixing both, with the inner handles defined at the top level.
func.func @lower_triangle_copy(%a: memref<8x8xf32>, %b: memref<8x8xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii) with (%ii -> %i = 0 to 8) {
    krnl.iterate(%jj) with (%jj -> %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i)) {
      %v = krnl.load %a[%i, %j] : memref<8x8xf32>
      krnl.store %v, %b[%i, %j] : memref<8x8xf32>
    }
  }
  return
}

// Strictly-below-diagonal prefix sums: s[i] = sum_{j < i} x[j].
func.func @exclusive_scan(%x: memref<12xf32>, %s: memref<12xf32>) {
  %zero = arith.constant 0.0 : f32
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii) with (%ii -> %i = 0 to 12) {
    krnl.store %zero, %s[%i] : memref<12xf32>
    krnl.iterate(%jj) with (%jj -> %j = 0 to %i) {
      %acc = krnl.load %s[%i] : memref<12xf32>
      %v = krnl.load %x[%j] : memref<12xf32>
      %t = arith.addf %acc, %v : f32
      krnl.store %t, %s[%i] : memref<12xf32>
    }
  }
  return
}

// Upper-triangular tetrahedron: c[i, j] += a[i, k] * b[k, j] for i <= k <= j < n.
func.func @upper_triangular_product(%a: memref<?x?xf64>, %b: memref<?x?xf64>, %c: memref<?x?xf64>, %n: index) {
  %ii, %jj, %kk = krnl.define_loops 3
  krnl.iterate(%ii) with (%ii -> %i = 0 to %n) {
    krnl.iterate(%jj) with (%jj -> %j = %i to %n) {
      krnl.iterate(%kk) with (%kk -> %k = %i to affine_map<(d0) -> (d0 + 1)>(%j)) {
        %x = krnl.load %a[%i, %k] : memref<?x?xf64>
        %y = krnl.load %b[%k, %j] : memref<?x?xf64>
        %z = krnl.load %c[%i, %j] : memref<?x?xf64>
        %p = arith.mulf %x, %y : f64
        %q = arith.addf %z, %p : f64
        krnl.store %q, %c[%i, %j] : memref<?x?xf64>
      }
    }
  }
  return
}
