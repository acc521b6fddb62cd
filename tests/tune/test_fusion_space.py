"""Fusion in the search space: a time loop's sibling nests fused at their smallest legal
shifts (by hand for jacobi-1d: the second nest at i reads the first's i + 1, one behind),
the fused band (t, i) with the skew that makes it tilable, the Pluto start fused and
tiled, and every such candidate legal and equal to the interpreter."""

from __future__ import annotations

import copy

import numpy as np

import polykrnl as pk
from polykrnl.inputs import make_inputs
from polykrnl.tuning import Candidate, Move, space_of, synthetic_cost
from polykrnl.tuning.space import legality_outcome
from tests.tune.test_parallel_choices import STENCIL
from tests.tune.test_space import _Fixed


def _natural() -> tuple[pk.Function, pk.Schedule]:
    fn = pk.parse(STENCIL)["st"]
    return fn, pk.Schedule.from_function(fn, recipe=False)


def _legal_and_equal(fn: pk.Function, natural: pk.Schedule, candidate: Candidate) -> None:
    """`candidate` is legal and its Numba kernel equals the interpreter."""
    sched, status, why = legality_outcome(candidate, natural, None)
    assert status == "ok" and sched is not None, why
    args = make_inputs(fn, {}, seed=2, size=8)
    a, b = copy.deepcopy(args), copy.deepcopy(args)
    pk.run_reference(fn, **a)
    sched.to_numba(parallel=False)(**b)
    assert all(np.array_equal(a[k], b[k]) for k in a)


def test_the_time_loops_nests_fuse_one_behind_into_a_skewable_band() -> None:
    _, natural = _natural()
    space = space_of(natural)
    assert space.fusion == (Move("fuse", ("i", "j"), 1),)
    (band,) = space.fused_bands
    assert band.loops == ("t", "i") and not band.permutable
    assert band.skews == (Move("skew", ("i", "t"), 2),)
    # the natural start does not fuse; a schedule without sibling loops offers nothing
    assert space.natural_params()["fuse"] is False
    assert space.candidate(_Fixed(space.natural_params())) == Candidate()


def test_the_pluto_start_fuses_skews_and_tiles_and_is_correct() -> None:
    fn, natural = _natural()
    space = space_of(natural)
    pluto = space.candidate(_Fixed(space.pluto_params()))
    ops = [m.op for m in pluto.moves]
    assert ops[:2] == ["fuse", "skew"] and "block" in ops, pluto
    _legal_and_equal(fn, natural, pluto)


def test_tune_tries_fused_candidates() -> None:
    fn, _ = _natural()
    result = pk.tune(fn, cost=synthetic_cost, workers=0, seed=0, max_trials=12)
    fused = [t for t in result.tried if any(m.op == "fuse" for m in t.outcome.candidate.moves)]
    assert fused and all(t.outcome.status in ("timed", "illegal") for t in fused)
    assert any(t.outcome.status == "timed" for t in fused)


def test_a_row_loop_before_2d_nests_is_surrounded_at_their_first_row_and_fused() -> None:
    """fdtd-2d: the row loop writing ey's row 0 comes before three 2-D nests. It runs at
    the first row of the first nest (ey's, from row 1), which does not read row 0 (shift
    0); ex's nest runs with it (0), hz's one row behind (it reads ey's next row); then
    the columns (0 each). The time loop then holds one band (t, rows, columns)."""
    from tests.transforms.test_surround import FDTD_2D

    fn = pk.parse(FDTD_2D)["fdtd_2d"]
    natural = pk.Schedule.from_function(fn, recipe=False)
    space = space_of(natural)
    assert [str(m) for m in space.fusion] == [
        "surround('j0', 'i1_s', 1)",
        "fuse('i1_s', 'i1', 0)",
        "fuse('i1_s', 'i2', 0)",
        "fuse('i1_s', 'i3', 1)",
        "fuse('j0', 'j1', 0)",
        "fuse('j0', 'j2', 0)",
        "fuse('j0', 'j3', 0)",
    ]
    (band,) = space.fused_bands
    assert band.loops == ("t", "i1_s", "j0") and band.skews
    pluto = space.candidate(_Fixed(space.pluto_params()))
    _legal_and_equal(fn, natural, pluto)


def test_passes_over_the_same_rows_are_offered_fused_by_tiles() -> None:
    """layernorm's four row loops fuse with no shift: per tile size, fuse, block,
    distribute, and the two row sums with the tile's rows inside (unrolled up to 16
    rows); the output pass keeps its rows outside. Each size is a candidate measured
    first, with threads also with its tiles in parallel; such a kernel equals the
    interpreter."""
    from tests.scripts import onnx_shapes

    fn = pk.parse(onnx_shapes().layernorm_text(40, 24))["layernorm"]
    natural = pk.Schedule.from_function(fn, recipe=False)
    space = space_of(natural, threads=True)
    assert [b for b, _ in space.tilewise] == [8, 16, 32]
    moves = dict(space.tilewise)[16]
    assert [str(m) for m in moves] == [
        "fuse('i', 'i_2', 0)",
        "fuse('i', 'i_3', 0)",
        "fuse('i', 'i_4', 0)",
        "block('i', 16)",
        "distribute('i')",
        "reorder(['j', 'i_d_2'])",
        "unroll('i_d_2')",
        "reorder(['j_2', 'i_d_3'])",
        "unroll('i_d_3')",
    ]
    assert "unroll" not in str(Candidate(dict(space.tilewise)[32]))
    candidates = space.tilewise_candidates()
    assert [c.label for c in candidates[:2]] == [
        "fusion by tiles of 8",
        "fusion by tiles of 8, parallel",
    ]
    start = candidates[3]
    assert start.moves == (*moves, Move("parallel_at", ("0",), 0))
    _legal_and_equal(fn, natural, start)
    # not a choice of the sampler (see Space.tilewise_candidates)
    assert space.candidate(_Fixed(space.natural_params())) == Candidate()


def test_a_pass_that_sums_over_a_window_is_also_offered_with_its_sums_inside() -> None:
    """conv's zeroing and its 3x3 window fuse by tiles of channels; the window pass sums
    over r and s: beside the channels moved inside r, the same with i, j outermost and
    the channels inside r and s (output points' sums in registers). Legal, equal to the
    interpreter; a pass summing over one loop (layernorm's) offers only the first."""
    from tests.scripts import onnx_shapes

    fn = pk.parse(onnx_shapes().conv_text(10, 12, 16))["conv"]
    natural = pk.Schedule.from_function(fn, recipe=False)
    space = space_of(natural, threads=True)
    assert [b for b, _ in space.tilewise] == [8, 8, 16, 16, 32, 32]
    first, regrouped = (str(Candidate(m)) for b, m in space.tilewise if b == 8)
    assert first.endswith("reorder(['r', 'k_d']) > unroll('k_d')")
    assert regrouped.endswith("reorder(['i_2', 'j_2', 'r', 's', 'k_d']) > unroll('k_d')")
    labels = [c.label for c in space.tilewise_candidates()[:4]]
    assert labels == [
        "fusion by tiles of 8",
        "fusion by tiles of 8, parallel",
        "fusion by tiles of 8, window sums inside",
        "fusion by tiles of 8, window sums inside, parallel",
    ]
    _legal_and_equal(fn, natural, space.tilewise_candidates()[3])
    layernorm = pk.parse(onnx_shapes().layernorm_text(40, 24))["layernorm"]
    sizes = [b for b, _ in space_of(pk.Schedule.from_function(layernorm, recipe=False)).tilewise]
    assert sizes == [8, 16, 32]


def test_a_single_nest_offers_no_fusion_by_tiles() -> None:
    _, natural = _natural()
    assert space_of(natural).tilewise_candidates() == []
