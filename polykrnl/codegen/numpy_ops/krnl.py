"""NumPy emitters of Krnl's scalar ops: its math functions, float predicates and C strings."""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation

from polykrnl.codegen.numpy_ops.core import (
    NUMPY,
    Ctx,
    Expr,
    astype,
    operand_types,
    require,
    unary_float,
)
from polykrnl.codegen.numpy_ops.math import float_predicate
from polykrnl.model import dialect as k
from polykrnl.model.registry import OpClass

# -- float functions (as their `math` namesakes)

_UNARY: dict[OpClass, str] = {
    k.AcosOp: "acos",
    k.AcoshOp: "acosh",
    k.AsinOp: "asin",
    k.AsinhOp: "asinh",
    k.AtanOp: "atan",
    k.AtanhOp: "atanh",
    k.ErfOp: "erf",
    k.TanOp: "tan",
}
for _cls, _name in _UNARY.items():
    NUMPY.add(unary_float(_name), _cls)


NUMPY.add(float_predicate("isinf"), k.IsInfOp)
NUMPY.add(float_predicate("isnan"), k.IsNaNOp)

# -- strings


@NUMPY.register(k.StrlenOp)
def _strlen(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    (s,), (r,) = operand_types(op)
    require(s.kind == "s" and r.kind == "i" and not r.unsigned)
    e = cx.helper("_strlen", args[0])
    return [e if r.dtype == np.dtype(np.int64) else astype(e, r.dtype)]


@NUMPY.register(k.StrncmpOp)
def _strncmp(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    (s1, s2, n), (r,) = operand_types(op)
    require(s1.kind == s2.kind == "s" and n.kind in "ix" and r.kind == "i" and not r.unsigned)
    e = cx.helper("_strncmp", *args)
    return [e if r.dtype == np.dtype(np.int32) else astype(e, r.dtype)]
