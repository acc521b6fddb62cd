"""The C versions of onnx_shapes.c, compiled with gcc -O3 and called through ctypes.

`c_function(name, sizes, out_shape)` gives `f(*inputs) -> result`: the inputs of the
Krnl program in its argument order (C-contiguous float32, int64 indices), the result
allocated per call as the generated kernels allocate theirs. The library is built once
per source, compiler and flags into a cache directory (as polybench/c_kernels.py does:
$ONNX_SHAPES_C_CACHE, else a folder under the temporary directory), under a unique name
then renamed, so concurrent processes are safe. `c_function(..., threads=n)` calls the
OpenMP build (-fopenmp) on n threads.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

Array = np.ndarray[Any, Any]

SOURCE = Path(__file__).with_name("onnx_shapes.c")
COMPILER = "gcc"
# The flags of polybench/c_kernels.py: no fused multiply-add, so C does the program's
# operations (its roundings) and differs from the interpreter only by summation order.
FLAGS: tuple[str, ...] = ("-O3", "-march=native", "-ffp-contract=off", "-fPIC", "-shared")
# The OpenMP build: the same source, its `omp parallel for` loops on threads.
OPENMP_FLAGS: tuple[str, ...] = (*FLAGS, "-fopenmp")
CACHE_ENV = "ONNX_SHAPES_C_CACHE"
# C names that differ from the program's (math.h declares tanh).
C_NAMES: dict[str, str] = {"tanh": "tanh_"}


class CompileError(RuntimeError):
    """gcc is missing or could not compile onnx_shapes.c."""


def library_path(parallel: bool = False) -> Path:
    """The compiled onnx_shapes.c (with `parallel`, its OpenMP build), built first if not
    cached (CompileError if gcc fails)."""
    flags = OPENMP_FLAGS if parallel else FLAGS
    recipe = SOURCE.read_bytes() + "\0".join((COMPILER, *flags)).encode()
    key = hashlib.sha256(recipe).hexdigest()[:16]
    env = os.environ.get(CACHE_ENV)
    directory = Path(env) if env else Path(tempfile.gettempdir()) / "polykrnl-onnx-shapes-c"
    path = directory / f"onnx_shapes{'-omp' if parallel else ''}-{key}.so"
    if path.exists():
        return path
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.stem, suffix=".so.tmp", dir=directory)
    os.close(fd)
    command = [COMPILER, *flags, "-o", tmp, str(SOURCE), "-lm"]
    try:
        try:
            proc = subprocess.run(command, capture_output=True, text=True, check=False)
        except OSError as exc:
            raise CompileError(f"cannot run {COMPILER}: {exc}") from exc
        if proc.returncode != 0:
            raise CompileError(f"{' '.join(command)} failed:\n{proc.stderr.strip()}")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


@functools.cache
def _library(parallel: bool = False) -> ctypes.CDLL:
    lib = ctypes.CDLL(str(library_path(parallel)))
    lib.onnx_set_threads.argtypes = [ctypes.c_int]
    lib.onnx_set_threads.restype = None
    lib.onnx_max_threads.argtypes = []
    lib.onnx_max_threads.restype = ctypes.c_int
    return lib


def available(parallel: bool = False) -> str | None:
    """None when the library (with `parallel`, the OpenMP one) builds and loads, else why
    not."""
    try:
        _library(parallel)
    except (CompileError, OSError) as exc:
        return str(exc)
    return None


def c_function(
    name: str, sizes: tuple[int, ...], out_shape: tuple[int, ...], threads: int | None = None
) -> Callable[..., Array]:
    """The C version of program `name` at `sizes`, returning a new float32 result; with
    `threads`, the OpenMP build on that many threads."""
    lib = _library(threads is not None)
    cfunc = getattr(lib, C_NAMES.get(name, name))
    cfunc.restype = None
    dims = [ctypes.c_int64(s) for s in sizes]

    def call(*inputs: Array) -> Array:
        # C reads the arrays flat with the program's sizes: they must be exactly that.
        for a in inputs:
            if not a.flags.c_contiguous or a.dtype not in (np.float32, np.int64):
                raise ValueError(f"{name}: inputs must be C-contiguous float32 or int64")
        out = np.empty(out_shape, np.float32)
        pointers = [ctypes.c_void_p(a.ctypes.data) for a in (*inputs, out)]
        if threads is None:
            cfunc(*pointers, *dims)
            return out
        previous = lib.onnx_max_threads()
        lib.onnx_set_threads(threads)
        try:
            cfunc(*pointers, *dims)
        finally:
            lib.onnx_set_threads(previous)
        return out

    call.__name__ = name
    return call
