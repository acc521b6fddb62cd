"""Standard MLIR text compiled to a shared library with LLVM 19's tools, and called.

The pipeline is MLIR's own (checked on Debian 12's `mlir-19-tools` and `clang-19`):
mlir-opt lowers affine, scf (parallel loops to OpenMP where `libomp` is installed), arith,
math, memref and func to the LLVM dialect, mlir-translate writes LLVM IR, clang -O3 builds
the shared library. Libraries are cached under polykrnl's cache directory by a hash of the
source and the pipeline, so a kernel compiles once per machine.

A function marked `llvm.emit_c_interface` has the C entry point `_mlir_ciface_<name>`: each
memref as a pointer to its descriptor (allocated pointer, aligned pointer, offset, sizes,
strides in elements), scalars by value, and results through a pointer to a struct of them
passed first.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Attribute

from polykrnl.codegen.cache_dir import cache_dir as shared_cache_dir
from polykrnl.errors import UnsupportedError

TOOLS = ("mlir-opt-19", "mlir-translate-19", "clang-19")
INSTALL_HINT = "apt-get install mlir-19-tools clang-19 (and libomp-19-dev for parallel loops)"

_LOWER = (
    "--lower-affine",
    "--arith-expand",
)
# memref before scf: scf-to-openmp puts each parallel iteration in a memref.alloca_scope
# (so are a statement's stack buffers), whose region must stay one block, which lowering
# the scf.for loops inside it to branches would break.
_TO_LLVM = (
    "--finalize-memref-to-llvm",
    "--convert-scf-to-cf",
    "--convert-math-to-llvm",
    "--convert-math-to-libm",
    "--convert-arith-to-llvm",
    "--convert-func-to-llvm",
    "--convert-cf-to-llvm",
    "--reconcile-unrealized-casts",
)
_OPENMP = ("--convert-scf-to-openmp",)
_OPENMP_TO_LLVM = ("--convert-openmp-to-llvm",)


def missing_tools() -> list[str]:
    """The tools of the pipeline that are not on PATH."""
    return [t for t in TOOLS if shutil.which(t) is None]


@cache
def openmp_available() -> bool:
    """Whether clang-19 links LLVM's OpenMP runtime (`libomp-19-dev`): GCC's libgomp lacks
    the `__kmpc_*` symbols that MLIR's OpenMP lowering calls."""
    if shutil.which("clang-19") is None:
        return False
    found = subprocess.run(
        ["clang-19", "-print-file-name=libomp.so"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return bool(found) and os.path.isabs(found) and os.path.exists(found)


def pipeline(parallel: bool) -> list[str]:
    """mlir-opt's passes, with OpenMP for scf.parallel when `parallel` (else scf-to-cf
    runs the parallel loops sequentially)."""
    if parallel:
        return [*_LOWER, *_OPENMP, *_TO_LLVM[:-1], *_OPENMP_TO_LLVM, _TO_LLVM[-1]]
    return [*_LOWER, *_TO_LLVM]


def cache_dir() -> Path:
    """Where the MLIR target's libraries live (codegen/cache_dir.py)."""
    return shared_cache_dir("mlir")


def compile_library(source: str, parallel: bool) -> Path:
    """The shared library of `source` (built once, then found in the cache)."""
    missing = missing_tools()
    if missing:
        raise UnsupportedError(
            f"the MLIR target needs {', '.join(missing)}, which is not on PATH",
            hint=INSTALL_HINT,
        )
    passes = pipeline(parallel)
    key = hashlib.sha256("\0".join([source, *passes]).encode()).hexdigest()[:24]
    out = cache_dir() / f"kernel_{key}.so"
    if out.exists():
        return out
    with tempfile.TemporaryDirectory(prefix="polykrnl-mlir-") as tmp:
        work = Path(tmp)
        (work / "in.mlir").write_text(source)
        steps = [
            ["mlir-opt-19", "in.mlir", *passes, "-o", "llvm.mlir"],
            ["mlir-translate-19", "--mlir-to-llvmir", "llvm.mlir", "-o", "out.ll"],
            [
                "clang-19",
                "-O3",
                "-march=native",
                "-shared",
                "-fPIC",
                *(["-fopenmp"] if parallel else []),
                "-Wno-override-module",
                "out.ll",
                "-o",
                "out.so",
                "-lm",
            ],
        ]
        for cmd in steps:
            done = subprocess.run(cmd, cwd=work, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise UnsupportedError(
                    f"MLIR target: {cmd[0]} failed: {done.stderr.strip()[:2000]}",
                    hint="report the kernel (`polykrnl emit mlir`): polykrnl wrote MLIR "
                    "that LLVM 19's tools do not take",
                )
        # Renamed into place: a concurrent build of the same kernel leaves one whole file.
        staged = out.with_suffix(f".{os.getpid()}.tmp")
        shutil.copyfile(work / "out.so", staged)
        os.replace(staged, out)
    return out


def descriptor_type(rank: int) -> type[ctypes.Structure]:
    """The ctypes Structure of a rank-`rank` memref descriptor."""
    return _descriptor(rank)


@cache
def _descriptor(rank: int) -> type[ctypes.Structure]:
    fields: list[tuple[str, Any]] = [
        ("allocated", ctypes.c_void_p),
        ("aligned", ctypes.c_void_p),
        ("offset", ctypes.c_int64),
    ]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})


def descriptor(a: np.ndarray[Any, Any]) -> ctypes.Structure:
    """The descriptor of a C-contiguous array (its data, not a copy)."""
    desc = descriptor_type(a.ndim)()
    desc.allocated = desc.aligned = a.ctypes.data
    desc.offset = 0
    if a.ndim:
        desc.sizes[:] = list(a.shape)
        desc.strides[:] = [s // a.itemsize for s in a.strides]
    return desc


def scalar_ctype(t: Attribute) -> Any:
    """The ctypes type of a scalar argument of MLIR type `t` (None: not passed by value)."""
    if isinstance(t, IndexType):
        return ctypes.c_int64
    if isinstance(t, Float32Type):
        return ctypes.c_float
    if isinstance(t, Float64Type):
        return ctypes.c_double
    if isinstance(t, IntegerType):
        width = t.width.data
        signed = {1: ctypes.c_bool, 8: ctypes.c_int8, 16: ctypes.c_int16}
        signed.update({32: ctypes.c_int32, 64: ctypes.c_int64})
        return signed.get(width)
    return None


def is_memref(t: Attribute) -> bool:
    return isinstance(t, MemRefType) and not isinstance(t.element_type, MemRefType)
