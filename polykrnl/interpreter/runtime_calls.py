"""onnx-mlir's runtime functions that its lowerings reach through `krnl.call`, built in.

NonMaxSuppression sorts the boxes by score and TopK selects the k best elements by
calling the runtime (src/Runtime/OMSort, OMTopK):

    "krnl.call"(%order, %data, %axis, %ascending) <{funcName = "omTensorSort", ...}>
    "krnl.call"(%order, %data, %axis, %ascending, %k, %sorted) <{funcName = "omTensorTopK", ...}>

`%order` is a memref of index of `%data`'s shape, which the program fills with
0, 1, ..., n-1 along the last axis first; each function reorders the indices of every
row (the last axis, the only one onnx-mlir sorts: `axis` must be rank - 1) so that the
row's values come in ascending order (`ascending` = 1) or descending (0). The sort is
stable: equal values keep the order of their indices, smaller first. TopK guarantees
only the first `k` indices of each row (the k best, sorted when `sorted` is not 0; the
rest of the row is some permutation of the others): polykrnl sorts the whole row,
which is one of the orders onnx-mlir may leave.

NaN has no place in onnx-mlir's comparisons (its order there is unspecified):
polykrnl orders it above every number, as NumPy's sort does, so NaN values come last
in ascending order and first in descending order.

The functions here are the interpreter's, and the NumPy kernels' (their source is
written into the module); the Numba kernels have a compiled version of the same order
(codegen/scalar_prelude.py). Built-in names take precedence over functions registered
with `polykrnl.register_call`, so that every target means the same by them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def _pk_om_sort(order: np.ndarray, data: np.ndarray, axis: int, ascending: int) -> None:
    """omTensorSort: reorder each row of `order` (last axis) by `data`'s values."""
    shape = np.shape(data)
    if np.shape(order) != shape:
        raise ValueError(f"the order tensor has shape {np.shape(order)}, the data {shape}")
    if int(axis) != len(shape) - 1:
        raise ValueError(f"axis {int(axis)}: onnx-mlir sorts along the last axis only")
    n = shape[-1] if shape else 1
    if order.size == 0:
        return
    idx = np.asarray(order, dtype=np.int64).reshape(-1, n)
    if idx.min() < 0 or idx.max() >= n:
        raise IndexError(f"an index in the order tensor is outside [0, {n})")
    values = np.take_along_axis(np.asarray(data).reshape(-1, n), idx, axis=1)
    # Ranks order every value, NaN above the numbers, in any dtype (bool, unsigned).
    rank = np.unique(values, return_inverse=True)[1].reshape(values.shape)
    key = rank if ascending else -rank
    rows = np.repeat(np.arange(idx.shape[0]), n)
    perm = np.lexsort((idx.ravel(), key.ravel(), rows))
    order[...] = idx.ravel()[perm].reshape(shape)


def _pk_om_topk(
    order: np.ndarray, data: np.ndarray, axis: int, ascending: int, k: int, is_sorted: int
) -> None:
    """omTensorTopK: the first k indices of each row are the k best, in order (sorted
    or not, `is_sorted`: the whole row sorted is one of the orders onnx-mlir leaves)."""
    if int(k) < 0:
        raise ValueError(f"k = {int(k)}: TopK needs k >= 0")
    _pk_om_sort(order, data, axis, ascending)


#: funcName -> the function (called with the krnl.call's parameters, in order)
RUNTIME_CALLS: dict[str, Callable[..., None]] = {
    "omTensorSort": _pk_om_sort,
    "omTensorTopK": _pk_om_topk,
}

#: funcName -> the name of the helper a generated kernel calls
RUNTIME_HELPERS: dict[str, str] = {
    "omTensorSort": "_pk_om_sort",
    "omTensorTopK": "_pk_om_topk",
}

#: funcName -> how many parameters the call takes (the order tensor first)
RUNTIME_ARITY: dict[str, int] = {"omTensorSort": 4, "omTensorTopK": 6}
