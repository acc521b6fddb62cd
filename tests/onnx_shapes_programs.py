"""benchmarks/onnx_shapes.py (the Krnl programs in onnx-mlir's shapes), for tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SHAPES = Path(__file__).resolve().parent.parent / "benchmarks" / "onnx_shapes.py"


def onnx_shapes() -> ModuleType:
    """The module benchmarks/onnx_shapes.py, loaded once."""
    if "onnx_shapes" in sys.modules:
        return sys.modules["onnx_shapes"]
    spec = importlib.util.spec_from_file_location("onnx_shapes", SHAPES)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["onnx_shapes"] = module
    spec.loader.exec_module(module)
    return module
