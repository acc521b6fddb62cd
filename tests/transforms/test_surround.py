"""surround: a loop of one iteration around a loop (polykrnl's extension, not Krnl), so
that fuse joins nests of different depths.

Oracles: the reference interpreter in the schedule's order and the generated kernels
against the program as written; the shifts by hand from fdtd-2d's subscripts (hz at row
i reads ey's row i + 1: one row behind ey; hz at row 0 reads the row 0 that the row loop
writes in the same time step)."""

from __future__ import annotations

import shutil

import pytest

import polykrnl as pk
from polykrnl.transforms.primitives.fuse import smallest_shift
from tests.transforms.test_fuse import _same

# PolyBench's fdtd-2d at NX = 6, NY = 7, three time steps
FDTD_2D = """
func.func @fdtd_2d(%ex: memref<6x7xf64>, %ey: memref<6x7xf64>, %hz: memref<6x7xf64>,
                   %f: memref<3xf64>) {
  %c0 = arith.constant 0 : index
  %half = arith.constant 0.5 : f64
  %seven = arith.constant 0.7 : f64
  %tt, %jj0, %ii1, %jj1, %ii2, %jj2, %ii3, %jj3 = krnl.define_loops 8
  krnl.iterate(%tt) with (%tt -> %t = 0 to 3) {
    krnl.iterate(%jj0) with (%jj0 -> %j0 = 0 to 7) {
      %v = krnl.load %f[%t] : memref<3xf64>
      krnl.store %v, %ey[%c0, %j0] : memref<6x7xf64>
    }
    krnl.iterate(%ii1, %jj1) with (%ii1 -> %i1 = 1 to 6, %jj1 -> %j1 = 0 to 7) {
      %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i1)
      %e = krnl.load %ey[%i1, %j1] : memref<6x7xf64>
      %h = krnl.load %hz[%i1, %j1] : memref<6x7xf64>
      %hm = krnl.load %hz[%im, %j1] : memref<6x7xf64>
      %d = arith.subf %h, %hm : f64
      %p = arith.mulf %half, %d : f64
      %v = arith.subf %e, %p : f64
      krnl.store %v, %ey[%i1, %j1] : memref<6x7xf64>
    }
    krnl.iterate(%ii2, %jj2) with (%ii2 -> %i2 = 0 to 6, %jj2 -> %j2 = 1 to 7) {
      %jm = affine.apply affine_map<(d0) -> (d0 - 1)>(%j2)
      %e = krnl.load %ex[%i2, %j2] : memref<6x7xf64>
      %h = krnl.load %hz[%i2, %j2] : memref<6x7xf64>
      %hm = krnl.load %hz[%i2, %jm] : memref<6x7xf64>
      %d = arith.subf %h, %hm : f64
      %p = arith.mulf %half, %d : f64
      %v = arith.subf %e, %p : f64
      krnl.store %v, %ex[%i2, %j2] : memref<6x7xf64>
    }
    krnl.iterate(%ii3, %jj3) with (%ii3 -> %i3 = 0 to 5, %jj3 -> %j3 = 0 to 6) {
      %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i3)
      %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j3)
      %h = krnl.load %hz[%i3, %j3] : memref<6x7xf64>
      %x1 = krnl.load %ex[%i3, %jp] : memref<6x7xf64>
      %x0 = krnl.load %ex[%i3, %j3] : memref<6x7xf64>
      %y1 = krnl.load %ey[%ip, %j3] : memref<6x7xf64>
      %y0 = krnl.load %ey[%i3, %j3] : memref<6x7xf64>
      %s1 = arith.subf %x1, %x0 : f64
      %s2 = arith.addf %s1, %y1 : f64
      %s3 = arith.subf %s2, %y0 : f64
      %p = arith.mulf %seven, %s3 : f64
      %v = arith.subf %h, %p : f64
      krnl.store %v, %hz[%i3, %j3] : memref<6x7xf64>
    }
  }
  return
}
"""


def _fdtd() -> tuple[pk.Function, pk.Schedule]:
    fn = pk.parse(FDTD_2D)["fdtd_2d"]
    return fn, pk.Schedule.from_function(fn, recipe=False)


def _nests_fused(s: pk.Schedule) -> pk.Schedule:
    """The three 2-D nests as one: ex at its row, hz one row behind ey."""
    assert smallest_shift(s, "i1", "i2") == 0
    s = s.fuse("i1", "i2", 0)
    assert smallest_shift(s, "i1", "i3") == 1
    return s.fuse("i1", "i3", 1).fuse("j1", "j2", 0).fuse("j1", "j3", 0)


def test_a_surrounding_loop_runs_once_and_changes_no_order() -> None:
    fn, s = _fdtd()
    around = s.surround("j0", "i0", 0)
    text = str(around.loops()).splitlines()
    assert text[1:3] == ["  for %i0 = 0 to 1 {", "    for %j0 = 0 to 7 {"], text
    assert around.script().splitlines()[-1] == "s = s.surround('j0', 'i0', 0)"
    assert [str(x) for x in around.trace()] == [str(x) for x in s.trace()]
    assert _same(fn, around) and _same(fn, around, "numba")


def test_the_row_loop_fuses_into_the_2d_nests_and_the_band_tiles_across_time() -> None:
    fn, s = _fdtd()
    nests = _nests_fused(s).surround("j0", "i0", 0)
    # hz at row 0 runs in the fused loop's iteration 1 and reads the row S0 writes at 0:
    # the 2-D nests may start one iteration early (-1); 0 keeps the row loop first
    assert smallest_shift(nests, "i0", "i1") == -1
    fused = nests.fuse("i0", "i1", 0).fuse("j0", "j1", 0)
    assert fused.loop_names() == ["t", "i0", "j0"]
    assert str(fused.loops()).splitlines()[1] == "  for %i0 = 0 to 6 {"
    (band,) = fused.check().bands
    assert band.loops == ("t", "i0", "j0") and not band.permutable
    tiled = fused.skew("i0", "t", 1).skew("j0", "i0", 1)
    tiled = tiled.block("t", 2).block("i0", 4).block("j0", 4)
    tiled = tiled.reorder(["t_t", "i0_t", "j0_t", "t", "i0", "j0"])
    assert tiled.check().legal
    assert sorted(map(str, tiled.trace())) == sorted(map(str, s.trace()))
    assert _same(fn, tiled) and _same(fn, tiled, "numpy") and _same(fn, tiled, "numba")
    if shutil.which("mlir-opt-19") or shutil.which("mlir-opt"):
        assert _same(fn, tiled, "mlir")


ROWS = """
func.func @rows(%A: memref<?x8xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f64
  %jj0, %ii, %jj = krnl.define_loops 3
  krnl.iterate(%jj0) with (%jj0 -> %j0 = 0 to 8) {
    krnl.store %one, %A[%c0, %j0] : memref<?x8xf64>
  }
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to %n, %jj -> %j = 0 to 8) {
    %v = krnl.load %A[%i, %j] : memref<?x8xf64>
    %w = arith.addf %v, %v : f64
    krnl.store %w, %A[%i, %j] : memref<?x8xf64>
  }
  return
}
"""


def test_a_loop_of_one_iteration_fuses_at_the_first_value_of_a_range_of_any_size() -> None:
    """The rows run from 0 to n: the loop of one iteration at 0 joins them (the fused
    range is theirs); at 2 the fused range would run from 0 to max(3, n), which polykrnl
    does not write: refused."""
    fn = pk.parse(ROWS)["rows"]
    s = pk.Schedule.from_function(fn, recipe=False)
    fused = s.surround("j0", "i0", 0).fuse("i0", "i", 0).fuse("j0", "j", 0)
    assert str(fused.loops()).splitlines()[0] == "for %i0 = 0 to %n {"
    assert _same(fn, fused) and _same(fn, fused, "numba")
    with pytest.raises(pk.ScheduleError, match="differ by a constant"):
        s.surround("j0", "i0", 2).fuse("i0", "i", 0)


def test_surround_refusals() -> None:
    _, s = _fdtd()
    with pytest.raises(pk.ScheduleError, match="already a loop named 'i1'"):
        s.surround("j0", "i1", 0)
    with pytest.raises(pk.ScheduleError, match="must be an integer"):
        s.surround("j0", "i0", 0.5)  # type: ignore[arg-type]
    # at row 3 of the fused range (static sizes: constant bounds), S0 must come before
    # hz's row 0, which runs in iteration 1 unshifted: the 2-D nests wait two rows
    at3 = _nests_fused(s).surround("j0", "i0", 3)
    with pytest.raises(pk.IllegalTransformError) as info:
        at3.fuse("i0", "i1", 0)
    assert "fuse('i0', 'i1', 2)" in (info.value.hint or "")
    fn, _ = _fdtd()
    assert _same(fn, at3.fuse("i0", "i1", 2).fuse("j0", "j1", 0), "numba")
    with pytest.raises(pk.ScheduleError, match="surrounded by loop 'i0'"):
        s.surround("j0", "i0", 0).to_krnl()
    with pytest.raises(pk.PtoError, match=r"applies surround\(j0, i0\)"):
        s.surround("j0", "i0", 0).to_pto()
