"""Scripts of the repository that are not packages (benchmarks/, tools/), for tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def load_script(path: Path, name: str) -> ModuleType:
    """The module at `path`, loaded once and registered under `name` (dataclasses, and
    worker processes that unpickle by module name, need it in sys.modules)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def onnx_shapes() -> ModuleType:
    """benchmarks/onnx_shapes.py: the Krnl programs in onnx-mlir's shapes."""
    return load_script(ROOT / "benchmarks" / "onnx_shapes.py", "onnx_shapes")
