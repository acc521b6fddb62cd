"""onnx-mlir's own Krnl test inputs, when ONNX_MLIR_ROOT points to a checkout of onnx-mlir.

The cases of test/mlir/krnl and test/mlir/conversion/krnl_to_affine (split at
`// -----`) go through every verb of the CLI (tools/onnx_mlir_corpus.py, which
also measures onnx-mlir's real output): none may end in a traceback or run
past the time limit, and the counts must not fall below what polykrnl reached
when this test was written. Nothing of onnx-mlir is copied into this repository.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from types import ModuleType

import pytest

from tests.scripts import load_script

TOOL = Path(__file__).resolve().parent.parent / "tools" / "onnx_mlir_corpus.py"
ROOT = os.environ.get("ONNX_MLIR_ROOT")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        ROOT is None or not (Path(ROOT) / "test" / "mlir" / "krnl").is_dir(),
        reason="ONNX_MLIR_ROOT is not set (a checkout of onnx/onnx-mlir)",
    ),
]

#: cases (of 73) each verb handled when this test was written: a floor, not a target
#: (run --verify: issue 32's bar of 66, 68 since the reader normalizes tiled layouts)
FLOOR = {"print": 72, "verify": 70, "check": 69, "emit numpy": 68, "run --verify": 66}


def _tool() -> ModuleType:
    return load_script(TOOL, "onnx_mlir_corpus")


def test_onnx_mlir_lit_inputs() -> None:
    tool = _tool()
    assert ROOT is not None
    cases = list(tool.lit_cases(Path(ROOT)))
    assert len(cases) >= 70
    with tempfile.TemporaryDirectory() as tmp:
        results = [tool.run_case(c, tmp, 30) for c in cases]
    print(tool.table(results))
    escaped = [f"{r.name}: {t}" for r in results for t in r.tracebacks]
    assert escaped == []
    assert [r.name for r in results if r.timeouts] == []
    for verb, floor in FLOOR.items():
        assert sum(r.ok.get(verb, False) for r in results) >= floor, verb


def test_lp_normalization_o3_reads_past_its_argument() -> None:
    """onnx-mlir's -O3 LpNormalization output (its CHECK lines rebuilt) loads 32 lanes at
    offset 192 of a flattened memref<10x20xf32>: memory safety finds it statically."""
    import polykrnl as pk

    tool = _tool()
    assert ROOT is not None
    case = next(
        c
        for c in tool.real_cases(Path(ROOT))
        if "LpNormalization_with_canonicalize_O3" in c.name and c.text is not None
    )
    assert case.text is not None
    fn = pk.parse(case.text).functions[0]
    memory = pk.schedule(fn).check().memory
    assert memory is not None and not memory.safe
    bad = [a for a in memory.arrays if a.verdict == "out of bounds"]
    assert [a.array for a in bad] == ["PARAM_0_"]
    assert bad[0].witness is not None and "vector.load" in bad[0].witness.statement
