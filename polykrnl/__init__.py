"""polykrnl: polyhedral loop transformation for ONNX-MLIR Krnl programs."""

from polykrnl.errors import (
    ArgumentError,
    BuilderError,
    InterpretError,
    ParseError,
    PolykrnlError,
    UnknownFunctionError,
    UnsupportedError,
    VerifyError,
)
from polykrnl.model.builder import ModuleBuilder
from polykrnl.model.interpreter import register_call, run_reference
from polykrnl.model.ir import Function, Module
from polykrnl.model.parser import load, parse
from polykrnl.model.verifier import verify

__version__ = "0.1.0"

__all__ = [
    "ArgumentError",
    "BuilderError",
    "Function",
    "InterpretError",
    "Module",
    "ModuleBuilder",
    "ParseError",
    "PolykrnlError",
    "UnknownFunctionError",
    "UnsupportedError",
    "VerifyError",
    "__version__",
    "load",
    "parse",
    "register_call",
    "run_reference",
    "verify",
]
