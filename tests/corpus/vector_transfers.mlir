// polykrnl: semantic
// Covers: SIMD loops whose last vector is cut by a mask instead of a scalar
// remainder loop. A blocked loop of 8 lanes over n elements reads with
// vector.transfer_read (lanes past the end padded with 0) and writes with a masked
// vector.transfer_write (vector.create_mask of the lanes left); a second function does
// the same with vector.maskedload / vector.maskedstore (pass-through lanes 0) and
// reads a column with a transfer along a permutation map (lanes down the rows).
#left = affine_map<(d0)[s0] -> (s0 - d0)>
func.func @scale_add(%a: memref<?xf32>, %b: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.000000e+00 : f32
  %two = arith.constant dense<2.000000e+00> : vector<8xf32>
  %n = memref.dim %a, %c0 : memref<?xf32>
  %l = krnl.define_loops 1
  %t, %p = krnl.block %l 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%t) with (%l -> %i = 0 to %n) {
    %i0 = krnl.get_induction_var_value(%t) : (!krnl.loop) -> index
    %rest = affine.apply #left(%i0)[%n]
    %m = vector.create_mask %rest : vector<8xi1>
    %va = vector.transfer_read %a[%i0], %zero : memref<?xf32>, vector<8xf32>
    %vb = vector.transfer_read %b[%i0], %zero : memref<?xf32>, vector<8xf32>
    %s = arith.mulf %va, %two : vector<8xf32>
    %r = arith.addf %s, %vb : vector<8xf32>
    vector.transfer_write %r, %y[%i0], %m : vector<8xf32>, memref<?xf32>
  }
  return
}

func.func @masked_copy_and_column(%a: memref<?x4xi32>, %y: memref<?x4xi32>,
    %col: memref<4xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i32
  %pass = arith.constant dense<0> : vector<4xi32>
  %rows = memref.dim %a, %c0 : memref<?x4xi32>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to %rows) {
    %m = vector.create_mask %i : vector<4xi1>
    %v = vector.maskedload %a[%i, %c0], %m, %pass
      : memref<?x4xi32>, vector<4xi1>, vector<4xi32> into vector<4xi32>
    vector.maskedstore %y[%i, %c0], %m, %v : memref<?x4xi32>, vector<4xi1>, vector<4xi32>
  }
  %c = vector.transfer_read %a[%c0, %c1], %zero
      {permutation_map = affine_map<(d0, d1) -> (d0)>} : memref<?x4xi32>, vector<4xi32>
  vector.transfer_write %c, %col[%c0] {in_bounds = [true]} : vector<4xi32>, memref<4xi32>
  return
}
