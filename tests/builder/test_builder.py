"""The Python builder makes the same IR as the equivalent hand-written Krnl text."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest
from xdsl.dialects.builtin import FileLineColLoc, f32
from xdsl.ir import Operation

import polykrnl as pk
from polykrnl.builder import AffineBound, FunctionBuilder, Loop, ModuleBuilder
from polykrnl.errors import BuilderError


def assert_same(mod: pk.Module, text: str) -> None:
    ref = pk.parse(text)
    assert mod.print() == ref.print()
    # The generic form also shows properties the custom syntax hides.
    assert mod.print(generic=True) == ref.print(generic=True)
    # Every program here is meant to be valid Krnl, not only to print the same.
    pk.verify(mod)


def here() -> int:
    """The line of the caller (for location tests)."""
    return sys._getframe(1).f_lineno


def ops_named(mod: pk.Module, name: str) -> list[Operation]:
    return [op for op in mod.op.walk() if op.name == name]


# ------------------------------------------------------------------ programs

GEMM = """
func.func @gemm(%A: memref<40x60xf32>, %B: memref<60x80xf32>, %C: memref<40x80xf32>) {
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl, %kk) [0, 3, 1, 4, 2] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.parallel %ib : !krnl.loop
  krnl.iterate(%ib, %jb, %kk, %il, %jl) with (%ii -> %i = 0 to 40, %jj -> %j = 0 to 80, %kk -> %k = 0 to 60) {
    %a = krnl.load %A[%i, %k] : memref<40x60xf32>
    %b = krnl.load %B[%k, %j] : memref<60x80xf32>
    %c = krnl.load %C[%i, %j] : memref<40x80xf32>
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    krnl.store %s, %C[%i, %j] : memref<40x80xf32>
  }
  return
}
func.func @gemm_par(%A: memref<?x60xf32>, %C: memref<?x60xf32>, %N: index) {
  %nt = arith.constant 8 : i32
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jj) [0, 2, 1] : !krnl.loop, !krnl.loop, !krnl.loop
  krnl.parallel(%ib, %jj), num_threads(%nt) {proc_bind = "spread"} : !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jj, %il) with (%ii -> %i = 0 to %N, %jj -> %j = 0 to 60) {
    %a = krnl.load %A[%i, %j] : memref<?x60xf32>
    %s = arith.addf %a, %a : f32
    krnl.store %s, %C[%i, %j] : memref<?x60xf32>
  }
  return
}
"""  # noqa: E501


def test_gemm_block_permute_parallel() -> None:
    mb = ModuleBuilder()
    args = [("A", "memref<40x60xf32>"), ("B", "memref<60x80xf32>"), ("C", "memref<40x80xf32>")]
    with mb.function("gemm", args) as f:
        A, B, C = f.args
        ii, jj, kk = f.define_loops(3, names=("ii", "jj", "kk"))
        ib, il = f.block(ii, 4, names=("ib", "il"))
        jb, jl = f.block(jj, 8, names=("jb", "jl"))
        f.permute([ib, il, jb, jl, kk], [0, 3, 1, 4, 2])
        f.parallel(ib)
        entries = [(ii, "i", 0, 40), (jj, "j", 0, 80), (kk, "k", 0, 60)]
        with f.iterate([ib, jb, kk, il, jl], entries) as (i, j, k):
            a = f.load(A, [i, k], name="a")
            b = f.load(B, [k, j], name="b")
            c = f.load(C, [i, j], name="c")
            f.store(f.addf(c, f.mulf(a, b, name="p"), name="s"), C, [i, j])
    args = [("A", "memref<?x60xf32>"), ("C", "memref<?x60xf32>"), ("N", "index")]
    with mb.function("gemm_par", args) as f:
        A, C, N = f.args
        nt = f.constant(8, "i32", name="nt")
        ii, jj = f.define_loops(2, names=("ii", "jj"))
        ib, il = f.block(ii, 16, names=("ib", "il"))
        f.permute([ib, il, jj], [0, 2, 1])
        f.parallel([ib, jj], num_threads=nt, proc_bind="spread")
        with f.iterate([ib, jj, il], [(ii, "i", 0, N), (jj, "j", 0, 60)]) as (i, j):
            a = f.load(A, [i, j], name="a")
            f.store(f.addf(a, a, name="s"), C, [i, j])
    assert_same(mb.module(), GEMM)


TRIANGULAR = """
func.func @band_transpose(%A: memref<?x?xf32>, %N: index) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    krnl.iterate(%jj) with (%jj -> %j = affine_map<(d0) -> (d0 + 1)>(%i) to min affine_map<(d0)[s0] -> (d0 + 8, s0)>(%i)[%N]) {
      %x = krnl.load %A[%i, %j] : memref<?x?xf32>
      %y = krnl.load %A[%j, %i] : memref<?x?xf32>
      krnl.store %y, %A[%i, %j] : memref<?x?xf32>
      krnl.store %x, %A[%j, %i] : memref<?x?xf32>
    }
  }
  return
}
"""  # noqa: E501


def test_triangular_nest_with_affine_bounds() -> None:
    mb = ModuleBuilder()
    with mb.function("band_transpose", [("A", "memref<?x?xf32>"), ("N", "index")]) as f:
        A, N = f.args
        ii, jj = f.define_loops(2, names=("ii", "jj"))
        with f.iterate([ii], [(ii, "i", 0, N)]) as (i,):
            lb = AffineBound("(d0) -> (d0 + 1)", dims=[i])
            ub = AffineBound("affine_map<(d0)[s0] -> (d0 + 8, s0)>", dims=[i], symbols=[N])
            with f.iterate([jj], [(jj, "j", lb, ub)]) as (j,):
                x = f.load(A, [i, j], name="x")
                y = f.load(A, [j, i], name="y")
                f.store(y, A, [i, j])
                f.store(x, A, [j, i])
    assert_same(mb.module(), TRIANGULAR)


REDUCTION = """
func.func @sum(%X: memref<100xf32>, %out: memref<2xf32>) {
  %f0 = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.unroll %il : !krnl.loop
  %total = krnl.iterate(%ib, %il) with (%ii -> %i = 0 to 100) iter_args(%acc = %f0) -> (f32) {
    %x = krnl.load %X[%i] : memref<100xf32>
    %next = arith.addf %acc, %x : f32
    krnl.yield %next : f32
  }
  krnl.store %total, %out[%c0] : memref<2xf32>
  %jj = krnl.define_loops 1
  %s, %m = krnl.iterate(%jj) with (%jj -> %j = 0 to 100) iter_args(%s0 = %f0, %m0 = %f0) -> (f32, f32) {
    %x = krnl.load %X[%j] : memref<100xf32>
    %s1 = arith.addf %s0, %x : f32
    %m1 = arith.maxnumf %m0, %x : f32
    krnl.yield %s1, %m1 : f32, f32
  }
  %d = arith.subf %m, %s : f32
  krnl.store %d, %out[%c1] : memref<2xf32>
  return
}
"""  # noqa: E501


def test_iter_args_reduction_and_unroll() -> None:
    mb = ModuleBuilder()
    with mb.function("sum", [("X", "memref<100xf32>"), ("out", "memref<2xf32>")]) as f:
        X, out = f.args
        f0 = f.constant(0.0, "f32", name="f0")
        c0 = f.constant(0, "index", name="c0")
        c1 = f.constant(1, name="c1")
        (ii,) = f.define_loops(1, names=("ii",))
        ib, il = f.block(ii, 4, names=("ib", "il"))
        f.unroll(il)
        with f.iterate(
            [ib, il], [(ii, "i", 0, 100)], iter_args=[("acc", f0)], names=("total",)
        ) as loop:
            (i,) = loop.ivs
            (acc,) = loop.iter_args
            x = f.load(X, [i], name="x")
            f.yield_([f.addf(acc, x, name="next")])
        f.store(loop.result, out, [c0])
        (jj,) = f.define_loops(1, names=("jj",))
        with f.iterate(
            [jj], [(jj, "j", 0, 100)], iter_args=[("s0", f0), ("m0", f0)], names=("s", "m")
        ) as both:
            j, s0, m0 = both
            x = f.load(X, [j], name="x")
            f.yield_([f.addf(s0, x, name="s1"), f.maxnumf(m0, x, name="m1")])
        s, m = both.results
        f.store(f.subf(m, s, name="d"), out, [c1])
    assert_same(mb.module(), REDUCTION)


IMPERFECT = """
func.func @row_tiles(%A: memref<64x64xf32>, %S: memref<64x4xf32>) {
  %f0 = arith.constant 0.000000e+00 : f32
  %ii, %kk = krnl.define_loops 2
  %kb, %kl = krnl.block %kk 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ii, %kb) with (%ii -> %i = 0 to 64, %kk -> %k = 0 to 64) {
    %i0, %k0 = krnl.get_induction_var_value(%ii, %kb) : (!krnl.loop, !krnl.loop) -> (index, index)
    %t = affine.apply affine_map<(d0) -> (d0 floordiv 16)>(%k0)
    krnl.store %f0, %S[%i0, %t] : memref<64x4xf32>
    krnl.iterate(%kl) with () {
      %k1 = krnl.get_induction_var_value(%kl) : (!krnl.loop) -> index
      %a = krnl.load %A[%i0, %k1] : memref<64x64xf32>
      %old = krnl.load %S[%i0, %t] : memref<64x4xf32>
      %new = arith.addf %old, %a : f32
      krnl.store %new, %S[%i0, %t] : memref<64x4xf32>
    }
  }
  return
}
"""


def test_imperfect_nest_with_empty_inner_iterate() -> None:
    mb = ModuleBuilder()
    with mb.function("row_tiles", [("A", "memref<64x64xf32>"), ("S", "memref<64x4xf32>")]) as f:
        A, S = f.args
        f0 = f.constant(0.0, "f32", name="f0")
        ii, kk = f.define_loops(2, names=("ii", "kk"))
        kb, kl = f.block(kk, 16, names=("kb", "kl"))
        with f.iterate([ii, kb], [(ii, "i", 0, 64), (kk, "k", 0, 64)]):
            i0, k0 = f.get_induction_var_value([ii, kb], names=("i0", "k0"))
            t = f.affine_apply("(d0) -> (d0 floordiv 16)", dims=[k0], name="t")
            f.store(f0, S, [i0, t])
            with f.iterate([kl], []) as inner:
                assert len(inner) == 0
                k1 = f.get_induction_var_value(kl, name="k1")
                a = f.load(A, [i0, k1], name="a")
                old = f.load(S, [i0, t], name="old")
                f.store(f.addf(old, a, name="new"), S, [i0, t])
    assert_same(mb.module(), IMPERFECT)


MOVABLE = """
func.func @scale_rows(%A: memref<32x32xf32>, %R: memref<32xf32>) {
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to 32, %jj -> %j = 0 to 32) {
    krnl.movable {
      %r = krnl.load %R[%i] : memref<32xf32>
      %two = arith.constant 2.000000e+00 : f32
      %r2 = arith.mulf %r, %two : f32
      krnl.store %r2, %R[%i] : memref<32xf32>
    }
    krnl.iterate(%jj) with () {
      krnl.movable {
        %a = krnl.load %A[%i, %j] : memref<32x32xf32>
        %r = krnl.load %R[%i] : memref<32xf32>
        %p = arith.mulf %a, %r : f32
        krnl.store %p, %A[%i, %j] : memref<32x32xf32>
      }
    }
  }
  return
}
"""


def test_movable() -> None:
    mb = ModuleBuilder()
    with mb.function("scale_rows", [("A", "memref<32x32xf32>"), ("R", "memref<32xf32>")]) as f:
        A, R = f.args
        ii, jj = f.define_loops(2, names=("ii", "jj"))
        ib, il = f.block(ii, 8, names=("ib", "il"))
        with f.iterate([ib, il], [(ii, "i", 0, 32), (jj, "j", 0, 32)]) as (i, j):
            with f.movable():
                r = f.load(R, [i], name="r")
                two = f.constant(2.0, "f32", name="two")
                f.store(f.mulf(r, two, name="r2"), R, [i])
            with f.iterate([jj], []), f.movable():
                a = f.load(A, [i, j], name="a")
                r = f.load(R, [i], name="r")
                f.store(f.mulf(a, r, name="p"), A, [i, j])
    assert_same(mb.module(), MOVABLE)


REGION = """
func.func @exp_inplace(%A: memref<?xf32>) {
  "krnl.region"() ({
    %c0 = arith.constant 0 : index
    %n = memref.dim %A, %c0 : memref<?xf32>
    %ii = krnl.define_loops 1
    krnl.iterate(%ii) with (%ii -> %i = 0 to %n) {
      %a = krnl.load %A[%i] : memref<?xf32>
      %e = math.exp %a : f32
      krnl.store %e, %A[%i] : memref<?xf32>
    }
  }) : () -> ()
  return
}
"""


def test_region() -> None:
    mb = ModuleBuilder()
    with mb.function("exp_inplace", [("A", "memref<?xf32>")]) as f:
        (A,) = f.args
        with f.region():
            c0 = f.constant(0, "index", name="c0")
            n = f.dim(A, c0, name="n")
            (ii,) = f.define_loops(1, names=("ii",))
            with f.iterate([ii], [(ii, "i", 0, n)]) as (i,):
                a = f.load(A, [i], name="a")
                f.store(f.exp(a, name="e"), A, [i])
    assert_same(mb.module(), REGION)


MEMORY = """
func.func @tiled_matmul(%A: memref<64x64xf32>, %B: memref<64x64xf32>, %C: memref<64x64xf32>) {
  %f0 = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %n = arith.constant 4096 : i64
  %Bc = memref.alloc() {alignment = 16 : i64} : memref<64x64xf32>
  "krnl.memcpy"(%Bc, %B, %n, %c0, %c0) : (memref<64x64xf32>, memref<64x64xf32>, i64, index, index) -> ()
  krnl.memset %C, %f0 : memref<64x64xf32>
  %abuf = memref.alloca() : memref<16x16xf32>
  %cbuf = memref.alloca() : memref<16x16xf32>
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl, %kb, %kl) [0, 3, 1, 4, 2, 5] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %kb) with (%ii -> %i = 0 to 64, %jj -> %j = 0 to 64, %kk -> %k = 0 to 64) {
    %i0, %j0, %k0 = krnl.get_induction_var_value(%ib, %jb, %kb) : (!krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index)
    krnl.copy_to_tile_buffer %abuf, %A[%i0, %k0], %f0 {tileSize = [16, 16], padToNext = [16, 16], transpose = false} : memref<16x16xf32>, memref<64x64xf32>
    krnl.copy_to_tile_buffer %cbuf, %C[%i0, %j0], %f0 : memref<16x16xf32>, memref<64x64xf32>
    krnl.matmul %abuf[%i0, %k0], %Bc[%c0, %c0], %cbuf[%i0, %j0], (%il, %jl, %kl), (%i0, %j0, %k0), (%c64, %c64, %c64) {computeTileSize = [16, 16, 16], aTileSize = [16, 16], simdize = false} : memref<16x16xf32>, memref<64x64xf32>, memref<16x16xf32>, (!krnl.loop, !krnl.loop, !krnl.loop)
    krnl.copy_from_tile_buffer %cbuf, %C[%i0, %j0] {tileSize = [16, 16]} : memref<16x16xf32>, memref<64x64xf32>
  }
  memref.dealloc %Bc : memref<64x64xf32>
  return
}
"""  # noqa: E501


def test_memory_ops() -> None:
    mb = ModuleBuilder()
    mat = "memref<64x64xf32>"
    with mb.function("tiled_matmul", [("A", mat), ("B", mat), ("C", mat)]) as f:
        A, B, C = f.args
        f0 = f.constant(0.0, "f32", name="f0")
        c0 = f.constant(0, "index", name="c0")
        c64 = f.constant(64, "index", name="c64")
        n = f.constant(4096, "i64", name="n")
        Bc = f.alloc(mat, alignment=16, name="Bc")
        f.memcpy(Bc, B, n, c0, c0)
        f.memset(C, f0)
        abuf = f.alloca("memref<16x16xf32>", name="abuf")
        cbuf = f.alloca("memref<16x16xf32>", name="cbuf")
        ii, jj, kk = f.define_loops(3, names=("ii", "jj", "kk"))
        ib, il = f.block(ii, 16, names=("ib", "il"))
        jb, jl = f.block(jj, 16, names=("jb", "jl"))
        kb, kl = f.block(kk, 16, names=("kb", "kl"))
        f.permute([ib, il, jb, jl, kb, kl], [0, 3, 1, 4, 2, 5])
        entries = [(ii, "i", 0, 64), (jj, "j", 0, 64), (kk, "k", 0, 64)]
        with f.iterate([ib, jb, kb], entries):
            i0, j0, k0 = f.get_induction_var_value([ib, jb, kb], names=("i0", "j0", "k0"))
            f.copy_to_tile_buffer(
                abuf, A, [i0, k0], f0, tile_size=[16, 16], pad_to_next=[16, 16], transpose=False
            )
            f.copy_to_tile_buffer(cbuf, C, [i0, j0], f0)
            f.matmul(
                abuf, [i0, k0], Bc, [c0, c0], cbuf, [i0, j0],
                [il, jl, kl], [i0, j0, k0], [c64, c64, c64],
                compute_tile_size=[16, 16, 16], a_tile_size=[16, 16], simdize=False,
            )  # fmt: skip
            f.copy_from_tile_buffer(cbuf, C, [i0, j0], tile_size=[16, 16])
        f.dealloc(Bc)
    assert_same(mb.module(), MEMORY)


SCALAR = """
func.func @scalar(%X: memref<10xf32>, %Y: memref<10xf32>, %M: memref<10xi1>, %K: memref<?xi64>) {
  %f0 = arith.constant 0.000000e+00 : f32
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 10) {
    %x = krnl.load %X[%i] : memref<10xf32>
    %e = "krnl.erf"(%x) : (f32) -> f32
    %a = "krnl.acos"(%e) : (f32) -> f32
    %nan = "krnl.isnan"(%a) : (f32) -> i1
    %r = arith.select %nan, %f0, %a : f32
    %t = math.tanh %r : f32
    %s = math.sqrt %t : f32
    %lt = arith.cmpf olt, %s, %f0 : f32
    krnl.store %lt, %M[%i] : memref<10xi1>
    %rev = affine.apply affine_map<(d0) -> (-d0 + 9)>(%i)
    %iv = arith.index_cast %i : index to i64
    %fv = arith.sitofp %iv : i64 to f32
    %y = arith.mulf %s, %fv : f32
    krnl.store %y, %Y[%rev] : memref<10xf32>
    %eq = arith.cmpi eq, %i, %rev : index
    %sq = arith.muli %iv, %iv : i64
    "krnl.print"(%y) <{format = "%f\\n"}> : (f32) -> ()
  }
  return
}
func.func @size(%K: memref<?xi64>) -> index {
  %c0 = arith.constant 0 : index
  %n = memref.dim %K, %c0 : memref<?xi64>
  return %n : index
}
"""


def test_scalar_and_generic_ops() -> None:
    mb = ModuleBuilder()
    args = [("X", "memref<10xf32>"), ("Y", "memref<10xf32>"), ("M", "memref<10xi1>")]
    with mb.function("scalar", [*args, ("K", "memref<?xi64>")]) as f:
        X, Y, M, _ = f.args
        f0 = f.constant(0.0, f32, name="f0")
        (ii,) = f.define_loops(1, names=("ii",))
        with f.iterate([ii], [(ii, "i", 0, 10)]) as (i,):
            x = f.load(X, [i], name="x")
            e = f.krnl_erf(x, name="e")
            a = f.krnl_acos(e, name="a")
            nan = f.krnl_isnan(a, name="nan")
            r = f.select(nan, f0, a, name="r")
            s = f.sqrt(f.tanh(r, name="t"), name="s")
            f.store(f.cmpf("olt", s, f0, name="lt"), M, [i])
            rev = f.affine_apply("(d0) -> (-d0 + 9)", [i], name="rev")
            iv = f.index_cast(i, "i64", name="iv")
            y = f.mulf(s, f.sitofp(iv, "f32", name="fv"), name="y")
            f.store(y, Y, [rev])
            f.cmpi("eq", i, rev, name="eq")
            f.muli(iv, iv, name="sq")
            f.op("krnl.print", [y], properties={"format": '"%f\\n"'})
    with mb.function("size", [("K", "memref<?xi64>")], results=["index"]) as f:
        (K,) = f.args
        f.return_([f.dim(K, f.constant(0, name="c0"), name="n")])
    assert_same(mb.module(), SCALAR)


def test_unnamed_values_print_like_numbered_text() -> None:
    mb = ModuleBuilder()
    with mb.function("f", [(None, "memref<4xf32>")]) as f:
        (A,) = f.args
        (h,) = f.define_loops(1)
        with f.iterate([h], [(h, None, 0, 4)]) as (i,):
            f.store(f.negf(f.load(A, [i])), A, [i])
    text = """
    func.func @f(%0: memref<4xf32>) {
      %1 = krnl.define_loops 1
      krnl.iterate(%1) with (%1 -> %2 = 0 to 4) {
        %3 = krnl.load %0[%2] : memref<4xf32>
        %4 = arith.negf %3 : f32
        krnl.store %4, %0[%2] : memref<4xf32>
      }
      return
    }
    """
    assert_same(mb.module(), text)


# ------------------------------------------------------------------ locations


def test_op_locations_point_at_the_python_call() -> None:
    mb = ModuleBuilder()
    line_fn = here() + 1
    with mb.function("f", [("A", "memref<4xf32>")]) as f:
        (A,) = f.args
        line_def = here() + 1
        (ii,) = f.define_loops(1, names=("ii",))
        line_it = here() + 1
        with f.iterate([ii], [(ii, "i", 0, 4)]) as (i,):
            line_load = here() + 1
            x = f.load(A, [i], name="x")
            line_store = here() + 1
            f.store(x, A, [i])
    mod = mb.module()
    expected = {
        "func.func": line_fn,
        "krnl.define_loops": line_def,
        "krnl.iterate": line_it,
        "krnl.load": line_load,
        "krnl.store": line_store,
        "krnl.yield": line_it,  # added when the with block closes
        "func.return": line_fn,
    }
    for name, line in expected.items():
        (op,) = ops_named(mod, name)
        loc = op.location
        assert isinstance(loc, FileLineColLoc)
        assert (loc.filename.data, loc.line.data, loc.column.data) == (__file__, line, 1)
    (load,) = ops_named(mod, "krnl.load")
    src = mod.location(load)
    assert src is not None and src.line == line_load
    assert src.line_text is not None and "f.load(A, [i]" in src.line_text
    # Printing never shows the locations.
    assert "loc(" not in mod.print()


def test_builder_error_points_at_the_offending_line() -> None:
    mb = ModuleBuilder()
    with pytest.raises(BuilderError) as info, mb.function("f", [("A", "memref<4xi64>")]) as f:
        (A,) = f.args
        x = f.constant(1.0, "f32", name="x")
        c0 = f.constant(0, name="c0")
        line = here() + 1
        f.store(x, A, [c0])
    err = info.value
    assert err.location is not None
    assert (err.location.file, err.location.line) == (__file__, line)
    assert err.hint
    rendered = err.render()
    assert rendered.startswith(f"error: {__file__}:{line}:")
    assert "f.store(x, A, [c0])" in rendered and "^" in rendered


def test_a_caught_error_leaves_the_builder_usable() -> None:
    mb = ModuleBuilder()
    with mb.function("f", [("A", "memref<4xf32>")]) as f:
        (A,) = f.args
        c0 = f.constant(0, name="c0")
        with pytest.raises(BuilderError, match=r"krnl\.store of"):
            f.store(c0, A, [c0])
        f.store(f.load(A, [c0], name="a"), A, [c0])
    with pytest.raises(BuilderError), mb.function("g") as g:
        g.constant(0.5, "index")
    text = """
    func.func @f(%A: memref<4xf32>) {
      %c0 = arith.constant 0 : index
      %a = krnl.load %A[%c0] : memref<4xf32>
      krnl.store %a, %A[%c0] : memref<4xf32>
      return
    }
    """
    # The failed function "g" is dropped from the module.
    assert_same(mb.module(), text)


def test_exports() -> None:
    assert pk.ModuleBuilder is ModuleBuilder
    assert issubclass(pk.BuilderError, pk.PolykrnlError)


# ------------------------------------------------------------------ misuse

FN_ARGS = [("A", "memref<10x10xf32>"), ("N", "index"), ("x", "f32"), ("K", "memref<10xi64>")]


def _in_function(body: Callable[[FunctionBuilder], object]) -> Callable[[], object]:
    def run() -> None:
        with ModuleBuilder().function("f", FN_ARGS) as f:
            body(f)

    return run


def _loop(f: FunctionBuilder, **kw: Any) -> Loop:
    (h,) = f.define_loops(1)
    return f.iterate([h], [(h, "i", 0, 10)], **kw)


def _reuse_function_builder() -> None:
    fb = ModuleBuilder().function("f")
    with fb:
        pass
    with fb:
        pass


def _used_before_with() -> None:
    f = ModuleBuilder().function("f")
    f.constant(0)


def _used_after_with() -> None:
    with ModuleBuilder().function("f") as f:
        pass
    f.constant(0)


def _value_from_other_function() -> None:
    mb = ModuleBuilder()
    with mb.function("a") as fa:
        c = fa.constant(0, name="c")
    with mb.function("b") as fb:
        fb.addi(c, c)


def _results_inside_own_loop(f: FunctionBuilder) -> None:
    x = f.args[2]
    (h,) = f.define_loops(1)
    with f.iterate([h], [(h, "i", 0, 10)], iter_args=[("s", x)]) as loop:
        f.yield_([loop.results[0]])


def _iv_after_loop(f: FunctionBuilder) -> None:
    (h,) = f.define_loops(1)
    with f.iterate([h], [(h, "i", 0, 10)]) as (i,):
        pass
    f.load(f.args[0], [i, i])


def _scope_entered_twice(f: FunctionBuilder) -> None:
    (h,) = f.define_loops(1)
    loop = f.iterate([h], [(h, "i", 0, 10)])
    with loop:
        pass
    with loop:
        pass


def _nested_function() -> None:
    mb = ModuleBuilder()
    with mb.function("a"), mb.function("b"):
        pass


def _module_inside_function() -> None:
    mb = ModuleBuilder()
    with mb.function("a"):
        mb.module()


def _function_after_module() -> None:
    mb = ModuleBuilder()
    mb.module()
    mb.function("a")


def _duplicate_function() -> None:
    mb = ModuleBuilder()
    with mb.function("a"):
        pass
    mb.function("a")


def _missing_return() -> None:
    with ModuleBuilder().function("f", [("N", "index")], results=["index"]):
        pass


def _return_inside_loop(f: FunctionBuilder) -> None:
    with _loop(f):
        f.return_()


def _iter_args_without_yield(f: FunctionBuilder) -> None:
    with _loop(f, iter_args=[("s", f.args[2])]):
        pass


def _result_of_loop_without_iter_args(f: FunctionBuilder) -> None:
    loop = _loop(f)
    with loop:
        pass
    loop.result  # noqa: B018


def _yield_twice_count(f: FunctionBuilder) -> None:
    x = f.args[2]
    with _loop(f, iter_args=[("s", x)]):
        f.yield_([x, x])


def _yield_wrong_type(f: FunctionBuilder) -> None:
    with _loop(f, iter_args=[("s", f.args[2])]):
        f.yield_([f.args[1]])


def _op_after_yield(f: FunctionBuilder) -> None:
    x = f.args[2]
    with _loop(f, iter_args=[("s", x)]):
        f.yield_([x])
        f.constant(0)


def _iterate_without_with(f: FunctionBuilder) -> None:
    _loop(f)
    f.constant(0)


CASES: list[tuple[str, Callable[[], object], str]] = [
    ("type-object", lambda: ModuleBuilder().function("f", [("A", 3)]), "expected an MLIR type"),
    (
        "type-text",
        lambda: ModuleBuilder().function("f", [("A", "memref<4xf32")]),
        "cannot parse the type",
    ),
    ("arg-pair", lambda: ModuleBuilder().function("f", ["A"]), r"must be a \(name, type\) pair"),
    (
        "attribute",
        _in_function(lambda f: f.op("krnl.print", properties={"format": "[1,"})),
        "cannot parse the attribute",
    ),
    (
        "map-text",
        _in_function(lambda f: AffineBound("(d0) -> (d0 +", dims=[f.args[1]])),
        "cannot parse the affine map",
    ),
    (
        "map-operands",
        lambda: AffineBound("(d0)[s0] -> (d0, s0)"),
        "has 1 dims and 1 symbols, but 0 dims and 0 symbols",
    ),
    (
        "map-empty",
        _in_function(lambda f: AffineBound("(d0) -> ()", dims=[f.args[1]])),
        "has no results",
    ),
    ("result-not-one", _in_function(_result_of_loop_without_iter_args), "has 0 results, not one"),
    ("no-yield", _in_function(_iter_args_without_yield), "does not end with a yield"),
    ("fb-reused", _reuse_function_builder, "was already used"),
    ("no-return", _missing_return, "returns values but has no return"),
    ("return-nested", _in_function(_return_inside_loop), "must be at the top level"),
    (
        "return-types",
        _in_function(lambda f: f.return_([f.args[1]])),
        r"returns \(\), f.return_ gives \(index\)",
    ),
    ("loop-count", _in_function(lambda f: f.define_loops(-1)), "non-negative loop count"),
    (
        "tile-size",
        _in_function(lambda f: f.block(f.define_loops(1)[0], 0)),
        "positive integer tile size",
    ),
    (
        "permutation",
        _in_function(lambda f: f.permute(f.define_loops(2), [0, 0])),
        "needs a permutation of 0..1",
    ),
    (
        "num-threads",
        _in_function(lambda f: f.parallel(f.define_loops(1), num_threads=f.args[1])),
        "num_threads must be an i32",
    ),
    (
        "proc-bind",
        _in_function(lambda f: f.parallel(f.define_loops(1), proc_bind="far")),
        "proc_bind must be one of",
    ),
    (
        "entry",
        _in_function(lambda f: f.iterate([], [(f.define_loops(1)[0], 0, 10)])),
        "entry must be",
    ),
    ("iter-arg", _in_function(lambda f: f.iterate([], [], iter_args=[3])), "an iter_arg must be"),
    ("yield-outside", _in_function(lambda f: f.yield_()), "must be directly inside a krnl.iterate"),
    ("yield-count", _in_function(_yield_twice_count), "gives 2 values, the krnl.iterate carries 1"),
    ("yield-types", _in_function(_yield_wrong_type), r"gives \(index\), the iter_args are \(f32\)"),
    (
        "store-type",
        _in_function(lambda f: f.store(f.args[2], f.args[3], [f.args[1]])),
        "krnl.store of %x of type f32 into a memref of i64",
    ),
    (
        "matmul-triple",
        _in_function(
            lambda f: f.matmul(f.args[0], [], f.args[0], [], f.args[0], [], [], [f.args[1]], [])
        ),
        "compute_starts needs 3 values",
    ),
    ("constant", _in_function(lambda f: f.constant(0.5, "index")), "cannot hold 0.5 as index"),
    (
        "select-cond",
        _in_function(lambda f: f.select(f.args[2], f.args[2], f.args[2])),
        "condition must be i1",
    ),
    (
        "apply-results",
        _in_function(lambda f: f.affine_apply("(d0) -> (d0, d0)", [f.args[1]])),
        "single-result map",
    ),
    ("unregistered", _in_function(lambda f: f.op("krnl.nope")), "'krnl.nope' is not registered"),
    ("before-with", _used_before_with, "is used before its with block"),
    ("after-with", _used_after_with, "is used after it was closed"),
    ("not-entered", _in_function(_iterate_without_with), "was not opened with `with`"),
    ("after-yield", _in_function(_op_after_yield), "nothing may follow krnl.yield"),
    ("xdsl-verify", _in_function(lambda f: f.addf(f.args[1], f.args[1])), "arith.addf is invalid"),
    ("scope-reused", _in_function(_scope_entered_twice), "scope was already used"),
    (
        "other-function",
        _value_from_other_function,
        "%c of type index belongs to function 'a', not to 'b'",
    ),
    (
        "own-results",
        _in_function(_results_inside_own_loop),
        "is a result of the krnl.iterate being built",
    ),
    (
        "closed-body",
        _in_function(_iv_after_loop),
        "%i of type index is defined in a body that is closed",
    ),
    (
        "not-handle",
        _in_function(lambda f: f.unroll(f.args[1])),
        r"expected a loop handle \(!krnl.loop\), got %N",
    ),
    (
        "not-index",
        _in_function(lambda f: f.load(f.args[0], [f.args[2], f.args[2]])),
        "an index of krnl.load must be an index value",
    ),
    ("not-memref", _in_function(lambda f: f.load(f.args[1], [])), "krnl.load needs a memref"),
    (
        "index-count",
        _in_function(lambda f: f.load(f.args[0], [f.args[1]])),
        "rank-2 memref needs 2 indices, got 1",
    ),
    (
        "bound",
        _in_function(lambda f: f.iterate([], [(f.define_loops(1)[0], "i", 0, 1.5)])),
        "a loop bound must be",
    ),
    (
        "operand-types",
        _in_function(lambda f: f.addf(f.args[1], f.args[2])),
        "operands of arith.addf have different types",
    ),
    (
        "predicate",
        _in_function(lambda f: f.cmpf("lt", f.args[2], f.args[2])),
        "unknown arith.cmpf predicate 'lt'",
    ),
    (
        "dynamic-sizes",
        _in_function(lambda f: f.alloc("memref<?x4xf32>")),
        "needs 1 dynamic sizes, got 0",
    ),
    ("alloc-type", _in_function(lambda f: f.alloc("f32")), "memref.alloc needs a memref type"),
    ("module-finished", _function_after_module, "already finished by mb.module()"),
    ("nested-function", _nested_function, "function 'a' is still being built"),
    ("module-open", _module_inside_function, "function 'a' is still being built"),
    ("duplicate", _duplicate_function, "already has a function named 'a'"),
    (
        "name-count",
        _in_function(lambda f: f.define_loops(2, names=("a",))),
        "1 names given for 2 results of krnl.define_loops",
    ),
    (
        "name-syntax",
        _in_function(lambda f: f.constant(0, name="%c")),
        "'%c' is not a valid SSA name",
    ),
    (
        "not-value",
        _in_function(lambda f: f.load(f.args[0], [0, 0])),
        "must be an SSA value, got int 0",
    ),
]


@pytest.mark.parametrize(("build", "match"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_misuse_raises_builder_error(build: Callable[[], object], match: str) -> None:
    with pytest.raises(BuilderError, match=match) as info:
        build()
    err = info.value
    assert err.hint
    assert err.location is not None and err.location.file == __file__
    assert err.location.line_text


def test_rejected_ops_leave_no_uses_behind() -> None:
    # Later stages read the uses of loop handles (an unused point handle runs once).
    mb = ModuleBuilder()
    with mb.function("f") as f:
        (h,) = f.define_loops(1, names=("h",))
        with pytest.raises(BuilderError):
            f.iterate([h], [(h, "i", 0, 4)], names=("extra",))
        f.iterate([h], [(h, "i", 0, 4)])
        with pytest.raises(BuilderError, match="not opened"):
            f.unroll(h)
        assert not h.uses
        with pytest.raises(BuilderError, match="not a valid SSA name"):
            f.get_induction_var_value(h, name="0x")
        assert not h.uses
