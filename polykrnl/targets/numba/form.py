"""The Numba target's form of Python: what it writes differently in a statement (typed
values) and the ops it refuses."""

from __future__ import annotations

import ast
from typing import Any

import numpy as np
from xdsl.dialects import vector
from xdsl.dialects.builtin import Float16Type, Float32Type, IntegerType
from xdsl.ir import Attribute

from polykrnl.codegen.pyast import call
from polykrnl.codegen.python_form import PythonForm
from polykrnl.dialect import krnl as k
from polykrnl.interpreter import scalar_dtype

#: ops the Numba target refuses (Python objects, or helpers written for NumPy only)
NUMBA_REFUSED = (
    k.SeqAllocOp,
    k.SeqStoreOp,
    k.SeqExtractOp,
    k.GlobalOp,
    k.CallOp,
    k.MemcpyOp,
    k.CopyToTileBufferOp,
    k.CopyFromTileBufferOp,
    vector.TransferReadOp,
    vector.TransferWriteOp,
    vector.MaskedLoadOp,
    vector.MaskedStoreOp,
)


def numba_typed(e: ast.expr, t: Attribute) -> ast.expr:
    """`e` as a value of MLIR type `t` in Numba.

    Numba computes `int32 + int32` in int64 and `float32 * 0.5` in float64 where
    NumPy keeps the operands' type: converting each op's result back to its type
    gives MLIR's wrap-around, and one rounding of an exact or float64 result to
    float32 (the same value: float64 has more than twice float32's precision).
    """
    if isinstance(t, IntegerType):
        if t.width.data == 1:
            return e
    elif not isinstance(t, Float16Type | Float32Type):
        return e  # index, f64, vectors (arrays keep NumPy's types in Numba), strings
    dtype = scalar_dtype(t)
    if dtype in (np.dtype(np.int64), np.dtype(np.float64)):
        return e
    return e if _typed_as(e, dtype) else call(f"np.{dtype.name}", e)


def _typed_as(e: ast.expr, dtype: np.dtype[Any]) -> bool:
    """Whether `e` is already `np.<dtype>(...)`."""
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and isinstance(e.func.value, ast.Name)
        and e.func.value.id == "np"
        and e.func.attr == dtype.name
    )


NUMBA_FORM = PythonForm(
    "Numba code generation",
    "Numba",
    compiled=True,
    refused=NUMBA_REFUSED,
    typed=numba_typed,
    requires=("numpy", "numba"),
)
