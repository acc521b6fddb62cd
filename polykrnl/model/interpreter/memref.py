"""What the memref dialect's ops do in the reference interpreter."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    DenseArrayBase,
    MemRefType,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Operation

from polykrnl.errors import UnsupportedError
from polykrnl.model import dialect as k
from polykrnl.model.interpreter.core import (
    INTERPRET,
    Frame,
    Interpreter,
    no_effect,
)
from polykrnl.model.interpreter.memory import (
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
from polykrnl.model.interpreter.values import (
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


@INTERPRET.register(memref.CastOp)
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


@INTERPRET.register(memref.SubviewOp)
def _subview(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    a = array_of(fr, op.operands[0])
    dyn = iter(fr.index(v) for v in op.operands[1:])

    def values(prop: str) -> list[int]:
        static = cast(DenseArrayBase[Any], op.properties[prop]).get_values()
        return [next(dyn) if x == -(2**63) else int(x) for x in static]

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


INTERPRET.add(no_effect, memref.DeallocOp)
INTERPRET.add(indexed_load, memref.LoadOp)
INTERPRET.add(indexed_store, memref.StoreOp)


@INTERPRET.register(memref.AssumeAlignmentOp)
def _assume_alignment(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    return [fr.get(op.operands[0])] if op.results else []
