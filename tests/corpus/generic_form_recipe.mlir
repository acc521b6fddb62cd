// polykrnl: semantic
// Covers: the generic form of the recipe and tile ops that have a custom syntax:
// "krnl.parallel" with operandSegmentSizes (with and without num_threads and
// proc_bind), "krnl.get_induction_var_value", "krnl.memset", "krnl.movable" with
// its "krnl.terminate", "krnl.copy_to_tile_buffer" / "krnl.copy_from_tile_buffer",
// and "krnl.matmul" with its thirteen operand segments: a 16x16x16 matrix product
// in 8x8x8 panels. C is pre-zeroed by the function.
"builtin.module"() ({
  "func.func"() <{function_type = (memref<16x16xf32>, memref<16x16xf32>, memref<16x16xf32>) -> (), sym_name = "generic_panels"}> ({
  ^bb0(%A: memref<16x16xf32>, %B: memref<16x16xf32>, %C: memref<16x16xf32>):
    %f0 = "arith.constant"() <{value = 0.000000e+00 : f32}> : () -> f32
    %c16 = "arith.constant"() <{value = 16 : index}> : () -> index
    %nt = "arith.constant"() <{value = 2 : i32}> : () -> i32
    "krnl.memset"(%C, %f0) : (memref<16x16xf32>, f32) -> ()
    %ii, %jj, %kk = "krnl.define_loops"() <{num_loops = 3 : i64}> : () -> (!krnl.loop, !krnl.loop, !krnl.loop)
    %ib, %il = "krnl.block"(%ii) <{tile_size = 8 : i64}> : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    %jb, %jl = "krnl.block"(%jj) <{tile_size = 8 : i64}> : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    %kb, %kl = "krnl.block"(%kk) <{tile_size = 8 : i64}> : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    "krnl.permute"(%ib, %il, %jb, %jl, %kb, %kl) <{map = [0 : i64, 3 : i64, 1 : i64, 4 : i64, 2 : i64, 5 : i64]}> : (!krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop) -> ()
    "krnl.parallel"(%ib, %nt) <{operandSegmentSizes = array<i32: 1, 1>, proc_bind = "primary"}> : (!krnl.loop, i32) -> ()
    "krnl.parallel"(%jb) <{operandSegmentSizes = array<i32: 1, 0>}> : (!krnl.loop) -> ()
    "krnl.iterate"(%ib, %jb, %ii, %jj, %kk) <{bounds = [affine_map<() -> (0)>, affine_map<() -> (16)>, affine_map<() -> (0)>, affine_map<() -> (16)>, affine_map<() -> (0)>, affine_map<() -> (16)>], num_optimized_loops = 2 : i64}> ({
    ^bb0(%i: index, %j: index, %k: index):
      %i1, %j1 = "krnl.get_induction_var_value"(%ib, %jb) : (!krnl.loop, !krnl.loop) -> (index, index)
      %Cb = "memref.alloca"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> memref<8x8xf32>
      "krnl.copy_to_tile_buffer"(%Cb, %C, %i1, %j1, %f0) : (memref<8x8xf32>, memref<16x16xf32>, index, index, f32) -> ()
      "krnl.iterate"(%kb) <{bounds = [], num_optimized_loops = 1 : i64}> ({
        %k1 = "krnl.get_induction_var_value"(%kb) : (!krnl.loop) -> index
        %Ab = "memref.alloca"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> memref<8x8xf32>
        %Bb = "memref.alloca"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> memref<8x8xf32>
        "krnl.copy_to_tile_buffer"(%Ab, %A, %i1, %k1, %f0) <{padToNext = [1 : i64, 1 : i64], tileSize = [8 : i64, 8 : i64]}> : (memref<8x8xf32>, memref<16x16xf32>, index, index, f32) -> ()
        "krnl.copy_to_tile_buffer"(%Bb, %B, %k1, %j1, %f0) {transpose = false} : (memref<8x8xf32>, memref<16x16xf32>, index, index, f32) -> ()
        "krnl.movable"() ({
          "krnl.matmul"(%Ab, %i1, %k1, %Bb, %k1, %j1, %Cb, %i1, %j1, %il, %jl, %kl, %i1, %j1, %k1, %c16, %c16, %c16) <{operandSegmentSizes = array<i32: 1, 2, 1, 2, 1, 2, 3, 1, 1, 1, 1, 1, 1>, simdize = false, unroll = false, overcompute = false}> : (memref<8x8xf32>, index, index, memref<8x8xf32>, index, index, memref<8x8xf32>, index, index, !krnl.loop, !krnl.loop, !krnl.loop, index, index, index, index, index, index) -> ()
          "krnl.terminate"() : () -> ()
        }) : () -> ()
        "krnl.yield"() : () -> ()
      }) : (!krnl.loop) -> ()
      "krnl.copy_from_tile_buffer"(%Cb, %C, %i1, %j1) <{tileSize = [8 : i64, 8 : i64]}> : (memref<8x8xf32>, memref<16x16xf32>, index, index) -> ()
      "krnl.yield"() : () -> ()
    }) : (!krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop) -> ()
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
