"""The polyhedral model: domains, accesses and schedules against hand-written isl sets."""

from __future__ import annotations

from pathlib import Path

import islpy as isl
import numpy as np
import pytest

import polykrnl as pk


def _program(
    body: str, args: str = "%A: memref<10x10xf32>, %B: memref<10x10xf32>"
) -> pk.PolyProgram:
    return pk.poly_program(pk.parse(f"func.func @f({args}) {{\n{body}\n  return\n}}")["f"])


TRIANGULAR = """
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii) with (%ii -> %i = 0 to 6) {
    krnl.iterate(%jj) with (%jj -> %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i)) {
      %v = krnl.load %A[%i, %j] : memref<10x10xf32>
      krnl.store %v, %B[%j, %i] : memref<10x10xf32>
    }
  }
"""


def test_triangular_domain_and_accesses() -> None:
    p = _program(TRIANGULAR)
    (s,) = p.statements
    assert s.dims == ("i", "j")
    assert s.domain.is_equal(isl.Set("{ S0[i, j] : 0 <= i < 6 and 0 <= j <= i }"))
    reads = [a for a in s.accesses if not a.write]
    writes = [a for a in s.accesses if a.write]
    assert reads[0].relation.is_equal(
        isl.Map("{ S0[i, j] -> A[i, j] : 0 <= i < 6 and 0 <= j <= i }")
    )
    assert writes[0].relation.is_equal(
        isl.Map("{ S0[i, j] -> B[j, i] : 0 <= i < 6 and 0 <= j <= i }")
    )
    assert not reads[0].may and not writes[0].may


def test_symbolic_bounds_max_min_and_step() -> None:
    p = _program(
        """
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib) with (%ii -> %i = max affine_map<()[s0] -> (2, s0 - 5)>()[%N]
                                 to min affine_map<()[s0] -> (s0, 9)>()[%N]) {
    %t = krnl.get_induction_var_value(%ib) : (!krnl.loop) -> index
    %c = arith.constant 1.0 : f32
    krnl.store %c, %V[%t] : memref<10xf32>
  }""",
        "%V: memref<10xf32>, %N: index",
    )
    (s,) = p.statements
    # The statement runs once per tile (the point handle is unused), at the tile start.
    assert s.dims == ("ib",)
    want = isl.Set(
        "[N] -> { S0[t] : exists (lb, k : lb = max(2, N - 5) and t = lb + 4k and k >= 0"
        " and t < N and t < 9) }"
    )
    assert s.domain.is_equal(want)
    write = s.accesses[0].relation
    assert write.is_equal(isl.Map("[N] -> { S0[t] -> V[t] }").intersect_domain(want))


def test_non_affine_subscript_is_a_may_access_of_the_whole_array() -> None:
    p = _program(
        """
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 10) {
    %k = krnl.load %I[%i] : memref<10xindex>
    %v = krnl.load %A[%k] : memref<10xf32>
    krnl.store %v, %B[%i] : memref<10xf32>
  }""",
        "%I: memref<10xindex>, %A: memref<10xf32>, %B: memref<10xf32>",
    )
    (s,) = p.statements
    a = next(a for a in s.accesses if a.array == "A")
    assert a.may and not a.write
    assert a.relation.is_equal(isl.Map("{ S0[i] -> A[x] : 0 <= i < 10 and 0 <= x < 10 }"))


def test_memset_writes_the_whole_array_with_dynamic_sizes() -> None:
    p = _program(
        """
  %c = arith.constant 0.0 : f32
  krnl.memset %A, %c : memref<?x4xf32>""",
        "%A: memref<?x4xf32>",
    )
    (s,) = p.statements
    (a,) = s.accesses
    assert a.write and not a.may
    assert a.relation.is_equal(
        isl.Map("[A_d0] -> { S0[] -> A[x, y] : 0 <= x < A_d0 and 0 <= y < 4 }")
    )
    assert p.param_display["A_d0"] == "A.0"


def test_iter_args_become_a_virtual_scalar_per_outer_iteration() -> None:
    p = _program(
        """
  %z = arith.constant 0.0 : f32
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii) with (%ii -> %i = 0 to 4) {
    %s = krnl.iterate(%jj) with (%jj -> %j = 0 to 5) iter_args(%acc = %z) -> (f32) {
      %v = krnl.load %A[%i, %j] : memref<10x10xf32>
      %n = arith.addf %acc, %v : f32
      krnl.yield %n : f32
    }
    krnl.store %s, %B[%i, %i] : memref<10x10xf32>
  }""",
    )
    init, update, store = p.statements
    assert (init.kind, update.kind, store.kind) == ("init", "yield", "op")
    assert p.arrays["acc"].virtual
    acc_write = next(a for a in update.accesses if a.array == "acc" and a.write)
    assert acc_write.relation.is_equal(
        isl.Map("{ S1[i, j] -> acc[i] : 0 <= i < 4 and 0 <= j < 5 }")
    )
    acc_read = next(a for a in store.accesses if a.array == "acc")
    assert acc_read.relation.is_equal(isl.Map("{ S2[i] -> acc[i] : 0 <= i < 4 }"))


def test_a_loaded_value_overwritten_before_its_use_is_kept_in_a_virtual_array() -> None:
    p = _program(
        """
  %c = arith.constant 1.0 : f32
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 10) {
    %v = krnl.load %A[%i, %i] : memref<10x10xf32>
    krnl.store %c, %A[%i, %i] : memref<10x10xf32>
    krnl.store %v, %B[%i, %i] : memref<10x10xf32>
  }""",
    )
    kinds = [s.kind for s in p.statements]
    assert kinds == ["value", "op", "op"]


def test_as_written_schedule_orders_like_the_loops() -> None:
    m = _program(TRIANGULAR).schedule.get_map()
    assert m.is_equal(isl.Map("{ S0[i, j] -> [i, j] : 0 <= i < 6 and 0 <= j <= i }"))


def test_access_through_an_unknown_memref_is_unsupported() -> None:
    # A sequence is a buffer of its own, but a memref taken out of it could be any
    # buffer: reading through it has no polyhedral model.
    mod = pk.load(Path(__file__).parent.parent / "corpus" / "sequences.mlir")
    for fn in mod.functions:
        pk.poly_program(fn)  # stores into and extracts from the sequence: modelled
    text = (
        "func.func @f(%s: memref<?xmemref<4xf32>>, %out: memref<4xf32>) {\n"
        "  %c0 = arith.constant 0 : index\n"
        '  %e = "krnl.seqextract"(%s, %c0) {copy = 0 : ui1}'
        " : (memref<?xmemref<4xf32>>, index) -> memref<4xf32>\n"
        "  %l = krnl.define_loops 1\n"
        "  krnl.iterate(%l) with (%l -> %i = 0 to 4) {\n"
        "    %v = krnl.load %e[%i] : memref<4xf32>\n"
        "    krnl.store %v, %out[%i] : memref<4xf32>\n"
        "  }\n  return\n}\n"
    )
    with pytest.raises(pk.UnsupportedError, match="polyhedral model") as e:
        pk.poly_program(pk.parse(text)["f"])
    assert e.value.location is not None and e.value.location.line == 6
    assert e.value.hint


MATMUL_TILES = """
  %c0 = arith.constant 0 : index
  %c10 = arith.constant 10 : index
  %c9 = arith.constant 9 : index
  %c7 = arith.constant 7 : index
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl, %kb, %kl) [0, 3, 1, 4, 2, 5]
    : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %kb) with (%ii -> %i = 0 to 10, %jj -> %j = 0 to 9,
                                    %kk -> %k = 0 to 7) {
    %i0, %j0, %k0 = krnl.get_induction_var_value(%ib, %jb, %kb)
      : (!krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index)
    krnl.matmul %A[%c0, %c0], %B[%c0, %c0], %C[%c0, %c0], (%il, %jl, %kl), (%i0, %j0, %k0),
      (%c10, %c9, %c7) {computeTileSize = [4, 4, 4]}
      : memref<10x7xf32>, memref<7x9xf32>, memref<10x9xf32>, (!krnl.loop, !krnl.loop, !krnl.loop)
  }
"""


def test_matmul_touches_the_boxes_of_its_compute_tile() -> None:
    # By hand: the tile at (i, j, k) reads A[i..i+3][k..k+3], B[k..k+3][j..j+3] and
    # updates C[i..i+3][j..j+3], each clipped by the global bounds 10, 9, 7.
    args = "%A: memref<10x7xf32>, %B: memref<7x9xf32>, %C: memref<10x9xf32>"
    p = _program(MATMUL_TILES, args)
    (s,) = p.statements
    dom = "i % 4 = 0 and j % 4 = 0 and k % 4 = 0 and 0 <= i < 10 and 0 <= j < 9 and 0 <= k < 7"
    assert s.domain.is_equal(isl.Set(f"{{ S0[i, j, k] : {dom} }}"))
    # The interpreter (an independent oracle for the op's meaning) computes A @ B.
    fn = pk.parse(f"func.func @f({args}) {{\n{MATMUL_TILES}\n  return\n}}")["f"]
    rng = np.random.default_rng(0)
    a, b = rng.random((10, 7), dtype=np.float32), rng.random((7, 9), dtype=np.float32)
    c = np.zeros((10, 9), np.float32)
    pk.run_reference(fn, A=a, B=b, C=c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    boxes = {
        "A": "i <= a < i + 4 and a < 10 and k <= b < k + 4 and b < 7",
        "B": "k <= a < k + 4 and a < 7 and j <= b < j + 4 and b < 9",
        "C": "i <= a < i + 4 and a < 10 and j <= b < j + 4 and b < 9",
    }
    seen = set()
    for a in s.accesses:
        assert not a.may, a
        want = isl.Map(f"{{ S0[i, j, k] -> {a.array}[a, b] : {dom} and {boxes[a.array]} }}")
        assert a.relation.is_equal(want), (a.array, a.relation)
        seen.add((a.array, a.write))
    assert seen == {("A", False), ("B", False), ("C", False), ("C", True)}
