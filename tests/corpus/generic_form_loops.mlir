// polykrnl: semantic
// Covers: a module written entirely in the generic MLIR form: "krnl.define_loops"
// with its num_loops property, "krnl.block" (tile_size), "krnl.permute" (map),
// "krnl.unroll", "krnl.iterate" with its `bounds` and `num_optimized_loops`
// properties (constant, symbol and dim+symbol maps, a nested iterate whose bound
// uses the outer induction variable), "krnl.load" / "krnl.store", an explicit
// "krnl.yield", and properties given both as <{...}> and as an attribute dictionary.
// generic_copy_upper needs %n <= 12.
"builtin.module"() ({
  "func.func"() <{function_type = (memref<12x12xf32>, memref<12x12xf32>, index) -> (), sym_name = "generic_copy_upper"}> ({
  ^bb0(%a: memref<12x12xf32>, %b: memref<12x12xf32>, %n: index):
    %ii, %jj = "krnl.define_loops"() <{num_loops = 2 : i64}> : () -> (!krnl.loop, !krnl.loop)
    %ib, %il = "krnl.block"(%ii) <{tile_size = 4 : i64}> : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    "krnl.iterate"(%ib, %il, %ii, %n) <{bounds = [affine_map<() -> (0)>, affine_map<()[s0] -> (s0)>], num_optimized_loops = 2 : i64}> ({
    ^bb0(%i: index):
      "krnl.iterate"(%jj, %jj, %i) <{bounds = [affine_map<(d0) -> (d0)>, affine_map<() -> (12)>], num_optimized_loops = 1 : i64}> ({
      ^bb0(%j: index):
        %v = "krnl.load"(%a, %i, %j) : (memref<12x12xf32>, index, index) -> f32
        "krnl.store"(%v, %b, %i, %j) : (f32, memref<12x12xf32>, index, index) -> ()
        "krnl.yield"() : () -> ()
      }) : (!krnl.loop, !krnl.loop, index) -> ()
      "krnl.yield"() : () -> ()
    }) : (!krnl.loop, !krnl.loop, !krnl.loop, index) -> ()
    "func.return"() : () -> ()
  }) : () -> ()
  "func.func"() <{function_type = (memref<4x8xf32>) -> f32, sym_name = "generic_sum_permuted"}> ({
  ^bb0(%m: memref<4x8xf32>):
    %zero = "arith.constant"() <{value = 0.000000e+00 : f32}> : () -> f32
    %l0, %l1 = "krnl.define_loops"() {num_loops = 2 : i64} : () -> (!krnl.loop, !krnl.loop)
    "krnl.permute"(%l0, %l1) {map = [1 : i64, 0 : i64]} : (!krnl.loop, !krnl.loop) -> ()
    "krnl.unroll"(%l0) : (!krnl.loop) -> ()
    %s = "krnl.iterate"(%l1, %l0, %l0, %l1, %zero) <{bounds = [affine_map<() -> (0)>, affine_map<() -> (4)>, affine_map<() -> (0)>, affine_map<() -> (8)>], num_optimized_loops = 2 : i64}> ({
    ^bb0(%i: index, %j: index, %acc: f32):
      %v = "krnl.load"(%m, %i, %j) : (memref<4x8xf32>, index, index) -> f32
      %n = "arith.addf"(%acc, %v) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
      "krnl.yield"(%n) : (f32) -> ()
    }) : (!krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, f32) -> f32
    "func.return"(%s) : (f32) -> ()
  }) : () -> ()
}) : () -> ()
