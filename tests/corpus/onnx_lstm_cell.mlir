// polykrnl: semantic
// Covers: one step of an LSTM cell (batch 2, input 3, hidden 4; ONNX gate order
// i, o, f, c) in the shape onnx-mlir's RNN lowering gives it once its matmuls are
// lowered: the gate pre-activations X W^T + H R^T + B as a nest reducing over two
// k ranges with iter_args into a function-level allocation, then an elementwise nest
// over (batch, hidden) reading the four gates at column offsets h, h + 4, h + 8,
// h + 12 (affine.apply), sigmoid as 1 / (1 + exp(-x)) and math.tanh, writing the
// new cell state and hidden state: two allocated results, returned.
#gate = affine_map<(d0)[s0] -> (d0 + s0)>
func.func @lstm_cell(%x: memref<2x3xf32>, %h: memref<2x4xf32>, %c: memref<2x4xf32>,
    %w: memref<16x3xf32>, %r: memref<16x4xf32>, %bias: memref<16xf32>)
    -> (memref<2x4xf32>, memref<2x4xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c12 = arith.constant 12 : index
  %gates = memref.alloc() {alignment = 16 : i64} : memref<2x16xf32>
  %hn = memref.alloc() {alignment = 16 : i64} : memref<2x4xf32>
  %cn = memref.alloc() {alignment = 16 : i64} : memref<2x4xf32>
  %lg:2 = krnl.define_loops 2
  krnl.iterate(%lg#0, %lg#1) with (%lg#0 -> %b = 0 to 2, %lg#1 -> %g = 0 to 16) {
    %bg:2 = krnl.get_induction_var_value(%lg#0, %lg#1) : (!krnl.loop, !krnl.loop) -> (index, index)
    %lx = krnl.define_loops 1
    %sx = krnl.iterate(%lx) with (%lx -> %k = 0 to 3) iter_args(%acc = %zero) -> (f32) {
      %kk = krnl.get_induction_var_value(%lx) : (!krnl.loop) -> index
      %xv = krnl.load %x[%bg#0, %kk] : memref<2x3xf32>
      %wv = krnl.load %w[%bg#1, %kk] : memref<16x3xf32>
      %p = arith.mulf %xv, %wv : f32
      %t = arith.addf %acc, %p : f32
      krnl.yield %t : f32
    }
    %lh = krnl.define_loops 1
    %sh = krnl.iterate(%lh) with (%lh -> %k = 0 to 4) iter_args(%acc = %sx) -> (f32) {
      %kk = krnl.get_induction_var_value(%lh) : (!krnl.loop) -> index
      %hv = krnl.load %h[%bg#0, %kk] : memref<2x4xf32>
      %rv = krnl.load %r[%bg#1, %kk] : memref<16x4xf32>
      %p = arith.mulf %hv, %rv : f32
      %t = arith.addf %acc, %p : f32
      krnl.yield %t : f32
    }
    %bv = krnl.load %bias[%bg#1] : memref<16xf32>
    %s = arith.addf %sh, %bv : f32
    krnl.store %s, %gates[%bg#0, %bg#1] : memref<2x16xf32>
  }
  %le:2 = krnl.define_loops 2
  krnl.iterate(%le#0, %le#1) with (%le#0 -> %b = 0 to 2, %le#1 -> %j = 0 to 4) {
    %bj:2 = krnl.get_induction_var_value(%le#0, %le#1) : (!krnl.loop, !krnl.loop) -> (index, index)
    %jo = affine.apply #gate(%bj#1)[%c4]
    %jf = affine.apply #gate(%bj#1)[%c8]
    %jc = affine.apply #gate(%bj#1)[%c12]
    %gi = krnl.load %gates[%bj#0, %bj#1] : memref<2x16xf32>
    %go = krnl.load %gates[%bj#0, %jo] : memref<2x16xf32>
    %gf = krnl.load %gates[%bj#0, %jf] : memref<2x16xf32>
    %gc = krnl.load %gates[%bj#0, %jc] : memref<2x16xf32>
    %ni = arith.negf %gi : f32
    %ei = math.exp %ni : f32
    %di = arith.addf %one, %ei : f32
    %it = arith.divf %one, %di : f32
    %no = arith.negf %go : f32
    %eo = math.exp %no : f32
    %do = arith.addf %one, %eo : f32
    %ot = arith.divf %one, %do : f32
    %nf = arith.negf %gf : f32
    %ef = math.exp %nf : f32
    %df = arith.addf %one, %ef : f32
    %ft = arith.divf %one, %df : f32
    %ct = math.tanh %gc : f32
    %cprev = krnl.load %c[%bj#0, %bj#1] : memref<2x4xf32>
    %keep = arith.mulf %ft, %cprev : f32
    %add = arith.mulf %it, %ct : f32
    %cnew = arith.addf %keep, %add : f32
    krnl.store %cnew, %cn[%bj#0, %bj#1] : memref<2x4xf32>
    %tc = math.tanh %cnew : f32
    %hnew = arith.mulf %ot, %tc : f32
    krnl.store %hnew, %hn[%bj#0, %bj#1] : memref<2x4xf32>
  }
  memref.dealloc %gates : memref<2x16xf32>
  return %hn, %cn : memref<2x4xf32>, memref<2x4xf32>
}
