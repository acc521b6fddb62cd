"""A candidate's text (`str(candidate)`, as reports and benchmarks write winners) read
back by `Candidate.parse`."""

from __future__ import annotations

import random

import pytest

import polykrnl as pk
from polykrnl.errors import ArgumentError
from polykrnl.tuning import Candidate, Move, space_of
from tests.tune.programs import MATMUL, SWEEP

#: a move of every kind, with the arguments each takes
EVERY_MOVE = (
    Move("surround", ("j0", "i1"), 1),
    Move("fuse", ("i1", "i2"), 0),
    Move("skew", ("j", "i"), 2),
    Move("block", ("i",), 32),
    Move("reorder", ("i_t", "j", "i")),
    Move("unroll", ("i",)),
    Move("parts", ("k",)),
    Move("distribute", ("i2",)),
    Move("parallel_at", ("1",), 2),
    Move("wavefront", ("0",)),
)


class _Random:
    """A trial that picks each choice at random."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def suggest_categorical(self, name: str, choices: list[object]) -> object:
        return self.rng.choice(choices)


def test_every_move_is_written_as_its_primitive_call() -> None:
    """The text reports and the benchmarks' JSON have held since the search began."""
    assert str(Candidate(EVERY_MOVE, recipe=True)) == (
        "recipe > surround('j0', 'i1', 1) > fuse('i1', 'i2', 0) > skew('j', 'i', 2) > "
        "block('i', 32) > reorder(['i_t', 'j', 'i']) > unroll('i') > parallel_parts('k') > "
        "distribute('i2') > parallel(nest 1, depth 2) > tile_wavefronts(nest 0)"
    )


@pytest.mark.parametrize("move", EVERY_MOVE, ids=lambda m: m.op)
def test_every_move_reads_back(move: Move) -> None:
    for recipe in (False, True):
        c = Candidate((move, Move("block", ("j",), 8)), recipe)
        assert Candidate.parse(str(c)) == c


@pytest.mark.parametrize(("text", "threads"), [(MATMUL, True), (SWEEP, True), (SWEEP, False)])
def test_candidates_of_a_space_read_back(text: str, threads: bool) -> None:
    natural = pk.Schedule.from_function(pk.parse(text).functions[0], recipe=False)
    space = space_of(natural, params={"N": 64}, threads=threads)
    rng = random.Random(0)
    seen = {space.candidate(_Random(rng)) for _ in range(200)}
    assert len(seen) > 20
    for c in seen:
        back = Candidate.parse(str(c), label="again")
        assert back == c and back.moves == c.moves and back.label == "again"


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("", "starts with 'natural' or 'recipe'"),
        ("tuned > block('i', 8)", "not 'tuned'"),
        ("natural > block('i')", "block('i')"),
        ("natural > block('i', 8.5)", "block('i', 8.5)"),
        ("natural > block(i, 8)", "block(i, 8)"),
        ("natural > reorder('i')", "reorder('i')"),
        ("natural > reorder([])", "reorder([])"),
        ("natural > unroll('i', 2)", "unroll('i', 2)"),
        ("natural > parallel(nest 0)", "parallel(nest 0)"),
        ("natural > tile_wavefronts(nest 0, depth 1)", "tile_wavefronts(nest 0, depth 1)"),
        ("natural > tile('i', 8)", "tile('i', 8)"),
        ("natural > block('i', 8", "block('i', 8"),
        ("natural > __import__('os')", "__import__('os')"),
        ("natural > block('i', 8) + (2,)", "block('i', 8) + (2,)"),
        ("natural > block(" + "[" * 500 + "]" * 500 + ")", "not a step"),
    ],
)
def test_text_that_names_no_candidate_is_refused(text: str, what: str) -> None:
    with pytest.raises(ArgumentError) as e:
        Candidate.parse(text)
    assert what in e.value.message and e.value.hint
