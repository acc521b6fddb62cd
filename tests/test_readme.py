"""The README's Python examples run as written (docs that drift are worse than none)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 2


def _example(i: int, code: str) -> Any:
    # The NumPy section's 64 x 48 x 32 product takes seconds in the reference interpreter.
    slow = "pk.run_reference(mm," in code
    return pytest.param(code, id=f"block{i}", marks=[pytest.mark.slow] if slow else [])


@pytest.mark.parametrize("code", [_example(i, code) for i, code in enumerate(BLOCKS)])
def test_readme_example_runs(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(code, str(README), "exec"), {"__name__": "readme"})
