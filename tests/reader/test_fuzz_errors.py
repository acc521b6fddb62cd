"""No input makes parse or verify fail with anything but a PolykrnlError.

Mutants of the corpus programs (lines dropped, duplicated or swapped, tokens
replaced, bytes inserted) are fed to the parser and the verifier: each must
either succeed or raise a PolykrnlError that renders with a location; never a
raw xDSL exception or a Python error from polykrnl itself (300 mutants and 100
random texts; FEW of each in the fast tier, tests/property_tiers.py).
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import polykrnl as pk
from tests.property_tiers import tiered

CORPUS = sorted((Path(__file__).resolve().parents[1] / "corpus").glob("*.mlir"))
SOURCES = [p.read_text() for p in CORPUS]

TOKENS = [
    "%i", "%ii", "%A", "0", "-1", "4", "to", "with", "->", "(", ")", "{", "}", "[", "]",
    ",", ":", "=", "max", "min", "index", "f32", "!krnl.loop", "memref<4xf32>",
    "krnl.iterate", "krnl.block", "krnl.permute", "krnl.define_loops", "krnl.load",
    "affine_map<(d0) -> (d0)>", '"krnl.erf"', "iter_args", "krnl.yield", "\x7f", "é",
]  # fmt: skip
FEW = 30  # examples of each test in the fast tier


@st.composite
def mutants(draw: st.DrawFn) -> str:
    lines = draw(st.sampled_from(SOURCES)).split("\n")
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["drop", "dup", "swap", "token", "cut"]))
        i = draw(st.integers(0, len(lines) - 1))
        if kind == "drop" and len(lines) > 1:
            del lines[i]
        elif kind == "dup":
            lines.insert(i, lines[i])
        elif kind == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "token":
            words = lines[i].split(" ")
            w = draw(st.integers(0, len(words) - 1))
            words[w] = draw(st.sampled_from(TOKENS))
            lines[i] = " ".join(words)
        else:
            cut = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:cut]
    return "\n".join(lines)


def _check(text: str) -> None:
    try:
        mod = pk.parse(text, "mutant.mlir")
        pk.verify(mod)
    except pk.PolykrnlError as e:
        rendered = e.render("mutant.mlir")
        assert rendered.startswith("error: ")
        if isinstance(e, pk.ParseError):
            assert e.location is not None


@tiered(
    settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]),
    FEW,
    mutants(),
)
def test_mutated_programs_fail_cleanly(text: str) -> None:
    _check(text)


@tiered(settings(max_examples=100, deadline=None), FEW, st.text(max_size=200))
def test_arbitrary_text_fails_cleanly(text: str) -> None:
    _check(text)
