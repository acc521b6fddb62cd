"""Program files parsed once per test session, shared by the test modules.

Parsing is the largest fixed cost of the tests (the corpus and PolyBench are listed by
several modules at collection and parsed again by their tests); `load` parses a file
the first time it is asked for. The modules it returns are shared: a test must not
change them (schedules, kernels and the interpreter only read a function).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import polykrnl as pk
from polykrnl.reader.parser import Module


@cache
def _load(path: Path) -> Module:
    return pk.load(path)


def load(path: str | Path) -> Module:
    """pk.load(path), parsed once per session (by the file's resolved path)."""
    return _load(Path(path).resolve())
