"""What the vector dialect's ops do in the reference interpreter.

A vector value is a NumPy array of the vector's shape and element dtype (never
shared: every op makes a new one). `vector.load`/`vector.store` move a run of
elements along the memref's last dimensions; a run that leaves the memref is a
located error (MLIR leaves it undefined). Reductions combine the elements in
order, first to last, each step rounded in the element type.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from xdsl.dialects import vector
from xdsl.dialects.builtin import DenseArrayBase, VectorType
from xdsl.ir import Attribute, Operation

from polykrnl.model.interpreter.core import INTERPRET, Frame, Interpreter
from polykrnl.model.interpreter.memory import array_of, writable
from polykrnl.model.interpreter.values import (
    Fail,
    as_unsigned,
    int_width,
    make_value,
    scalar_dtype,
)
from polykrnl.model.std_vector import FromElementsOp, ShapeCastOp, SplatOp, ToElementsOp

_DYNAMIC = -(2**63)


def _vtype(t: Attribute) -> VectorType:
    assert isinstance(t, VectorType)
    return t


def _window(
    fr: Frame,
    op: Operation,
    mem: np.ndarray[Any, Any],
    indices: Sequence[Any],
    shape: Sequence[int],
) -> tuple[slice | int, ...]:
    """The index of the run of `shape` elements of `mem` that starts at `indices`."""
    idx = [fr.index(v) for v in indices]
    lead = len(idx) - len(shape)
    if lead < 0 or len(idx) != mem.ndim:
        raise Fail(f"{op.name} of a {len(shape)}-d vector needs {mem.ndim} indices, got {len(idx)}")
    out: list[slice | int] = []
    for d, i in enumerate(idx):
        n = shape[d - lead] if d >= lead else 1
        if i < 0 or i + n > mem.shape[d]:
            raise Fail(
                f"{op.name} out of bounds: elements {i}..{i + n - 1} of dimension {d} "
                f"(size {mem.shape[d]})",
                "keep the vector inside the memref (a remainder loop handles the tail)",
            )
        out.append(slice(i, i + n) if d >= lead else i)
    return tuple(out)


@INTERPRET.register(vector.LoadOp)
def _load(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    mem = array_of(fr, op.operands[0])
    t = _vtype(op.results[0].type)
    window = _window(fr, op, mem, op.operands[1:], t.get_shape())
    return [np.array(mem[window], dtype=scalar_dtype(t)).reshape(t.get_shape())]


@INTERPRET.register(vector.StoreOp)
def _store(it: Interpreter, op: Operation, fr: Frame) -> None:
    value, memv, *indices = op.operands
    mem = writable(fr, memv, "vector.store")
    t = _vtype(value.type)
    window = _window(fr, op, mem, indices, t.get_shape())
    mem[window] = np.asarray(fr.get(value)).reshape(mem[window].shape)


@INTERPRET.register(vector.BroadcastOp)
def _broadcast(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    t = _vtype(op.results[0].type)
    src = np.asarray(fr.get(op.operands[0]), dtype=scalar_dtype(t))
    return [np.array(np.broadcast_to(src, tuple(t.get_shape())))]


@INTERPRET.register(SplatOp)
def _splat(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    t = _vtype(op.results[0].type)
    return [np.full(tuple(t.get_shape()), fr.get(op.operands[0]), dtype=scalar_dtype(t))]


@INTERPRET.register(vector.FMAOp)
def _fma(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    # Fused: one rounding, as math.fma (computed in long double, then rounded).
    a, b, c = (np.asarray(fr.get(v), dtype=np.longdouble) for v in op.operands)
    return [make_value(a * b + c, op.results[0].type)]


def _positions(fr: Frame, op: Operation) -> tuple[int, ...]:
    static = cast(DenseArrayBase[Any], op.properties["static_position"]).get_values()
    dyn = iter(op.operands[2:] if isinstance(op, vector.InsertOp) else op.operands[1:])
    return tuple(fr.index(next(dyn)) if x == _DYNAMIC else int(x) for x in static)


@INTERPRET.register(vector.ExtractOp)
def _extract(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    v = np.asarray(fr.get(op.operands[0]))
    pos = _positions(fr, op)
    if any(not 0 <= p < n for p, n in zip(pos, v.shape, strict=False)):
        raise Fail(f"vector.extract at {list(pos)} of a vector of shape {list(v.shape)}")
    got = v[pos]
    return [np.array(got) if isinstance(got, np.ndarray) else make_value(got, op.results[0].type)]


@INTERPRET.register(vector.InsertOp)
def _insert(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    value = fr.get(op.operands[0])
    v = np.array(fr.get(op.operands[1]))
    pos = _positions(fr, op)
    if any(not 0 <= p < n for p, n in zip(pos, v.shape, strict=False)):
        raise Fail(f"vector.insert at {list(pos)} of a vector of shape {list(v.shape)}")
    v[pos] = value
    return [v]


@INTERPRET.register(vector.ShuffleOp)
def _shuffle(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    a, b = (np.asarray(fr.get(v)) for v in op.operands)
    mask = [int(x) for x in cast(DenseArrayBase[Any], op.properties["mask"]).get_values()]
    both = np.concatenate([a.reshape(-1, *a.shape[1:]), b.reshape(-1, *b.shape[1:])])
    if any(not 0 <= m < len(both) for m in mask):
        raise Fail(f"vector.shuffle mask {mask} picks beyond {len(both)} elements")
    return [np.array(both[mask])]


@INTERPRET.register(ShapeCastOp)
def _shape_cast(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    t = _vtype(op.results[0].type)
    return [np.array(fr.get(op.operands[0])).reshape(tuple(t.get_shape()))]


@INTERPRET.register(ToElementsOp)
def _to_elements(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    t = _vtype(op.operands[0].type)
    flat = np.asarray(fr.get(op.operands[0])).reshape(-1)
    return [make_value(x, t.element_type) for x in flat]


@INTERPRET.register(FromElementsOp)
def _from_elements(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    t = _vtype(op.results[0].type)
    values = [fr.get(v) for v in op.operands]
    return [np.array(values, dtype=scalar_dtype(t)).reshape(tuple(t.get_shape()))]


def _fmax(a: Any, b: Any) -> Any:
    return np.fmax(a, b)


def _fmin(a: Any, b: Any) -> Any:
    return np.fmin(a, b)


_COMBINE: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "maxnumf": _fmax,
    "minnumf": _fmin,
    "maximumf": np.maximum,
    "minimumf": np.minimum,
    "maxsi": max,
    "minsi": min,
    "maxui": max,  # on the unsigned readings (see _reduction)
    "minui": min,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
}


@INTERPRET.register(vector.ReductionOp)
def _reduction(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    kind_attr = op.properties["kind"]
    assert isinstance(kind_attr, vector.CombiningKindAttr)
    kind = kind_attr.data.value
    combine = _COMBINE.get(kind)
    if combine is None:
        raise Fail(f"vector.reduction <{kind}> is not known to the interpreter")
    t = op.results[0].type
    elems = [make_value(x, t) for x in np.asarray(fr.get(op.operands[0])).reshape(-1)]
    if len(op.operands) > 1:
        elems.insert(0, fr.get(op.operands[1]))
    if not elems:
        raise Fail("vector.reduction of an empty vector")
    if kind in ("maxui", "minui"):
        # Canonical integers are signed: compare the unsigned readings, and no step
        # wraps back to signed.
        w = int_width(t)
        return [make_value(functools.reduce(combine, [as_unsigned(x, w) for x in elems]), t)]
    return [make_value(functools.reduce(lambda a, b: make_value(combine(a, b), t), elems), t)]
