"""`import polykrnl` and the CLI load only what they use (issue 17: import in a blink).

Checked by what is imported, not by timing: a fresh interpreter imports polykrnl (or
runs `polykrnl --help`) and reports which heavy modules got loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

GEMM = Path(__file__).resolve().parent / "corpus" / "gemm.mlir"
HEAVY = [
    "sympy",
    "islpy",
    "xdsl",
    "numpy",
    "polykrnl.codegen",
    "polykrnl.targets.pto",
    "matplotlib",
]


def _loaded_after(code: str) -> dict[str, bool]:
    probe = (
        f"{code}\nimport json, sys\nprint(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def test_import_polykrnl_loads_nothing_heavy() -> None:
    assert _loaded_after("import polykrnl") == dict.fromkeys(HEAVY, False)


def test_the_public_names_load_on_first_use() -> None:
    loaded = _loaded_after("import polykrnl as pk\npk.parse")
    assert loaded["xdsl"] and not loaded["sympy"] and not loaded["polykrnl.targets.pto"]


def test_cli_help_loads_nothing_heavy() -> None:
    code = (
        "import contextlib, io\nfrom polykrnl.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        main(['--help'])\n    except SystemExit:\n        pass"
    )
    assert _loaded_after(code) == dict.fromkeys(HEAVY, False)


def test_cli_verify_loads_neither_numpy_nor_the_code_generators() -> None:
    # Parsing and verifying need xDSL and the Krnl dialect only (hex float literals
    # are decoded with struct).
    code = (
        "import contextlib, io\nfrom polykrnl.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    try:\n        main(['verify', {str(GEMM)!r}])\n"
        "    except SystemExit:\n        pass"
    )
    loaded = _loaded_after(code)
    assert loaded["xdsl"]
    assert not any(
        loaded[m] for m in ("numpy", "sympy", "polykrnl.codegen", "polykrnl.targets.pto")
    )


def test_cli_version_loads_nothing_heavy() -> None:
    # The versions come from the distributions' metadata, not from importing them.
    code = (
        "import contextlib, io\nfrom polykrnl.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        main(['--version'])\n    except SystemExit:\n        pass"
    )
    assert _loaded_after(code) == dict.fromkeys(HEAVY, False)


def test_the_reference_interpreter_needs_no_isl() -> None:
    # The oracle stays independent of the polyhedral model: parsing, verifying and
    # running a program in its own order load no isl (docs/architecture.md).
    loaded = _loaded_after(
        "import numpy as np\nimport polykrnl as pk\n"
        f"fn = pk.load({str(GEMM)!r}).functions[0]\npk.verify(fn.module)\n"
        "shapes = {'A': (20, 30), 'B': (30, 25), 'C': (20, 25)}\n"
        "args = {a: np.ones(s, np.float32) for a, s in shapes.items()}\n"
        "pk.run_reference(fn, alpha=1.0, beta=1.0, **args)"
    )
    assert loaded["numpy"] and loaded["xdsl"]
    assert not loaded["islpy"]
