"""distribute: one loop per statement or loop of a loop's body (polykrnl's extension).

Oracles: the reference interpreter in the program's order (every target's kernel of a
distributed schedule equals it), and the dependence a distribution breaks, worked out
by hand (S1 at i writes A[i + 1], which S0 reads at i + 1)."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.errors import IllegalTransformError, ScheduleError
from tests.scripts import onnx_shapes

TWO = """
func.func @two(%A: memref<9xf32>, %B: memref<9xf32>, %C: memref<9xf32>) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 8) {
    %v = krnl.load %A[%i] : memref<9xf32>
    krnl.store %v, %B[%i] : memref<9xf32>
    %w = krnl.load %B[%i] : memref<9xf32>
    %i1 = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
    krnl.store %w, %{target}[%i1] : memref<9xf32>
  }
  return
}
"""

# a triangle: j's bounds read i
TRIANGLE = """
func.func @tri(%A: memref<8x8xf32>, %B: memref<8xf32>) {
  %c = arith.constant 1.0 : f32
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii) with (%ii -> %i = 0 to 8) {
    krnl.store %c, %B[%i] : memref<8xf32>
    krnl.iterate(%jj) with (%jj -> %j = 0 to %i) {
      krnl.store %c, %A[%i, %j] : memref<8x8xf32>
    }
  }
  return
}
"""


def _two(target: str) -> Any:
    return pk.parse(TWO.replace("%{target}", f"%{target}"))["two"]


def test_each_part_gets_a_loop_of_its_own_and_the_kernels_equal_the_interpreter() -> None:
    fn = _two("C")
    sched = pk.Schedule.from_function(fn).distribute("i")
    # checked by hand: S0 then S1 each over the whole range, the second loop renamed
    assert str(sched.loops()) == (
        "for %i = 0 to 8 {\n"
        "  S0: krnl.store B[%i] <- A[%i]\n"
        "}\n"
        "for %i_d = 0 to 8 {\n"
        "  S1: krnl.store C[%i_d + 1] <- B[%i_d]\n"
        "}\n"
    )
    assert sched.script().splitlines()[-1] == "s = s.distribute('i')"
    rng = np.random.default_rng(0)
    args = {k: rng.standard_normal(9).astype(np.float32) for k in "ABC"}
    want = {k: v.copy() for k, v in args.items()}
    pk.run_reference(fn, **want)
    for kernel in (sched.to_numpy(),):
        got = {k: v.copy() for k, v in args.items()}
        kernel(**got)
        for k in "ABC":
            np.testing.assert_array_equal(got[k], want[k])


def test_a_distribution_that_breaks_a_dependence_is_refused_with_its_witness() -> None:
    fn = _two("A")  # S1 at i writes A[i + 1], which S0 reads at i + 1
    sched = pk.Schedule.from_function(fn)
    with pytest.raises(IllegalTransformError) as e:
        sched.distribute("i")
    assert "from S1(i=6) to S0(i=7)" in e.value.message
    forced = sched.distribute("i", force=True)
    assert not forced.legal and "force=True" in forced.script()


def test_names_may_be_given_and_are_checked() -> None:
    sched = pk.Schedule.from_function(_two("C"))
    named = sched.distribute("i", names=("first", "second"))
    assert named.loop_names() == ["first", "second"]
    assert "names=('first', 'second')" in named.script()
    with pytest.raises(ScheduleError, match="give 2 distinct names"):
        sched.distribute("i", names=("only",))


def test_what_distribute_refuses() -> None:
    sched = pk.Schedule.from_function(_two("C"))
    with pytest.raises(ScheduleError, match="distribute it first"):
        sched.parallel("i").distribute("i")
    one = sched.distribute("i")
    with pytest.raises(ScheduleError, match="nothing to distribute"):
        one.distribute("i")
    with pytest.raises(ScheduleError, match="does not fuse them back"):
        one.fuse("i", "i_d")
    with pytest.raises(ScheduleError, match="Krnl has no distribution op"):
        one.to_krnl()
    tri = pk.Schedule.from_function(pk.parse(TRIANGLE)["tri"])
    with pytest.raises(ScheduleError, match="bounds that read loop 'i'"):
        tri.distribute("i")


@pytest.mark.parametrize("rows", [32, 40])  # 40: a partial last tile of rows
def test_layernorm_fused_by_tiles_equals_the_interpreter(rows: int) -> None:
    """The passes of a layernorm fused, blocked by 16 rows and distributed: per tile, the
    row sums with the 16 rows unrolled inside the column loop, then the variances, then
    the output. Both unrolled passes share the tile loop (the full tiles isolated once)."""
    fn = pk.parse(onnx_shapes().layernorm_text(rows, 24))["layernorm"]
    s = pk.Schedule.from_function(fn, recipe=False)
    s = s.fuse("i", "i_2").fuse("i", "i_3").fuse("i", "i_4").block("i", 16).distribute("i")
    s = s.reorder(["j", "i_d_2"]).unroll("i_d_2").reorder(["j_2", "i_d_3"]).unroll("i_d_3")
    assert s.legal
    x = np.random.default_rng(rows).standard_normal((rows, 24)).astype(np.float32)
    want = pk.run_reference(fn, x=x.copy())
    # NumPy reassociates the row sums (vectorized); Numba keeps every sum's order
    np.testing.assert_allclose(s.to_numpy()(x=x.copy()), want, rtol=1e-5, atol=1e-6)
    if importlib.util.find_spec("numba") is not None:
        kernel = s.to_numba(cache=False)
        # the sums of the tile's rows in locals (distinct elements of one row buffer)
        assert "_e0 = t0" in kernel.function_source
        assert kernel(x=x.copy()).tobytes() == want.tobytes()
