"""The form of Python a target writes: what distinguishes the NumPy target's code from the
Numba target's, as properties the code generator reads (never a target's name).

NumPy code is array code over Python objects: loops the legality report proves parallel
become slices, values are NumPy scalars or arrays, dictionaries take any key. Numba code is
scalar loops compiled by Numba: every value keeps its MLIR type, parallel loops become
`prange`, typed dictionaries take integer keys, some ops have no compiled form.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Attribute, Operation

from polykrnl.dialect import krnl as k
from polykrnl.interpreter.runtime_calls import RUNTIME_HELPERS


@dataclass(frozen=True)
class PythonForm:
    #: the stage's name in error messages ("NumPy code generation")
    stage: str
    #: the target's label, for "has no X translation yet"
    label: str
    #: scalar loops with typed values, parallel loops as prange (Numba), instead of array
    #: code over NumPy objects
    compiled: bool
    #: ops the form has no translation for (refused at the op, with the other target named)
    refused: tuple[type[Operation], ...] = ()
    #: a computed result as a value of its MLIR type, where the form's arithmetic widens
    #: (Numba computes int32 + int32 in int64); None: values keep their type (NumPy)
    typed: Callable[[ast.expr, Attribute], ast.expr] | None = None
    #: the modules a standalone module of this form imports
    requires: tuple[str, ...] = ("numpy",)

    def refuses(self, op: Operation) -> bool:
        # onnx-mlir's runtime calls are helpers that every form has (memory_ops.py).
        if isinstance(op, k.CallOp) and op.funcName.data in RUNTIME_HELPERS:
            return False
        return isinstance(op, self.refused)


#: the NumPy target's form (the writer's default); the Numba target's is
#: `targets/numba/form.py: NUMBA_FORM`
NUMPY_FORM = PythonForm("NumPy code generation", "NumPy", compiled=False)
