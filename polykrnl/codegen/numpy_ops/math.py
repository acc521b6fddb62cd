"""NumPy emitters of MLIR's `math` ops."""

from __future__ import annotations

import ast

import numpy as np
from xdsl.dialects import math
from xdsl.ir import Operation

from polykrnl.codegen.numpy_ops.core import (
    NUMPY,
    Ctx,
    Emitter,
    Expr,
    NpType,
    astype,
    binop,
    float_binary,
    in_f64,
    int_op,
    inv,
    npcall,
    operand_types,
    require,
    same_kind,
    ufunc64,
    unary_float,
)
from polykrnl.dialect.registry import OpClass
from polykrnl.dialect.std_ext import IsFiniteOp, IsInfOp, IsNaNOp

# -- integer functions


def _absi(op: Operation, args: list[Expr], cx: Ctx, t: NpType) -> Expr:
    (a,) = args
    if t.kind == "b":  # |-1| = 1: true stays true
        return a
    e = npcall("abs", a)  # abs(MIN) wraps to MIN
    return cx.index(e) if t.kind == "x" else e


NUMPY.add(int_op(_absi), math.AbsIOp)


def _ipowi(op: Operation, args: list[Expr], cx: Ctx, t: NpType) -> Expr:
    a, b = args
    if t.kind == "b":  # x ** 0 = 1; (-1) ** -1 = -1: true unless 0 ** -1 (undefined)
        return binop(a, ast.BitOr(), inv(b))
    e = cx.helper("_ipowi", a, b)
    return cx.index(e) if t.kind == "x" else e


NUMPY.add(int_op(_ipowi), math.IPowIOp)


def _bitcount(name: str) -> Emitter:
    def body(op: Operation, args: list[Expr], cx: Ctx, t: NpType) -> Expr:
        (a,) = args
        if t.kind == "b":
            return a if name == "ctpop" else inv(a)
        e = cx.helper("_" + name, a)
        return cx.index(e) if t.kind == "x" else e

    return int_op(body)


_BITCOUNTS: dict[OpClass, str] = {
    math.CountLeadingZerosOp: "ctlz",
    math.CountTrailingZerosOp: "cttz",
    math.CtPopOp: "ctpop",
}
for _cls, _name in _BITCOUNTS.items():
    NUMPY.add(_bitcount(_name), _cls)


# -- float functions

_UNARY: dict[OpClass, str] = {
    math.AbsFOp: "absf",
    math.AcosOp: "acos",
    math.AcoshOp: "acosh",
    math.AsinOp: "asin",
    math.AsinhOp: "asinh",
    math.AtanOp: "atan",
    math.AtanhOp: "atanh",
    math.CbrtOp: "cbrt",
    math.CeilOp: "ceil",
    math.CosOp: "cos",
    math.CoshOp: "cosh",
    math.ErfOp: "erf",
    math.ExpOp: "exp",
    math.Exp2Op: "exp2",
    math.ExpM1Op: "expm1",
    math.FloorOp: "floor",
    math.LogOp: "log",
    math.Log10Op: "log10",
    math.Log1pOp: "log1p",
    math.Log2Op: "log2",
    math.RoundOp: "round",
    math.RoundEvenOp: "roundeven",
    math.RsqrtOp: "rsqrt",
    math.SinOp: "sin",
    math.SinhOp: "sinh",
    math.SqrtOp: "sqrt",
    math.TanOp: "tan",
    math.TanhOp: "tanh",
    math.TruncOp: "trunc",
}
for _cls, _name in _UNARY.items():
    NUMPY.add(unary_float(_name), _cls)

NUMPY.add(float_binary(lambda a, b, cx: npcall("copysign", a, b)), math.CopySignOp)


@NUMPY.register(math.Atan2Op)
def _atan2(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    t = same_kind(op, "f", 2)
    return [in_f64(t, ufunc64("arctan2", *args), "atan2")]


@NUMPY.register(math.PowFOp)
def _powf(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    t = same_kind(op, "f", 2)
    e = cx.helper("_powf", *args)
    return [e if t.dtype == np.dtype(np.float64) else astype(e, t.dtype)]


@NUMPY.register(math.FPowIOp)
def _fpowi(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    (tx, tn), (tr,) = operand_types(op)
    require(tx.kind == "f" and tr == tx and tn.kind in "ix")
    x, n = args
    if tn.unsigned:
        n = astype(n, tn.signed_dtype)
    e = cx.helper("_powf", x, n)
    return [e if tx.dtype == np.dtype(np.float64) else astype(e, tx.dtype)]


@NUMPY.register(math.FmaOp)
def _fma(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    same_kind(op, "f", 3)
    return [cx.helper("_fma", *args)]


def float_predicate(ufunc: str) -> Emitter:
    def emitter(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
        (t,), (r,) = operand_types(op)
        require(t.kind == "f" and r.kind == "b")
        return [npcall(ufunc, args[0])]

    return emitter


NUMPY.add(float_predicate("isinf"), IsInfOp)
NUMPY.add(float_predicate("isnan"), IsNaNOp)
NUMPY.add(float_predicate("isfinite"), IsFiniteOp)
