"""What the polyhedral model over-approximates, and that it says so.

Accesses inside scf regions are may-accesses with their own subscripts; a
subscript read from memory ranges over its whole dimension; a buffer allocated
inside a loop is private to each iteration. Each claim is checked both ways:
the precise model finds a loop parallel where it is, and still finds the
dependence where one exists (soundness), by running the instances.
"""

from __future__ import annotations

import numpy as np

import polykrnl as pk


def _report(src: str, func: str) -> pk.LegalityReport:
    return pk.check(pk.parse(src)[func])


def _verdict(report: pk.LegalityReport, loop: str) -> str:
    return next(lv.status for lv in report.loops if lv.loop == loop)


CONDITIONAL_STORE = """
func.func @f(%a: memref<16xf32>, %b: memref<16xf32>) {
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 16) {
    %v = krnl.load %a[%i] : memref<16xf32>
    %z = arith.constant 0.0 : f32
    %c = arith.cmpf ogt, %v, %z : f32
    scf.if %c {
      krnl.store %v, %b[%i] : memref<16xf32>
    }
  }
  return
}
"""

CONDITIONAL_SHIFT = """
func.func @f(%b: memref<17xf32>) {
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 16) {
    %v = krnl.load %b[%i] : memref<17xf32>
    %z = arith.constant 0.0 : f32
    %c = arith.cmpf ogt, %v, %z : f32
    scf.if %c {
      %i1 = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
      krnl.store %v, %b[%i1] : memref<17xf32>
    }
  }
  return
}
"""


def test_a_conditional_store_at_the_loop_index_leaves_the_loop_parallel() -> None:
    report = _report(CONDITIONAL_STORE, "f")
    assert _verdict(report, "i") == "parallel"
    assert any("inside scf.if" in a for a in report.approximations), report.approximations
    assert "approximated accesses" in str(report)
    assert report.to_json()["approximations"] == list(report.approximations)


def test_a_conditional_store_one_ahead_still_carries_the_dependence() -> None:
    # b[i + 1] is written when b[i] > 0 and read at the next i: a real RAW, which a
    # parallel run would break. The may-write keeps it. Whether the store runs depends
    # on data the model does not follow, so the parallel loop is refused as not proven
    # (it was refused as illegal, a claim the model cannot back: with b <= 0 nothing
    # is carried).
    report = _report(CONDITIONAL_SHIFT, "f")
    assert _verdict(report, "i") != "parallel"
    fn = pk.parse(CONDITIONAL_SHIFT)["f"]
    refused = False
    try:
        pk.schedule(fn).parallel("i")
    except pk.UnprovenTransformError as e:
        refused = "scf.if" in str(e)
    assert refused
    # The chain really exists: a positive b[0] propagates all the way (the interpreter).
    b = np.ones(17, dtype=np.float32)
    b[1:] = -1
    pk.run_reference(fn, b=b)
    assert (b == 1).all()


GATHER = """
func.func @gather(%data: memref<10x4xf32>, %idx: memref<6xi64>, %out: memref<6x4xf32>) {
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 6, %l#1 -> %j = 0 to 4) {
    %k = krnl.load %idx[%i] : memref<6xi64>
    %ki = arith.index_cast %k : i64 to index
    %v = krnl.load %data[%ki, %j] : memref<10x4xf32>
    krnl.store %v, %out[%i, %j] : memref<6x4xf32>
  }
  return
}
"""

SCATTER_ADD = """
func.func @scatter(%idx: memref<6xi64>, %upd: memref<6xf32>, %out: memref<10xf32>) {
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 6) {
    %k = krnl.load %idx[%i] : memref<6xi64>
    %ki = arith.index_cast %k : i64 to index
    %u = krnl.load %upd[%i] : memref<6xf32>
    %o = krnl.load %out[%ki] : memref<10xf32>
    %s = arith.addf %o, %u : f32
    krnl.store %s, %out[%ki] : memref<10xf32>
  }
  return
}
"""


def test_an_indirect_subscript_is_named_and_keeps_the_affine_ones() -> None:
    report = _report(GATHER, "gather")
    # Only reads go through the indirect subscript: both loops stay parallel.
    assert _verdict(report, "i") == "parallel"
    assert _verdict(report, "j") == "parallel"
    (why,) = report.approximations
    assert "krnl.load: subscript 0 of data is not an affine function" in why


def test_a_scatter_through_an_index_array_is_not_parallel() -> None:
    # Two i may write the same out[k] (repeated indices): the loop must not be parallel.
    report = _report(SCATTER_ADD, "scatter")
    assert _verdict(report, "i") != "parallel"
    fn = pk.parse(SCATTER_ADD)["scatter"]
    idx = np.array([3, 3, 3, 1, 3, 1], dtype=np.int64)
    upd = np.arange(6, dtype=np.float32)
    out = np.zeros(10, dtype=np.float32)
    pk.run_reference(fn, idx=idx, upd=upd, out=out)
    expected = np.zeros(10, dtype=np.float32)
    np.add.at(expected, idx, upd)
    np.testing.assert_array_equal(out, expected)


PRIVATE_BUFFER = """
func.func @priv(%A: memref<8x4xf32>, %B: memref<8x4xf32>) {
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 8) {
    %t = memref.alloc() : memref<4xf32>
    %m:2 = krnl.define_loops 2
    krnl.iterate(%m#0) with (%m#0 -> %j = 0 to 4) {
      %v = krnl.load %A[%i, %j] : memref<8x4xf32>
      krnl.store %v, %t[%j] : memref<4xf32>
    }
    krnl.iterate(%m#1) with (%m#1 -> %k = 0 to 4) {
      %w = krnl.load %t[%k] : memref<4xf32>
      %w2 = arith.addf %w, %w : f32
      krnl.store %w2, %B[%i, %k] : memref<8x4xf32>
    }
  }
  return
}
"""


def test_a_buffer_allocated_in_a_loop_is_private_to_each_iteration() -> None:
    report = _report(PRIVATE_BUFFER, "priv")
    assert _verdict(report, "i") == "parallel"
    assert report.approximations == ()
    fn = pk.parse(PRIVATE_BUFFER)["priv"]
    kernel = pk.schedule(fn).parallel("i").to_numpy(parallel=True)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 4)).astype(np.float32)
    b = np.zeros((8, 4), dtype=np.float32)
    kernel(A=a, B=b)
    np.testing.assert_array_equal(b, a + a)
