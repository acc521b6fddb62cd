"""`polykrnl demo` (the README's main job): exits 0 and shows each part of the tour."""

from __future__ import annotations

import io
import re

from polykrnl.cli import main


def test_demo_runs_and_every_check_passes() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["demo"], out=out, err=err) == 0, err.getvalue()
    text = out.getvalue()
    for title in (
        "1. a tiled matmul in Krnl",
        "its loop nest after the recipe",
        "legality",
        "the generated NumPy kernel",
        "2. a stencil",
        "rectangular 8 x 16 tiles of (t, i): refused",
        "skew i by t",
        "3. a row softmax on the PTO tile ISA",
        "tmp tiles: bytes needed",
    ):
        assert f"== {title}" in text, title
    # the refusal shows a concrete pair of iterations and the skew suggestion
    assert re.search(r"from S0\(t=\d+, i=\d+\) to S0\(t=\d+, i=\d+\)", text)
    assert "skew('i', 't', 1)" in text
    assert "C[0:30, 0:25] += A[0:30, 0:20] @ B[0:20, 0:25]" in text
    assert "TROWMAX(" in text and "256 bytes" in text
    assert text.count("    ok     ") == 6 and "FAILED" not in text
    assert text.rstrip().endswith("demo finished: all checks passed")
