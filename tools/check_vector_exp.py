"""Check `_pk_exp32` (polykrnl/targets/numba/vector_exp.py) on every float32 value.

For each of the 2**32 bit patterns x, the helper's float64 result rounded to float32
must be NumPy's `np.exp(np.float64(x))` rounded to float32, bit for bit (any NaN for a
NaN), and the C library's `exp` as Numba calls it, rounded the same way. Prints the
number of values that differ from each (0 and 0 on x86-64 with glibc 2.36, NumPy 2.x,
Numba 0.68: 100 s on 2 cores). Run it on a new platform before trusting the kernels'
exps there; the test suite checks a sample (tests/targets/numba/test_numba_fission.py).

    python tools/check_vector_exp.py
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numba
import numpy as np

from polykrnl.targets.numba import bits, vector_exp

CHUNK = 1 << 25


def _functions() -> tuple[Any, Any]:
    space: dict[str, Any] = {"np": np, "njit": numba.njit}
    exec(bits.SOURCE + vector_exp.source(cache=False), space)
    helper = space[vector_exp.NAME]

    @numba.njit(parallel=True, error_model="numpy")
    def ours(xs: np.ndarray, out: np.ndarray) -> None:
        for i in numba.prange(xs.shape[0]):
            out[i] = np.float32(helper(xs[i]))

    @numba.njit(parallel=True, error_model="numpy")
    def c_library(xs: np.ndarray, out: np.ndarray) -> None:
        for i in numba.prange(xs.shape[0]):
            out[i] = np.float32(np.exp(np.float64(xs[i])))

    return ours, c_library


def _differ(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.view(np.int32) != b.view(np.int32)) & ~(np.isnan(a) & np.isnan(b))


def main() -> int:
    ours, c_library = _functions()
    started = time.perf_counter()
    counts = {"NumPy": 0, "C library": 0}
    examples: list[float] = []
    for start in range(-(2**31), 2**31, CHUNK):
        xs = np.arange(start, start + CHUNK, dtype=np.int64).astype(np.int32).view(np.float32)
        got = np.empty_like(xs)
        ours(xs, got)
        with np.errstate(all="ignore"):
            numpy_exp = np.exp(xs.astype(np.float64)).astype(np.float32)
        libm = np.empty_like(xs)
        c_library(xs, libm)
        for name, want in (("NumPy", numpy_exp), ("C library", libm)):
            bad = _differ(got, want)
            counts[name] += int(bad.sum())
            examples += [float(v) for v in xs[bad][: 5 - len(examples)]]
    seconds = time.perf_counter() - started
    print(
        f"2**32 float32 values in {seconds:.0f} s: {counts['NumPy']} differ from NumPy's exp, "
        f"{counts['C library']} from the C library's" + (f" (e.g. {examples})" if examples else "")
    )
    return 1 if any(counts.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
