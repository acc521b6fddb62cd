"""Check the float32 exp and tanh of Numba kernels (polykrnl/targets/numba/vector_math.py)
on every float32 value.

For each of the 2**32 bit patterns x, a helper's float64 result rounded to float32 must
be NumPy's function of `np.float64(x)` rounded to float32, bit for bit (any NaN for a
NaN), and the C library's as Numba calls it, rounded the same way. Prints the number of
values that differ from each (0 and 0 for both functions on x86-64 with glibc 2.36,
NumPy 2.x, Numba 0.68: about 100 s a function on 2 cores). Run it on a new platform
before trusting the kernels' exps and tanhs there; the test suite checks a sample
(tests/targets/numba/test_numba_vector_math.py).

    python tools/check_vector_math.py [exp] [tanh]
    python tools/check_vector_math.py --fit   # the tanh polynomial again (mpmath)
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numba
import numpy as np

from polykrnl.targets.numba import bits, vector_math

CHUNK = 1 << 25


def _functions(function: str) -> tuple[Any, Any]:
    helper_name = vector_math.HELPERS[function]
    space: dict[str, Any] = {"np": np, "njit": numba.njit}
    exec(bits.SOURCE + vector_math.source(helper_name, cache=False), space)
    helper = space[helper_name]
    numpy_function = getattr(np, function)

    @numba.njit(parallel=True, error_model="numpy")
    def ours(xs: np.ndarray, out: np.ndarray) -> None:
        for i in numba.prange(xs.shape[0]):
            out[i] = np.float32(helper(xs[i]))

    @numba.njit(parallel=True, error_model="numpy")
    def c_library(xs: np.ndarray, out: np.ndarray) -> None:
        for i in numba.prange(xs.shape[0]):
            out[i] = np.float32(numpy_function(np.float64(xs[i])))

    return ours, c_library


def _differ(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.view(np.int32) != b.view(np.int32)) & ~(np.isnan(a) & np.isnan(b))


def check(function: str) -> int:
    """The number of float32 values where the helper differs from NumPy or the C library."""
    ours, c_library = _functions(function)
    started = time.perf_counter()
    counts = {"NumPy": 0, "C library": 0}
    examples: list[float] = []
    for start in range(-(2**31), 2**31, CHUNK):
        xs = np.arange(start, start + CHUNK, dtype=np.int64).astype(np.int32).view(np.float32)
        got = np.empty_like(xs)
        ours(xs, got)
        with np.errstate(all="ignore"):
            numpy_result = getattr(np, function)(xs.astype(np.float64)).astype(np.float32)
        libm = np.empty_like(xs)
        c_library(xs, libm)
        for name, want in (("NumPy", numpy_result), ("C library", libm)):
            bad = _differ(got, want)
            counts[name] += int(bad.sum())
            examples += [float(v) for v in xs[bad][: 5 - len(examples)]]
    seconds = time.perf_counter() - started
    print(
        f"{function}: 2**32 float32 values in {seconds:.0f} s: {counts['NumPy']} differ from "
        f"NumPy's, {counts['C library']} from the C library's"
        + (f" (e.g. {examples})" if examples else "")
    )
    return sum(counts.values())


def fit() -> None:
    """Print vector_math.TANH_POLY as TANH_FIT says it was made."""
    import mpmath as mp

    mp.mp.dps = 50

    def f(z: Any) -> Any:
        if z == 0:
            return mp.mpf(-1) / 3
        a = mp.sqrt(z)
        return (mp.tanh(a) - a) / a**3

    bound = mp.mpf(vector_math.TANH_SMALL) ** 2
    poly = mp.chebyfit(f, [0, bound], len(vector_math.TANH_POLY))
    print("\n".join(f"    {float(c)!r}," for c in poly))


def main(argv: list[str]) -> int:
    if argv == ["--fit"]:
        fit()
        return 0
    functions = argv or list(vector_math.HELPERS)
    unknown = [f for f in functions if f not in vector_math.HELPERS]
    if unknown:
        print(f"unknown function {unknown[0]!r}: choose from {', '.join(vector_math.HELPERS)}")
        return 2
    return 1 if sum(check(f) for f in functions) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
