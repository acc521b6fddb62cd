"""to_krnl() on corpus functions whose text has a recipe, with and without applying it.

The oracle is the schedule itself: the written text must re-parse, verify, and
give back a schedule with the same loops and the same trace.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import polykrnl as pk
from tests.parsed import load

CORPUS = Path(__file__).parent.parent / "corpus"

# (file, function, parameter values): every function here has a krnl.block, and its
# iterate lists name the block's handles.
BLOCKED = [
    ("gemm.mlir", "gemm_tiled", {"M": 5, "N": 17, "K": 9}),
    ("tile_3d_permute.mlir", "tile_3d", {}),
    ("transpose.mlir", "transpose_blocked", {}),
    ("unroll.mlir", "unroll_point", {}),
    ("parallel_forms.mlir", "scale_tiled", {}),
    # The outer iterate has no statement of its own, only the inner iterate.
    ("generic_form_loops.mlir", "generic_copy_upper", {"n": 7}),
]


def _written_back(sched: pk.Schedule, file: str, name: str) -> tuple[str, pk.Schedule]:
    text = sched.to_krnl()
    module = pk.parse(text, file)
    pk.verify(module)
    return text, pk.schedule(module[name])


@pytest.mark.parametrize(("file", "name", "params"), BLOCKED)
def test_to_krnl_without_recipe_rewrites_iterate_lists_naming_block_handles(
    file: str, name: str, params: dict[str, int]
) -> None:
    fn = load(str(CORPUS / file))[name]
    sched = pk.Schedule.from_function(fn, recipe=False)
    text, back = _written_back(sched, file, name)
    body = text[text.index(f"@{name}(") :].split("func.func", 1)[0]
    assert "krnl.block" not in body and "krnl.permute" not in body, body
    assert str(back.loops()) == str(sched.loops()), text
    assert back.trace(**params) == sched.trace(**params), text
    # Not the recipe's order: the test would pass vacuously if the recipe kept it.
    assert str(sched.loops()) != str(pk.schedule(fn).loops())


@pytest.mark.parametrize(("file", "name", "params"), BLOCKED)
def test_to_krnl_with_recipe_round_trips_blocked_functions(
    file: str, name: str, params: dict[str, int]
) -> None:
    sched = pk.schedule(load(str(CORPUS / file))[name])
    text, back = _written_back(sched, file, name)
    assert str(back.loops()) == str(sched.loops()), text
    assert back.trace(**params) == sched.trace(**params), text


def test_to_krnl_without_recipe_then_primitives_round_trips() -> None:
    fn = load(str(CORPUS / "gemm.mlir"))["gemm_tiled"]
    original = pk.Schedule.from_function(fn, recipe=False)
    sched = original.block("j", 4).reorder(["j_t", "i", "j", "k"])
    params = {"M": 3, "N": 10, "K": 2}
    text, back = _written_back(sched, "gemm.mlir", "gemm_tiled")
    assert "%ib" not in text, text
    assert back.trace(**params) == sched.trace(**params), text
