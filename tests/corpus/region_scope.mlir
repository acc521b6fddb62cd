// polykrnl: semantic
// Covers: krnl.region (generic form, an affine scope without terminator) holding
// loops whose bounds are values defined at the region's top level (a constant, a
// memref.dim, an arith.addi of two of them), two regions in sequence, and a region
// nested inside a krnl.iterate body whose loops use the enclosing induction variable.
// %out needs at least 3 rows (the second region writes its diagonal entries 1 and 2).
func.func @region_bounds(%m: memref<?x8xf32>, %out: memref<?x8xf32>) {
  "krnl.region"() ({
    %c0 = arith.constant 0 : index
    %rows = memref.dim %m, %c0 : memref<?x8xf32>
    %c8 = arith.constant 8 : index
    %ii, %jj = krnl.define_loops 2
    krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to %rows, %jj -> %j = 0 to %c8) {
      %v = krnl.load %m[%i, %j] : memref<?x8xf32>
      krnl.store %v, %out[%i, %j] : memref<?x8xf32>
    }
  }) : () -> ()
  "krnl.region"() ({
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.addi %c1, %c2 : index
    %kk = krnl.define_loops 1
    krnl.iterate(%kk) with (%kk -> %k = %c1 to %c3) {
      %z = arith.constant 0.0 : f32
      krnl.store %z, %out[%k, %k] : memref<?x8xf32>
    }
  }) : () -> ()
  return
}

func.func @region_in_loop(%a: memref<6x6xf32>) {
  %one = arith.constant 1.0 : f32
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 6) {
    "krnl.region"() ({
      %c6 = arith.constant 6 : index
      %jj = krnl.define_loops 1
      krnl.iterate(%jj) with (%jj -> %j = %i to %c6) {
        krnl.store %one, %a[%i, %j] : memref<6x6xf32>
      }
    }) : () -> ()
  }
  return
}
