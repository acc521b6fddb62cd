"""The parallel loop as a choice of the search: a depth of a nest's loops (below a fork,
each branch's loops at it), the Pluto start at the outermost depth that may run in
parallel, and `start=` candidates (a one-thread winner) tried again with their outermost
parallel loops."""

from __future__ import annotations

import dataclasses

import pytest

import polykrnl as pk
from polykrnl.errors import IllegalTransformError, ScheduleError
from polykrnl.tuning import Candidate, Move, space_of, synthetic_cost
from polykrnl.tuning.space import block_sizes, strip_size, thread_count
from polykrnl.tuning.starts import (
    HOIST_BLOCK,
    JAM_ROWS,
    PARALLEL_DIVISOR,
    PARALLEL_MIN_BLOCK,
    start_candidates,
)

# A time loop around two sibling nests (PolyBench's jacobi-1d, one row)
STENCIL = """
func.func @st(%A: memref<64xf64>, %B: memref<64xf64>) {
  %c = arith.constant 0.5 : f64
  %tt, %ii, %jj = krnl.define_loops 3
  krnl.iterate(%tt) with (%tt -> %t = 0 to 8) {
    krnl.iterate(%ii) with (%ii -> %i = 1 to 63) {
      %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
      %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
      %a = krnl.load %A[%im] : memref<64xf64>
      %b = krnl.load %A[%ip] : memref<64xf64>
      %s = arith.addf %a, %b : f64
      %v = arith.mulf %c, %s : f64
      krnl.store %v, %B[%i] : memref<64xf64>
    }
    krnl.iterate(%jj) with (%jj -> %j = 1 to 63) {
      %jm = affine.apply affine_map<(d0) -> (d0 - 1)>(%j)
      %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
      %a = krnl.load %B[%jm] : memref<64xf64>
      %b = krnl.load %B[%jp] : memref<64xf64>
      %s = arith.addf %a, %b : f64
      %v = arith.mulf %c, %s : f64
      krnl.store %v, %A[%j] : memref<64xf64>
    }
  }
  return
}
"""


def _natural() -> pk.Schedule:
    return pk.Schedule.from_function(pk.parse(STENCIL)["st"], recipe=False)


def test_a_depth_below_a_fork_runs_every_branch_in_parallel() -> None:
    natural = _natural()
    with pytest.raises(IllegalTransformError):
        Move("parallel_at", ("0",), 0).apply(natural)  # the time loop carries
    s = Move("parallel_at", ("0",), 1).apply(natural)
    assert s.loop("i").parallel and s.loop("j").parallel and not s.loop("t").parallel
    with pytest.raises(ScheduleError, match="no loop at depth 2"):
        Move("parallel_at", ("0",), 2).apply(natural)


def test_the_pluto_start_runs_the_outermost_parallel_depth() -> None:
    # Krnl's own primitives (no fusion, no skew): the spatial loops, parallel as written
    space = space_of(_natural(), threads=True, skew=False)
    assert space.parallel_depths == (2,) and space.parallel_starts == (1,)
    assert space.pluto_params()["n0.parallel"] == "1"
    # fused and skewed to be tiled across time, no loop is parallel: the tiles run in
    # wavefronts instead
    assert space_of(_natural(), threads=True).pluto_params()["n0.parallel"] == "wavefront"
    assert space_of(_natural()).parallel_starts == ()  # one thread: no choice


def test_a_start_is_tried_again_with_its_outermost_parallel_loops() -> None:
    natural = _natural()
    blocked = Candidate((Move("block", ("i",), 16), Move("block", ("j",), 8)))
    one_thread = space_of(natural)
    assert start_candidates([blocked], natural, None, one_thread) == [blocked]
    threaded = space_of(natural, threads=True)
    first, second = start_candidates([blocked], natural, None, threaded)
    assert first == blocked and first.label == "start"
    assert second.moves == (*blocked.moves, Move("parallel_at", ("0",), 1))
    s = second.schedule(natural)
    assert s.loop("i_t").parallel and s.loop("j_t").parallel and s.legal
    with pytest.raises(ScheduleError, match="Candidate or a TuneResult"):
        start_candidates(["block"], natural, None, threaded)


def test_a_start_is_tried_again_with_smaller_parallel_tiles() -> None:
    """A parallel tile loop's tiles divided by PARALLEL_DIVISOR, down to
    PARALLEL_MIN_BLOCK: i's 64 become 16, j's 32 stay (8 would be below it)."""
    natural = _natural()
    blocked = Candidate((Move("block", ("i",), 64), Move("block", ("j",), 32)))
    _, parallel, finer = start_candidates([blocked], natural, None, space_of(natural, threads=True))
    assert (PARALLEL_DIVISOR, PARALLEL_MIN_BLOCK) == (4, 16)  # the sizes below
    assert finer.label == "start, parallel, tiles / 4"
    assert finer.moves == (
        Move("block", ("i",), 16),
        Move("block", ("j",), 32),
        *parallel.moves[len(blocked.moves) :],
    )
    s = finer.schedule(natural)
    assert s.loop("i_t").parallel and s.loop("j_t").parallel and s.legal
    # nothing to divide: no variant
    small = Candidate((Move("block", ("i",), 16),))
    assert len(start_candidates([small], natural, None, space_of(natural, threads=True))) == 2


def test_tune_measures_the_start_and_its_parallel_form_first() -> None:
    fn = pk.parse(STENCIL)["st"]
    blocked = Candidate((Move("block", ("i",), 16),))
    result = pk.tune(
        fn, cost=synthetic_cost, workers=0, seed=0, max_trials=4, threads=True, start=[blocked]
    )
    labels = [t.outcome.candidate.label for t in result.tried]
    assert labels[:2] == ["start", "start, parallel"], labels
    assert result.tried[1].outcome.status == "timed"
    # an earlier result starts a search by its winner
    again = pk.tune(fn, cost=synthetic_cost, workers=0, seed=1, max_trials=2, start=[result])
    assert again.tried[0].outcome.candidate == result.candidate


def _timed_result(times: dict[Candidate, float]) -> pk.TuneResult:
    """A measured result whose candidates took `times` (the fastest the winner)."""
    from polykrnl.tuning.measure import Outcome
    from polykrnl.tuning.result import TuneResult
    from polykrnl.tuning.search import Tried

    natural = _natural()
    tried = tuple(
        Tried(n, Outcome(c, "timed", seconds=t), 0.0) for n, (c, t) in enumerate(times.items())
    )
    best = min(times, key=lambda c: times[c])
    return TuneResult("st", best.schedule(natural), best, times[best], None, None, tried)


def test_a_result_starts_with_its_runner_up_when_the_timing_cannot_tell_them_apart() -> None:
    natural = _natural()
    a = Candidate((Move("block", ("i",), 16),))
    b = Candidate((Move("block", ("i",), 8),))
    c = Candidate((Move("block", ("j",), 8),))
    close = _timed_result({a: 2.0, b: 2.0 * 1.04, c: 3.0})
    assert close.starts() == [a, b]
    assert _timed_result({a: 2.0, b: 2.0 * 1.06, c: 3.0}).starts() == [a]
    # a cost is no timing: its order is exact
    assert dataclasses.replace(close, measured=False).starts() == [a]
    # with threads, each is tried with its variants, the runner-up's labelled as such
    found = start_candidates([close], natural, None, space_of(natural, threads=True))
    assert [x.label for x in found] == [
        "start",
        "start, parallel",
        "runner-up",
        "runner-up, parallel",
    ]
    assert found[2] == b and found[3].moves == (*b.moves, Move("parallel_at", ("0",), 1))


def test_a_start_tiled_across_time_is_tried_again_with_its_tiles_in_wavefronts() -> None:
    """The stencil fused (one behind), skewed and tiled across time (t_t, i_t, t, i): no
    loop of it is parallel (the fused i reads what i - 1 wrote). Skewing i_t by t_t by
    the ratio of the tile sizes (16 / 4) puts the tiles with one sum of tile indices on a
    front; i_t runs the fronts, t_t the tiles of a front in parallel. Equal to the
    interpreter on threads."""
    import copy

    import numpy as np

    from polykrnl.inputs import make_inputs

    fn = pk.parse(STENCIL)["st"]
    natural = _natural()
    tiled = Candidate(
        (
            Move("fuse", ("i", "j"), 1),
            Move("skew", ("i", "t"), 2),
            Move("block", ("t",), 4),
            Move("block", ("i",), 16),
            Move("reorder", ("t_t", "i_t", "t", "i")),
        )
    )
    s = tiled.schedule(natural)
    assert not any(s.loop(x).parallel for x in s.loop_names())
    space = space_of(natural, threads=True)
    start, waves, *finer = start_candidates([tiled], natural, None, space)
    assert start == tiled and waves.label == "start, tile wavefronts"
    assert waves.moves[len(tiled.moves) :] == (
        Move("skew", ("i_t", "t_t"), 4),
        Move("reorder", ("i_t", "t_t", "t", "i")),
        Move("parallel_at", ("0",), 1),
    )
    # smaller tiles in wavefronts (more tiles on a front): i's tiles of 8, then 4 (t's
    # stay 4, the smallest offered), the same moves resolved when applied
    assert [c.label for c in finer] == [
        "start, tile wavefronts / 2",
        "start, tile wavefronts / 4",
    ]
    assert [[m.size for m in c.moves if m.op == "block"] for c in finer] == [[4, 8], [4, 4]]
    assert all(c.moves[-1] == Move("wavefront", ("0",)) for c in finer)
    args = make_inputs(fn, {}, seed=3, size=8)
    want = copy.deepcopy(args)
    pk.run_reference(fn, **want)
    for c in (waves, *finer):
        w = c.schedule(natural)
        assert w.loop("t_t").parallel and w.legal
        got = copy.deepcopy(args)
        w.to_numba(parallel=True)(**got)
        assert all(np.array_equal(want[k], got[k]) for k in want), c
    # a sampler choice where the nest's band is skewed to be tilable, and Pluto's start
    assert space.wavefront_nests == (0,)
    assert space.pluto_params()["n0.parallel"] == "wavefront"


def test_tiles_in_wavefronts_are_refused_where_the_nest_does_not_start_with_two_tile_loops() -> (
    None
):
    with pytest.raises(ScheduleError, match="two tile loops"):
        Move("wavefront", ("0",)).apply(_natural())
    space = space_of(_natural(), threads=False)
    assert space.wavefront_nests == ()


# x2 = A^T y2 (PolyBench's mvt, second product): i may run in parallel, j not (x2[i]
# sums over it)
MATVEC_T = """
func.func @mv(%N: index, %A: memref<?x?xf64>, %y: memref<?xf64>, %x: memref<?xf64>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to %N, %jj -> %j = 0 to %N) {
    %a = krnl.load %A[%j, %i] : memref<?x?xf64>
    %b = krnl.load %y[%j] : memref<?xf64>
    %c = krnl.load %x[%i] : memref<?xf64>
    %p = arith.mulf %a, %b : f64
    %s = arith.addf %c, %p : f64
    krnl.store %s, %x[%i] : memref<?xf64>
  }
  return
}
"""


def _equal_on_threads(fn: pk.Function, s: pk.Schedule, **sizes: int) -> bool:
    import copy

    import numpy as np

    from polykrnl.inputs import make_inputs

    args = make_inputs(fn, sizes, seed=5, size=max(sizes.values()))
    a, b = copy.deepcopy(args), copy.deepcopy(args)
    pk.run_reference(fn, **a)
    s.to_numba(parallel=True)(**b)
    return all(np.array_equal(a[k], b[k]) for k in a)


def test_a_parallel_loop_below_the_outermost_is_also_tried_hoisted_in_tiles() -> None:
    """The one-thread order (j_t, i, j) (rows of A read along i, eight j at a time) has
    i parallel at depth 1: one launch of the threads per tile of j. Hoisted, i is blocked
    by HOIST_BLOCK and its tile loop runs outermost, in parallel: one launch."""
    fn = pk.parse(MATVEC_T)["mv"]
    natural = pk.Schedule.from_function(fn, recipe=False)
    start = Candidate((Move("block", ("j",), 8), Move("reorder", ("j_t", "i", "j"))))
    found = start_candidates([start], natural, None, space_of(natural, threads=True))
    assert [c.label for c in found] == ["start", "start, parallel", "start, parallel outermost"]
    assert found[1].moves[len(start.moves) :] == (Move("parallel_at", ("0",), 1),)
    assert found[2].moves[len(start.moves) :] == (
        Move("block", ("i",), HOIST_BLOCK),
        Move("reorder", ("i_t", "j_t", "i", "j")),
        Move("parallel_at", ("0",), 0),
    )
    s = found[2].schedule(natural)
    assert s.loop("i_t").parallel and s.legal
    assert _equal_on_threads(fn, s, N=300)


def test_the_loops_as_written_are_also_tried_with_their_parallel_loops() -> None:
    fn = pk.parse(MATVEC_T)["mv"]
    result = pk.tune(fn, cost=synthetic_cost, workers=0, seed=0, max_trials=3, threads=True)
    first = [(t.outcome.candidate.label, str(t.outcome.candidate)) for t in result.tried[:2]]
    assert first == [
        ("natural", "natural"),
        ("natural, parallel", "natural > parallel(nest 0, depth 0)"),
    ]


def test_a_nest_with_no_parallel_loop_offers_parallel_parts() -> None:
    """Floyd-Warshall: every loop carries a dependence, but the row loop only through row
    k: the space offers it in parallel parts, and a start gets it too."""
    from pathlib import Path

    root = Path(__file__).parent.parent.parent
    fn = pk.load(root / "benchmarks" / "polybench" / "floyd_warshall.mlir")["floyd_warshall"]
    natural = pk.Schedule.from_function(fn, recipe=False)
    space = space_of(natural, threads=True)
    assert space.parallel_starts == (None,) and space.parts_starts == ("i",)
    assert space.natural_params(parallel=True)["n0.parallel"] == "parts"
    start = Candidate((Move("block", ("k",), 16),))
    found = start_candidates([start], natural, None, space)
    assert [str(c) for c in found] == [
        "natural > block('k', 16)",
        "natural > block('k', 16) > parallel_parts('i')",
    ]
    s = found[1].schedule(natural)
    assert s.loop("i").parts and s.legal
    assert _equal_on_threads(fn, s, N=24)


def test_a_krnl_only_space_offers_nothing_krnl_cannot_write() -> None:
    """`polykrnl tune -o OUT.mlir` writes the winner as Krnl: no fusion, skew (nor tiles
    in wavefronts, which skew) or parallel parts may win."""
    from pathlib import Path

    root = Path(__file__).parent.parent.parent
    fn = pk.load(root / "benchmarks" / "polybench" / "floyd_warshall.mlir")["floyd_warshall"]
    floyd = pk.Schedule.from_function(fn, recipe=False)
    space = space_of(floyd, threads=True, skew=False)
    assert space.krnl_only and space.parts_starts == (None,)
    start = Candidate((Move("block", ("k",), 16),))
    assert [c.label for c in start_candidates([start], floyd, None, space)] == ["start"]
    stencil = space_of(_natural(), threads=True, skew=False)
    assert stencil.fusion == () and stencil.fused_bands == ()
    assert space_of(_natural(), threads=True).fusion != ()


def test_block_sizes_with_threads_offer_one_strip_per_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A strip per thread, rounded up to whole cache lines of f64 (MIN_BLOCK): 2000 rows
    on two threads in 1000s, on three in 672s (667 rounded up); none on one thread, of
    an unknown extent, or where one strip would hold it all."""
    assert strip_size(2000, 2) == 1000 and strip_size(2000, 3) == 672
    assert strip_size(2000, 1) is None and strip_size(None, 2) is None
    assert strip_size(8, 2) is None  # 4 rounds up to 8: one strip
    assert block_sizes(None, 2000, threads=2) == (0, 8, 16, 32, 64, 128, 256, 1000)
    assert block_sizes(None, 2000) == (0, 8, 16, 32, 64, 128, 256)
    monkeypatch.setenv("NUMBA_NUM_THREADS", "3")
    assert thread_count() == 3
    fn = pk.parse(MATVEC_T)["mv"]
    natural = pk.Schedule.from_function(fn, recipe=False)
    space = space_of(natural, params={"N": 2000}, threads=True)
    assert space.thread_count == 3 and 672 in space.bands[0].sizes[0]
    assert 672 not in space_of(natural, params={"N": 2000}).bands[0].sizes[0]


def _strip_starts(rows: int) -> tuple[pk.Function, pk.Schedule, dict[str, Candidate]]:
    """x = A^T y at N = 300 on two threads, started from (j_t, i_t, j, i) in tiles of 32
    columns and `rows` rows: its threaded start candidates by label."""
    fn = pk.parse(MATVEC_T)["mv"]
    natural = pk.Schedule.from_function(fn, recipe=False)
    space = dataclasses.replace(space_of(natural, params={"N": 300}, threads=True), thread_count=2)
    start = Candidate(
        (
            Move("block", ("i",), 32),
            Move("block", ("j",), rows),
            Move("reorder", ("j_t", "i_t", "j", "i")),
        )
    )
    found = {c.label: c for c in start_candidates([start], natural, None, space)}
    return fn, natural, found


def test_a_hoisted_tile_loop_along_rows_is_also_tried_in_one_strip_per_thread() -> None:
    """x = A^T y tuned for one thread as (j_t, i_t, j, i): i walks the rows of A (and x).
    Hoisted, i_t keeps the narrow tiles of 32 columns, each thread reading 256 bytes of a
    row at a time; the variant blocks i by one strip per thread (300 on two threads: 152)."""
    fn, natural, found = _strip_starts(8)
    hoisted = found["start, parallel outermost"]
    strips = found["start, parallel outermost, a strip per thread"]
    assert strips.moves == (Move("block", ("i",), 152), *hoisted.moves[1:])
    s = strips.schedule(natural)
    assert s.loop("i_t").parallel and s.loop("i_t").tile_size == 152 and s.legal
    assert _equal_on_threads(fn, s, N=300)


def test_no_strips_for_a_parallel_loop_across_rows() -> None:
    """x = A y as (i_t, j, i): i is innermost but steps from row to row of A: wider tiles
    of it read no longer runs."""
    fn = pk.parse(MATVEC_T.replace("%A[%j, %i]", "%A[%i, %j]"))["mv"]
    natural = pk.Schedule.from_function(fn, recipe=False)
    space = dataclasses.replace(space_of(natural, params={"N": 300}, threads=True), thread_count=2)
    start = Candidate((Move("block", ("i",), 8), Move("reorder", ("i_t", "j", "i"))))
    labels = [c.label for c in start_candidates([start], natural, None, space)]
    assert "start, parallel outermost, a strip per thread" not in labels
    assert "start, parallel" in labels


def test_rows_summed_into_a_strip_are_also_tried_eight_at_a_time() -> None:
    """In strips, x = A^T y as (i_t, j_t, j, i) loads and stores each x[i] once per row
    of A; the variant blocks j by JAM_ROWS and unrolls it inside i (once per eight rows).
    Legal (x[i] still sums its rows in order) and equal to the interpreter on threads."""
    fn, natural, found = _strip_starts(64)
    strips = found["start, parallel outermost, a strip per thread"]
    jammed = found[f"start, parallel outermost, a strip per thread, {JAM_ROWS} rows a step"]
    assert JAM_ROWS == 8
    assert jammed.moves == (
        Move("block", ("i",), 152),
        Move("block", ("j",), 8),
        *strips.moves[2:-1],
        Move("reorder", ("i_t", "j_t", "i", "j")),
        Move("unroll", ("j",)),
        strips.moves[-1],
    )
    s = jammed.schedule(natural)
    assert s.loop("i_t").parallel and s.loop("j").unroll and s.legal
    assert s.loop_names() == ["i_t", "j_t", "i", "j"]
    assert _equal_on_threads(fn, s, N=300)
    # a strip whose sum is unrolled already gets no second one
    unrolled = Candidate(
        (
            Move("block", ("i",), 32),
            Move("block", ("j",), 8),
            Move("reorder", ("j_t", "i_t", "i", "j")),
            Move("unroll", ("j",)),
        )
    )
    space = dataclasses.replace(space_of(natural, params={"N": 300}, threads=True), thread_count=2)
    labels = [c.label for c in start_candidates([unrolled], natural, None, space)]
    assert "start, parallel outermost, a strip per thread" in labels
    assert not any("rows a step" in x for x in labels)


def test_rows_of_parallel_tiles_summed_along_the_innermost_are_also_tried_jammed() -> None:
    """x = A y tuned for one thread as (i_t, j_t, i, j), j unrolled: each row of a tile
    summed sixteen columns at a time. Its rows do not run along i (no strips), but the
    variant walks eight of them at once along j (i blocked by JAM_ROWS, innermost and
    unrolled; j no longer unrolled): legal (each x[i] still sums its columns in order)
    and equal to the interpreter on threads."""
    fn = pk.parse(MATVEC_T.replace("%A[%j, %i]", "%A[%i, %j]"))["mv"]
    natural = pk.Schedule.from_function(fn, recipe=False)
    space = dataclasses.replace(space_of(natural, params={"N": 300}, threads=True), thread_count=2)
    start = Candidate(
        (
            Move("block", ("i",), 32),
            Move("block", ("j",), 16),
            Move("reorder", ("i_t", "j_t", "i", "j")),
            Move("unroll", ("j",)),
        )
    )
    found = {c.label: c for c in start_candidates([start], natural, None, space)}
    assert "start, parallel outermost, a strip per thread" not in found
    jammed = found[f"start, parallel outermost, {JAM_ROWS} rows a step"]
    assert jammed.moves == (
        Move("block", ("i",), JAM_ROWS),
        Move("block", ("j",), 16),
        Move("reorder", ("i_t", "j_t", "i", "j")),
        Move("reorder", ("i_t", "j_t", "j", "i")),
        Move("unroll", ("i",)),
        Move("parallel_at", ("0",), 0),
    )
    s = jammed.schedule(natural)
    assert s.loop("i_t").parallel and s.loop("i").unroll and not s.loop("j").unroll
    assert s.loop_names() == ["i_t", "j_t", "j", "i"] and s.legal
    assert _equal_on_threads(fn, s, N=300)
    # rows that are not summed along j (B = A + A, elementwise) are not jammed
    added = MATVEC_T.replace("%A[%j, %i]", "%A[%i, %j]").replace(
        "krnl.store %s, %x[%i] : memref<?xf64>", "krnl.store %s, %A[%i, %j] : memref<?x?xf64>"
    )
    natural = pk.Schedule.from_function(pk.parse(added)["mv"], recipe=False)
    space = dataclasses.replace(space_of(natural, params={"N": 300}, threads=True), thread_count=2)
    labels = [c.label for c in start_candidates([start], natural, None, space)]
    assert "start, parallel" in labels and not any("rows a step" in x for x in labels)
