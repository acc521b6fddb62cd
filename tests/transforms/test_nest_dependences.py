"""Dependences computed nest by nest (transforms/dependences.nest_dependences).

The oracle is the whole-program computation: the nest dependences must be exactly
its dependences whose two ends lie in one top-level node, and legality, which uses
them, must give the same verdicts.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import islpy as isl
import pytest

import polykrnl as pk
from polykrnl.poly import PolyProgram
from polykrnl.transforms.dependences import (
    Dependence,
    dependences,
    kept_dependences,
    nest_dependences,
)
from tests.parsed import load

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted((ROOT / "tests" / "corpus").glob("*.mlir")) + sorted(
    (ROOT / "benchmarks" / "polybench").glob("*.mlir")
)


@cache
def _program(path: str, name: str) -> PolyProgram:
    """The function's model, built once (at collection) for its test (which only reads it)."""
    return pk.poly_program(load(ROOT / path)[name])


def _functions() -> list[tuple[str, str]]:
    """Every function of the corpus and of PolyBench that has a polyhedral model."""
    out = []
    for path in FILES:
        try:
            module = load(path)
        except pk.PolykrnlError:
            continue
        for fn in module.functions:
            try:
                _program(str(path.relative_to(ROOT)), fn.name)
            except pk.PolykrnlError:
                continue
            out.append((str(path.relative_to(ROOT)), fn.name))
    return out


def _key(d: Dependence) -> tuple[str, str, str, str, bool]:
    return (d.kind, d.array, d.source, d.sink, d.reduction)


def _by_key(deps: tuple[Dependence, ...]) -> dict[tuple[str, str, str, str, bool], isl.Map]:
    out: dict[tuple[str, str, str, str, bool], isl.Map] = {}
    for d in deps:
        k = _key(d)
        out[k] = out[k].union(d.relation) if k in out else d.relation
    return out


@pytest.mark.parametrize(("path", "name"), _functions())
def test_nest_dependences_are_the_whole_programs_inside_one_nest(path: str, name: str) -> None:
    program = _program(path, name)
    nest_of = {s: i for i, (names, _) in enumerate(program.nest_orders) for s in names}
    whole = _by_key(dependences(program).deps)
    inside = {k: m for k, m in whole.items() if nest_of[k[2]] == nest_of[k[3]]}
    got = _by_key(nest_dependences(program).deps)
    assert set(got) == set(inside)
    for k, m in got.items():
        assert m.is_equal(inside[k]), k


def test_a_function_of_many_nests_keeps_only_the_pairs_inside_each() -> None:
    # Four nests, alternately A -> B and B -> A: every pair of nests is linked (WAW,
    # RAW, WAR), but no dependence has both ends in one nest but those of its own loop.
    nests = []
    for n in range(4):
        src, dst = ("A", "B") if n % 2 == 0 else ("B", "A")
        nests.append(
            f"""  %l{n} = krnl.define_loops 1
  krnl.iterate(%l{n}) with (%l{n} -> %i{n} = 0 to 8) {{
    %v{n} = krnl.load %{src}[%i{n}] : memref<8xf32>
    krnl.store %v{n}, %{dst}[%i{n}] : memref<8xf32>
  }}"""
        )
    text = (
        "func.func @f(%A: memref<8xf32>, %B: memref<8xf32>) {\n"
        + "\n".join(nests)
        + "\n  return\n}\n"
    )
    program = pk.poly_program(pk.parse(text)["f"])
    assert len(dependences(program).deps) > 0
    assert nest_dependences(program).deps == ()
    sched = pk.schedule(pk.parse(text)["f"])
    assert kept_dependences(program, sched.nest_statements).deps == ()
    assert sched.check().legal


def test_another_grouping_of_the_statements_falls_back_to_every_dependence() -> None:
    program = _program("benchmarks/polybench/two_mm.mlir", "two_mm")
    everything = frozenset(s.name for s in program.statements)
    assert kept_dependences(program, [everything]) is dependences(program)
    own = [names for names, _ in program.nest_orders]
    assert kept_dependences(program, own) is nest_dependences(program)
    assert kept_dependences(program, list(reversed(own))) is dependences(program)
