"""krnl.unroll of a point loop whose last tile is partial (transforms/full_tiles.py).

The full tiles run unrolled without guards; the partial one runs apart. Unrolling
never reorders anything, so the oracle is the reference interpreter, bit for bit.
"""

from __future__ import annotations

import ast
import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import polykrnl as pk

ROOT = Path(__file__).parent.parent.parent
SYRK = pk.load(ROOT / "benchmarks" / "polybench" / "syrk.mlir")["syrk_tiled"]

# B[i] = 2 * A[i] + B[i], i blocked by 4 and its point loop unrolled: a partial last
# tile unless 4 divides N.
AXPY = """
func.func @axpy(%N: index, %A: memref<?xf64>, %B: memref<?xf64>) {
  %two = arith.constant 2.0 : f64
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.unroll %il : !krnl.loop
  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to %N) {
    %a = krnl.load %A[%i] : memref<?xf64>
    %b = krnl.load %B[%i] : memref<?xf64>
    %p = arith.mulf %two, %a : f64
    %s = arith.addf %p, %b : f64
    krnl.store %s, %B[%i] : memref<?xf64>
  }
  return
}
"""

# A triangle: the unrolled point loop j runs to min(jb + 3, i), so whether a tile
# is full depends on the row.
TRIANGLE = """
func.func @tri(%N: index, %A: memref<?x?xf64>) {
  %one = arith.constant 1.0 : f64
  %ii, %jj = krnl.define_loops 2
  %jb, %jl = krnl.block %jj 3 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.unroll %jl : !krnl.loop
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    krnl.iterate(%jb, %jl) with (%jj -> %j = 0 to affine_map<(d0) -> (d0)>(%i)) {
      %a = krnl.load %A[%i, %j] : memref<?x?xf64>
      %s = arith.addf %a, %one : f64
      krnl.store %s, %A[%i, %j] : memref<?x?xf64>
    }
  }
  return
}
"""


def _same(fn: pk.Function, args: dict[str, Any], target: str) -> None:
    want, got = copy.deepcopy(args), copy.deepcopy(args)
    pk.run_reference(fn, **want)
    pk.compile(fn, target=target)(**got)
    for key, value in want.items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(got[key], value), key


def _targets() -> list[str]:
    try:
        import numba  # noqa: F401
    except ImportError:
        return ["numpy"]
    return ["numpy", "numba"]


@pytest.mark.parametrize("target", _targets())
@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 8, 10, 11])
def test_partial_tiles_run_every_iteration_once(n: int, target: str) -> None:
    fn = pk.parse(AXPY)["axpy"]
    rng = np.random.default_rng(n)
    _same(fn, {"N": n, "A": rng.standard_normal(n), "B": rng.standard_normal(n)}, target)


@pytest.mark.parametrize("target", _targets())
@pytest.mark.parametrize(("n", "m"), [(5, 8), (6, 7), (3, 1), (4, 0), (9, 10)])
def test_unrolled_and_jammed_syrk_equals_the_interpreter(n: int, m: int, target: str) -> None:
    rng = np.random.default_rng(n * 10 + m)
    args = {
        "N": n,
        "M": m,
        "alpha": 1.5,
        "beta": 1.2,
        "C": rng.standard_normal((n, n)),
        "A": rng.standard_normal((n, m)),
    }
    _same(SYRK, args, target)


@pytest.mark.parametrize("target", _targets())
@pytest.mark.parametrize("n", [0, 2, 3, 7])
def test_triangular_tiles_are_full_by_row(n: int, target: str) -> None:
    fn = pk.parse(TRIANGLE)["tri"]
    _same(fn, {"N": n, "A": np.random.default_rng(n).standard_normal((n, n))}, target)


def _guards_on(tree: ast.AST, name: str) -> list[str]:
    """The conditions of the `if`s inside `tree` that read the variable `name`."""
    return [
        ast.unparse(node.test)
        for node in ast.walk(tree)
        if isinstance(node, ast.If)
        and any(isinstance(x, ast.Name) and x.id == name for x in ast.walk(node.test))
    ]


def _loops_over(source: str, name: str) -> list[ast.For]:
    return [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.For)
        and isinstance(node.target, ast.Name)
        and node.target.id == name
    ]


def test_full_tiles_run_unguarded_then_the_partial_tile() -> None:
    sched = pk.schedule(SYRK)
    assert sched.unrolled_points == {"kb": ("kl", 3)}
    source = sched.to_numba(cache=False).source if _targets()[-1] == "numba" else None
    python = source or sched.to_numpy(vectorize=False).source
    full = _loops_over(python, "kb")
    # One loop over the full tiles; the partial tile is one value of kb, not a loop.
    assert len(full) == 1, python
    # Four copies of the update, none guarded by a test on kb (without the isolation
    # each copy but the first sits under `if M >= kb + 2`, `... + 3`, `... + 4`).
    assert _guards_on(full[0], "kb") == [], python
    stores = [
        n
        for n in ast.walk(full[0])
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Subscript)
    ]
    assert len(stores) == 4, python


def test_without_a_partial_tile_nothing_is_isolated() -> None:
    fn = pk.parse(AXPY.replace("%ii -> %i = 0 to %N", "%ii -> %i = 0 to 8"))["axpy"]
    sched = pk.schedule(fn)
    assert sched.unrolled_points == {}
    assert "// unroll" in str(sched.loops())


def test_the_loop_tree_still_shows_one_unrolled_point_loop() -> None:
    text = str(pk.schedule(pk.parse(AXPY)["axpy"]).loops())
    assert "for %il = %ib to min(%ib + 4, %N) {  // unroll" in text, text


def test_unrolling_a_tile_loop_of_symbolic_trip_count_is_refused() -> None:
    with pytest.raises(pk.ScheduleError) as info:
        pk.schedule(pk.parse(AXPY)["axpy"]).unroll("ib")
    assert "needs a constant trip count" in info.value.message
    assert "unroll the point loop" in (info.value.hint or "")
