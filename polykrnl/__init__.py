"""polykrnl: polyhedral loop transformation for ONNX-MLIR Krnl programs."""

from polykrnl.codegen.kernel import NumpyKernel
from polykrnl.codegen.kernel import register as _register_numpy
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
from polykrnl.tiles.kernel import PtoKernel
from polykrnl.tiles.kernel import register as _register_pto
from polykrnl.transforms.legality import LegalityReport
from polykrnl.transforms.looptree import LoopTree
from polykrnl.transforms.recipe import check, schedule
from polykrnl.transforms.recipe import compile_function as compile
from polykrnl.transforms.schedule import Schedule

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
    "verify",
]

_register_numpy()
_register_pto()
