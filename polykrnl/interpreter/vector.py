"""What the vector dialect's ops do in the reference interpreter.

A vector value is a NumPy array of the vector's shape and element dtype (never
shared: every op makes a new one). `vector.load`/`vector.store` move a run of
elements along the memref's last dimensions; a run that leaves the memref is a
located error (MLIR leaves it undefined). Reductions combine the elements in
order, first to last, each step rounded in the element type.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, cast

import numpy as np
from xdsl.dialects import vector
from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseArrayBase, MemRefType, VectorType
from xdsl.ir import Attribute, Operation, SSAValue

from polykrnl.dialect.std_vector import (
    FromElementsOp,
    ShapeCastOp,
    SplatOp,
    ToElementsOp,
    transfer_dims,
    transfer_in_bounds,
)
from polykrnl.errors import UnsupportedError
from polykrnl.interpreter.core import INTERPRET, Frame, Interpreter
from polykrnl.interpreter.memory import array_of, writable
from polykrnl.interpreter.values import (
    Fail,
    as_unsigned,
    int_width,
    make_value,
    scalar_dtype,
)


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


def _transfer(
    it: Interpreter,
    fr: Frame,
    op: vector.TransferReadOp | vector.TransferWriteOp,
    mem: np.ndarray[Any, Any],
    shape: Sequence[int],
) -> Iterator[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Each lane a transfer moves (mask on, inside the memref), with its element of `mem`.

    A lane outside the memref along a dimension the op does not promise in bounds is
    skipped (padding when reading, nothing written); anything else outside the memref
    is a located error (MLIR leaves it undefined)."""
    dims = transfer_dims(op)
    if dims is None:
        raise Fail(f"{op.name} with the permutation map {op.permutation_map.data}")
    if isinstance(op, vector.TransferWriteOp) and None in dims:
        raise Fail(f"{op.name} cannot broadcast (constant 0 in its permutation map)")
    if op.mask is not None and dims != list(range(mem.ndim - len(dims), mem.ndim)):
        raise UnsupportedError(
            f"{op.name} with a mask and a permutation map other than the minor identity is not "
            "supported by the reference interpreter yet",
            location=it.location(op),
        )
    mask = None if op.mask is None else np.asarray(fr.get(op.mask))
    in_bounds = transfer_in_bounds(op)
    start = [fr.index(v) for v in op.indices]
    if len(start) != mem.ndim:
        raise Fail(f"{op.name} of a rank-{mem.ndim} memref takes {mem.ndim} indices")
    for fixed, i in enumerate(start):
        if fixed not in dims and not 0 <= i < mem.shape[fixed]:
            raise Fail(
                f"{op.name} out of bounds: index {i} of dimension {fixed} (size {mem.shape[fixed]})"
            )
    for lane in np.ndindex(*shape):
        if mask is not None and not mask[lane]:
            continue
        at = list(start)
        outside = False
        for k, d in enumerate(dims):
            if d is None:
                continue
            at[d] += lane[k]
            if not 0 <= at[d] < mem.shape[d]:
                if in_bounds[k]:
                    raise Fail(
                        f"{op.name} out of bounds: element {at[d]} of dimension {d} (size "
                        f"{mem.shape[d]}), in a dimension declared in_bounds",
                        "declare it out of bounds (in_bounds = [false]) to pad or mask it",
                    )
                outside = True
        if not outside:
            yield lane, tuple(at)


@INTERPRET.register(vector.TransferReadOp)
def _transfer_read(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    assert isinstance(op, vector.TransferReadOp)
    mem = array_of(fr, op.source)
    _scalar_memref(it, op, op.source)
    t = _vtype(op.result.type)
    out = np.full(tuple(t.get_shape()), fr.get(op.padding), dtype=scalar_dtype(t))
    for lane, at in _transfer(it, fr, op, mem, t.get_shape()):
        out[lane] = mem[at]
    return [out]


@INTERPRET.register(vector.TransferWriteOp)
def _transfer_write(it: Interpreter, op: Operation, fr: Frame) -> None:
    assert isinstance(op, vector.TransferWriteOp)
    if op.result is not None:
        raise UnsupportedError(
            "vector.transfer_write into a tensor is not Krnl", location=it.location(op)
        )
    mem = writable(fr, op.source, "vector.transfer_write")
    _scalar_memref(it, op, op.source)
    value = np.asarray(fr.get(op.vector))
    for lane, at in _transfer(it, fr, op, mem, value.shape):
        mem[at] = value[lane]


@INTERPRET.register(vector.CreateMaskOp)
def _create_mask(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    # Lane (i, j, ...) is on when i < a, j < b, ... (sizes below 0 count as 0).
    t = _vtype(op.results[0].type)
    mask = np.ones(tuple(t.get_shape()), dtype=np.bool_)
    for d, v in enumerate(op.operands):
        cut = [slice(None)] * mask.ndim
        cut[d] = slice(max(0, fr.index(v)), None)
        mask[tuple(cut)] = False
    return [mask]


def _masked_lanes(
    fr: Frame,
    op: vector.MaskedLoadOp | vector.MaskedStoreOp,
    mem: np.ndarray[Any, Any],
    mask: np.ndarray[Any, Any],
) -> Iterator[tuple[int, tuple[int, ...]]]:
    """Each lane the mask turns on, with its element of `mem` (a run along the last
    dimension); a lane on outside the memref is a located error, one off is never read."""
    start = [fr.index(v) for v in op.indices]
    if len(start) != mem.ndim:
        raise Fail(f"{op.name} of a rank-{mem.ndim} memref takes {mem.ndim} indices")
    for lane in np.flatnonzero(mask):
        at = (*start[:-1], start[-1] + int(lane))
        if any(not 0 <= i < n for i, n in zip(at, mem.shape, strict=True)):
            raise Fail(
                f"{op.name} out of bounds: lane {lane} is on and reaches element {list(at)} "
                f"of a memref of shape {list(mem.shape)}",
                "turn the mask off for lanes past the end",
            )
        yield int(lane), at


@INTERPRET.register(vector.MaskedLoadOp)
def _masked_load(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    assert isinstance(op, vector.MaskedLoadOp)
    mem = array_of(fr, op.base)
    _scalar_memref(it, op, op.base)
    out = np.array(fr.get(op.pass_thru), dtype=scalar_dtype(op.result.type))
    for lane, at in _masked_lanes(fr, op, mem, np.asarray(fr.get(op.mask))):
        out[lane] = mem[at]
    return [out]


@INTERPRET.register(vector.MaskedStoreOp)
def _masked_store(it: Interpreter, op: Operation, fr: Frame) -> None:
    assert isinstance(op, vector.MaskedStoreOp)
    mem = writable(fr, op.base, "vector.maskedstore")
    _scalar_memref(it, op, op.base)
    value = np.asarray(fr.get(op.value_to_store))
    for lane, at in _masked_lanes(fr, op, mem, np.asarray(fr.get(op.mask))):
        mem[at] = value[lane]


@INTERPRET.register(vector.BitcastOp)
def _vector_bitcast(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    # The same bytes; the last dimension's length changes with the lane width.
    src, t = _vtype(op.operands[0].type), _vtype(op.results[0].type)
    lanes = np.array(fr.get(op.operands[0]), dtype=scalar_dtype(src))
    return [lanes.view(scalar_dtype(t)).reshape(tuple(t.get_shape()))]


def _scalar_memref(it: Interpreter, op: Operation, v: SSAValue) -> None:
    t = v.type
    if not isinstance(t, MemRefType) or isinstance(t.element_type, VectorType):
        raise UnsupportedError(
            f"{op.name} of {t}: the reference interpreter transfers between vectors and "
            "memrefs of scalars only",
            location=it.location(op),
        )


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
    return tuple(fr.index(next(dyn)) if x == DYNAMIC_INDEX else int(x) for x in static)


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
