"""The search space: bands and choices from the legality report; only legal candidates timed."""

from __future__ import annotations

import pytest

import polykrnl as pk
from polykrnl.tuning import Candidate, Move, space_of, synthetic_cost
from polykrnl.tuning.space import block_sizes, legality_outcome, starting_schedules
from tests.tune.programs import MATMUL, MATMUL_RECIPE, SWEEP


class _Fixed:
    """A trial that answers the parameters given, and the first choice for the others."""

    def __init__(self, params: dict[str, object]) -> None:
        self.params = params

    def suggest_categorical(self, name: str, choices: list[object]) -> object:
        return self.params.get(name, choices[0])


def test_block_sizes_are_powers_of_two_and_divisors_below_the_extent() -> None:
    assert block_sizes(48, None) == (0, 8, 12, 16, 24, 32)
    assert block_sizes(None, 100) == (0, 8, 16, 32, 64)
    assert block_sizes(None, None) == (0, 8, 16, 32, 64, 128, 256)


def test_the_space_of_a_matmul_is_its_permutable_band() -> None:
    natural = pk.Schedule.from_function(pk.parse(MATMUL)["mm"], recipe=False)
    space = space_of(natural)
    (band,) = space.bands
    assert band.loops == ("i", "j", "k") and band.permutable and band.skews == ()
    assert space.candidate(_Fixed(space.natural_params())) == Candidate()
    pluto = space.candidate(_Fixed(space.pluto_params()))
    assert [m.op for m in pluto.moves] == ["block", "block", "block", "reorder"]
    sched, status, _ = legality_outcome(pluto, natural, None)
    assert status == "ok" and sched is not None
    assert sched.loop_names() == ["i_t", "j_t", "k_t", "i", "j", "k"]


def test_a_band_that_is_not_permutable_offers_the_suggested_skew() -> None:
    natural = pk.Schedule.from_function(pk.parse(SWEEP)["sweep"], recipe=False)
    (band,) = space_of(natural, params={"N": 64}).bands
    assert not band.permutable
    assert band.skews == (Move("skew", ("j", "i"), 1),)
    assert space_of(natural, skew=False).bands[0].skews == ()
    # the illegal interchange is offered, and legality refuses it
    swapped = Candidate((Move("reorder", ("j", "i")),))
    assert legality_outcome(swapped, natural, None)[1] == "illegal"


def test_illegal_candidates_are_pruned_never_timed() -> None:
    result = pk.tune(
        pk.parse(SWEEP)["sweep"],
        {"N": 40},
        cost=synthetic_cost,
        workers=0,
        seed=0,
        max_trials=16,
    )
    assert result.pruned > 0
    fn = pk.parse(SWEEP)["sweep"]
    natural, _ = starting_schedules(fn)
    for t in result.tried:
        sched, status, _ = legality_outcome(t.outcome.candidate, natural, None)
        assert (status == "illegal") == (t.outcome.status == "illegal")
        if t.outcome.status == "timed":
            assert t.outcome.seconds is not None
            assert sched is not None and sched.check().verdict == "legal"


def test_the_recipe_is_a_candidate_and_the_script_replays_the_winner() -> None:
    fn = pk.parse(MATMUL_RECIPE)["mmr"]
    result = pk.tune(fn, {"N": 40}, cost=synthetic_cost, workers=0, seed=3, max_trials=10)
    labels = {t.outcome.candidate.label for t in result.tried}
    assert {"natural", "recipe", "pluto"} <= labels
    assert result.recipe_seconds is not None and result.natural_seconds is not None
    assert result.seconds == min(s for _, s in result.top(100))
    names: dict[str, object] = {"pk": pk, "fn": fn}
    exec(result.script, names)
    replayed = names["s"]
    assert isinstance(replayed, pk.Schedule)
    assert replayed.loop_names() == result.schedule.loop_names()
    again = pk.schedule(pk.parse(result.krnl)["mmr"])
    assert again.loop_names() == result.schedule.loop_names()


def test_candidates_are_values() -> None:
    a = Candidate((Move("block", ("i",), 8),), label="x")
    b = Candidate((Move("block", ("i",), 8),))
    assert a == b and hash(a) == hash(b)
    with pytest.raises(AttributeError):
        a.recipe = True  # type: ignore[misc]
    assert str(a) == "natural > block('i', 8)"
