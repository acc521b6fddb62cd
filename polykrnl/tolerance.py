"""How a kernel's outputs compare with the reference interpreter's: exactly for an exact
kernel, within the tolerance of reassociated float reductions otherwise."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


def reassociation_tolerance(dtype: np.dtype[Any], n: int) -> float:
    """The rtol (and atol, relative to the array's magnitude) of a reassociated kernel.

    `n` bounds the number of terms of every reduction: a reduction loop indexes
    an array dimension, so it runs at most over the largest dimension of the
    arguments. Summed in any order, n terms are within (n - 1) * eps * sum|term|
    of their exact sum (Higham, Accuracy and Stability of Numerical Algorithms,
    section 4.2), so the reference's order and np.einsum's differ by at most
    2 * n * eps * sum|term|. With inputs uniform in [-1, 1) the terms have no
    larger magnitude than the sums they make, and the errors of a sum grow like
    sqrt(n), not n, in practice: 2 * n * eps of the reference's values (with an
    absolute part scaled by the largest of them, for sums that cancel to about
    zero) leaves a wide margin, while a kernel that drops or repeats one term is
    off by a whole term, far above it.
    """
    return 2.0 * max(n, 1) * float(np.finfo(dtype).eps)


@dataclass(frozen=True)
class Difference:
    """The kernel's value against the reference's (one array argument or result)."""

    max_abs: float | None  # None: not numbers (strings, sequences)
    max_rel: float | None  # max_abs / the largest magnitude of the reference's value
    equal: bool  # exactly equal (NaN where NaN)
    ok: bool  # equal, or within the tolerance when it applies
    rtol: float | None  # the tolerance applied (None: exact equality required)
    atol: float | None
    mismatch: str | None = None  # not comparable: a different shape or dtype


def _same_object(x: Any, y: Any) -> bool:
    """Elements of object arrays (strings, the arrays of a sequence) compared exactly."""
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        return (
            isinstance(x, np.ndarray)
            and isinstance(y, np.ndarray)
            and x.dtype == y.dtype
            and np.array_equal(x, y, equal_nan=x.dtype.kind in "fc")
        )
    return type(x) is type(y) and bool(x == y)


def compare(reference: Any, got: Any, *, exact: bool, n: int) -> Difference:
    """Compare a kernel's value with the reference's; `n` bounds reduction lengths."""
    ref, val = np.asarray(reference), np.asarray(got)
    if ref.shape != val.shape or ref.dtype != val.dtype:
        shape = "x".join(map(str, ref.shape)) or "scalar"
        got_shape = "x".join(map(str, val.shape)) or "scalar"
        mismatch = f"{got_shape} {val.dtype} instead of {shape} {ref.dtype}"
        return Difference(None, None, False, False, None, None, mismatch)
    if ref.dtype.kind not in "fciub":
        equal = all(_same_object(x, y) for x, y in zip(ref.flat, val.flat, strict=True))
        return Difference(None, None, equal, equal, None, None)
    wide = np.complex128 if ref.dtype.kind == "c" else np.float64
    a, b = ref.astype(wide), val.astype(wide)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(same, 0.0, np.abs(a - b))
    diff = np.where(np.isnan(diff), np.inf, diff)  # a NaN on one side only
    max_abs = float(diff.max()) if diff.size else 0.0
    finite = np.abs(a[np.isfinite(a)])
    scale = float(finite.max()) if finite.size else 0.0
    max_rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else float("inf"))
    equal = max_abs == 0.0
    if exact or ref.dtype.kind not in "fc":
        return Difference(max_abs, max_rel, equal, equal, None, None)
    rtol = reassociation_tolerance(ref.dtype, n)
    atol = rtol * max(1.0, scale)
    ok = bool(np.allclose(val, ref, rtol=rtol, atol=atol, equal_nan=True))
    return Difference(max_abs, max_rel, equal, ok, rtol, atol)


def describe_difference(d: Difference) -> str:
    if d.mismatch is not None:
        return f"DIFFERENT: {d.mismatch}"
    if d.max_abs is None:
        return "exactly equal" if d.equal else "DIFFERENT"
    text = f"max abs error {d.max_abs:.3g}, max rel error {d.max_rel:.3g}: "
    if d.equal:
        return text + "exactly equal"
    if d.rtol is None:
        return text + "NOT exactly equal"
    verdict = "within" if d.ok else "BEYOND"
    return text + f"not exactly equal, {verdict} rtol={d.rtol:.3g} atol={d.atol:.3g}"
