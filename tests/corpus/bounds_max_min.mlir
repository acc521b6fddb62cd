// polykrnl: semantic
// Covers: multi-result bound maps: `max` before a lower bound and `min` before an
// upper bound (LB = max of the results, UB = min of the results), with dims and
// symbols, plus a clamped window loop whose bounds use an enclosing induction variable.
func.func @clamp_range(%a: memref<32xf32>, %lo: index, %hi: index) {
  %one = arith.constant 1.0 : f32
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = max affine_map<()[s0] -> (s0, 0)>()[%lo] to min affine_map<()[s0] -> (s0, 32)>()[%hi]) {
    krnl.store %one, %a[%i] : memref<32xf32>
  }
  return
}

// Sliding-window sum of width 5 centred on i, clipped at both ends of the input.
func.func @window_sum(%in: memref<20xf32>, %out: memref<20xf32>) {
  %zero = arith.constant 0.0 : f32
  %c20 = arith.constant 20 : index
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 20) {
    krnl.store %zero, %out[%i] : memref<20xf32>
    %kk = krnl.define_loops 1
    krnl.iterate(%kk) with (%kk -> %k = max affine_map<(d0) -> (d0 - 2, 0)>(%i) to min affine_map<(d0)[s0] -> (d0 + 3, s0)>(%i)[%c20]) {
      %v = krnl.load %in[%k] : memref<20xf32>
      %s = krnl.load %out[%i] : memref<20xf32>
      %t = arith.addf %s, %v : f32
      krnl.store %t, %out[%i] : memref<20xf32>
    }
  }
  return
}
