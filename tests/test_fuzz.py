"""A bounded mutation-fuzzing run (tools/fuzz.py): no mutant makes the CLI print a traceback
or run the mutant's text as code.

The long campaign is a command (see the README); this fixed-seed run keeps what
it found from coming back.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.scripts import load_script

TOOL = Path(__file__).resolve().parent.parent / "tools" / "fuzz.py"


def _tool() -> ModuleType:
    return load_script(TOOL, "polykrnl_fuzz")


def test_mutations_are_varied_and_change_the_program() -> None:
    fuzz = _tool()
    files = sorted(p for d in fuzz.CORPORA for p in d.glob("*.mlir"))
    found = fuzz.mutants(files, 200, seed=3)
    assert len(found) == 200
    kinds = {m.mutation.split()[0] for m in found}
    assert {"delete", "duplicate", "number", "op", "type", "symbol"} <= kinds, kinds
    # hostile text: quoted symbols with line breaks, and file names that hold some too
    hostile = [m for m in found if m.mutation.startswith(("symbol", "string"))]
    assert any('@"' in m.text and "\\0A" in m.text for m in hostile)
    assert any(m.file_name for m in hostile)
    assert all("/" not in m.file_name for m in found)
    originals = {str(p.relative_to(TOOL.parent.parent)): p.read_text() for p in files}
    assert all(m.text != originals[m.source] for m in found)


@pytest.mark.slow
def test_a_bounded_campaign_finds_no_traceback() -> None:
    fuzz = _tool()
    files = sorted(p for d in fuzz.CORPORA for p in d.glob("*.mlir"))
    outcomes = fuzz.campaign(files, 150, seed=0, jobs=2, limit=20)
    assert len(outcomes) == 150
    assert sum(len(o.exits) for o in outcomes) > 900  # the verbs really ran
    assert any(o.mutation.startswith(("symbol", "string")) for o in outcomes)
    bad = [o for o in outcomes if o.tracebacks or o.timeouts or o.executed]
    assert not bad, fuzz.report(bad)
