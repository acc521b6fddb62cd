"""The pipeline's one-way imports (DESIGN.md): a stage imports only from stages above it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "polykrnl"
# Order of the pipeline: a module in stage k may import stages 0..k only. `display`
# (HTML/LaTeX helpers of the rich displays) comes right after errors: every stage may use it.
STAGES = ("errors", "display", "model", "transforms", "codegen", "tiles", "viz")


def _stage(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "polykrnl" or len(parts) < 2:
        return None
    name = parts[1]
    return STAGES.index(name) if name in STAGES else None


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
    return out


FILES = sorted(p for p in PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(PACKAGE)) for p in FILES])
def test_imports_flow_one_way(path: Path) -> None:
    rel = path.relative_to(PACKAGE)
    own = _stage("polykrnl." + ".".join(rel.with_suffix("").parts))
    if own is None:
        return  # cli, demo, runner, __init__: the top, may import anything
    for mod in _imports(path):
        other = _stage(mod)
        assert other is None or other <= own, f"{rel} imports {mod}, a later stage"


def test_stage_detection() -> None:
    # The check above must be able to fail: a model module importing codegen is caught.
    assert _stage("polykrnl.codegen.numpy") == STAGES.index("codegen")
    assert _stage("polykrnl.model.ir") == STAGES.index("model")
    assert _stage("numpy") is None
