"""What the memref dialect's ops do in the reference interpreter."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    MemRefType,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Operation

from polykrnl.dialect import krnl as k
from polykrnl.dialect.std_ext import CastOp, ReshapeOp
from polykrnl.errors import UnsupportedError
from polykrnl.interpreter.core import (
    INTERPRET,
    Frame,
    Interpreter,
    no_effect,
)
from polykrnl.interpreter.memory import (
    array_of,
    dense_array,
    dim_of,
    indexed_load,
    indexed_store,
    logical_shape,
    new_array,
    new_shape,
    writable,
)
from polykrnl.interpreter.values import (
    Fail,
    memref_dtype,
    memref_shape,
)


@INTERPRET.register(k.GlobalOp)
def _krnl_global(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    assert isinstance(op, k.GlobalOp)
    arr = it.globals.get(op)
    if arr is None:
        t = op.output.type
        assert isinstance(t, MemRefType)
        if op.value is None:
            raise UnsupportedError(
                "krnl.global without a value attribute (data in an external file)",
                location=it.location(op),
                hint="give the data as value = dense<...> : tensor<...>",
            )
        arr = dense_array(op.value, memref_dtype(t), new_shape(t, []))
        arr.flags.writeable = False  # a global is constant data
        it.globals[op] = arr
    return [arr]


@INTERPRET.register(memref.GetGlobalOp)
def _get_global(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    sym = cast(SymbolRefAttr, op.properties["name"]).root_reference.data
    glob = next(
        (
            g
            for g in it.module.op.walk()
            if isinstance(g, memref.GlobalOp) and g.sym_name.data == sym
        ),
        None,
    )
    if glob is None:
        raise Fail(f"no memref.global named @{sym} in the module")
    arr = it.globals.get(glob)
    if arr is None:
        t = cast(MemRefType, glob.properties["type"])
        init = glob.properties["initial_value"]
        if isinstance(init, UnitAttr):
            arr = new_array(t, [])
        else:
            arr = dense_array(init, memref_dtype(t), new_shape(t, []))
        if "constant" in glob.properties:
            arr.flags.writeable = False
        it.globals[glob] = arr
    return [arr]


# ------------------------------------------------------------------ memref


@INTERPRET.register(memref.AllocOp, memref.AllocaOp)
def _alloc(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    t = op.results[0].type
    assert isinstance(t, MemRefType)
    n_dyn = sum(1 for d in t.get_shape() if d < 0)
    return [new_array(t, [fr.index(v) for v in op.operands[:n_dyn]])]


@INTERPRET.register(memref.DimOp)
def _memref_dim(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    src, index = op.operands
    return [dim_of(fr, src, fr.index(index), "memref.dim")]


@INTERPRET.register(memref.RankOp)
def _memref_rank(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    src = op.operands[0]
    return [len(logical_shape(src, array_of(fr, src)))]


@INTERPRET.register(memref.CopyOp)
def _memref_copy(it: Interpreter, op: Operation, fr: Frame) -> None:
    src, dst = op.operands
    a, b = array_of(fr, src), writable(fr, dst, "memref.copy")
    if a.shape != b.shape:
        raise Fail(f"memref.copy from shape {a.shape} into shape {b.shape}")
    b[...] = a


@INTERPRET.register(memref.CastOp, CastOp)
def _memref_cast(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    a = array_of(fr, op.operands[0])
    t = op.results[0].type
    assert isinstance(t, MemRefType)
    want = memref_shape(t)
    if len(want) != a.ndim or any(
        w is not None and w != g for w, g in zip(want, a.shape, strict=True)
    ):
        raise Fail(f"memref.cast of an array of shape {a.shape} to {t}")
    return [a]


def _mixed_values(op: Operation, fr: Frame) -> Callable[[str], list[int]]:
    """Reads the offsets / sizes / strides of a subview or reinterpret_cast: each static
    value, or (where it says dynamic) the next dynamic operand, in order."""
    dyn = iter(fr.index(v) for v in op.operands[1:])

    def values(prop: str) -> list[int]:
        static = cast(DenseArrayBase[Any], op.properties[prop]).get_values()
        return [next(dyn) if x == DYNAMIC_INDEX else int(x) for x in static]

    return values


@INTERPRET.register(memref.SubviewOp)
def _subview(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    a = array_of(fr, op.operands[0])
    values = _mixed_values(op, fr)

    offsets, sizes, strides = (
        values("static_offsets"),
        values("static_sizes"),
        values("static_strides"),
    )
    t = op.results[0].type
    assert isinstance(t, MemRefType)
    if len(t.get_shape()) != a.ndim:
        raise UnsupportedError("rank-reducing memref.subview is not supported by the interpreter")
    idx: list[slice] = []
    for d, (o, n, s) in enumerate(zip(offsets, sizes, strides, strict=True)):
        if n and not (o >= 0 and o + (n - 1) * s < a.shape[d] and s > 0):
            raise Fail(f"memref.subview out of bounds in dimension {d} (size {a.shape[d]})")
        idx.append(slice(o, o + n * s, s))
    return [a[tuple(idx)]]


def _contiguous(a: np.ndarray[Any, Any], what: str) -> np.ndarray[Any, Any]:
    """The flat elements of `a`, as a view (a copy would not alias)."""
    if not a.flags.c_contiguous:
        raise Fail(f"{what} of a strided view: its elements are not contiguous")
    return a.reshape(-1)


@INTERPRET.register(ReshapeOp)
def _reshape(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    a = array_of(fr, op.operands[0])
    t = op.results[0].type
    assert isinstance(t, MemRefType)
    shape = [int(x) for x in array_of(fr, op.operands[1]).reshape(-1)]
    static = t.get_shape()
    if len(shape) != len(static) or any(
        s >= 0 and s != n for s, n in zip(static, shape, strict=True)
    ):
        raise Fail(f"memref.reshape to {t} with the shape values {shape}")
    if any(n < 0 for n in shape) or math.prod(shape) != a.size:
        raise Fail(f"memref.reshape of {a.size} elements into the shape {shape}")
    return [_contiguous(a, "memref.reshape").reshape(shape)]


@INTERPRET.register(memref.ViewOp)
def _view(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    pool = array_of(fr, op.operands[0])
    shift = fr.index(op.operands[1])
    t = op.results[0].type
    assert isinstance(t, MemRefType)
    sizes = iter(fr.index(v) for v in op.operands[2:])
    shape = [d if d >= 0 else next(sizes) for d in t.get_shape()]
    dtype = memref_dtype(t)
    nbytes = math.prod(shape) * dtype.itemsize
    raw = _contiguous(pool, "memref.view")
    if pool.dtype.itemsize != 1:
        raise Fail(f"memref.view of a memref of {pool.dtype} (it takes a buffer of i8)")
    if shift < 0 or any(n < 0 for n in shape) or shift + nbytes > raw.size:
        raise Fail(f"memref.view of {nbytes} bytes at byte {shift} of a buffer of {raw.size} bytes")
    return [raw[shift : shift + nbytes].view(dtype).reshape(shape)]


@INTERPRET.register(memref.ReinterpretCastOp)
def _reinterpret_cast(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    a = array_of(fr, op.operands[0])
    values = _mixed_values(op, fr)

    (offset,), sizes, strides = (
        values("static_offsets"),
        values("static_sizes"),
        values("static_strides"),
    )
    flat = _contiguous(a, "memref.reinterpret_cast")
    last = offset + sum((n - 1) * s for n, s in zip(sizes, strides, strict=True) if n > 0)
    if offset < 0 or min(strides, default=0) < 0 or (all(sizes) and last >= flat.size):
        raise Fail(f"memref.reinterpret_cast reaches element {last} of a buffer of {flat.size}")
    return [
        np.lib.stride_tricks.as_strided(
            flat[offset:], shape=sizes, strides=[s * flat.itemsize for s in strides]
        )
    ]


INTERPRET.add(no_effect, memref.DeallocOp)
INTERPRET.add(indexed_load, memref.LoadOp)
INTERPRET.add(indexed_store, memref.StoreOp)


@INTERPRET.register(memref.AssumeAlignmentOp)
def _assume_alignment(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    return [fr.get(op.operands[0])] if op.results else []
