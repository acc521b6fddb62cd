"""run_reference(fn, schedule=s): statement instances executed in the order of s."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.inputs import make_inputs
from tests.parsed import load

ROOT = Path(__file__).parent.parent
FILES = sorted(
    p
    for p in [*ROOT.glob("corpus/*.mlir"), *ROOT.glob("transforms/recipes/*.mlir")]
    if "syntax-only" not in p.read_text().splitlines()[0]
)
# Each file parsed once: the tests only read the programs (parsing is much of their time).
CASES = [(p, fn.name) for p in FILES for fn in load(p).functions]


def _same(x: Any, y: Any) -> bool:
    a, b = np.asarray(x), np.asarray(y)
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


# The corpus gemm (static 20 x 30 x 25) takes the interpreter over a second in schedule
# order, matmul_panel half a second: the fast tier runs the other programs.
SLOW = {"gemm-gemm", "matmul_panel-matmul_panel"}
# Loop bounds read from memory the function writes: the instances of the later nests are
# known only while the program runs, and the run in a schedule's order enumerates them from
# the model first, so it refuses (the plain interpreter and the kernels run them).
REFUSED = {"bound_from_written_memory-count": "a value computed inside the function"}


def _param(path: Path, name: str) -> Any:
    key = f"{path.stem}-{name}"
    return pytest.param(path, name, id=key, marks=[pytest.mark.slow] if key in SLOW else [])


@pytest.mark.parametrize(("path", "name"), [_param(p, n) for p, n in CASES])
def test_recipe_order_runs_like_the_reference(path: Path, name: str) -> None:
    fn = load(path)[name]
    params = {a.name: 7 for a in fn.arguments if a.name in ("N", "n")}
    args = make_inputs(fn, params, seed=1, size=8)
    plain, scheduled = copy.deepcopy(args), copy.deepcopy(args)
    r1 = pk.run_reference(fn, **plain)
    refusal = REFUSED.get(f"{path.stem}-{name}")
    if refusal is not None:
        with pytest.raises(pk.UnsupportedError, match=refusal):
            pk.run_reference(fn, schedule=pk.schedule(fn, force=True), **scheduled)
        return
    r2 = pk.run_reference(fn, schedule=pk.schedule(fn, force=True), **scheduled)
    for key, value in plain.items():
        if not isinstance(value, str):
            assert _same(value, scheduled[key]), key
    # Several results may differ in shape: compare them one by one.
    rs1, rs2 = (r if isinstance(r, tuple) else (r,) for r in (r1, r2))
    assert len(rs1) == len(rs2) and all(_same(a, b) for a, b in zip(rs1, rs2, strict=True))


SKEWED = """
func.func @wave(%A: memref<6x6xi64>) {
  %one = arith.constant 1 : i64
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 1 to 6, %jj -> %j = 0 to 5) {
    %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
    %v = krnl.load %A[%im, %jp] : memref<6x6xi64>
    %w = arith.addi %v, %one : i64
    krnl.store %w, %A[%i, %j] : memref<6x6xi64>
  }
  return
}
"""


def _wave() -> tuple[pk.Function, np.ndarray[Any, Any]]:
    fn = pk.parse(SKEWED)["wave"]
    return fn, np.arange(36, dtype=np.int64).reshape(6, 6)


def test_the_order_of_the_schedule_is_the_one_executed() -> None:
    # A[i][j] = A[i-1][j+1] + 1 carries a (1, -1) dependence: interchanging i and j
    # changes the result, so the scheduled run must differ from the original.
    fn, a0 = _wave()
    expected = a0.copy()
    pk.run_reference(fn, A=expected)
    swapped = a0.copy()
    sched = pk.Schedule.from_function(fn, recipe=False).reorder(["j", "i"], force=True)
    pk.run_reference(fn, schedule=sched, A=swapped)
    by_hand = a0.copy()
    for j in range(0, 5):
        for i in range(1, 6):
            by_hand[i, j] = by_hand[i - 1, j + 1] + 1
    assert np.array_equal(swapped, by_hand)
    assert not np.array_equal(swapped, expected)


def test_blocking_keeps_the_result() -> None:
    fn, a0 = _wave()
    expected, blocked = a0.copy(), a0.copy()
    pk.run_reference(fn, A=expected)
    sched = pk.Schedule.from_function(fn, recipe=False).block("i", 2).block("j", 4)
    pk.run_reference(fn, schedule=sched, A=blocked)
    assert np.array_equal(blocked, expected)


def test_a_schedule_of_another_function_is_refused() -> None:
    fn, a0 = _wave()
    other = pk.parse(SKEWED)["wave"]
    with pytest.raises(pk.UnsupportedError, match="schedule is for"):
        pk.run_reference(fn, schedule=pk.schedule(other), A=a0)
