"""What the arith dialect's ops do in the reference interpreter (integers wrap to their width)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    VectorType,
)
from xdsl.ir import Operation

from polykrnl.dialect.std_ext import (
    CmpfOp,
    CmpiOp,
    ExtSIOp,
    ExtUIOp,
    FPToSIOp,
    FPToUIOp,
    IndexCastUIOp,
    RemFOp,
    SelectOp,
    SIToFPOp,
    TruncIOp,
    UIToFPOp,
)
from polykrnl.errors import UnsupportedError
from polykrnl.interpreter.core import (
    INTERPRET,
    Frame,
    Handler,
    Interpreter,
)
from polykrnl.interpreter.memory import (
    dense_array,
)
from polykrnl.interpreter.values import (
    Fail,
    as_signed,
    as_unsigned,
    int_width,
    is_float,
    lane_type,
    lanewise,
    make_value,
    scalar_dtype,
    wrap_int,
)

# ------------------------------------------------------------------ arith


@INTERPRET.register(arith.ConstantOp)
def _constant(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    attr = op.properties["value"]
    t = op.results[0].type
    if isinstance(attr, IntegerAttr | FloatAttr):
        return [make_value(attr.value.data, t)]
    if isinstance(t, VectorType):
        return [dense_array(attr, scalar_dtype(t), tuple(t.get_shape()))]
    raise UnsupportedError(f"arith.constant of {t}", location=it.location(op))


def _int_binary(fn: Callable[[int, int, int], int]) -> Handler:
    """An integer op on canonical values; `fn(a, b, width)` may read them signed/unsigned.
    On vectors, lane by lane."""

    def h(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
        a, b = (fr.get(v) for v in op.operands)
        t = op.results[0].type
        w, lane = int_width(t), lane_type(t)
        return [lanewise(lambda x, y: wrap_int(fn(x, y, w), lane), t, a, b)]

    return h


def _check_divisor(b: int) -> int:
    if b == 0:
        raise Fail("integer division by zero", "division by zero is undefined in MLIR")
    return b


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(_check_divisor(b))
    return q if (a >= 0) == (b > 0) else -q


def _sdiv(a: int, b: int, w: int) -> int:
    a, b = as_signed(a, w), as_signed(b, w)
    if b == -1 and a == -(1 << (w - 1)):
        raise Fail("signed division overflow (INT_MIN / -1)", "the result is undefined in MLIR")
    return _tdiv(a, b)


def _shift_amount(b: int, w: int) -> int:
    s = as_unsigned(b, w)
    if s >= w:
        raise Fail(f"shift by {s} bits of a {w}-bit integer", "the result is poison in MLIR")
    return s


_INT_BINARY: dict[type[Operation], Callable[[int, int, int], int]] = {
    arith.AddiOp: lambda a, b, w: a + b,
    arith.SubiOp: lambda a, b, w: a - b,
    arith.MuliOp: lambda a, b, w: a * b,
    arith.DivSIOp: _sdiv,
    arith.DivUIOp: lambda a, b, w: as_unsigned(a, w) // _check_divisor(as_unsigned(b, w)),
    arith.RemSIOp: lambda a, b, w: as_signed(a, w) - as_signed(b, w) * _sdiv(a, b, w),
    arith.RemUIOp: lambda a, b, w: as_unsigned(a, w) % _check_divisor(as_unsigned(b, w)),
    arith.FloorDivSIOp: lambda a, b, w: as_signed(a, w) // _check_divisor(as_signed(b, w)),
    arith.CeilDivSIOp: lambda a, b, w: -(-as_signed(a, w) // _check_divisor(as_signed(b, w))),
    arith.CeilDivUIOp: lambda a, b, w: -(-as_unsigned(a, w) // _check_divisor(as_unsigned(b, w))),
    arith.MaxSIOp: lambda a, b, w: max(as_signed(a, w), as_signed(b, w)),
    arith.MinSIOp: lambda a, b, w: min(as_signed(a, w), as_signed(b, w)),
    arith.MaxUIOp: lambda a, b, w: max(as_unsigned(a, w), as_unsigned(b, w)),
    arith.MinUIOp: lambda a, b, w: min(as_unsigned(a, w), as_unsigned(b, w)),
    arith.AndIOp: lambda a, b, w: a & b,
    arith.OrIOp: lambda a, b, w: a | b,
    arith.XOrIOp: lambda a, b, w: a ^ b,
    arith.ShLIOp: lambda a, b, w: a << _shift_amount(b, w),
    arith.ShRUIOp: lambda a, b, w: as_unsigned(a, w) >> _shift_amount(b, w),
    arith.ShRSIOp: lambda a, b, w: as_signed(a, w) >> _shift_amount(b, w),
}
for _n, _g in _INT_BINARY.items():
    INTERPRET.add(_int_binary(_g), _n)


def _float_binary(fn: Callable[[Any, Any], Any]) -> Handler:
    def h(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
        a, b = (fr.get(v) for v in op.operands)
        return [make_value(fn(a, b), op.results[0].type)]

    return h


_FLOAT_BINARY: dict[type[Operation], Callable[[Any, Any], Any]] = {
    arith.AddfOp: lambda a, b: a + b,
    arith.SubfOp: lambda a, b: a - b,
    arith.MulfOp: lambda a, b: a * b,
    arith.DivfOp: lambda a, b: a / b,
    RemFOp: np.fmod,
    arith.MaximumfOp: np.maximum,
    arith.MinimumfOp: np.minimum,
    arith.MaxnumfOp: np.fmax,
    arith.MinnumfOp: np.fmin,
}
for _n, _h in _FLOAT_BINARY.items():
    INTERPRET.add(_float_binary(_h), _n)


@INTERPRET.register(arith.NegfOp)
def _negf(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    return [make_value(-fr.get(op.operands[0]), op.results[0].type)]


_CMPI: tuple[Callable[[int, int, int], bool], ...] = (
    lambda a, b, w: a == b,
    lambda a, b, w: a != b,
    lambda a, b, w: as_signed(a, w) < as_signed(b, w),
    lambda a, b, w: as_signed(a, w) <= as_signed(b, w),
    lambda a, b, w: as_signed(a, w) > as_signed(b, w),
    lambda a, b, w: as_signed(a, w) >= as_signed(b, w),
    lambda a, b, w: as_unsigned(a, w) < as_unsigned(b, w),
    lambda a, b, w: as_unsigned(a, w) <= as_unsigned(b, w),
    lambda a, b, w: as_unsigned(a, w) > as_unsigned(b, w),
    lambda a, b, w: as_unsigned(a, w) >= as_unsigned(b, w),
)


@INTERPRET.register(arith.CmpiOp, CmpiOp)
def _cmpi(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    pred = cast(IntegerAttr[Any], op.properties["predicate"]).value.data
    a, b = (fr.get(v) for v in op.operands)
    w = int_width(op.operands[0].type)
    if isinstance(a, np.ndarray):  # vectors: lane by lane, on the canonical integers
        lanes = [_CMPI[pred](int(x), int(y), w) for x, y in zip(a.flat, b.flat, strict=True)]
        return [np.array(lanes, dtype=np.bool_).reshape(a.shape)]
    if isinstance(op.operands[0].type, IndexType):
        a, b = wrap_int(a, IntegerType(64)), wrap_int(b, IntegerType(64))
    return [int(_CMPI[pred](a, b, w))]


@INTERPRET.register(arith.CmpfOp, CmpfOp)
def _cmpf(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    pred = cast(IntegerAttr[Any], op.properties["predicate"]).value.data
    a, b = (fr.get(v) for v in op.operands)
    unordered = np.isnan(a) | np.isnan(b)
    rel = [
        None,
        a == b,
        a > b,
        a >= b,
        a < b,
        a <= b,
        a != b,
        None,
    ]
    if pred == 0:
        r: Any = np.zeros_like(unordered)
    elif pred == 15:
        r = np.ones_like(unordered)
    elif pred == 7:
        r = ~unordered
    elif pred == 14:
        r = unordered
    elif pred < 7:
        r = ~unordered & rel[pred]
    else:  # ueq ... une: unordered or the relation
        r = unordered | rel[pred - 7]
    return [r.astype(np.bool_) if isinstance(r, np.ndarray) else int(bool(r))]


@INTERPRET.register(arith.SelectOp, SelectOp)
def _select(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    c, a, b = (fr.get(v) for v in op.operands)
    if isinstance(c, np.ndarray):
        return [np.where(c, a, b)]
    return [a if c else b]


# Casts: on vectors, lane by lane (polykrnl's classes; xDSL's read scalars only).


@INTERPRET.register(arith.IndexCastOp, arith.ExtSIOp, arith.TruncIOp, ExtSIOp, TruncIOp)
def _int_cast_signed(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    src, dst = lane_type(op.operands[0].type), lane_type(op.results[0].type)

    def one(x: Any) -> Any:
        if isinstance(src, IntegerType):
            x = as_signed(x, src.width.data)
        return wrap_int(int(x), dst)

    return [lanewise(one, op.results[0].type, fr.get(op.operands[0]))]


@INTERPRET.register(IndexCastUIOp, arith.ExtUIOp, ExtUIOp)
def _int_cast_unsigned(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    w, dst = int_width(op.operands[0].type), lane_type(op.results[0].type)
    return [
        lanewise(
            lambda x: wrap_int(as_unsigned(x, w), dst), op.results[0].type, fr.get(op.operands[0])
        )
    ]


@INTERPRET.register(arith.SIToFPOp, arith.UIToFPOp, SIToFPOp, UIToFPOp)
def _int_to_float(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    w, dst = int_width(op.operands[0].type), lane_type(op.results[0].type)
    signed = isinstance(op, arith.SIToFPOp | SIToFPOp)

    def one(x: Any) -> Any:
        return make_value(float(as_signed(x, w) if signed else as_unsigned(x, w)), dst)

    return [lanewise(one, op.results[0].type, fr.get(op.operands[0]))]


@INTERPRET.register(arith.FPToSIOp, arith.FPToUIOp, FPToSIOp, FPToUIOp)
def _float_to_int(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    t = lane_type(op.results[0].type)
    w = int_width(t)
    signed = isinstance(op, arith.FPToSIOp | FPToSIOp)
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)

    def one(x: Any) -> Any:
        if not np.isfinite(x):
            raise Fail(f"{op.name} of {x}", "converting nan or inf to an integer is undefined")
        v = int(np.trunc(np.float64(x)))
        if not lo <= v <= hi:
            raise Fail(f"{op.name} of {x} does not fit in {t}", "the result is poison in MLIR")
        return wrap_int(v, t)

    return [lanewise(one, op.results[0].type, fr.get(op.operands[0]))]


@INTERPRET.register(arith.ExtFOp, arith.TruncFOp)
def _float_cast(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    return [make_value(fr.get(op.operands[0]), op.results[0].type)]


@INTERPRET.register(arith.BitcastOp)
def _bitcast(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    src, t = op.operands[0], op.results[0].type
    x = fr.get(src)
    if isinstance(t, VectorType):  # the lanes' bits, reread
        return [np.array(x, dtype=scalar_dtype(src.type)).view(scalar_dtype(t))]
    raw = scalar_dtype(src.type).type(x if is_float(src.type) else wrap_int(x, src.type))
    out = np.array(raw).view(scalar_dtype(t))[()]
    return [make_value(out, t)]
