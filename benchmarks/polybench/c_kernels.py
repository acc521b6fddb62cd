"""The hand-written C kernels of hand.c, compiled with gcc and called through ctypes.

`c_kernel(name)` gives a function with the signature of `hand.name` (hand.py,
the NumPy versions): the index arguments, the float scalars and the arrays, by
the names of the Krnl function, positionally or by keyword; the arrays are
updated in place and may be larger than the sizes. Arrays must be NumPy arrays,
C-contiguous, float64 (int32 for floyd_warshall), with the kernel's number of
axes, each axis at least as long as the sizes say, writeable where the kernel
writes, and the arrays a kernel writes must not overlap another array
argument: anything else raises ValueError before C runs. Index arguments must
be integers and float scalars real numbers (ValueError otherwise); missing or
unknown arguments raise TypeError, as for a Python function.

Build: gcc compiles hand.c twice, with `FLAGS` (single thread) and with
`OPENMP_FLAGS` (FLAGS + -fopenmp: the same source, its `omp parallel for`
loops on threads), into a cache directory: `cache_dir`, else
$POLYBENCH_C_CACHE, else a folder under `tempfile.gettempdir()`. Each library
is named by a hash of the source, the compiler and the flags, built once
(atomically: concurrent processes are safe) and reused while present.

Threads (`parallel=True`): `threads=None` leaves the count to OpenMP, that is
to OMP_NUM_THREADS if it is set when the library is first loaded, else one per
CPU; `threads=n` runs each call on n threads (set before the call, restored
after, for the calling thread only).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import inspect
import numbers
import operator
import os
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

Array = np.ndarray[Any, Any]

SOURCE = Path(__file__).with_name("hand.c")
COMPILER = "gcc"
# -ffp-contract=off: no fused multiply-add, so results equal the interpreter (and Numba,
# which does not contract either) bit for bit; the comparison is of the same operations.
FLAGS: tuple[str, ...] = ("-O3", "-march=native", "-ffp-contract=off", "-fPIC", "-shared")
OPENMP_FLAGS: tuple[str, ...] = (*FLAGS, "-fopenmp")
CACHE_ENV = "POLYBENCH_C_CACHE"


class Index(NamedTuple):
    """An index argument (a problem size), passed as int64."""

    name: str


class Float(NamedTuple):
    """A float scalar argument, passed as double."""

    name: str


class Arr(NamedTuple):
    """An array argument: the sizes its axes need at least, and whether the kernel writes it.

    C receives the pointer, then the whole shape (int64 per axis).
    """

    name: str
    dims: tuple[str, ...]
    written: bool = False


Param = Index | Float | Arr


def _sq(name: str, size: str, *, written: bool = False) -> Arr:
    return Arr(name, (size, size), written)


def _vec(name: str, size: str, *, written: bool = False) -> Arr:
    return Arr(name, (size,), written)


# The arguments of each kernel, in the order of the Krnl function (and hand.py's).
SIGNATURES: dict[str, tuple[Param, ...]] = {
    "gemm": (
        *map(Index, ("NI", "NJ", "NK")),
        Float("alpha"),
        Float("beta"),
        Arr("C", ("NI", "NJ"), True),
        Arr("A", ("NI", "NK")),
        Arr("B", ("NK", "NJ")),
    ),
    "two_mm": (
        *map(Index, ("NI", "NJ", "NK", "NL")),
        Float("alpha"),
        Float("beta"),
        Arr("tmp", ("NI", "NJ"), True),
        Arr("A", ("NI", "NK")),
        Arr("B", ("NK", "NJ")),
        Arr("C", ("NJ", "NL")),
        Arr("D", ("NI", "NL"), True),
    ),
    "three_mm": (
        *map(Index, ("NI", "NJ", "NK", "NL", "NM")),
        Arr("E", ("NI", "NJ"), True),
        Arr("A", ("NI", "NK")),
        Arr("B", ("NK", "NJ")),
        Arr("F", ("NJ", "NL"), True),
        Arr("C", ("NJ", "NM")),
        Arr("D", ("NM", "NL")),
        Arr("G", ("NI", "NL"), True),
    ),
    "atax": (
        Index("M"),
        Index("N"),
        Arr("A", ("M", "N")),
        _vec("x", "N"),
        _vec("y", "N", written=True),
        _vec("tmp", "M", written=True),
    ),
    "bicg": (
        Index("M"),
        Index("N"),
        Arr("A", ("N", "M")),
        _vec("s", "M", written=True),
        _vec("q", "N", written=True),
        _vec("p", "M"),
        _vec("r", "N"),
    ),
    "mvt": (
        Index("N"),
        _vec("x1", "N", written=True),
        _vec("x2", "N", written=True),
        _vec("y1", "N"),
        _vec("y2", "N"),
        _sq("A", "N"),
    ),
    "gemver": (
        Index("N"),
        Float("alpha"),
        Float("beta"),
        _sq("A", "N", written=True),
        *(_vec(v, "N") for v in ("u1", "v1", "u2", "v2")),
        _vec("w", "N", written=True),
        _vec("x", "N", written=True),
        _vec("y", "N"),
        _vec("z", "N"),
    ),
    "syrk": (
        Index("N"),
        Index("M"),
        Float("alpha"),
        Float("beta"),
        _sq("C", "N", written=True),
        Arr("A", ("N", "M")),
    ),
    "covariance": (
        Index("M"),
        Index("N"),
        Float("float_n"),
        Arr("data", ("N", "M"), True),
        _sq("cov", "M", written=True),
        _vec("mean", "M", written=True),
    ),
    "jacobi_1d": (
        Index("TSTEPS"),
        Index("N"),
        _vec("A", "N", written=True),
        _vec("B", "N", written=True),
    ),
    "jacobi_2d": (
        Index("TSTEPS"),
        Index("N"),
        _sq("A", "N", written=True),
        _sq("B", "N", written=True),
    ),
    "heat_3d": (
        Index("TSTEPS"),
        Index("N"),
        Arr("A", ("N", "N", "N"), True),
        Arr("B", ("N", "N", "N"), True),
    ),
    "fdtd_2d": (
        *map(Index, ("TMAX", "NX", "NY")),
        *(Arr(f, ("NX", "NY"), True) for f in ("ex", "ey", "hz")),
        _vec("_fict_", "TMAX"),
    ),
    "seidel_2d": (Index("TSTEPS"), Index("N"), _sq("A", "N", written=True)),
    "lu": (Index("N"), _sq("A", "N", written=True)),
    "floyd_warshall": (Index("N"), _sq("path", "N", written=True)),
}

KERNELS: tuple[str, ...] = tuple(SIGNATURES)


class CompileError(RuntimeError):
    """gcc is missing or could not compile hand.c."""


def _cache_dir(cache_dir: str | os.PathLike[str] | None) -> Path:
    if cache_dir is not None:
        return Path(cache_dir)
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    return Path(tempfile.gettempdir()) / "polykrnl-polybench-c"


def library_path(parallel: bool = False, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The compiled hand.c (with OpenMP if `parallel`), built first if not cached.

    Raises CompileError when gcc is missing or fails.
    """
    flags = OPENMP_FLAGS if parallel else FLAGS
    recipe = SOURCE.read_bytes() + "\0".join((COMPILER, *flags)).encode()
    key = hashlib.sha256(recipe).hexdigest()[:16]
    directory = _cache_dir(cache_dir)
    path = directory / f"hand-{'omp-' if parallel else ''}{key}.so"
    if path.exists():
        return path
    directory.mkdir(parents=True, exist_ok=True)
    # Built under a unique name and renamed: another process may be building it too.
    fd, tmp = tempfile.mkstemp(prefix=path.stem, suffix=".so.tmp", dir=directory)
    os.close(fd)
    command = [COMPILER, *flags, "-o", tmp, str(SOURCE)]
    try:
        try:
            proc = subprocess.run(command, capture_output=True, text=True, check=False)
        except OSError as exc:
            raise CompileError(f"cannot run {COMPILER}: {exc}") from exc
        if proc.returncode != 0:
            raise CompileError(
                f"{' '.join(command)} failed (exit {proc.returncode}):\n{proc.stderr.strip()}"
            )
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


@functools.cache
def _library(parallel: bool, cache_dir: Path) -> ctypes.CDLL:
    lib = ctypes.CDLL(str(library_path(parallel, cache_dir)))
    lib.polybench_set_threads.argtypes = [ctypes.c_int]
    lib.polybench_set_threads.restype = None
    lib.polybench_max_threads.argtypes = []
    lib.polybench_max_threads.restype = ctypes.c_int
    return lib


def available(cache_dir: str | os.PathLike[str] | None = None) -> str | None:
    """None when both libraries (single-thread and OpenMP) build and load, else why not."""
    try:
        for parallel in (False, True):
            _library(parallel, _cache_dir(cache_dir))
    except (CompileError, OSError) as exc:
        return str(exc)
    return None


def _argtypes(params: tuple[Param, ...]) -> list[Any]:
    types: list[Any] = []
    for p in params:
        if isinstance(p, Index):
            types.append(ctypes.c_int64)
        elif isinstance(p, Float):
            types.append(ctypes.c_double)
        else:
            types += [ctypes.c_void_p] + [ctypes.c_int64] * len(p.dims)
    return types


def _index(kernel: str, name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{kernel}: index argument {name} must be an integer, got a bool")
    try:
        return operator.index(value)
    except TypeError:
        raise ValueError(
            f"{kernel}: index argument {name} must be an integer, got {type(value).__name__}"
        ) from None


def _float(kernel: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(
            f"{kernel}: scalar argument {name} must be a real number, got {type(value).__name__}"
        )
    return float(value)


def _array(
    kernel: str, p: Arr, value: Any, dtype: np.dtype[Any], sizes: Mapping[str, int]
) -> Array:
    where = f"{kernel}: array argument {p.name}"
    if not isinstance(value, np.ndarray):
        raise ValueError(f"{where} must be a NumPy array, got {type(value).__name__}")
    if value.dtype != dtype:
        raise ValueError(f"{where} must have dtype {dtype}, got {value.dtype}")
    if value.ndim != len(p.dims):
        raise ValueError(f"{where} must have {len(p.dims)} axes, got shape {value.shape}")
    if not value.flags.c_contiguous:
        raise ValueError(f"{where} must be C-contiguous (np.ascontiguousarray makes a copy)")
    need = tuple(max(0, sizes[d]) for d in p.dims)
    if any(have < n for have, n in zip(value.shape, need, strict=True)):
        shown = ", ".join(f"{d}={n}" for d, n in zip(p.dims, need, strict=True))
        raise ValueError(f"{where} has shape {value.shape}, too small for ({shown})")
    if p.written and not value.flags.writeable:
        raise ValueError(f"{where} is written by the kernel but is read-only")
    return value


def _c_arguments(
    kernel: str, params: tuple[Param, ...], values: Mapping[str, Any], dtype: np.dtype[Any]
) -> list[Any]:
    """The ctypes arguments, after checking every value (ValueError on the first bad one)."""
    sizes = {p.name: _index(kernel, p.name, values[p.name]) for p in params if isinstance(p, Index)}
    arrays = {
        p.name: _array(kernel, p, values[p.name], dtype, sizes)
        for p in params
        if isinstance(p, Arr)
    }
    written = [p.name for p in params if isinstance(p, Arr) and p.written]
    for w in written:
        for other, a in arrays.items():
            # C declares the arrays `restrict`: one that is written must not overlap another.
            if other != w and np.may_share_memory(arrays[w], a):
                raise ValueError(f"{kernel}: arrays {w} and {other} overlap")
    out: list[Any] = []
    for p in params:
        if isinstance(p, Index):
            out.append(sizes[p.name])
        elif isinstance(p, Float):
            out.append(_float(kernel, p.name, values[p.name]))
        else:
            a = arrays[p.name]
            out += [a.ctypes.data, *a.shape]
    return out


def c_kernel(
    name: str,
    parallel: bool = False,
    *,
    threads: int | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Callable[..., None]:
    """The C version of kernel `name`, called like `hand.name` (see the module docstring).

    `parallel`: the OpenMP build; `threads`: its thread count for each call
    (None: OMP_NUM_THREADS, else one per CPU). Builds the library on first use
    (CompileError if gcc cannot).
    """
    if name not in SIGNATURES:
        raise KeyError(f"unknown kernel {name!r}; known: {', '.join(KERNELS)}")
    if threads is not None and (not parallel or threads < 1):
        raise ValueError("threads must be a positive count, and only with parallel=True")
    lib = _library(parallel, _cache_dir(cache_dir))
    params = SIGNATURES[name]
    cfunc = getattr(lib, name)
    cfunc.argtypes = _argtypes(params)
    cfunc.restype = None
    dtype = np.dtype(np.int32 if name == "floyd_warshall" else np.float64)
    signature = inspect.Signature(
        [inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params],
        return_annotation=None,
    )

    def kernel(*args: Any, **kwargs: Any) -> None:
        values = signature.bind(*args, **kwargs).arguments
        c_args = _c_arguments(name, params, values, dtype)
        if threads is None:
            cfunc(*c_args)
            return
        previous = lib.polybench_max_threads()
        lib.polybench_set_threads(threads)
        try:
            cfunc(*c_args)
        finally:
            lib.polybench_set_threads(previous)

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = f"hand.c's {name} ({'OpenMP' if parallel else 'single thread'})."
    kernel.__signature__ = signature  # type: ignore[attr-defined]
    return kernel
