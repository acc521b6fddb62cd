// polykrnl: semantic
// Covers: the standard dialects that appear around Krnl loops: func.call between
// functions of the module, arith (constants of several types, integer and float
// arithmetic, cmpi / cmpf, select, index_cast, sitofp), math (sqrt, tanh, exp),
// memref (alloc, alloca, dealloc, dim, load, store), affine (apply, load, store,
// for) and scf (for with iter_args, if with and without results) inside and
// around krnl.iterate bodies.
func.func private @norm(%v: memref<?xf32>, %n: index) -> f32 {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ss = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %v[%k] : memref<?xf32>
    %sq = arith.mulf %x, %x : f32
    %nacc = arith.addf %acc, %sq : f32
    scf.yield %nacc : f32
  }
  %r = math.sqrt %ss : f32
  return %r : f32
}

func.func @normalize_rows(%m: memref<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %rows = memref.dim %m, %c0 : memref<?x16xf32>
  %row = memref.alloc() : memref<16xf32>
  %dyn = "memref.cast"(%row) : (memref<16xf32>) -> memref<?xf32>
  %eps = arith.constant 1.0e-6 : f32
  %ii, %jj, %kk = krnl.define_loops 3
  krnl.iterate(%ii) with (%ii -> %i = 0 to %rows) {
    krnl.iterate(%jj) with (%jj -> %j = 0 to 16) {
      %v = krnl.load %m[%i, %j] : memref<?x16xf32>
      memref.store %v, %row[%j] : memref<16xf32>
    }
    %n = func.call @norm(%dyn, %c16) : (memref<?xf32>, index) -> f32
    %small = arith.cmpf olt, %n, %eps : f32
    %d = scf.if %small -> (f32) {
      scf.yield %eps : f32
    } else {
      scf.yield %n : f32
    }
    krnl.iterate(%kk) with (%kk -> %k = 0 to 16) {
      %v = krnl.load %m[%i, %k] : memref<?x16xf32>
      %q = arith.divf %v, %d : f32
      %t = math.tanh %q : f32
      krnl.store %t, %m[%i, %k] : memref<?x16xf32>
    }
  }
  memref.dealloc %row : memref<16xf32>
  return
}

// Integer histogram of values clamped to [0, 8), with affine ops inside the body.
func.func @histogram(%x: memref<50xi32>, %h: memref<8xi32>) {
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %seven = arith.constant 7 : i32
  affine.for %b = 0 to 8 {
    affine.store %zero, %h[%b] : memref<8xi32>
  }
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 50) {
    %v = affine.load %x[%i] : memref<50xi32>
    %neg = arith.cmpi slt, %v, %zero : i32
    %big = arith.cmpi sgt, %v, %seven : i32
    %lo = arith.select %neg, %zero, %v : i32
    %c = arith.select %big, %seven, %lo : i32
    %bin = arith.index_cast %c : i32 to index
    %old = memref.load %h[%bin] : memref<8xi32>
    %new = arith.addi %old, %one : i32
    memref.store %new, %h[%bin] : memref<8xi32>
  }
  return
}

// Scaled exponentials in a scratch buffer, with an affine.for nested in a Krnl loop
// and a guarded store.
func.func @exp_scaled(%x: memref<4x6xf32>, %y: memref<4x6xf32>) {
  %two = arith.constant 2 : i32
  %scale = arith.sitofp %two : i32 to f32
  %tmp = memref.alloca() : memref<6xf32>
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 4) {
    affine.for %j = 0 to 6 {
      %v = affine.load %x[%i, %j] : memref<4x6xf32>
      %e = math.exp %v : f32
      %s = arith.mulf %e, %scale : f32
      affine.store %s, %tmp[%j] : memref<6xf32>
    }
    affine.for %j = 0 to 6 {
      %jj = affine.apply affine_map<(d0) -> (5 - d0)>(%j)
      %v = affine.load %tmp[%jj] : memref<6xf32>
      %c0 = arith.constant 0 : index
      %first = arith.cmpi eq, %j, %c0 : index
      scf.if %first {
        memref.store %v, %y[%i, %j] : memref<4x6xf32>
      } else {
        affine.store %v, %y[%i, %j] : memref<4x6xf32>
      }
    }
  }
  return
}
