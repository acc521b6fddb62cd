"""polykrnl: polyhedral loop transformation for ONNX-MLIR Krnl programs.

The public API is imported on first use (PEP 562): `import polykrnl` and the
`polykrnl` command load only what they need (the CLI's verbs import their stages
themselves), so a user waits for isl, sympy or the code generators only when a
schedule, a kernel or a PTO program is asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from polykrnl.errors import (
    ArgumentError,
    BoundsError,
    BuilderError,
    ComplexityError,
    IllegalTransformError,
    InterpretError,
    ParseError,
    PolykrnlError,
    PtoError,
    RaceError,
    ScheduleError,
    TileConstraintError,
    UnknownFunctionError,
    UnprovenTransformError,
    UnsupportedError,
    VerifyError,
)

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from polykrnl.builder import ModuleBuilder
    from polykrnl.interpreter import register_call
    from polykrnl.ir import Function, Module
    from polykrnl.ops import SupportTable, supported_ops
    from polykrnl.pipeline import Schedule, check, schedule
    from polykrnl.pipeline import compile_function as compile
    from polykrnl.poly import PolyProgram, poly_program
    from polykrnl.reader.parser import load, parse
    from polykrnl.reference import run_reference
    from polykrnl.targets.numba.kernel import NumbaKernel
    from polykrnl.targets.numpy.kernel import NumpyKernel
    from polykrnl.targets.pto.kernel import PtoKernel
    from polykrnl.transforms.legality_report import LegalityReport
    from polykrnl.transforms.looptree import LoopTree
    from polykrnl.transforms.memory_safety import MemoryReport
    from polykrnl.tuning import TuneResult, tune
    from polykrnl.verifier import verify

    __version__: str

#: public name -> (module, attribute) it is imported from on first use
_LAZY: dict[str, tuple[str, str]] = {
    "NumpyKernel": ("polykrnl.targets.numpy.kernel", "NumpyKernel"),
    "NumbaKernel": ("polykrnl.targets.numba.kernel", "NumbaKernel"),
    "ModuleBuilder": ("polykrnl.builder", "ModuleBuilder"),
    "register_call": ("polykrnl.interpreter", "register_call"),
    "run_reference": ("polykrnl.reference", "run_reference"),
    "Function": ("polykrnl.ir", "Function"),
    "Module": ("polykrnl.ir", "Module"),
    "load": ("polykrnl.reader.parser", "load"),
    "parse": ("polykrnl.reader.parser", "parse"),
    "PolyProgram": ("polykrnl.poly", "PolyProgram"),
    "poly_program": ("polykrnl.poly", "poly_program"),
    "verify": ("polykrnl.verifier", "verify"),
    "SupportTable": ("polykrnl.ops", "SupportTable"),
    "supported_ops": ("polykrnl.ops", "supported_ops"),
    "Schedule": ("polykrnl.pipeline", "Schedule"),
    "check": ("polykrnl.pipeline", "check"),
    "schedule": ("polykrnl.pipeline", "schedule"),
    "compile": ("polykrnl.pipeline", "compile_function"),
    "PtoKernel": ("polykrnl.targets.pto.kernel", "PtoKernel"),
    "LegalityReport": ("polykrnl.transforms.legality_report", "LegalityReport"),
    "LoopTree": ("polykrnl.transforms.looptree", "LoopTree"),
    "MemoryReport": ("polykrnl.transforms.memory_safety", "MemoryReport"),
    "tune": ("polykrnl.tuning.api", "tune"),
    "TuneResult": ("polykrnl.tuning.result", "TuneResult"),
}


def _installed_version() -> str:
    # The installed distribution's metadata, so that the version is written once (in
    # pyproject.toml); a source tree that was never installed has none.
    from importlib import metadata

    try:
        return metadata.version("polykrnl")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        globals()[name] = version = _installed_version()
        return version
    found = _LAZY.get(name)
    if found is None:
        raise AttributeError(f"module 'polykrnl' has no attribute {name!r}")
    value = getattr(importlib.import_module(found[0]), found[1])
    globals()[name] = value  # the next use is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, "__version__"})


__all__ = [
    "ArgumentError",
    "BoundsError",
    "BuilderError",
    "ComplexityError",
    "Function",
    "IllegalTransformError",
    "InterpretError",
    "LegalityReport",
    "LoopTree",
    "MemoryReport",
    "Module",
    "ModuleBuilder",
    "NumbaKernel",
    "NumpyKernel",
    "ParseError",
    "PolyProgram",
    "PolykrnlError",
    "PtoError",
    "PtoKernel",
    "RaceError",
    "Schedule",
    "ScheduleError",
    "SupportTable",
    "TileConstraintError",
    "TuneResult",
    "UnknownFunctionError",
    "UnprovenTransformError",
    "UnsupportedError",
    "VerifyError",
    "__version__",
    "check",
    "compile",
    "load",
    "parse",
    "poly_program",
    "register_call",
    "run_reference",
    "schedule",
    "supported_ops",
    "tune",
    "verify",
]
