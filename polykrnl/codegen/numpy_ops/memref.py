"""NumPy emitters of memref views and sizes: a view is a NumPy view of the same buffer.

Views must alias what they view (writes through them reach the buffer), so each
is a NumPy view, never a copy: ``reshape`` of a contiguous array, ``view`` of
a byte slice, ``as_strided``. Like the other memory helpers, bounds are the
interpreter's to check: a kernel run with a view beyond its buffer is undefined.
"""

from __future__ import annotations

import ast
from typing import Any, cast

from xdsl.dialects import builtin, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseArrayBase, MemRefType, TensorType
from xdsl.ir import Operation

from polykrnl.codegen.numpy_ops.core import (
    NUMPY,
    Ctx,
    Expr,
    astype,
    dt,
    int_const,
    int_value,
    method,
    npcall,
    operand_types,
    require,
)
from polykrnl.dialect import krnl as k
from polykrnl.dialect.std_ext import CastOp, ReshapeOp
from polykrnl.interpreter import memref_dtype
from polykrnl.interpreter.builtin import reinterprets_integers


def _result_type(op: Operation) -> MemRefType:
    t = op.results[0].type
    assert isinstance(t, MemRefType)
    return t


def _tuple(xs: list[Expr]) -> Expr:
    return ast.Tuple(xs, ast.Load())


def _product(xs: list[Expr]) -> Expr:
    out: Expr = int_const(1)
    for x in xs:
        out = ast.BinOp(out, ast.Mult(), x)
    return out


@NUMPY.register(memref.CastOp, CastOp)
def _cast(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    return [args[0]]  # the same array: casts only change what the type says of it


@NUMPY.register(builtin.UnrealizedConversionCastOp)
def _unrealized_cast(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    require(len(args) == 1 == len(op.results))
    src, dst = op.operands[0].type, op.results[0].type
    if src == dst or all(isinstance(t, MemRefType | TensorType) for t in (src, dst)):
        return [args[0]]  # a memref seen as the tensor it stands for: the same array
    require(reinterprets_integers(src, dst))
    (a,), (b,) = operand_types(op)
    # One width, another signedness: NumPy's astype between such dtypes keeps the bits.
    return [args[0] if a.dtype == b.dtype else astype(args[0], b.dtype)]


@NUMPY.register(memref.DimOp, k.DimOp)
def _dim(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    src, d = args
    shape: Expr = ast.Attribute(src, "shape", ast.Load())
    if int_value(d) is None:
        shape = npcall("asarray", shape)  # an index array in vectorized loops
    return [ast.Subscript(shape, d, ast.Load())]


@NUMPY.register(ReshapeOp)
def _reshape(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    src, shape = args
    static = _result_type(op).get_shape()
    if all(d >= 0 for d in static):
        dims: Expr = _tuple([int_const(d) for d in static])
    else:
        dims = npcall("ravel", shape)
    return [method(src, "reshape", dims)]


@NUMPY.register(memref.ViewOp)
def _view(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    pool, shift, *sizes = args
    t = _result_type(op)
    dyn = iter(sizes)
    shape = [int_const(d) if d >= 0 else next(dyn) for d in t.get_shape()]
    dtype = memref_dtype(t)
    nbytes = ast.BinOp(_product(shape), ast.Mult(), int_const(dtype.itemsize))
    end = ast.BinOp(shift, ast.Add(), nbytes)
    raw = ast.Subscript(pool, ast.Slice(shift, end), ast.Load())
    return [method(method(raw, "view", dt(dtype)), "reshape", _tuple(shape))]


@NUMPY.register(memref.ReinterpretCastOp)
def _reinterpret_cast(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
    src, *dynamic = args
    dyn = iter(dynamic)

    def values(prop: str) -> list[Expr]:
        static = cast(DenseArrayBase[Any], op.properties[prop]).get_values()
        return [next(dyn) if x == DYNAMIC_INDEX else int_const(int(x)) for x in static]

    (offset,), sizes, strides = (
        values("static_offsets"),
        values("static_sizes"),
        values("static_strides"),
    )
    flat = method(src, "reshape", int_const(-1))
    itemsize = ast.Attribute(src, "itemsize", ast.Load())
    byte_strides: list[Expr] = [ast.BinOp(s, ast.Mult(), itemsize) for s in strides]
    strided = ast.Attribute(
        ast.Attribute(
            ast.Attribute(ast.Name("np", ast.Load()), "lib", ast.Load()),
            "stride_tricks",
            ast.Load(),
        ),
        "as_strided",
        ast.Load(),
    )
    start = ast.Subscript(flat, ast.Slice(offset, None), ast.Load())
    return [
        ast.Call(
            strided,
            [start],
            [
                ast.keyword("shape", _tuple(sizes)),
                ast.keyword("strides", _tuple(byte_strides)),
            ],
        )
    ]
