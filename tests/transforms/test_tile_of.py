"""Schedule.tile_of: which tile loop a point loop was strip-mined from (the vectorizer
merges such pairs into one range)."""

from __future__ import annotations

import polykrnl as pk
from tests.transforms.test_script import JACOBI


def _jacobi() -> pk.Schedule:
    return pk.Schedule.from_function(pk.parse(JACOBI)["jacobi"], recipe=False)


def test_each_point_loop_names_its_tile_loop() -> None:
    s = _jacobi().skew("i", "t", 1).block("t", 2).block("i", 4).reorder(["t_t", "i_t", "t", "i"])
    assert {x: s.tile_of(x) for x in s.loop_names()} == {
        "t_t": None,
        "i_t": None,
        "t": "t_t",
        "i": "i_t",
    }


def test_a_point_loop_blocked_again_has_the_inner_tile() -> None:
    s = _jacobi().block("i", 4, names=("ib", "il")).block("il", 2, names=("ilb", "ill"))
    assert s.tile_of("il") is None  # no longer a loop of the schedule
    assert s.tile_of("ill") == "ilb"
    assert s.tile_of("ilb") is None  # a tile loop, itself inside the first tile
    assert s.tile_of("ib") is None and s.tile_of("t") is None


def test_a_skewed_loop_keeps_its_tile() -> None:
    s = _jacobi().skew("i", "t", 1).block("i", 4)
    assert s.tile_of("i") == "i_t"
