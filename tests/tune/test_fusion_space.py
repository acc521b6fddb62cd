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
    sched, status, why = legality_outcome(pluto, natural, None)
    assert status == "ok" and sched is not None, why
    args = make_inputs(fn, {}, seed=2, size=8)
    a, b = copy.deepcopy(args), copy.deepcopy(args)
    pk.run_reference(fn, **a)
    sched.to_numba(parallel=False)(**b)
    assert all(np.array_equal(a[k], b[k]) for k in a)


def test_tune_tries_fused_candidates() -> None:
    fn, _ = _natural()
    result = pk.tune(fn, cost=synthetic_cost, workers=0, seed=0, max_trials=12)
    fused = [t for t in result.tried if any(m.op == "fuse" for m in t.outcome.candidate.moves)]
    assert fused and all(t.outcome.status in ("timed", "illegal") for t in fused)
    assert any(t.outcome.status == "timed" for t in fused)
