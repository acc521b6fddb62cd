"""`polykrnl demo` (the README's main job): exits 0 and shows each part of the tour."""

from __future__ import annotations

import dataclasses
import io
import re
import subprocess
import sys

import pytest
import sympy

import polykrnl as pk
from polykrnl.cli import main


@pytest.fixture(scope="module")
def demo() -> str:
    out, err = io.StringIO(), io.StringIO()
    assert main(["demo"], out=out, err=err) == 0, err.getvalue()
    assert err.getvalue() == ""
    return out.getvalue()


def test_demo_shows_every_section(demo: str) -> None:
    for title in (
        "1. a tiled matmul in Krnl",
        "its loop nest after the recipe",
        "legality",
        "the generated NumPy kernel",
        "2. a stencil",
        "legality of the program's order",
        "rectangular 8 x 16 tiles of (t, i): refused",
        "skew('i', 't', 1) (the report's suggestion), then the same tiles",
        "3. a row softmax on the PTO tile ISA",
        "the C++ kernel",
        "tmp tiles: bytes needed",
        "checks",
    ):
        assert f"== {title}" in demo, title
    assert "C[0:30, 0:25] += A[0:30, 0:20] @ B[0:20, 0:25]" in demo
    assert "for %ib = 0 to 30 step 8 {  // parallel" in demo
    assert "@matmul: legal" in demo
    assert "TROWMAX(" in demo
    assert "band (t, i): not permutable" in demo
    assert "band (t_t, i_t, t, i): permutable (tilable)" in demo
    assert demo.count("    ok     ") == 8 and "FAILED" not in demo
    assert demo.rstrip().endswith("demo finished: all checks passed")


def test_demo_numbers(demo: str) -> None:
    mm = re.search(
        r"reference interpreter: \S+ ms; max \|error\| vs the reference (\S+) \((.+?)\)", demo
    )
    assert mm and float(mm.group(1)) < 1e-4  # float32, 20-term sums
    assert mm.group(2) == "exact" or mm.group(2) == "sums reassociated"
    # the compile time is a second compile's, the first's (imports included) beside it
    assert re.search(r"in \S+ ms \(a second compile; the first, which also imports", demo)
    st = re.search(r"skewed, tiled schedule: .*max \|error\| (\S+) \(bit for bit\)", demo)
    assert st and float(st.group(1)) == 0.0
    pto = re.search(r"3 rows: max \|error\| vs the reference (\S+)", demo)
    assert pto and float(pto.group(1)) < 1e-6
    # each tmp tile's formula, evaluated here by sympy at N = 19, gives the bytes printed
    # next to it (the demo takes them from PtoKernel.tmp_bytes)
    tmp = re.findall(r"^    (\w+): (.+)  ->  (\d+) bytes$", demo, flags=re.M)
    assert len(tmp) >= 3
    for name, formula, nbytes in tmp:
        n = sympy.Symbol("N")  # not sympy's function N
        assert sympy.sympify(formula, locals={"N": n}).subs(n, 19) == int(nbytes), name
    assert any("ceiling" in f and int(b) > 0 for _, f, b in tmp)


def test_demo_witness_is_a_real_violated_dependence(demo: str) -> None:
    w = re.search(
        r"RAW dependence on A from S0\(t=(\d+), i=(\d+)\) to S0\(t=(\d+), i=(\d+)\)", demo
    )
    assert w, "the refusal names a pair of iterations"
    t0, i0, t1, i1 = map(int, w.groups())
    # the stencil (in the demo's text): S0(t, i) writes A[t+1, i], reads A[t, i-1..i+1]
    assert t1 == t0 + 1 and abs(i1 - i0) <= 1
    assert 0 <= t0 < t1 < 64 and min(i0, i1) >= 1 and max(i0, i1) < 129

    # 8 x 16 tiles, tile loops outermost; Krnl tiles start at the lower bound (t 0, i 1)
    def tiled(t: int, i: int) -> tuple[int, int, int, int]:
        return (t // 8, (i - 1) // 16, t, i)

    assert tiled(t1, i1) < tiled(t0, i0)  # the tiling runs the reader first
    assert "skew('i', 't', 1)" in demo


def test_demo_exits_1_when_a_check_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    # a reference that computes nothing: the stencil and PTO comparisons must fail
    monkeypatch.setattr(pk, "run_reference", lambda fn, **kw: None)
    out, err = io.StringIO(), io.StringIO()
    assert main(["demo"], out=out, err=err) == 1
    text = out.getvalue()
    assert "FAILED the tiled stencil matches the reference" in text
    assert text.rstrip().endswith("demo FAILED")


def test_demo_applies_the_skew_the_report_suggests(monkeypatch: pytest.MonkeyPatch) -> None:
    # the demo reads the skew from the report: with no suggestion it has no skew to apply,
    # the rectangular tiling stays illegal, and the demo says so and fails
    from polykrnl.transforms.legality_report import BandVerdict

    real = pk.Schedule.check

    def no_suggestion(self: pk.Schedule) -> object:
        report = real(self)
        bands = tuple(BandVerdict(b.loops, b.permutable, b.blocking) for b in report.bands)
        return dataclasses.replace(report, bands=bands)

    monkeypatch.setattr(pk.Schedule, "check", no_suggestion)
    out = io.StringIO()
    assert main(["demo"], out=out, err=io.StringIO()) == 1
    text = out.getvalue()
    assert "== no skew (the report's suggestion)" in text
    assert "FAILED the report suggests a skew" in text


@pytest.mark.slow  # a new process, ~1 s to import polykrnl (fast tier: tests/test_cli_numpy.py)
def test_demo_as_a_command() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "polykrnl.cli", "demo"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith("demo finished: all checks passed")
