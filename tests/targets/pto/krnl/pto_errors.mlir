// polykrnl: semantic
// The smallest Krnl programs that the PTO emitter refuses, one per reason
// (tests/targets/pto/test_pto_errors.py). Each is a correct Krnl program: the NumPy
// generator and the reference interpreter run them.

func.func @symbolic_range(%N: index, %X: memref<?xf32>, %Y: memref<?xf32>) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    %v = krnl.load %X[%i] : memref<?xf32>
    %e = math.exp %v : f32
    krnl.store %e, %Y[%i] : memref<?xf32>
  }
  return
}

func.func @erf(%X: memref<8x16xf32>, %Y: memref<8x16xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 8, %jj -> %j = 0 to 16) {
    %v = krnl.load %X[%i, %j] : memref<8x16xf32>
    %e = math.erf %v : f32
    krnl.store %e, %Y[%i, %j] : memref<8x16xf32>
  }
  return
}

func.func @triangular(%X: memref<8x8xf32>, %Y: memref<8x8xf32>) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 8) {
    %jj = krnl.define_loops 1
    krnl.iterate(%jj) with (%jj -> %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i)) {
      %v = krnl.load %X[%i, %j] : memref<8x8xf32>
      krnl.store %v, %Y[%i, %j] : memref<8x8xf32>
    }
  }
  return
}

func.func @outside_loops(%Y: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  krnl.store %one, %Y[%c0, %c0] : memref<8x8xf32>
  return
}

func.func @scalar_argument(%a: f32, %X: memref<8x16xf32>, %Y: memref<8x16xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 8, %jj -> %j = 0 to 16) {
    %v = krnl.load %X[%i, %j] : memref<8x16xf32>
    %e = arith.mulf %v, %a : f32
    krnl.store %e, %Y[%i, %j] : memref<8x16xf32>
  }
  return
}

// 1024 x 1024 f32 = 4 MiB in one tile: more than the unified buffer.
func.func @too_big(%X: memref<1024x1024xf32>, %Y: memref<1024x1024xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 1024, %jj -> %j = 0 to 1024) {
    %v = krnl.load %X[%i, %j] : memref<1024x1024xf32>
    %e = math.exp %v : f32
    krnl.store %e, %Y[%i, %j] : memref<1024x1024xf32>
  }
  return
}

// A running sum along each row: j carries the dependence.
func.func @prefix_sum(%Y: memref<8x16xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 8, %jj -> %j = 1 to 16) {
    %jm = affine.apply affine_map<(d0) -> (d0 - 1)>(%j)
    %a = krnl.load %Y[%i, %jm] : memref<8x16xf32>
    %b = krnl.load %Y[%i, %j] : memref<8x16xf32>
    %s = arith.addf %a, %b : f32
    krnl.store %s, %Y[%i, %j] : memref<8x16xf32>
  }
  return
}

func.func @store_constant(%Y: memref<8x16xf32>) {
  %z = arith.constant 0.0 : f32
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 8, %jj -> %j = 0 to 16) {
    krnl.store %z, %Y[%i, %j] : memref<8x16xf32>
  }
  return
}

func.func @row_product(%X: memref<8x16xf32>, %P: memref<8xf32>) {
  %one = arith.constant 1.0 : f32
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 8) {
    %jj = krnl.define_loops 1
    %p = krnl.iterate(%jj) with (%jj -> %j = 0 to 16) iter_args(%acc = %one) -> (f32) {
      %v = krnl.load %X[%i, %j] : memref<8x16xf32>
      %n = arith.mulf %acc, %v : f32
      krnl.yield %n : f32
    }
    krnl.store %p, %P[%i] : memref<8xf32>
  }
  return
}

func.func @constant_minus(%X: memref<8x16xf32>, %Y: memref<8x16xf32>) {
  %one = arith.constant 1.0 : f32
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 8, %jj -> %j = 0 to 16) {
    %v = krnl.load %X[%i, %j] : memref<8x16xf32>
    %e = arith.subf %one, %v : f32
    krnl.store %e, %Y[%i, %j] : memref<8x16xf32>
  }
  return
}

func.func @matmul_other_init(%A: memref<16x16xf16>, %B: memref<16x16xf16>, %C: memref<16x16xf32>) {
  %one = arith.constant 1.0 : f32
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 16, %jj -> %j = 0 to 16) {
    krnl.store %one, %C[%i, %j] : memref<16x16xf32>
    %kk = krnl.define_loops 1
    krnl.iterate(%kk) with (%kk -> %k = 0 to 16) {
      %a = krnl.load %A[%i, %k] : memref<16x16xf16>
      %b = krnl.load %B[%k, %j] : memref<16x16xf16>
      %c = krnl.load %C[%i, %j] : memref<16x16xf32>
      %a32 = arith.extf %a : f16 to f32
      %b32 = arith.extf %b : f16 to f32
      %p = arith.mulf %a32, %b32 : f32
      %s = arith.addf %c, %p : f32
      krnl.store %s, %C[%i, %j] : memref<16x16xf32>
    }
  }
  return
}

func.func @tile_into_row_window(%N: index, %X: memref<?x16xf32>, %T: memref<?xf32>) {
  %a0, %a1 = krnl.define_loops 2
  %ab, %al = krnl.block %a0 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ab, %al, %a1) with (%a0 -> %i = 0 to %N, %a1 -> %j = 0 to 16) {
    %x = krnl.load %X[%i, %j] : memref<?x16xf32>
    %t = krnl.load %T[%i] : memref<?xf32>
    %s = arith.addf %t, %x : f32
    krnl.store %s, %T[%i] : memref<?xf32>
  }
  return
}

func.func @matmul_f16_out(%A: memref<16x16xf16>, %B: memref<16x16xf16>, %C: memref<16x16xf16>) {
  %z = arith.constant 0.0 : f16
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 16, %jj -> %j = 0 to 16) {
    krnl.store %z, %C[%i, %j] : memref<16x16xf16>
    %kk = krnl.define_loops 1
    krnl.iterate(%kk) with (%kk -> %k = 0 to 16) {
      %a = krnl.load %A[%i, %k] : memref<16x16xf16>
      %b = krnl.load %B[%k, %j] : memref<16x16xf16>
      %c = krnl.load %C[%i, %j] : memref<16x16xf16>
      %p = arith.mulf %a, %b : f16
      %s = arith.addf %c, %p : f16
      krnl.store %s, %C[%i, %j] : memref<16x16xf16>
    }
  }
  return
}

// f64 has no PTO tile type.
func.func @element_type(%X: memref<8x16xf64>, %Y: memref<8x16xf64>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 8, %jj -> %j = 0 to 16) {
    %v = krnl.load %X[%i, %j] : memref<8x16xf64>
    krnl.store %v, %Y[%i, %j] : memref<8x16xf64>
  }
  return
}

// Two copies in one nest, one in f32 and one in f16.
func.func @mixed_dtypes(%X: memref<8x16xf32>, %Y: memref<8x16xf32>, %Z: memref<8x16xf16>, %W: memref<8x16xf16>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 8, %jj -> %j = 0 to 16) {
    %v = krnl.load %X[%i, %j] : memref<8x16xf32>
    krnl.store %v, %Y[%i, %j] : memref<8x16xf32>
    %w = krnl.load %Z[%i, %j] : memref<8x16xf16>
    krnl.store %w, %W[%i, %j] : memref<8x16xf16>
  }
  return
}

// X[i, j + 1]: a window starts at a tile loop's value, not an offset of it.
func.func @shifted(%X: memref<8x17xf32>, %Y: memref<8x16xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 8, %jj -> %j = 0 to 16) {
    %j1 = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
    %v = krnl.load %X[%i, %j1] : memref<8x17xf32>
    krnl.store %v, %Y[%i, %j] : memref<8x16xf32>
  }
  return
}

// X[i, i] in a nest of rows i and columns j.
func.func @diagonal(%X: memref<16x16xf32>, %Y: memref<16x16xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 16, %jj -> %j = 0 to 16) {
    %v = krnl.load %X[%i, %i] : memref<16x16xf32>
    krnl.store %v, %Y[%i, %j] : memref<16x16xf32>
  }
  return
}

// Two column loops of one row loop over 16 and 8 columns.
func.func @column_ranges(%X: memref<8x16xf32>, %Y: memref<8x16xf32>) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 8) {
    %jj = krnl.define_loops 1
    krnl.iterate(%jj) with (%jj -> %j = 0 to 16) {
      %v = krnl.load %X[%i, %j] : memref<8x16xf32>
      krnl.store %v, %Y[%i, %j] : memref<8x16xf32>
    }
    %kk = krnl.define_loops 1
    krnl.iterate(%kk) with (%kk -> %k = 0 to 8) {
      %v = krnl.load %X[%i, %k] : memref<8x16xf32>
      %e = math.exp %v : f32
      krnl.store %e, %Y[%i, %k] : memref<8x16xf32>
    }
  }
  return
}

// exp(1.0) in the nest: nothing to tile.
func.func @exp_constant(%Y: memref<8x16xf32>) {
  %one = arith.constant 1.0 : f32
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 8, %jj -> %j = 0 to 16) {
    %e = math.exp %one : f32
    krnl.store %e, %Y[%i, %j] : memref<8x16xf32>
  }
  return
}

// 1.0 + 2.0 in the nest.
func.func @constants_only(%Y: memref<8x16xf32>) {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 8, %jj -> %j = 0 to 16) {
    %e = arith.addf %one, %two : f32
    krnl.store %e, %Y[%i, %j] : memref<8x16xf32>
  }
  return
}

// A row sum stored into every column of the row: a per-row value is one column.
func.func @row_value_to_window(%X: memref<8x16xf32>, %Y: memref<8x16xf32>) {
  %z = arith.constant 0.0 : f32
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 8) {
    %jj, %kk = krnl.define_loops 2
    %s = krnl.iterate(%jj) with (%jj -> %j = 0 to 16) iter_args(%a = %z) -> (f32) {
      %v = krnl.load %X[%i, %j] : memref<8x16xf32>
      %n = arith.addf %a, %v : f32
      krnl.yield %n : f32
    }
    krnl.iterate(%kk) with (%kk -> %k = 0 to 16) {
      krnl.store %s, %Y[%i, %k] : memref<8x16xf32>
    }
  }
  return
}

// sum(row) - X[i, k]: PTO has the row-broadcast ops tile - per-row, not the reverse.
func.func @row_value_minus_tile(%X: memref<8x16xf32>, %Y: memref<8x16xf32>) {
  %z = arith.constant 0.0 : f32
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 8) {
    %jj, %kk = krnl.define_loops 2
    %s = krnl.iterate(%jj) with (%jj -> %j = 0 to 16) iter_args(%a = %z) -> (f32) {
      %v = krnl.load %X[%i, %j] : memref<8x16xf32>
      %n = arith.addf %a, %v : f32
      krnl.yield %n : f32
    }
    krnl.iterate(%kk) with (%kk -> %k = 0 to 16) {
      %v = krnl.load %X[%i, %k] : memref<8x16xf32>
      %d = arith.subf %s, %v : f32
      krnl.store %d, %Y[%i, %k] : memref<8x16xf32>
    }
  }
  return
}

// padToNext = [1, 4]: TFILLPAD pads the whole tile, not to the next multiple of 4.
func.func @pad_to_next(%src: memref<7x6xf32>, %out: memref<7x6xf32>) {
  %pad = arith.constant 0.0 : f32
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %jb) with (%ii -> %i = 0 to 7, %jj -> %j = 0 to 6) {
    %i0, %j0 = krnl.get_induction_var_value(%ib, %jb) : (!krnl.loop, !krnl.loop) -> (index, index)
    %buf = memref.alloca() : memref<4x8xf32>
    krnl.copy_to_tile_buffer %buf, %src[%i0, %j0], %pad {padToNext = [1, 4], tileSize = [4, 8]} : memref<4x8xf32>, memref<7x6xf32>
    krnl.copy_from_tile_buffer %buf, %out[%i0, %j0] {tileSize = [4, 8]} : memref<4x8xf32>, memref<7x6xf32>
  }
  return
}

// A 3-D tile buffer.
func.func @buffer_3d(%src: memref<8x8x8xf32>, %out: memref<8x8x8xf32>) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib) with (%ii -> %i = 0 to 8, %jj -> %j = 0 to 8, %kk -> %k = 0 to 8) {
    %i0 = krnl.get_induction_var_value(%ib) : (!krnl.loop) -> (index)
    %buf = memref.alloca() : memref<8x8x8xf32>
    krnl.copy_to_tile_buffer %buf, %src[%i0, %c0, %c0], %pad : memref<8x8x8xf32>, memref<8x8x8xf32>
    krnl.copy_from_tile_buffer %buf, %out[%i0, %c0, %c0] : memref<8x8x8xf32>, memref<8x8x8xf32>
  }
  return
}

// A per-column value minus a tile: TCOLEXPANDSUB only has "tile - per-column".
func.func @column_value_minus_tile(%s: memref<16xf32>, %X: memref<8x16xf32>, %Y: memref<8x16xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 8, %jj -> %j = 0 to 16) {
    %v = krnl.load %s[%j] : memref<16xf32>
    %x = krnl.load %X[%i, %j] : memref<8x16xf32>
    %d = arith.subf %v, %x : f32
    krnl.store %d, %Y[%i, %j] : memref<8x16xf32>
  }
  return
}

// An outer product of a per-row and a per-column value.
func.func @outer_product(%a: memref<8xf32>, %b: memref<16xf32>, %Y: memref<8x16xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 8, %jj -> %j = 0 to 16) {
    %u = krnl.load %a[%i] : memref<8xf32>
    %v = krnl.load %b[%j] : memref<16xf32>
    %p = arith.mulf %u, %v : f32
    krnl.store %p, %Y[%i, %j] : memref<8x16xf32>
  }
  return
}
