"""The isl budget: an analysis that needs too much of isl ends in a ComplexityError.

The budget is lowered for the test: with the default one (2^25 operations), DEEP's
legality check ends in the same ComplexityError after 268 s on a busy 2-core machine
(52 s with a budget of 2^23).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import polykrnl as pk
from polykrnl.cli import main
from polykrnl.poly import budget

# Six loops, each blocked twice and the tiles permuted outward, with a subscript
# `mod 1000` of all six: dependence analysis on it is very expensive.
DEEP = """
func.func @deep(%A: memref<?xf32>, %N: index) {
  %l0, %l1, %l2 = krnl.define_loops 3
  %t0, %p0 = krnl.block %l0 3 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %u0, %q0 = krnl.block %p0 10 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %t1, %p1 = krnl.block %l1 5 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %u1, %q1 = krnl.block %p1 14 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %t2, %p2 = krnl.block %l2 7 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %u2, %q2 = krnl.block %p2 22 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%t0, %u0, %q0, %t1, %u1, %q1, %t2, %u2, %q2) [0, 3, 6, 1, 4, 7, 2, 5, 8]
    : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop,
      !krnl.loop, !krnl.loop
  krnl.iterate(%t0, %t1, %t2, %u0, %u1, %u2, %q0, %q1, %q2)
      with (%l0 -> %i0 = 0 to %N, %l1 -> %i1 = 0 to %N, %l2 -> %i2 = 0 to %N) {
    %x = affine.apply affine_map<(d0, d1, d2) -> ((d0 * 7 + d1 * 11 + d2 * 13) mod 1000)>
      (%i0, %i1, %i2)
    %v = krnl.load %A[%x] : memref<?xf32>
    krnl.store %v, %A[%x] : memref<?xf32>
  }
  return
}
"""


def test_too_much_isl_work_is_a_complexity_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(budget, "MAX_ISL_OPERATIONS", 1 << 12)
    fn = pk.parse(DEEP)["deep"]
    with pytest.raises(pk.ComplexityError, match="needs more than 4,096 isl operations"):
        pk.schedule(fn).check()
    # The budget is per call: once it is spent, the next call starts afresh.
    small = pk.parse("func.func @f(%a: memref<4xf32>) {\n  return\n}")["f"]
    assert pk.schedule(small).check().legal


def test_the_cli_reports_it_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(budget, "MAX_ISL_OPERATIONS", 1 << 12)
    path = tmp_path / "deep.mlir"
    path.write_text(DEEP)
    out, err = io.StringIO(), io.StringIO()
    code = main(["check", str(path)], out=out, err=err)
    assert code == 2, err.getvalue()
    assert "isl operations" in err.getvalue() and "Traceback" not in err.getvalue()
    assert "hint: fewer or smaller tiles" in err.getvalue()


def test_nested_calls_share_one_budget_and_restore_no_limit() -> None:
    with budget.isl_budget("outer"), budget.isl_budget("inner"):
        assert budget.CTX.get_max_operations() == budget.MAX_ISL_OPERATIONS
    assert budget.CTX.get_max_operations() == 0
