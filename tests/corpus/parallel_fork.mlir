// polykrnl: semantic
// Covers: onnx-mlir's parallel fork: a krnl.parallel loop over t (0 to 2) whose
// body runs a different nest under `scf.if t == 0` and `scf.if t == 1`, each
// writing its own rows of B from A, which is only read. The conditions are affine
// in t, so the model keeps them exact: the statements of each nest have t == 0
// (t == 1) in their domains, and t is proven parallel. Then the same fork written
// with affine.if and an else branch (an integer set over t and a symbol).
func.func @parallel_fork(%A: memref<8x16xf32>, %B: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %tt = krnl.define_loops 1
  krnl.parallel(%tt) : !krnl.loop
  krnl.iterate(%tt) with (%tt -> %t = 0 to 2) {
    %first = arith.cmpi eq, %t, %c0 : index
    scf.if %first {
      %l:2 = krnl.define_loops 2
      krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 4, %l#1 -> %j = 0 to 16) {
        %a = krnl.load %A[%i, %j] : memref<8x16xf32>
        %e = math.exp %a : f32
        krnl.store %e, %B[%i, %j] : memref<8x16xf32>
      }
    }
    %second = arith.cmpi eq, %t, %c1 : index
    scf.if %second {
      %m:2 = krnl.define_loops 2
      krnl.iterate(%m#0, %m#1) with (%m#0 -> %i = 4 to 8, %m#1 -> %j = 0 to 16) {
        %a = krnl.load %A[%i, %j] : memref<8x16xf32>
        %n = arith.negf %a : f32
        krnl.store %n, %B[%i, %j] : memref<8x16xf32>
      }
    }
  }
  return
}

#low = affine_set<(d0)[s0] : (s0 - d0 - 1 >= 0)>
func.func @affine_fork(%A: memref<8x16xf32>, %B: memref<8x16xf32>, %h: index) {
  %tt = krnl.define_loops 1
  krnl.parallel(%tt) : !krnl.loop
  krnl.iterate(%tt) with (%tt -> %t = 0 to 8) {
    "affine.if"(%t, %h) ({
      %l = krnl.define_loops 1
      krnl.iterate(%l) with (%l -> %j = 0 to 16) {
        %a = krnl.load %A[%t, %j] : memref<8x16xf32>
        %e = math.exp %a : f32
        krnl.store %e, %B[%t, %j] : memref<8x16xf32>
      }
      "affine.yield"() : () -> ()
    }, {
      %l = krnl.define_loops 1
      krnl.iterate(%l) with (%l -> %j = 0 to 16) {
        %a = krnl.load %A[%t, %j] : memref<8x16xf32>
        %n = arith.negf %a : f32
        krnl.store %n, %B[%t, %j] : memref<8x16xf32>
      }
      "affine.yield"() : () -> ()
    }) {condition = #low} : (index, index) -> ()
  }
  return
}
