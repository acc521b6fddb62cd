"""In-place sweeps run front by front as array code (transforms/wavefront.py).

A legal reordering, so the oracle is the reference interpreter bit for bit.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.transforms import legality
from polykrnl.transforms.wavefront import wavefronts

ROOT = Path(__file__).parent.parent.parent
SEIDEL = pk.load(ROOT / "benchmarks" / "polybench" / "seidel_2d.mlir")["seidel_2d"]

# Each point reads its left neighbour's new value and the old value of the point
# below-left: (di, dj) = (0, 1) and (1, -1), so j + i is not a front, j + 2 * i is.
SWEEP = """
func.func @sweep(%N: index, %A: memref<?x?xf64>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 1 to %N, %jj -> %j = 1 to %N) {
    %l = affine.apply affine_map<(d0) -> (d0 - 1)>(%j)
    %u = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %r = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
    %a = krnl.load %A[%i, %l] : memref<?x?xf64>
    %b = krnl.load %A[%u, %r] : memref<?x?xf64>
    %s = arith.addf %a, %b : f64
    krnl.store %s, %A[%i, %j] : memref<?x?xf64>
  }
  return
}
"""

# A[i][j] = A[i][j - 1] + A[i - 1][N - 1 - j]: the row above read reversed, so the
# pair carries distances (1, 2j - N + 1) for every j: no constant skew makes them all
# positive.
NO_FRONT = """
func.func @far(%N: index, %A: memref<?x?xf64>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 1 to %N, %jj -> %j = 1 to %N) {
    %u = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %l = affine.apply affine_map<(d0) -> (d0 - 1)>(%j)
    %m = affine.apply affine_map<(d0)[s0] -> (s0 - 1 - d0)>(%j)[%N]
    %a = krnl.load %A[%i, %l] : memref<?x?xf64>
    %b = krnl.load %A[%u, %m] : memref<?x?xf64>
    %s = arith.addf %a, %b : f64
    krnl.store %s, %A[%i, %j] : memref<?x?xf64>
  }
  return
}
"""


def _same(fn: pk.Function, args: dict[str, Any]) -> None:
    want, got = copy.deepcopy(args), copy.deepcopy(args)
    pk.run_reference(fn, **want)
    pk.compile(fn)(**got)
    for key, value in want.items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(got[key], value), key


@pytest.mark.parametrize(("steps", "n"), [(0, 5), (1, 3), (2, 4), (3, 9), (2, 17)])
def test_seidel_fronts_equal_the_interpreter_bit_for_bit(steps: int, n: int) -> None:
    a = np.random.default_rng(n).standard_normal((n, n))
    _same(SEIDEL, {"TSTEPS": steps, "N": n, "A": a})


def test_seidel_runs_along_fronts_of_slope_two() -> None:
    sched = pk.schedule(SEIDEL)
    _, report, done = wavefronts(sched, legality.check(sched))
    assert [(w.inner, w.outer, w.factor) for w in done] == [("j", "i", 2)]
    assert report.legal
    source = sched.to_numpy().source
    assert "run along wavefronts j + 2 * i" in source
    assert "i = np.arange(" in source  # the points of one front at once


def test_numba_follows_the_schedule_as_written() -> None:
    source = pk.schedule(SEIDEL).to_numba().source
    assert "wavefront" not in source


@pytest.mark.parametrize("n", [2, 3, 8])
def test_a_sweep_needs_slope_two_and_stays_exact(n: int) -> None:
    fn = pk.parse(SWEEP)["sweep"]
    sched = pk.schedule(fn)
    _, _, done = wavefronts(sched, legality.check(sched))
    assert [w.factor for w in done] == [2]
    _same(fn, {"N": n, "A": np.random.default_rng(n).standard_normal((n, n + 1))})


def test_no_front_leaves_the_loops_as_they_are() -> None:
    fn = pk.parse(NO_FRONT)["far"]
    sched = pk.schedule(fn)
    same, _, done = wavefronts(sched, legality.check(sched))
    assert done == [] and same is sched
    assert "wavefront" not in sched.to_numpy().source
    _same(fn, {"N": 6, "A": np.random.default_rng(0).standard_normal((6, 6))})
