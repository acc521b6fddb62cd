"""What the math dialect's ops (and krnl's scalar math) do: float64, rounded once."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import math as mathd
from xdsl.ir import Operation

from polykrnl.dialect.std_ext import IsFiniteOp, IsInfOp, IsNaNOp
from polykrnl.interpreter.core import (
    INTERPRET,
    Frame,
    Handler,
    Interpreter,
)
from polykrnl.interpreter.values import (
    Fail,
    as_signed,
    as_unsigned,
    int_width,
    lane_type,
    lanewise,
    make_value,
    wrap_int,
)

# -- scalar math of the krnl dialect and the math dialect (float64, rounded once)


def f64(x: Any) -> Any:
    return x.astype(np.float64) if isinstance(x, np.ndarray) else np.float64(x)


def unary_float(fn: Callable[[Any], Any]) -> Handler:
    def h(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
        x = fr.get(op.operands[0])
        return [make_value(fn(f64(x)), op.results[0].type)]

    return h


def erf(x: Any) -> Any:
    return np.vectorize(math.erf)(x) if isinstance(x, np.ndarray) else math.erf(float(x))


def _round_half_away(x: Any) -> Any:
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


#: the float64 function behind each float unary op of the math dialect
UNARY_FLOAT: dict[type[Operation], Callable[[Any], Any]] = {
    mathd.AcosOp: np.arccos,
    mathd.AcoshOp: np.arccosh,
    mathd.AsinOp: np.arcsin,
    mathd.AsinhOp: np.arcsinh,
    mathd.AtanOp: np.arctan,
    mathd.AtanhOp: np.arctanh,
    mathd.TanOp: np.tan,
    mathd.ErfOp: erf,
    mathd.ExpOp: np.exp,
    mathd.Exp2Op: np.exp2,
    mathd.ExpM1Op: np.expm1,
    mathd.LogOp: np.log,
    mathd.Log2Op: np.log2,
    mathd.Log10Op: np.log10,
    mathd.Log1pOp: np.log1p,
    mathd.SqrtOp: np.sqrt,
    mathd.RsqrtOp: lambda x: 1.0 / np.sqrt(x),
    mathd.CbrtOp: np.cbrt,
    mathd.TanhOp: np.tanh,
    mathd.SinOp: np.sin,
    mathd.CosOp: np.cos,
    mathd.SinhOp: np.sinh,
    mathd.CoshOp: np.cosh,
    mathd.AbsFOp: np.abs,
    mathd.FloorOp: np.floor,
    mathd.CeilOp: np.ceil,
    mathd.TruncOp: np.trunc,
    mathd.RoundOp: _round_half_away,
    mathd.RoundEvenOp: np.rint,
}
for _op, _f in UNARY_FLOAT.items():
    INTERPRET.add(unary_float(_f), _op)


def float_predicate(fn: Callable[[Any], Any]) -> Handler:
    def h(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
        r = fn(fr.get(op.operands[0]))
        return [r.astype(np.bool_) if isinstance(r, np.ndarray) else int(bool(r))]

    return h


def _binary_float(fn: Callable[[Any, Any], Any]) -> Handler:
    def h(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
        a, b = (f64(fr.get(v)) for v in op.operands)
        return [make_value(fn(a, b), op.results[0].type)]

    return h


INTERPRET.add(float_predicate(np.isinf), IsInfOp)
INTERPRET.add(float_predicate(np.isnan), IsNaNOp)
INTERPRET.add(float_predicate(np.isfinite), IsFiniteOp)
INTERPRET.add(_binary_float(np.power), mathd.PowFOp)
INTERPRET.add(_binary_float(np.arctan2), mathd.Atan2Op)
INTERPRET.add(_binary_float(np.copysign), mathd.CopySignOp)


@INTERPRET.register(mathd.FPowIOp)
def _fpowi(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    x, n = fr.get(op.operands[0]), fr.get(op.operands[1])
    return [make_value(np.power(f64(x), float(n)), op.results[0].type)]


@INTERPRET.register(mathd.FmaOp)
def _fma(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    a, b, c = (np.asarray(fr.get(v), dtype=np.longdouble) for v in op.operands)
    return [make_value(a * b + c, op.results[0].type)]


# Integer math: on vectors, lane by lane.


@INTERPRET.register(mathd.AbsIOp)
def _absi(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    t = op.results[0].type
    w, lane = int_width(t), lane_type(t)
    return [lanewise(lambda x: wrap_int(abs(as_signed(x, w)), lane), t, fr.get(op.operands[0]))]


@INTERPRET.register(mathd.IPowIOp)
def _ipowi(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    t = op.results[0].type
    w, lane = int_width(t), lane_type(t)

    def one(x: int, n: int) -> int:
        base, exp = as_signed(x, w), as_signed(n, w)
        if exp < 0:
            # MLIR defines x ** -n as 1 / x ** n in integers.
            if base == 0:
                raise Fail("math.ipowi: 0 raised to a negative power")
            return wrap_int(1 if base == 1 else (-1 if exp % 2 else 1) if base == -1 else 0, lane)
        return wrap_int(pow(base, exp, 1 << w), lane)

    return [lanewise(one, t, *(fr.get(v) for v in op.operands))]


@INTERPRET.register(mathd.CountLeadingZerosOp, mathd.CountTrailingZerosOp, mathd.CtPopOp)
def _bitcount(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    t = op.results[0].type
    w, lane = int_width(t), lane_type(t)

    def one(v: int) -> int:
        x = as_unsigned(v, w)
        if isinstance(op, mathd.CtPopOp):
            r = bin(x).count("1")
        elif isinstance(op, mathd.CountLeadingZerosOp):
            r = w - x.bit_length()
        else:
            r = w if x == 0 else (x & -x).bit_length() - 1
        return wrap_int(r, lane)

    return [lanewise(one, t, fr.get(op.operands[0]))]
