"""Arrays of the reference interpreter: checked element access, new arrays, constant data."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    MemRefType,
    VectorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from polykrnl.errors import UnsupportedError
from polykrnl.interpreter.core import (
    Frame,
    Interpreter,
)
from polykrnl.interpreter.values import (
    Fail,
    from_memory,
    memref_dtype,
    show_value,
    vector_shape,
)

# ------------------------------------------------------------------ memory helpers


def array_of(fr: Frame, v: SSAValue) -> np.ndarray[Any, Any]:
    a = fr.get(v)
    if not isinstance(a, np.ndarray):
        raise Fail(f"{show_value(v)} is not a memref value here (got {type(a).__name__})")
    return a


def logical_shape(v: SSAValue, a: np.ndarray[Any, Any]) -> tuple[int, ...]:
    """The memref shape of `a` (without the trailing vector dimensions)."""
    t = v.type
    nvec = len(vector_shape(t.element_type)) if isinstance(t, MemRefType) else 0
    return tuple(a.shape[: a.ndim - nvec])


def checked_index(
    v: SSAValue, a: np.ndarray[Any, Any], idx: Sequence[int], what: str
) -> tuple[int, ...]:
    shape = a.shape
    if a.ndim != len(idx) or isinstance(_elem_type(v), VectorType):
        shape = logical_shape(v, a)
    if len(idx) != len(shape):
        raise Fail(
            f"{what} uses {len(idx)} indices for the rank-{len(shape)} memref {show_value(v)}",
            "give one index per dimension",
        )
    for d, (i, n) in enumerate(zip(idx, shape, strict=True)):
        if not 0 <= i < n:
            raise Fail(
                f"{what} out of bounds: index {i} in dimension {d} of {show_value(v)} "
                f"(size {n}); indices [{', '.join(map(str, idx))}] on shape "
                f"{'x'.join(map(str, shape))}",
                "check the loop bounds and index expressions against the memref's shape",
            )
    return tuple(idx)


def _elem_type(v: SSAValue) -> Attribute:
    t = v.type
    assert isinstance(t, MemRefType)
    return t.element_type


def load_element(fr: Frame, mem: SSAValue, idx: Sequence[int], what: str) -> Any:
    a = array_of(fr, mem)
    i = checked_index(mem, a, idx, what)
    return from_memory(a[i], _elem_type(mem))


def store_element(fr: Frame, value: Any, mem: SSAValue, idx: Sequence[int], what: str) -> None:
    a = array_of(fr, mem)
    i = checked_index(mem, a, idx, what)
    if not a.flags.writeable:
        raise Fail(
            f"{what} writes into {show_value(mem)}, which is read-only (a constant global "
            "or a read-only argument array)",
            "copy the data into a buffer before changing it",
        )
    a[i] = value


def memory_limit() -> int:
    """The bytes of arrays a run may allocate: half the machine's memory (at most
    4 GiB), so that a huge shape is a located error, not an out-of-memory kill."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        physical = 8 << 30
    return min(4 << 30, physical // 2)


def check_size(shape: Sequence[int], dtype: np.dtype[Any], what: str) -> None:
    """Fail before allocating an array beyond `memory_limit()`."""
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > memory_limit():
        raise Fail(
            f"{what} of shape {list(shape)} ({dtype}) needs {nbytes / 2**30:.3g} GiB, beyond "
            f"the {memory_limit() / 2**30:.3g} GiB a run may allocate",
            "give smaller sizes (--size, --param NAME=VALUE)",
        )


def new_array(t: MemRefType, dyn: Sequence[int]) -> np.ndarray[Any, Any]:
    dims = list(dyn)
    shape: list[int] = []
    for d in t.get_shape():
        if d < 0:
            if not dims:
                raise Fail(f"no size given for a dynamic dimension of {t}")
            shape.append(dims.pop(0))
        else:
            shape.append(d)
    if any(s < 0 for s in shape):
        raise Fail(f"negative size in {shape} for {t}", "sizes must be >= 0")
    shape += vector_shape(t.element_type)
    dt = memref_dtype(t)
    check_size(shape, dt, "an allocation")
    a = np.empty(shape, dtype=dt)
    if dt.kind == "f":
        a.fill(np.nan)
    elif dt.kind == "O":
        a.fill(None)
    else:
        a.fill(0)
    return a


def dense_array(attr: Attribute, dtype: np.dtype[Any], shape: Sequence[int]) -> Any:
    if not isinstance(attr, DenseIntOrFPElementsAttr):
        raise UnsupportedError(
            f"the interpreter reads constant data only from dense<...> attributes, got "
            f"{type(attr).__name__}",
            hint="write the value as dense<[...]> : tensor<...>",
        )
    vals = list(attr.get_values())
    if dtype.kind == "b":
        vals = [v != 0 for v in vals]
    arr = np.array(vals, dtype=dtype)
    n = math.prod(shape)
    if arr.size == 1 and n != 1:
        arr = np.full(n, arr[0], dtype=dtype)
    if arr.size != n:
        raise Fail(f"constant data has {arr.size} elements, its type needs {n}")
    return arr.reshape(tuple(shape))


# ------------------------------------------------------------------ krnl ops


def writable(fr: Frame, v: SSAValue, what: str) -> np.ndarray[Any, Any]:
    a = array_of(fr, v)
    if not a.flags.writeable:
        raise Fail(f"{what} writes into {show_value(v)}, which is read-only")
    return a


def dim_of(fr: Frame, v: SSAValue, d: int, what: str) -> int:
    shape = logical_shape(v, array_of(fr, v))
    if not 0 <= d < len(shape):
        raise Fail(f"{what} asks for dimension {d} of the rank-{len(shape)} memref {show_value(v)}")
    return shape[d]


def new_shape(t: MemRefType, dyn: Sequence[int]) -> tuple[int, ...]:
    it = iter(dyn)
    try:
        shape = [next(it) if d < 0 else d for d in t.get_shape()]
    except StopIteration:
        raise Fail(f"missing sizes for the dynamic dimensions of {t}") from None
    return (*shape, *vector_shape(t.element_type))


def indexed_load(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    """`load %mem[%i, ...]`: one element (krnl.load, memref.load)."""
    mem, *idx = op.operands
    return [load_element(fr, mem, [fr.index(i) for i in idx], op.name)]


def indexed_store(it: Interpreter, op: Operation, fr: Frame) -> None:
    """`store %v, %mem[%i, ...]` (krnl.store, memref.store)."""
    val, mem, *idx = op.operands
    store_element(fr, fr.get(val), mem, [fr.index(i) for i in idx], op.name)
