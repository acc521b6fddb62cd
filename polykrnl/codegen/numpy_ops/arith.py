"""NumPy emitters of MLIR's `arith` ops (xDSL's and polykrnl's :mod:`~polykrnl.dialect.std_ext`)."""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import Any, cast

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    VectorType,
)
from xdsl.ir import Operation, SSAValue

from polykrnl.codegen.numpy_ops.core import (
    INT_KINDS,
    NUMPY,
    Ctx,
    Emitter,
    Expr,
    NpType,
    astype,
    binop,
    call,
    compare,
    compiled_form,
    dt,
    float_binary,
    float_const,
    int_const,
    int_op,
    inv,
    method,
    neg,
    np_attr,
    npcall,
    offset,
    operand_types,
    require,
    same_kind,
)
from polykrnl.dialect.registry import OpClass
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
from polykrnl.interpreter import make_value
from polykrnl.interpreter.memory import dense_array

# -- constants


@NUMPY.register(arith.ConstantOp)
def _constant(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    _, (t,) = operand_types(op)
    attr = op.properties.get("value")
    rt = op.results[0].type
    if isinstance(rt, VectorType) and isinstance(attr, DenseIntOrFPElementsAttr):
        # Lanes (a vector constant): the interpreter's array, written out.
        data = dense_array(attr, t.dtype, tuple(rt.get_shape())).reshape(-1)
        elems: list[Expr] = [
            float_const(float(x), t.dtype) if t.kind == "f" else int_const(int(x)) for x in data
        ]
        lanes = npcall("array", ast.List(elems, ast.Load()), dtype=dt(t.dtype))
        return [
            method(lanes, "reshape", ast.Tuple([int_const(d) for d in rt.get_shape()], ast.Load()))
        ]
    require(isinstance(attr, IntegerAttr | FloatAttr) and t.kind != "s")
    v = make_value(cast(IntegerAttr[Any] | FloatAttr[Any], attr).value.data, op.results[0].type)
    if t.kind == "f":
        return [call(dt(t.dtype), float_const(float(v), t.dtype))]
    if t.kind == "x":
        return [int_const(v)]
    if t.kind == "b":
        return [np_attr("True_" if v else "False_")]
    return [call(dt(t.dtype), int_const(v))]


# -- integer arithmetic


def _add_sub_mul(name: str) -> Emitter:
    def body(op: Operation, args: list[Expr], cx: Ctx, t: NpType) -> Expr:
        a, b = args
        if t.kind == "b":  # arithmetic modulo 2
            return binop(a, ast.BitAnd() if name == "mul" else ast.BitXor(), b)
        if t.kind == "x":
            if name == "mul":
                return binop(a, ast.Mult(), b)
            return offset(a, b, name == "add")
        return npcall({"add": "add", "sub": "subtract", "mul": "multiply"}[name], a, b)

    return int_op(body)


_ADD_SUB_MUL: dict[OpClass, str] = {arith.AddiOp: "add", arith.SubiOp: "sub", arith.MuliOp: "mul"}
for _cls, _name in _ADD_SUB_MUL.items():
    NUMPY.add(_add_sub_mul(_name), _cls)


def _bitwise(opc: Callable[[], ast.operator]) -> Emitter:
    def body(op: Operation, args: list[Expr], cx: Ctx, t: NpType) -> Expr:
        return binop(args[0], opc(), args[1])

    return int_op(body)


_BITWISE: dict[OpClass, Callable[[], ast.operator]] = {
    arith.AndIOp: ast.BitAnd,
    arith.OrIOp: ast.BitOr,
    arith.XOrIOp: ast.BitXor,
}
for _cls, _opc in _BITWISE.items():
    NUMPY.add(_bitwise(_opc), _cls)

# Each op's name (its helper is "_" + name) and its expression on i1. i1 read signed
# is 0 / -1: the division-like ops have few defined cases there, and these
# expressions give their results (and something for the undefined ones).
_DIVISIONS: dict[OpClass, tuple[str, Callable[[Expr, Expr], Expr]]] = {
    arith.DivSIOp: ("divsi", lambda a, b: binop(a, ast.BitAnd(), inv(b))),  # b = -1, a = 0: 0
    arith.RemSIOp: ("remsi", lambda a, b: binop(a, ast.BitAnd(), inv(b))),  # likewise: 0
    arith.DivUIOp: ("divui", lambda a, b: binop(a, ast.BitAnd(), b)),  # b must be 1: a
    arith.RemUIOp: ("remui", lambda a, b: binop(a, ast.BitAnd(), inv(b))),  # b must be 1: 0
    arith.FloorDivSIOp: ("floordivsi", lambda a, b: binop(a, ast.BitAnd(), b)),  # a // -1: a
    arith.CeilDivSIOp: ("ceildivsi", lambda a, b: binop(a, ast.BitAnd(), b)),
    arith.CeilDivUIOp: ("ceildivui", lambda a, b: binop(a, ast.BitAnd(), b)),
}


def _division(name: str, on_bool: Callable[[Expr, Expr], Expr]) -> Emitter:
    def body(op: Operation, args: list[Expr], cx: Ctx, t: NpType) -> Expr:
        a, b = args
        if t.kind == "b":
            return on_bool(a, b)
        # remsi is C's %: truncated, with the sign of the dividend
        # (Numba's np.fmod of integers has the sign of the divisor: its own helper)
        if name == "remsi" and not compiled_form():
            e = npcall("fmod", a, b)
        else:
            e = cx.helper("_" + name, a, b)
        return cx.index(e) if t.kind == "x" else e

    return int_op(body)


for _cls, (_name, _on_bool) in _DIVISIONS.items():
    NUMPY.add(_division(_name, _on_bool), _cls)


def _minmax(name: str) -> Emitter:
    def body(op: Operation, args: list[Expr], cx: Ctx, t: NpType) -> Expr:
        a, b = args
        if t.kind == "b":  # signed: true (-1) < false (0); unsigned: false < true
            both = name in ("maxsi", "minui")
            return binop(a, ast.BitAnd() if both else ast.BitOr(), b)
        if name.endswith("ui"):
            e = cx.helper("_" + name, a, b)
        else:
            e = npcall("maximum" if name == "maxsi" else "minimum", a, b)
        return cx.index(e) if t.kind == "x" else e

    return int_op(body)


_MINMAX: dict[OpClass, str] = {
    arith.MaxSIOp: "maxsi",
    arith.MinSIOp: "minsi",
    arith.MaxUIOp: "maxui",
    arith.MinUIOp: "minui",
}
for _cls, _name in _MINMAX.items():
    NUMPY.add(_minmax(_name), _cls)


def _shift(name: str) -> Emitter:
    def body(op: Operation, args: list[Expr], cx: Ctx, t: NpType) -> Expr:
        a, b = args
        if t.kind == "b":  # only a shift by 0 is defined
            return binop(a, ast.BitAnd(), inv(b))
        if name == "shrui":
            e = cx.helper("_shrui", a, b)
        elif name == "shrsi":
            return binop(a, ast.RShift(), b)  # arithmetic on signed values and Python ints
        elif t.kind == "x":
            e = npcall("left_shift", a, b)  # 64-bit, never a huge Python int
        else:
            return binop(a, ast.LShift(), b)
        return cx.index(e) if t.kind == "x" else e

    return int_op(body)


_SHIFTS: dict[OpClass, str] = {arith.ShLIOp: "shli", arith.ShRSIOp: "shrsi", arith.ShRUIOp: "shrui"}
for _cls, _name in _SHIFTS.items():
    NUMPY.add(_shift(_name), _cls)


# -- comparisons and select

# arith.cmpi predicates: eq ne slt sle sgt sge ult ule ugt uge
_CMP_OPS: tuple[type[ast.cmpop], ...] = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_CMP_UFUNCS = ("less", "less_equal", "greater", "greater_equal")
_SWAPPED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.Gt,
    ast.LtE: ast.GtE,
    ast.Gt: ast.Lt,
    ast.GtE: ast.LtE,
}


@NUMPY.register(arith.CmpiOp, CmpiOp)
def _cmpi(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    (ta, tb), (tr,) = operand_types(op)
    require(ta == tb and ta.kind in INT_KINDS and tr.kind == "b")
    pred = cast(IntegerAttr[Any], op.properties["predicate"]).value.data
    require(0 <= pred <= 9)
    a, b = args
    if ta.unsigned:
        a, b = astype(a, ta.signed_dtype), astype(b, ta.signed_dtype)
    if pred < 2:
        if ta.kind == "x":
            return [npcall("equal" if pred == 0 else "not_equal", a, b)]
        return [compare(a, ast.Eq() if pred == 0 else ast.NotEq(), b)]
    rel = (pred - 2) % 4
    unsigned = pred >= 6
    if ta.kind == "b":  # i1 read signed: true (-1) < false (0), the reverse of bool order
        cmp = _CMP_OPS[rel] if unsigned else _SWAPPED[_CMP_OPS[rel]]
        return [compare(a, cmp(), b)]
    if unsigned:
        a, b = cx.helper("_unsigned", a), cx.helper("_unsigned", b)
    elif ta.kind == "x":  # Python ints compare to a Python bool: use the ufunc
        return [npcall(_CMP_UFUNCS[rel], a, b)]
    return [compare(a, _CMP_OPS[rel](), b)]


def _full(value: bool, a: Expr, b: Expr) -> Expr:
    shape = ast.Attribute(npcall("broadcast", a, b), "shape", ast.Load())
    full = npcall("full", shape, ast.Constant(value))
    return ast.Subscript(full, ast.Tuple([], ast.Load()), ast.Load())


def _isnan(e: Expr) -> Expr:
    return npcall("isnan", e)


@NUMPY.register(arith.CmpfOp, CmpfOp)
def _cmpf(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    (ta, tb), (tr,) = operand_types(op)
    require(ta == tb and ta.kind == "f" and tr.kind == "b")
    pred = cast(IntegerAttr[Any], op.properties["predicate"]).value.data
    a, b = args

    def rel(p: int) -> Expr:  # the ordered relation of predicates 1..6 (false with NaN)
        if p == 6:  # one: ordered and not equal
            return binop(compare(a, ast.Lt(), b), ast.BitOr(), compare(a, ast.Gt(), b))
        ops: list[Callable[[], ast.cmpop]] = [ast.Eq, ast.Gt, ast.GtE, ast.Lt, ast.LtE]
        return compare(a, ops[p - 1](), b)

    if pred in (0, 15):  # false, true
        return [_full(pred == 15, a, b)]
    if pred == 7:  # ord
        return [binop(inv(_isnan(a)), ast.BitAnd(), inv(_isnan(b)))]
    if pred == 14:  # uno
        return [binop(_isnan(a), ast.BitOr(), _isnan(b))]
    if 1 <= pred <= 6:  # oeq ogt oge olt ole one
        return [rel(pred)]
    require(8 <= pred <= 13)  # ueq ugt uge ult ule une: not the opposite ordered relation
    if pred == 13:  # une: != is true with NaN
        return [compare(a, ast.NotEq(), b)]
    opposite = {8: 6, 9: 5, 10: 4, 11: 3, 12: 2}[pred]
    return [inv(rel(opposite))]


@NUMPY.register(arith.SelectOp, SelectOp)
def _select(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    if isinstance(op.results[0].type, MemRefType) and isinstance(op.operands[0].type, IntegerType):
        # One buffer or the other (a scalar condition: memref values are never arrays
        # over vectorized loops).
        c, a, b = args
        return [ast.IfExp(c, a, b)]
    (tc, ta, tb), (tr,) = operand_types(op)
    require(tc.kind == "b" and ta == tb == tr and tr.kind != "s")
    if compiled_form() and not isinstance(op.results[0].type, VectorType):
        # Numba's np.where on scalars allocates a 0-d array per call.
        c, a, b = args
        return [ast.IfExp(c, a, b)]
    extreme = _min_max(op)
    if extreme is not None and tr.kind in INT_KINDS and tr.kind != "x" and not tr.unsigned:
        # Exact for integers (for floats, NaN and -0.0 make select and np.minimum differ),
        # and one pass where np.where makes three (floyd_warshall's update: 2.2x faster).
        a, b = args[1:]
        return [npcall(extreme, a, b)]
    e = npcall("where", *args)
    if tr.kind == "x":
        return [cx.index(e)]
    return [ast.Subscript(e, ast.Tuple([], ast.Load()), ast.Load())]  # a scalar for scalars


# -- integer casts


def _read_int(e: Expr, t: NpType, signed: bool, cx: Ctx) -> tuple[Expr, np.dtype[Any] | None]:
    """Integer `e` of type `t` (not i1) read signed or unsigned, with the dtype of the
    expression (None: an index value, a Python int or an int64 array)."""
    if t.kind == "x":
        return (e, None) if signed else (cx.helper("_unsigned", e), np.dtype(np.uint64))
    want = t.signed_dtype if signed else np.dtype(f"u{t.dtype.itemsize}")
    return (e, t.dtype) if want == t.dtype else (astype(e, want), want)


def _read_bool(e: Expr, signed: bool, dtype: np.dtype[Any]) -> Expr:
    """i1 `e` as a `dtype` number: true is -1 read signed, 1 read unsigned."""
    e = astype(e, dtype)
    return neg(e) if signed else e


def _int_cast(signed: bool) -> Emitter:
    def emitter(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
        (src,), (dst,) = operand_types(op)
        require(src.kind in INT_KINDS and dst.kind in INT_KINDS)
        if isinstance(op, arith.IndexCastOp | IndexCastUIOp):
            require((src.kind == "x") != (dst.kind == "x"))
        else:
            require(src.kind != "x" and dst.kind != "x")
        (a,) = args
        if src.kind == "b":
            if dst.kind == "b":
                return [a]
            work = dst.signed_dtype if dst.kind == "i" else np.dtype(np.int64)
            e = _read_bool(a, signed, work)
            if dst.kind == "x":
                return [cx.index(e)]
            return [e if work == dst.dtype else astype(e, dst.dtype)]
        e, dtype = _read_int(a, src, signed, cx)
        if dst.kind == "x":
            return [cx.index(e)]
        if dst.kind == "b":  # the low bit
            return [npcall("not_equal", binop(e, ast.BitAnd(), ast.Constant(1)), ast.Constant(0))]
        if dtype is None:  # an index value: to int64 first (a Python int has no astype)
            e, dtype = npcall("int64", e), np.dtype(np.int64)
        return [e if dtype == dst.dtype else astype(e, dst.dtype)]

    return emitter


NUMPY.add(
    _int_cast(signed=True), arith.ExtSIOp, arith.TruncIOp, arith.IndexCastOp, ExtSIOp, TruncIOp
)
NUMPY.add(_int_cast(signed=False), arith.ExtUIOp, IndexCastUIOp, ExtUIOp)


@NUMPY.register(arith.SIToFPOp, arith.UIToFPOp, SIToFPOp, UIToFPOp)
def _int_to_float(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    (src,), (dst,) = operand_types(op)
    require(src.kind in INT_KINDS and dst.kind == "f")
    signed = isinstance(op, arith.SIToFPOp | SIToFPOp)
    (a,) = args
    if src.kind == "b":
        return [
            astype(_read_bool(a, True, np.dtype(np.int8)), dst.dtype)
            if signed
            else astype(a, dst.dtype)
        ]
    e, dtype = _read_int(a, src, signed, cx)
    if dtype is None:
        e = npcall("float64", e)  # like float(x): one rounding, whatever the size of x
    elif dtype.itemsize == 8:
        # The interpreter converts through a Python float: 64-bit integers round to
        # float64 first, then to the result type (twice).
        e = astype(e, np.dtype(np.float64))
    else:  # exact in float64: one rounding either way
        return [astype(e, dst.dtype)]
    return [e if dst.dtype == np.dtype(np.float64) else astype(e, dst.dtype)]


@NUMPY.register(arith.FPToSIOp, arith.FPToUIOp, FPToSIOp, FPToUIOp)
def _float_to_int(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    (src,), (dst,) = operand_types(op)
    require(src.kind == "f" and dst.kind in INT_KINDS)
    (a,) = args
    signed = isinstance(op, arith.FPToSIOp | FPToSIOp)
    if dst.kind == "b":  # defined for truncations to -1 or 0 (fptosi), 0 or 1 (fptoui)
        return [compare(astype(a, np.dtype(np.int64)), ast.NotEq(), ast.Constant(0))]
    width = 8 * dst.dtype.itemsize
    e = astype(a, np.dtype(f"{'' if signed else 'u'}int{width}"))
    if dst.kind == "x":
        return [cx.index(e)]
    return [e if signed == (not dst.unsigned) else astype(e, dst.dtype)]


@NUMPY.register(arith.ExtFOp, arith.TruncFOp)
def _float_cast(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    (src,), (dst,) = operand_types(op)
    require(src.kind == "f" and dst.kind == "f")
    return [args[0] if src == dst else astype(args[0], dst.dtype)]


@NUMPY.register(arith.BitcastOp)
def _bitcast(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    (src,), (dst,) = operand_types(op)
    require(src.kind in "fibx" and dst.kind in "fibx" and src.width == dst.width)
    (a,) = args
    if src == dst:
        return [a]
    if dst.kind == "x":
        return [cx.index(a)]
    if src.kind == "x":
        a = npcall("int64", a)
    return [method(a, "view", dt(dst.dtype))]


# -- float arithmetic


NUMPY.add(float_binary(lambda a, b, cx: binop(a, ast.Add(), b)), arith.AddfOp)
NUMPY.add(float_binary(lambda a, b, cx: binop(a, ast.Sub(), b)), arith.SubfOp)
NUMPY.add(float_binary(lambda a, b, cx: binop(a, ast.Mult(), b)), arith.MulfOp)
NUMPY.add(float_binary(lambda a, b, cx: binop(a, ast.Div(), b)), arith.DivfOp)
NUMPY.add(float_binary(lambda a, b, cx: npcall("fmod", a, b)), RemFOp)


_FLOAT_MINMAX: dict[OpClass, tuple[str, str]] = {
    arith.MaximumfOp: ("_maximumf", "maximum"),
    arith.MinimumfOp: ("_minimumf", "minimum"),
    arith.MaxnumfOp: ("_maxnumf", "fmax"),
    arith.MinnumfOp: ("_minnumf", "fmin"),
}


def _constant_float(value: SSAValue) -> float | None:
    """The value of a float `arith.constant` (a scalar, or a vector of one value)."""
    op = value.owner
    if not isinstance(op, arith.ConstantOp):
        return None
    attr = op.properties.get("value")
    if isinstance(attr, FloatAttr):
        return float(cast(FloatAttr[Any], attr).value.data)
    if isinstance(attr, DenseIntOrFPElementsAttr) and isinstance(op.results[0].type, VectorType):
        _, (t,) = operand_types(op)
        if t.kind != "f":
            return None
        data = dense_array(attr, t.dtype, tuple(op.results[0].type.get_shape())).reshape(-1)
        first = data[:1].tobytes()
        if len(data) and all(data[i : i + 1].tobytes() == first for i in range(len(data))):
            return float(data[0])
    return None


def _min_max_float(name: str, ufunc: str) -> Emitter:
    """A float min/max: the prelude's helper, which orders signed zeros (a tie test over
    the whole array), or NumPy's ufunc alone where one operand is a constant that no
    other value ties with in a different zero (relu's `max(x, 0.0)` is then one `np.fmax`
    and one `+ 0.0`, which turns the -0.0 NumPy may pick into the +0.0 MLIR orders higher)."""

    def emitter(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
        same_kind(op, "f", 2)
        a, b = args
        c, x = _constant_float(op.operands[1]), a
        if c is None:
            c, x = _constant_float(op.operands[0]), b
        if c is None or math.isnan(c) or compiled_form():
            return [cx.helper(name, a, b)]
        literal = b if x is a else a
        if c != 0.0:
            return [npcall(ufunc, x, literal)]
        if math.copysign(1.0, c) > 0 and ufunc in ("maximum", "fmax"):
            return [cx.helper(f"{name}0", x)]
        return [cx.helper(name, a, b)]

    return emitter


for _cls, (_helper, _ufunc) in _FLOAT_MINMAX.items():
    NUMPY.add(_min_max_float(_helper, _ufunc), _cls)


@NUMPY.register(arith.NegfOp)
def _negf(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    same_kind(op, "f", 1)
    return [neg(args[0])]


def _min_max(op: Operation) -> str | None:
    """ "minimum" or "maximum" when `op` selects the smaller or the larger of the two
    values its condition compares (`select(a < b, a, b)`), with a signed predicate."""
    cond = op.operands[0].owner
    if not isinstance(cond, arith.CmpiOp | CmpiOp):
        return None
    pred = cast(IntegerAttr[Any], cond.properties["predicate"]).value.data
    if not 2 <= pred <= 5:  # slt sle sgt sge
        return None
    x, y = cond.operands
    smaller_first = pred <= 3  # x < y or x <= y: x is the smaller
    if (x, y) == (op.operands[1], op.operands[2]):
        return "minimum" if smaller_first else "maximum"
    if (y, x) == (op.operands[1], op.operands[2]):
        return "maximum" if smaller_first else "minimum"
    return None
