"""polykrnl: polyhedral loop transformation for ONNX-MLIR Krnl programs."""

from polykrnl.errors import (
    ArgumentError,
    InterpretError,
    ParseError,
    PolykrnlError,
    UnknownFunctionError,
    UnsupportedError,
    VerifyError,
)
from polykrnl.model.ir import Function, Module, load, parse

__version__ = "0.1.0"

__all__ = [
    "ArgumentError",
    "Function",
    "InterpretError",
    "Module",
    "ParseError",
    "PolykrnlError",
    "UnknownFunctionError",
    "UnsupportedError",
    "VerifyError",
    "__version__",
    "load",
    "parse",
]
