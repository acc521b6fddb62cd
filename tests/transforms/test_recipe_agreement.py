"""The two views of a recipe agree: the loop nest of Krnl text and the schedule.

The loop nest (nest/loops.py) applies a function's recipe ops to SSA-bounded
loops for the verifier, the interpreter and the polyhedral model; pk.schedule
replays the same ops through the schedule primitives. Both follow
dialect/krnl/recipe.py; this test holds them to the same loops, op by op, on
every function of the test corpus that has a recipe.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import polykrnl as pk
from polykrnl.dialect import krnl as k
from polykrnl.nest.loops import Loop
from polykrnl.poly import PLoop, PNode, PolyProgram, poly_program
from tests.parsed import load

CORPUS = Path(__file__).parent.parent / "corpus"
RECIPE_OPS = (k.BlockOp, k.PermuteOp, k.ParallelOp, k.UnrollOp)


def _functions_with_a_recipe() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path in sorted(CORPUS.glob("*.mlir")):
        mod = load(path)
        for fn in mod.functions:
            if any(isinstance(op, RECIPE_OPS) for op in fn.op.walk()):
                out.append((path.name, fn.name))
    return out


CASES = _functions_with_a_recipe()


def test_the_corpus_has_recipes_to_compare() -> None:
    assert len(CASES) >= 15, CASES


@pytest.mark.parametrize(("file", "func"), CASES, ids=[f"{f}:{n}" for f, n in CASES])
def test_nest_and_schedule_make_the_same_loops(file: str, func: str) -> None:
    fn = load(CORPUS / file)[func]
    try:
        sched = pk.schedule(fn, force=True)
    except pk.UnsupportedError as e:
        pytest.skip(f"no polyhedral model: {e.message}")
    program = poly_program(fn)
    compared = 0
    for loop, name in program.loop_names.items():
        info = sched.loop_info.get(name)
        if info is None:
            continue  # a loop consumed by krnl.matmul has no place in the schedule
        nest_view = (loop.kind, loop.step, loop.tile_size, loop.parallel, loop.unroll)
        sched_view = (info.kind, info.step, info.tile_size, info.parallel, info.unroll)
        assert nest_view == sched_view, name
        assert loop.trivial == info.trivial, name
        compared += 1
    assert compared, "no loop compared"
    # The nesting order is the same: the schedule's loop tree lists the loops
    # in the order the nest has them.
    nest_order = [program.loop_names[lp] for lp in _preorder(program)]
    assert [n for n in nest_order if n in sched.loop_info] == [
        lp.name for lp in sched.loops().loops()
    ]


def _preorder(program: PolyProgram) -> list[Loop]:
    out: list[Loop] = []

    def walk(nodes: tuple[PNode, ...]) -> None:
        for n in nodes:
            if isinstance(n, PLoop):
                out.append(n.loop)
                walk(n.body)

    walk(program.tree)
    return out
