"""parallel_parts: a loop run before its split point, at it, after it, the outer parts in
parallel (polykrnl's extension, not Krnl).

Oracles: the reference interpreter in the program's order; data with negative weights,
so that Floyd-Warshall's row and column k change during step k (a row loop run wholly in
parallel, as C's `omp parallel for` does, is right only when path[k][k] >= 0)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.errors import IllegalTransformError, ScheduleError

ROOT = Path(__file__).parent.parent.parent
FLOYD = pk.load(ROOT / "benchmarks" / "polybench" / "floyd_warshall.mlir")["floyd_warshall"]

# a prefix sum: i carries a dependence at every distance, so it has no split point
PREFIX = """
func.func @prefix(%A: memref<16xf64>) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 1 to 16) {
    %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %a = krnl.load %A[%im] : memref<16xf64>
    %b = krnl.load %A[%i] : memref<16xf64>
    %s = arith.addf %a, %b : f64
    krnl.store %s, %A[%i] : memref<16xf64>
  }
  return
}
"""


def _paths(n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    return rng.integers(-20, 100, size=(n, n)).astype(np.int32)


def _floyd_by_hand(path: np.ndarray) -> None:
    """PolyBench's kernel_floyd_warshall as written in C, compiled by Numba: the oracle
    where the interpreter is too slow (N >= 128, where the kernel starts its threads)."""
    import numba

    @numba.njit
    def run(p: np.ndarray) -> None:
        n = p.shape[0]
        for k in range(n):
            for i in range(n):
                for j in range(n):
                    s = np.int32(p[i, k] + p[k, j])  # i32 arithmetic, as arith.addi
                    if s < p[i, j]:
                        p[i, j] = s

    run(path)


def _parts() -> pk.Schedule:
    natural = pk.Schedule.from_function(FLOYD, recipe=False)
    return natural.block("k", 16).parallel_parts("i")


@pytest.mark.parametrize("n", [0, 1, 2, 33, 150])
def test_floyd_warshall_rows_in_parallel_parts_equal_the_interpreter(n: int) -> None:
    import numba

    want = _paths(n)
    if n < 100:
        pk.run_reference(FLOYD, N=n, path=want)
    else:
        _floyd_by_hand(want)
    kernel = _parts().to_numba(parallel=True)
    assert kernel.parallel_loops == {"i": "prange in parts"}
    body = kernel.source[kernel.source.index("def kernel_floyd_warshall(") :]
    # the point (row k), a prange before it, row k alone, a prange after it (each part
    # with an iterator of its own: each name of a kernel is assigned in one place)
    assert "i_at = k" in body, body
    threaded = body.split("else:")[0]  # not the plain loop run when work is small
    parts = re.findall(r"for (i\w*) in (p?range)\((.*)\):", threaded)
    assert [p[1:] for p in parts if p[0].startswith("i_") or p[0] == "i"] == [
        ("prange", "0, min(N, i_at)"),
        ("range", "max(0, i_at), min(N, i_at + 1)"),
        ("prange", "max(0, i_at + 1), N"),
    ], body
    assert len({p[0] for p in parts}) == len(parts)
    before = numba.get_num_threads()
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    try:
        got = _paths(n)
        kernel(N=n, path=got)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(got, want)


def test_the_other_targets_run_the_loop_as_written() -> None:
    n = 20
    want = _paths(n)
    pk.run_reference(FLOYD, N=n, path=want)
    s = _parts()
    kernels = [s.to_numpy(), s.to_numba(parallel=False)]
    if shutil.which("mlir-opt-19") or shutil.which("mlir-opt"):
        kernels.append(s.to_mlir())
    for kernel in kernels:
        got = _paths(n)
        kernel(N=n, path=got)
        np.testing.assert_array_equal(got, want)


def test_the_schedule_shows_and_replays_the_parts() -> None:
    s = _parts()
    assert "for %i = 0 to %N {  // parallel in parts" in str(s.loops())
    assert s.loops().to_json()["body"][0]["body"][0]["body"][0]["parts"] is True
    assert s.script().splitlines()[-1] == "s = s.parallel_parts('i')"
    assert s.legal


def test_a_loop_without_a_split_point_is_refused() -> None:
    natural = pk.Schedule.from_function(FLOYD, recipe=False)
    # k carries dependences between all its iterations, not through one
    with pytest.raises(IllegalTransformError, match="runs in parallel parts, but"):
        natural.parallel_parts("k")
    prefix = pk.Schedule.from_function(pk.parse(PREFIX)["prefix"], recipe=False)
    with pytest.raises(IllegalTransformError, match="loop 'i' is parallel but carries it"):
        prefix.parallel_parts("i")
    forced = prefix.parallel_parts("i", force=True)
    assert not forced.legal
    # the kernel of an illegal schedule runs no loop in parallel
    assert "in prange(" not in forced.to_numba(parallel=True).source


def test_parallel_parts_come_last_and_a_reorder_is_checked_again() -> None:
    s = _parts()
    # blocked, i would be a point loop, whose tiles have no split point
    with pytest.raises(ScheduleError, match="mark the loops parallel"):
        s.block("i", 8)
    with pytest.raises(ScheduleError, match="skew it first"):
        s.skew("i", "k", 1)
    # outside k, the row loop would run the steps of k out of order
    with pytest.raises(IllegalTransformError):
        s.reorder(["i", "k_t", "k", "j"])


def test_refusals_name_the_loop_and_the_way_out() -> None:
    natural = pk.Schedule.from_function(FLOYD, recipe=False)
    with pytest.raises(ScheduleError, match="only a loop as written"):
        natural.block("i", 8).parallel_parts("i")
    s = natural.parallel_parts("i")
    with pytest.raises(ScheduleError, match="already runs in parallel parts"):
        s.parallel("i", force=True)
    with pytest.raises(ScheduleError, match="already parallel in parts"):
        s.parallel_parts("i")
    with pytest.raises(ScheduleError, match="cannot be unrolled"):
        s.unroll("i")
    with pytest.raises(ScheduleError, match=r"krnl\.parallel makes a whole loop parallel"):
        s.to_krnl()
