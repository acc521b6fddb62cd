"""fuse: two sibling loops run as one, the second shifted (polykrnl's extension, not Krnl).

Oracles: the reference interpreter run in the fused schedule's order and the generated
kernels against the program as written; the shifts by hand from the dependences
(jacobi-2d: the second nest at row i reads row i + 1 of the first, so it runs one row
behind; once the rows are fused, no column needs a shift)."""

from __future__ import annotations

import copy
import shutil

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.inputs import make_inputs
from polykrnl.transforms.primitives.fuse import smallest_shift

TWO = """
func.func @two(%A: memref<8xf32>, %B: memref<8xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii) with (%ii -> %i = 0 to 7) {
    %v = krnl.load %A[%i] : memref<8xf32>
    krnl.store %v, %B[%i] : memref<8xf32>
  }
  krnl.iterate(%jj) with (%jj -> %j = 1 to 8) {
    %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%j)
    %v = krnl.load %B[%im] : memref<8xf32>
    krnl.store %v, %A[%j] : memref<8xf32>
  }
  return
}
"""


def _stencil(src: str, dst: str, i: str, j: str) -> str:
    """dst[i, j] = 0.2 * (src[i, j] + src[i, j - 1] + src[i, j + 1] + src[i + 1, j]
    + src[i - 1, j]), PolyBench's order of the sums."""
    return f"""
      %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%{i})
      %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%{i})
      %jm = affine.apply affine_map<(d0) -> (d0 - 1)>(%{j})
      %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%{j})
      %a0 = krnl.load %{src}[%{i}, %{j}] : memref<10x10xf64>
      %a1 = krnl.load %{src}[%{i}, %jm] : memref<10x10xf64>
      %a2 = krnl.load %{src}[%{i}, %jp] : memref<10x10xf64>
      %a3 = krnl.load %{src}[%ip, %{j}] : memref<10x10xf64>
      %a4 = krnl.load %{src}[%im, %{j}] : memref<10x10xf64>
      %s1 = arith.addf %a0, %a1 : f64
      %s2 = arith.addf %s1, %a2 : f64
      %s3 = arith.addf %s2, %a3 : f64
      %s4 = arith.addf %s3, %a4 : f64
      %v = arith.mulf %c, %s4 : f64
      krnl.store %v, %{dst}[%{i}, %{j}] : memref<10x10xf64>"""


FIRST, SECOND = _stencil("A", "B", "i", "j"), _stencil("B", "A", "i2", "j2")
# PolyBench's jacobi-2d: per time step, B from A over the interior, then A from B
JACOBI_2D = f"""
func.func @jacobi_2d(%A: memref<10x10xf64>, %B: memref<10x10xf64>) {{
  %c = arith.constant 0.2 : f64
  %tt, %ii, %jj, %ii2, %jj2 = krnl.define_loops 5
  krnl.iterate(%tt) with (%tt -> %t = 0 to 4) {{
    krnl.iterate(%ii, %jj) with (%ii -> %i = 1 to 9, %jj -> %j = 1 to 9) {{{FIRST}
    }}
    krnl.iterate(%ii2, %jj2) with (%ii2 -> %i2 = 1 to 9, %jj2 -> %j2 = 1 to 9) {{{SECOND}
    }}
  }}
  return
}}
"""


def _jacobi() -> tuple[pk.Function, pk.Schedule]:
    fn = pk.parse(JACOBI_2D)["jacobi_2d"]
    return fn, pk.Schedule.from_function(fn, recipe=False)


def _same(fn: pk.Function, sched: pk.Schedule, target: str | None = None) -> bool:
    args = make_inputs(fn, {}, seed=4, size=8)
    a, b = copy.deepcopy(args), copy.deepcopy(args)
    pk.run_reference(fn, **a)
    if target is None:
        pk.run_reference(fn, schedule=sched, **b)
    else:
        sched.kernel(target)(**b)
    return all(np.array_equal(np.asarray(a[k]), np.asarray(b[k])) for k in a)


def test_fused_loops_run_both_bodies_per_iteration() -> None:
    fn = pk.parse(TWO)["two"]
    s = pk.Schedule.from_function(fn).fuse("i", "j")
    assert s.loop_names() == ["i"]
    assert str(s.loops()).splitlines()[0] == "for %i = 0 to 8 {"
    assert s.script().splitlines()[-1] == "s = s.fuse('i', 'j', 0)"
    assert _same(fn, s) and _same(fn, s, "numpy") and _same(fn, s, "numba")
    # The fused range is split where the statements change (0: the first only, 7: the
    # second only): no test of the loop's value inside it.
    source = s.to_numba(parallel=False).function_source
    body = source[source.index("def kernel_two") :]
    assert "for i_1 in range(1, 7):" in body and "if " not in body.split("\n", 5)[-1], body
    # the second loop's statement still reads its own value
    (_, second) = sorted(s.statements)
    j = s.vid_value(s.loop("i").fused[0][0], second)
    assert j.is_equal(pk.Schedule.from_function(fn).vid_value("j", second))


def test_jacobi_2d_fuses_one_row_behind_then_tiles_across_time() -> None:
    fn, s = _jacobi()
    assert smallest_shift(s, "i", "i2") == 1
    with pytest.raises(pk.IllegalTransformError) as info:
        s.fuse("i", "i2", 0)
    assert "fuse('i', 'i2', 1)" in (info.value.hint or "")
    rows = s.fuse("i", "i2", 1)
    assert smallest_shift(rows, "j", "j2") == 0
    fused = rows.fuse("j", "j2", 0)
    (band,) = fused.check().bands
    assert band.loops == ("t", "i", "j") and not band.permutable
    for a, b, f in (("i", "t", 2), ("j", "i", 1)):
        fused = fused.skew(a, b, f)
    tiled = fused.block("t", 2).block("i", 4).block("j", 4)
    tiled = tiled.reorder(["t_t", "i_t", "j_t", "t", "i", "j"])
    assert tiled.check().legal
    assert sorted(map(str, tiled.trace())) == sorted(map(str, s.trace()))
    assert _same(fn, tiled) and _same(fn, tiled, "numpy") and _same(fn, tiled, "numba")
    if shutil.which("mlir-opt-19") or shutil.which("mlir-opt"):
        assert _same(fn, tiled, "mlir")


def test_fuse_refuses_what_it_cannot_fuse() -> None:
    _, s = _jacobi()
    with pytest.raises(pk.ScheduleError, match="does not come right after"):
        s.fuse("i2", "i", 0)
    with pytest.raises(pk.ScheduleError, match="does not come right after"):
        s.fuse("i", "j", 0)  # j is inside i
    with pytest.raises(pk.ScheduleError, match="blocked or skewed"):
        s.block("i", 4).fuse("i_t", "i2", 1)
    with pytest.raises(pk.ScheduleError, match="must be an integer"):
        s.fuse("i", "i2", 1.5)  # type: ignore[arg-type]
    with pytest.raises(pk.ScheduleError, match="Krnl has no fusion op"):
        s.fuse("i", "i2", 1).to_krnl()
    with pytest.raises(pk.PtoError, match=r"applies fuse\(i, i2\)"):
        s.fuse("i", "i2", 1).to_pto()


def test_loops_whose_bounds_differ_by_more_than_a_constant_are_refused() -> None:
    text = TWO.replace("%jj -> %j = 1 to 8", "%jj -> %j = 1 to %n").replace(
        "%B: memref<8xf32>)", "%B: memref<8xf32>, %n: index)"
    )
    fn = pk.parse(text)["two"]
    with pytest.raises(pk.ScheduleError, match="differ by a constant"):
        pk.Schedule.from_function(fn).fuse("i", "j", 0)
