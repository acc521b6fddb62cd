// polykrnl: semantic
// Covers: affine.if inside a Krnl loop (an integer-set condition on the induction
// variables and a symbol, with and without an else region, with a result), and
// scf.execute_region yielding a value computed in its own region. affine.if is in the
// generic form: xDSL, which reads the text, has no custom syntax for it.
#inside = affine_set<(d0)[s0] : (d0 - 1 >= 0, s0 - d0 - 2 >= 0)>
#diag = affine_set<(d0, d1) : (d0 - d1 == 0)>
func.func @border_and_diagonal(%x: memref<?x8xf32>, %y: memref<?x8xf32>, %n: index) {
  %zero = arith.constant 0.000000e+00 : f32
  %two = arith.constant 2.000000e+00 : f32
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to %n, %l#1 -> %j = 0 to 8) {
    %v = "affine.if"(%i, %n) ({
      %c1 = arith.constant 1 : index
      %up = arith.subi %i, %c1 : index
      %a = krnl.load %x[%up, %j] : memref<?x8xf32>
      %b = krnl.load %x[%i, %j] : memref<?x8xf32>
      %s = arith.addf %a, %b : f32
      "affine.yield"(%s) : (f32) -> ()
    }, {
      "affine.yield"(%zero) : (f32) -> ()
    }) {condition = #inside} : (index, index) -> f32
    krnl.store %v, %y[%i, %j] : memref<?x8xf32>
    "affine.if"(%i, %j) ({
      %w = scf.execute_region -> f32 {
        %d = arith.mulf %v, %two : f32
        scf.yield %d : f32
      }
      krnl.store %w, %y[%i, %j] : memref<?x8xf32>
      "affine.yield"() : () -> ()
    }, {
    }) {condition = #diag} : (index, index) -> ()
  }
  return
}

// affine.load / affine.store subscripts with every binary affine operator.
func.func @affine_subscripts(%x: memref<6x2xf32>, %y: memref<20xf32>) {
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 12) {
    %v = affine.load %x[%i floordiv 2, %i mod 2] : memref<6x2xf32>
    affine.store %v, %y[%i ceildiv 2 + %i * 2 - %i] : memref<20xf32>
  }
  return
}
