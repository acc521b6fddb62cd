"""Values of the reference interpreter: dtypes and canonical values of MLIR types."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    Signedness,
    VectorType,
)
from xdsl.ir import Attribute, SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.errors import UnsupportedError
from polykrnl.ir import Function


def _int_dtype(t: IntegerType) -> np.dtype[Any]:
    w = t.width.data
    if w == 1:
        return np.dtype(np.bool_)
    if w not in (8, 16, 32, 64):
        raise UnsupportedError(f"integers of width {w} are not supported by the interpreter")
    unsigned = t.signedness.data == Signedness.UNSIGNED
    return np.dtype(f"{'u' if unsigned else ''}int{w}")


def scalar_dtype(t: Attribute) -> np.dtype[Any]:
    """The NumPy dtype that stores elements of MLIR type `t`."""
    if isinstance(t, Float32Type):
        return np.dtype(np.float32)
    if isinstance(t, Float64Type):
        return np.dtype(np.float64)
    if isinstance(t, Float16Type):
        return np.dtype(np.float16)
    if isinstance(t, IntegerType):
        return _int_dtype(t)
    if isinstance(t, IndexType):
        return np.dtype(np.int64)
    if isinstance(t, k.StringType | MemRefType):
        return np.dtype(object)
    if isinstance(t, VectorType):
        return scalar_dtype(t.element_type)
    raise UnsupportedError(f"the interpreter has no NumPy representation for the type {t}")


def memref_dtype(t: MemRefType) -> np.dtype[Any]:
    return scalar_dtype(t.element_type)


def vector_shape(t: Attribute) -> tuple[int, ...]:
    return tuple(t.get_shape()) if isinstance(t, VectorType) else ()


def memref_shape(t: MemRefType) -> tuple[int | None, ...]:
    """The array shape of a memref type: None for `?`, vector dims appended."""
    dims = tuple(None if d < 0 else d for d in t.get_shape())
    return dims + vector_shape(t.element_type)


def int_width(t: Attribute) -> int:
    if isinstance(t, VectorType):
        t = t.element_type  # a lane's width
    if isinstance(t, IntegerType):
        return t.width.data
    if isinstance(t, IndexType):
        return 64
    raise UnsupportedError(f"expected an integer or index type, got {t}")


def as_signed(x: int, w: int) -> int:
    """`x` read as a signed w-bit integer."""
    x &= (1 << w) - 1
    return x - (1 << w) if x >> (w - 1) else x


def as_unsigned(x: int, w: int) -> int:
    return x & ((1 << w) - 1)


def wrap_int(x: int, t: Attribute) -> int:
    """Canonical value of integer `x` in type `t` (index: unbounded Python int)."""
    if isinstance(t, IndexType):
        return x
    assert isinstance(t, IntegerType)
    w = t.width.data
    if w == 1 or t.signedness.data == Signedness.UNSIGNED:
        return as_unsigned(x, w)
    return as_signed(x, w)


def lane_type(t: Attribute) -> Attribute:
    """The type of one lane of a vector type; any other type is its own lane."""
    return t.element_type if isinstance(t, VectorType) else t


def lanewise(fn: Callable[..., Any], t: Attribute, *values: Any) -> Any:
    """`fn` of canonical scalar values, applied to `values` of result type `t`: once for
    scalars, lane by lane for a vector type (integer lanes read as Python ints, so the
    scalar semantics, wrapping included, is exactly the one for scalars)."""
    if not isinstance(t, VectorType):
        return fn(*values)
    arrays = [np.asarray(v) for v in values]
    flat = [a.reshape(-1) for a in arrays]
    out = [
        fn(*(int(a[i]) if a.dtype.kind in "iub" else a[i] for a in flat))
        for i in range(flat[0].size)
    ]
    return np.array(out, dtype=scalar_dtype(t)).reshape(tuple(t.get_shape()))


def is_float(t: Attribute) -> bool:
    return isinstance(t, Float16Type | Float32Type | Float64Type)


_FLOAT_SCALARS: dict[type[Attribute], type[np.floating[Any]]] = {
    Float16Type: np.float16,
    Float32Type: np.float32,
    Float64Type: np.float64,
}


def make_value(x: Any, t: Attribute) -> Any:
    """`x` as the interpreter's canonical value of MLIR type `t`."""
    ctor = _FLOAT_SCALARS.get(type(t))
    if ctor is not None:  # the most frequent case first
        return ctor(x)
    if isinstance(t, IndexType):
        return int(x)
    if isinstance(t, IntegerType):
        return wrap_int(int(x), t)
    if isinstance(t, VectorType):
        return np.array(x, dtype=scalar_dtype(t)).reshape(tuple(t.get_shape()))
    if isinstance(t, k.StringType):
        return str(x)
    return x


def from_memory(x: Any, t: Attribute) -> Any:
    """A value read from an array element of MLIR type `t`."""
    if isinstance(t, VectorType):
        return x.copy()  # a vector is a value; a memref element (sequences) stays a reference
    if isinstance(t, IndexType | IntegerType):
        return wrap_int(int(x), t)
    if isinstance(t, k.StringType):
        return str(x)
    return x


def user_value(x: Any, t: Attribute) -> Any:
    """How a result is handed back to Python: fixed-width ints as NumPy scalars."""
    if isinstance(t, IntegerType):
        return scalar_dtype(t).type(x)
    return x


def handed_back(
    fn: Function,
    results: Sequence[Any],
    writeback: Sequence[tuple[list[Any], np.ndarray[Any, Any]]],
) -> Any:
    """Copy list arguments back and hand the results over: None, one value or a tuple."""
    for lst, arr in writeback:
        lst[:] = list(arr)
    out = tuple(user_value(r, t) for r, t in zip(results, fn.result_types, strict=True))
    if not out:
        return None
    return out[0] if len(out) == 1 else out


def show_value(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else "an unnamed value"


class Fail(Exception):
    """A run-time problem of the op being executed (located by the caller)."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


# ------------------------------------------------------------------ frames
