// polykrnl: semantic
// Covers: gathers as onnx-mlir writes them: indices loaded from an i64 memref, cast
// to index and normalized (a negative index counts from the end, with cmpi + addi +
// select), then clamped into range as its "safe" lowering does (two more selects);
// the loaded value subscripts the data array beside the loop's own index. The result
// is allocated and returned. A GatherElements along axis 1 reads the same way, and a
// gather with constant indices reads them from a krnl.global.
func.func @gather_axis0(%x: memref<5x4xf32>, %idx: memref<2x3xi64>) -> memref<2x3x4xf32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %res = memref.alloc() {alignment = 16 : i64} : memref<2x3x4xf32>
  %l:3 = krnl.define_loops 3
  krnl.iterate(%l#0, %l#1, %l#2) with (%l#0 -> %i = 0 to 2, %l#1 -> %j = 0 to 3,
      %l#2 -> %k = 0 to 4) {
    %iv:3 = krnl.get_induction_var_value(%l#0, %l#1, %l#2)
      : (!krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index)
    %a = krnl.load %idx[%iv#0, %iv#1] : memref<2x3xi64>
    %b = arith.index_cast %a : i64 to index
    %neg = arith.cmpi slt, %b, %c0 : index
    %up = arith.addi %b, %c5 : index
    %n = arith.select %neg, %up, %b : index
    %low = arith.cmpi slt, %n, %c0 : index
    %n1 = arith.select %low, %c0, %n : index
    %high = arith.cmpi sge, %n1, %c5 : index
    %c4i = arith.constant 4 : index
    %row = arith.select %high, %c4i, %n1 : index
    %v = krnl.load %x[%row, %iv#2] : memref<5x4xf32>
    krnl.store %v, %res[%iv#0, %iv#1, %iv#2] : memref<2x3x4xf32>
  }
  return %res : memref<2x3x4xf32>
}

func.func @gather_elements_axis1(%x: memref<3x?xf32>, %idx: memref<3x2xi64>) -> memref<3x2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c1 : memref<3x?xf32>
  %res = memref.alloc() {alignment = 16 : i64} : memref<3x2xf32>
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 3, %l#1 -> %j = 0 to 2) {
    %iv:2 = krnl.get_induction_var_value(%l#0, %l#1) : (!krnl.loop, !krnl.loop) -> (index, index)
    %a = krnl.load %idx[%iv#0, %iv#1] : memref<3x2xi64>
    %b = arith.index_cast %a : i64 to index
    %neg = arith.cmpi slt, %b, %c0 : index
    %up = arith.addi %b, %n : index
    %col = arith.select %neg, %up, %b : index
    %v = krnl.load %x[%iv#0, %col] : memref<3x?xf32>
    krnl.store %v, %res[%iv#0, %iv#1] : memref<3x2xf32>
  }
  return %res : memref<3x2xf32>
}

func.func @gather_constant_indices(%x: memref<3x2xf32>) -> memref<2x2x2xf32> {
  %res = memref.alloc() {alignment = 16 : i64} : memref<2x2x2xf32>
  %idx = "krnl.global"() {name = "constant_0", shape = [2, 2],
      value = dense<[[0, 1], [2, 0]]> : tensor<2x2xi64>} : () -> memref<2x2xi64>
  %l:3 = krnl.define_loops 3
  krnl.iterate(%l#0, %l#1, %l#2) with (%l#0 -> %i = 0 to 2, %l#1 -> %j = 0 to 2,
      %l#2 -> %k = 0 to 2) {
    %iv:3 = krnl.get_induction_var_value(%l#0, %l#1, %l#2)
      : (!krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index)
    %a = krnl.load %idx[%iv#0, %iv#1] : memref<2x2xi64>
    %b = arith.index_cast %a : i64 to index
    %v = krnl.load %x[%b, %iv#2] : memref<3x2xf32>
    krnl.store %v, %res[%iv#0, %iv#1, %iv#2] : memref<2x2x2xf32>
  }
  return %res : memref<2x2x2xf32>
}
