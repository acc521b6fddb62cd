"""The helper functions of Numba kernels, as source text: scalar versions of the NumPy prelude.

A Numba kernel is scalar code (no vectorized loops), so a helper only ever sees
scalars: each one here has the meaning of the NumPy helper of the same name
(:mod:`polykrnl.codegen.numpy_ops.prelude`) on scalars, written with what
Numba compiles. A kernel whose ops need a helper missing here is refused at the
op (see :data:`SCALAR_HELPERS`), and runs with the NumPy target.
"""

from __future__ import annotations

from polykrnl.codegen.bounds_guard import BOUNDS_ERROR, BOUNDS_ERROR_SOURCE

__all__ = ["SCALAR_HELPERS"]

# Ties (a == b) decide by the sign bit so that +0.0 and -0.0 order as in MLIR; a NaN
# operand is the result (maximumf/minimumf) or ignored (maxnumf/minnumf).
SCALAR_HELPERS: dict[str, str] = {
    # A class, not a function: the module defines it undecorated (numba_helper), and
    # compiled code raises it with values computed at run time.
    BOUNDS_ERROR: BOUNDS_ERROR_SOURCE,
    "_index": '''
def _index(x):
    """An index value (int64) from an integer scalar."""
    return np.int64(x)
''',
    "_maximumf": '''
def _maximumf(a, b):
    """arith.maximumf: the larger of a and b; NaN if either is NaN; +0.0 > -0.0."""
    if a != a or b != b:
        return a + b
    if a == b:
        return b if np.signbit(a) else a
    return a if a > b else b
''',
    "_minimumf": '''
def _minimumf(a, b):
    """arith.minimumf: the smaller of a and b; NaN if either is NaN; -0.0 < +0.0."""
    if a != a or b != b:
        return a + b
    if a == b:
        return a if np.signbit(a) else b
    return a if a < b else b
''',
    "_maxnumf": '''
def _maxnumf(a, b):
    """arith.maxnumf: the larger of a and b; the other one if one is NaN; +0.0 > -0.0."""
    if a != a:
        return b
    if b != b:
        return a
    if a == b:
        return b if np.signbit(a) else a
    return a if a > b else b
''',
    "_minnumf": '''
def _minnumf(a, b):
    """arith.minnumf: the smaller of a and b; the other one if one is NaN; -0.0 < +0.0."""
    if a != a:
        return b
    if b != b:
        return a
    if a == b:
        return a if np.signbit(a) else b
    return a if a < b else b
''',
    "_round": '''
def _round(x):
    """math.round: the nearest integer, halfway cases away from zero."""
    t = np.trunc(x)
    if np.abs(x - t) >= 0.5:
        return t + np.sign(x)
    return t
''',
}

# Integer division as MLIR defines it: b == 0 gives 0 (as the interpreter), MIN / -1
# wraps to MIN (Numba's `//` gives 0 there); remsi is C's % (sign of the dividend).
SCALAR_HELPERS |= {
    "_divsi": '''
def _divsi(a, b):
    """arith.divsi: signed division rounding toward zero (b == 0: 0; MIN / -1: MIN)."""
    if b == 0:
        return a - a
    if b == -1:
        return -a
    q = a // b
    if q * b != a and (a < 0) != (b < 0):
        q += 1
    return q
''',
    "_remsi": '''
def _remsi(a, b):
    """arith.remsi: the remainder of the division rounding toward zero (b == 0: 0)."""
    if b == 0 or b == -1:
        return a - a
    q = a // b
    if q * b != a and (a < 0) != (b < 0):
        q += 1
    return a - q * b
''',
    "_floordivsi": '''
def _floordivsi(a, b):
    """arith.floordivsi: signed division rounding down (b == 0: 0; MIN / -1 wraps to MIN)."""
    if b == 0:
        return a - a
    if b == -1:
        return -a
    return a // b
''',
    "_ceildivsi": '''
def _ceildivsi(a, b):
    """arith.ceildivsi: signed division rounding up (b == 0: 0; MIN / -1 wraps to MIN)."""
    if b == 0:
        return a - a
    if b == -1:
        return -a
    q = a // b
    if q * b != a:
        q += 1
    return q
''',
}

# onnx-mlir's runtime sorts (interpreter/runtime_calls.py), compiled: a stable insertion
# sort of each row's indices, NaN above every number as in the NumPy version.
SCALAR_HELPERS |= {
    "_pk_om_sort": '''
def _pk_om_sort(order, data, axis, ascending):
    """omTensorSort: reorder each row of `order` (last axis) by `data`'s values."""
    if axis != data.ndim - 1:
        raise ValueError("omTensorSort: onnx-mlir sorts along the last axis only")
    if order.size == 0:
        return
    n = data.shape[-1]
    rows = order.size // n
    idx = order.reshape((rows, n))
    values = data.reshape((rows, n))
    for r in range(rows):
        for i in range(n):
            if idx[r, i] < 0 or idx[r, i] >= n:
                raise IndexError("omTensorSort: an index in the order tensor is out of range")
        for i in range(1, n):
            cur = idx[r, i]
            v = values[r, cur]
            j = i - 1
            while j >= 0:
                w = values[r, idx[r, j]]
                # Does `cur` (value v) come before idx[r, j] (value w)?
                if v != v or w != w:
                    first = (w != w and v == v) if ascending else (v != v and w == w)
                    tie = (v != v) and (w != w)
                else:
                    first = v < w if ascending else v > w
                    tie = v == w
                if not (first or (tie and cur < idx[r, j])):
                    break
                idx[r, j + 1] = idx[r, j]
                j -= 1
            idx[r, j + 1] = cur
''',
    "_pk_om_topk": '''
def _pk_om_topk(order, data, axis, ascending, k, is_sorted):
    """omTensorTopK: the first k indices of each row are the k best, in order."""
    if k < 0:
        raise ValueError("omTensorTopK: TopK needs k >= 0")
    _pk_om_sort(order, data, axis, ascending)
''',
}
