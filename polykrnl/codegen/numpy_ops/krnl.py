"""NumPy emitters of Krnl's scalar ops: its math functions, float predicates and C strings."""

from __future__ import annotations

import ast

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation

from polykrnl.codegen.numpy_ops.affine import affine_value
from polykrnl.codegen.numpy_ops.core import (
    NUMPY,
    Ctx,
    Expr,
    astype,
    binop,
    int_const,
    operand_types,
    require,
    unary_float,
)
from polykrnl.codegen.numpy_ops.math import float_predicate
from polykrnl.dialect import krnl as k
from polykrnl.dialect.krnl.access import has_identity_layout
from polykrnl.dialect.registry import OpClass

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
    k.RoundEvenOp: "roundeven",
}
for _cls, _name in _UNARY.items():
    NUMPY.add(unary_float(_name), _cls)


# -- memory offsets


@NUMPY.register(k.GetLinearOffsetIndexOp)
def _linear_offset(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    assert isinstance(op, k.GetLinearOffsetIndexOp)
    t = op.memref.type
    require(isinstance(t, MemRefType) and has_identity_layout(t))
    assert isinstance(t, MemRefType)
    m = op.map.data
    mem, idx = args[0], args[1:]
    subs = [affine_value(r, idx[: m.num_dims], idx[m.num_dims :]) for r in m.results]
    shape: Expr = ast.Attribute(mem, "shape", ast.Load())
    offset: Expr = int_const(0)
    for d, (sub, n) in enumerate(zip(subs, t.get_shape(), strict=True)):
        size = int_const(n) if n >= 0 else ast.Subscript(shape, int_const(d), ast.Load())
        offset = binop(binop(offset, ast.Mult(), size), ast.Add(), sub) if d else sub
    return [offset]


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
