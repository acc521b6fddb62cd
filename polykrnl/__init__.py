"""polykrnl: polyhedral loop transformation for ONNX-MLIR Krnl programs."""

from polykrnl.codegen.kernel import NumpyKernel
from polykrnl.errors import (
    ArgumentError,
    BuilderError,
    IllegalTransformError,
    InterpretError,
    ParseError,
    PolykrnlError,
    PtoError,
    ScheduleError,
    TileConstraintError,
    UnknownFunctionError,
    UnsupportedError,
    VerifyError,
)
from polykrnl.model.builder import ModuleBuilder
from polykrnl.model.interpreter import register_call, run_reference
from polykrnl.model.ir import Function, Module
from polykrnl.model.parser import load, parse
from polykrnl.model.poly import PolyProgram, poly_program
from polykrnl.model.verifier import verify
from polykrnl.ops import SupportTable, supported_ops
from polykrnl.pipeline import Schedule, check, schedule
from polykrnl.pipeline import compile_function as compile
from polykrnl.tiles.kernel import PtoKernel
from polykrnl.transforms.legality_report import LegalityReport
from polykrnl.transforms.looptree import LoopTree

__version__ = "0.1.0"

__all__ = [
    "ArgumentError",
    "BuilderError",
    "Function",
    "IllegalTransformError",
    "InterpretError",
    "LegalityReport",
    "LoopTree",
    "Module",
    "ModuleBuilder",
    "NumpyKernel",
    "ParseError",
    "PolyProgram",
    "PolykrnlError",
    "PtoError",
    "PtoKernel",
    "Schedule",
    "ScheduleError",
    "SupportTable",
    "TileConstraintError",
    "UnknownFunctionError",
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
    "verify",
]
