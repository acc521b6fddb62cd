"""Krnl recipes against hand-derived loop nests and instance orders.

Each recipe in tests/transforms/recipes/ has NAME.mlir (the program),
NAME.loops.txt (the loop tree, derived by hand from docs/krnl-semantics.md) and
NAME.trace.py (PARAMS and expected(): plain Python loops written from the
expected nest). Regenerate the loop-tree files after a reviewed change with
`POLYKRNL_UPDATE_GOLDEN=1 python -m pytest tests/transforms/test_recipes.py`
and review the diff.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest

import polykrnl as pk
from tests.parsed import load

RECIPES = Path(__file__).parent / "recipes"
NAMES = sorted(p.stem for p in RECIPES.glob("*.mlir"))
UPDATE = os.environ.get("POLYKRNL_UPDATE_GOLDEN") == "1"


def _trace_module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"recipe_{name}", RECIPES / f"{name}.trace.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _schedule(name: str) -> pk.Schedule:
    mod = load(RECIPES / f"{name}.mlir")
    pk.verify(mod)
    (fn,) = mod.functions
    return pk.schedule(fn)


def test_there_are_enough_recipes() -> None:
    assert len(NAMES) >= 15


@pytest.mark.parametrize("name", NAMES)
def test_loop_tree_matches_golden(name: str) -> None:
    text = str(_schedule(name).loops())
    golden = RECIPES / f"{name}.loops.txt"
    if UPDATE:
        golden.write_text(text)
    assert text == golden.read_text()


@pytest.mark.parametrize("name", NAMES)
def test_trace_matches_plain_python_loops(name: str) -> None:
    mod = _trace_module(name)
    got = _schedule(name).trace(**mod.PARAMS)
    assert got == list(mod.expected())
