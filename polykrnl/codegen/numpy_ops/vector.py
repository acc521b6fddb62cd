"""NumPy emitters of the vector dialect's value ops: a vector is a NumPy array of its lanes.

Only in scalar loop bodies (:func:`polykrnl.codegen.numpy_ops.core.emit_lanes`);
results are bit for bit the interpreter's (:mod:`polykrnl.interpreter.vector`):
vector.fma rounds once from long double, vector.reduction combines the lanes first
to last in the lanes' type (the `_vreduce` helper), never NumPy's pairwise sums.
"""

from __future__ import annotations

import ast
from typing import Any, cast

import numpy as np
from xdsl.dialects import vector
from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseArrayBase, VectorType
from xdsl.ir import Operation

from polykrnl.codegen.numpy_ops.core import (
    NUMPY,
    Ctx,
    Expr,
    astype,
    binop,
    dt,
    int_const,
    method,
    np_attr,
    npcall,
    operand_types,
    require,
)
from polykrnl.dialect.std_vector import FromElementsOp, ShapeCastOp, SplatOp, ToElementsOp


def _shape(op: Operation) -> Expr:
    t = op.results[0].type
    assert isinstance(t, VectorType)
    return ast.Tuple([int_const(d) for d in t.get_shape()], ast.Load())


@NUMPY.register(vector.BroadcastOp, SplatOp)
def _broadcast(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    _, (t,) = operand_types(op)
    lanes = npcall("broadcast_to", npcall("asarray", args[0], dtype=dt(t.dtype)), _shape(op))
    return [npcall("array", lanes)]


@NUMPY.register(vector.CreateMaskOp)
def _create_mask(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    ins, (t,) = operand_types(op)
    require(t.kind == "b" and all(x.kind == "x" for x in ins))
    return [cx.helper("_vmask", _shape(op), ast.Tuple(list(args), ast.Load()))]


@NUMPY.register(vector.BitcastOp)
def _bitcast(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    # The same bytes; the last dimension's length changes with the lane width.
    (src,), (t,) = operand_types(op)
    require(src.kind in "fib" and t.kind in "fib")
    lanes = method(npcall("array", args[0], dtype=dt(src.dtype)), "view", dt(t.dtype))
    return [method(lanes, "reshape", _shape(op))]


@NUMPY.register(vector.FMAOp)
def _fma(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    _, (t,) = operand_types(op)
    require(t.kind == "f")
    a, b, c = (astype(x, np.dtype(np.longdouble)) for x in args)
    return [astype(binop(binop(a, ast.Mult(), b), ast.Add(), c), t.dtype)]


def _static_position(op: Operation) -> list[int]:
    static = cast(DenseArrayBase[Any], op.properties["static_position"]).get_values()
    require(all(x != DYNAMIC_INDEX for x in static))
    return [int(x) for x in static]


def _at(position: list[int]) -> Expr:
    return ast.Tuple([int_const(p) for p in position], ast.Load())


@NUMPY.register(vector.ExtractOp)
def _extract(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    _, (t,) = operand_types(op)
    element = ast.Subscript(args[0], _at(_static_position(op)), ast.Load())
    if isinstance(op.results[0].type, VectorType):
        return [npcall("array", element)]
    return [cx.index(element) if t.kind == "x" else element]


@NUMPY.register(vector.InsertOp)
def _insert(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    operand_types(op)
    return [cx.helper("_vinsert", args[1], _at(_static_position(op)), args[0])]


@NUMPY.register(vector.ShuffleOp)
def _shuffle(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    operand_types(op)
    mask = [int(x) for x in cast(DenseArrayBase[Any], op.properties["mask"]).get_values()]
    both = npcall("concatenate", ast.Tuple(list(args), ast.Load()))
    return [ast.Subscript(both, ast.List([int_const(m) for m in mask], ast.Load()), ast.Load())]


@NUMPY.register(ShapeCastOp)
def _shape_cast(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    operand_types(op)
    return [method(args[0], "reshape", _shape(op))]


@NUMPY.register(ToElementsOp)
def _to_elements(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    _, outs = operand_types(op)
    flat = method(args[0], "reshape", int_const(-1))
    out: list[Expr] = []
    for i, t in enumerate(outs):
        e: Expr = ast.Subscript(flat, int_const(i), ast.Load())
        out.append(cx.index(e) if t.kind == "x" else e)
    return out


@NUMPY.register(FromElementsOp)
def _from_elements(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    _, (t,) = operand_types(op)
    lanes = npcall("array", ast.List(list(args), ast.Load()), dtype=dt(t.dtype))
    return [method(lanes, "reshape", _shape(op))]


_UFUNC = {
    "add": "add",
    "mul": "multiply",
    "maxnumf": "fmax",
    "minnumf": "fmin",
    "maximumf": "maximum",
    "minimumf": "minimum",
    "maxsi": "maximum",
    "minsi": "minimum",
    "maxui": "maximum",
    "minui": "minimum",
    "and": "bitwise_and",
    "or": "bitwise_or",
    "xor": "bitwise_xor",
}


@NUMPY.register(vector.ReductionOp)
def _reduction(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    operand_types(op)
    kind_attr = op.properties["kind"]
    assert isinstance(kind_attr, vector.CombiningKindAttr)
    kind = kind_attr.data.value
    require(kind in _UFUNC)
    extra: list[Expr] = [args[1]] if len(args) > 1 else [ast.Constant(None)]
    if kind in ("maxui", "minui"):
        extra.append(ast.Constant(True))
    return [cx.helper("_vreduce", np_attr(_UFUNC[kind]), args[0], *extra)]
