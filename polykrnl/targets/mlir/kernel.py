"""MlirKernel: a Schedule as standard MLIR, compiled natively and called through ctypes."""

from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import math
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue

from polykrnl import display
from polykrnl.codegen.kernel_call import KernelCall
from polykrnl.dialect import krnl as k
from polykrnl.errors import UnsupportedError
from polykrnl.interpreter import memref_dtype
from polykrnl.poly import DimParam
from polykrnl.targets.mlir.emit import write_function
from polykrnl.targets.mlir.native import (
    compile_library,
    descriptor,
    descriptor_type,
    is_memref,
    openmp_available,
    scalar_ctype,
)
from polykrnl.transforms.memory_safety import refuse_unsafe

if TYPE_CHECKING:
    from polykrnl.transforms.core import Schedule

# Krnl's functions computed by the C library (through math ops).
_TRANSCENDENTAL = (k.AcosOp, k.AcoshOp, k.AsinOp, k.AsinhOp, k.AtanOp, k.AtanhOp, k.TanOp, k.ErfOp)


@dataclass(frozen=True, eq=False)
class MlirKernel(KernelCall):
    """`.source` (standard MLIR text) and `__call__(**arrays_and_params)`, which compiles
    it with LLVM 19's tools at the first call and runs it natively."""

    schedule: Schedule = field(repr=False)
    source: str
    symbol: str  # the function's symbol in `source`
    parallel_loops: tuple[str, ...] = ()  # the loops written as scf.parallel
    # What the kernel does not do as asked (a parallel loop run sequentially), and why.
    notes: tuple[str, ...] = ()
    check_bounds: bool = True

    @cached_property
    def exact(self) -> bool:
        """Whether results are bit for bit the reference's: LLVM keeps the order of float
        operations (no fast-math, no contraction), but math functions are the C library's,
        which may differ from NumPy's in the last bit."""
        inexact: tuple[type[Operation], ...] = (*math.Math.operations, *_TRANSCENDENTAL)
        return not any(isinstance(op, inexact) for op in self.schedule.program.function.op.walk())

    @property
    def openmp(self) -> bool:
        """Whether the parallel loops run on OpenMP threads (LLVM's libomp is installed)."""
        return bool(self.parallel_loops) and openmp_available()

    @cached_property
    def library_path(self) -> str:
        """The shared library (compiled at first use, then taken from the cache)."""
        return str(compile_library(self.source, self.openmp))

    def compile(self, **arrays_and_params: Any) -> float:
        """Build the native library now (with LLVM's tools, or from the cache); the
        seconds it took. The arguments are not needed: one library serves every call."""
        start = time.perf_counter()
        self.library_path  # noqa: B018  (a cached property: building it compiles)
        return time.perf_counter() - start

    @cached_property
    def _entry(self) -> Any:
        lib = ctypes.CDLL(self.library_path)
        f = getattr(lib, f"_mlir_ciface_{self.symbol}")
        f.restype = None
        return f

    def sizes(self, values: list[Any]) -> dict[str, int]:
        """The isl parameters' values for a call (index arguments and array sizes)."""
        program = self.schedule.program
        fn = program.function
        at: dict[SSAValue, int] = {arg: i for i, arg in enumerate(fn.op.body.block.args)}
        out: dict[str, int] = {}
        for p, src in program.param_sources.items():
            if isinstance(src, DimParam):
                if src.array in at:
                    out[p] = int(np.shape(values[at[src.array]])[src.dim])
            elif src.value in at:
                out[p] = int(values[at[src.value]])
        return out

    def _run(self, values: list[Any]) -> Any:
        program = self.schedule.program
        fn = program.function
        if self.check_bounds:
            refuse_unsafe(program, self.sizes(values), f"@{fn.name}")
        args: list[Any] = []
        keep: list[Any] = []  # descriptors and copies live until the call returns
        writeback: list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]] = []
        for a, v in zip(fn.arguments, values, strict=True):
            if is_memref(a.type):
                arr = v
                if not arr.flags.c_contiguous or not arr.flags.writeable:
                    arr = np.ascontiguousarray(v)
                    if v.flags.writeable:
                        writeback.append((v, arr))
                desc = descriptor(arr)
                keep += [arr, desc]
                args.append(ctypes.byref(desc))
                continue
            ct = scalar_ctype(a.type)
            if ct is None:
                raise UnsupportedError(
                    f"MLIR target: argument {a.name} of @{fn.name} is a {a.type}, which the "
                    "native call does not pass yet",
                    location=fn.location(fn.op),
                    hint="run it with the NumPy target (`--target numpy`)",
                )
            args.append(ct(v))
        result_types = list(fn.result_types)
        packed: ctypes.Structure | None = None
        if result_types:
            fields = [
                (f"r{i}", descriptor_type(len(t.get_shape())))
                for i, t in enumerate(result_types)
                if isinstance(t, MemRefType)
            ]
            packed = type("Results", (ctypes.Structure,), {"_fields_": fields})()
            # One result is its descriptor; several, a struct of them: the same layout.
            args.insert(0, ctypes.byref(packed))
        self._entry(*args)
        for orig, copy in writeback:
            orig[...] = copy
        if packed is None:
            return None
        inputs = {arr.ctypes.data for arr in keep if isinstance(arr, np.ndarray)}
        out = [_result(getattr(packed, f"r{i}"), t, inputs) for i, t in enumerate(result_types)]
        _free({getattr(packed, f"r{i}").allocated for i in range(len(out))} - inputs)
        return out[0] if len(out) == 1 else tuple(out)

    def __repr__(self) -> str:
        lines = self.source.count("\n")
        return f"<MlirKernel @{self.schedule.program.function.name}: {lines} lines>"

    def _repr_html_(self) -> str:
        fn = self.schedule.program.function
        body = display.section("source", display.highlight(self.source, "mlir"))
        return display.display_box("mlir-kernel", f"MlirKernel @{fn.name}", body)


def _result(desc: Any, t: Any, inputs: set[int]) -> np.ndarray[Any, Any]:
    """A returned memref as a NumPy array of its own (a copy of the kernel's buffer)."""
    dtype = memref_dtype(t)
    rank = len(t.get_shape())
    shape = tuple(desc.sizes[:rank]) if rank else ()
    strides = tuple(s * dtype.itemsize for s in desc.strides[:rank]) if rank else ()
    if any(n == 0 for n in shape):
        return np.zeros(shape, dtype)
    span = 1 + sum((n - 1) * s for n, s in zip(shape, desc.strides[:rank], strict=True))
    base = desc.aligned + desc.offset * dtype.itemsize
    raw = (ctypes.c_char * (span * dtype.itemsize)).from_address(base)
    flat = np.frombuffer(raw, dtype=dtype)
    return np.lib.stride_tricks.as_strided(flat, shape, strides).copy()


def _free(pointers: set[int]) -> None:
    """Buffers the kernel allocated (memref.alloc lowers to malloc) and handed back."""
    libc = ctypes.CDLL(None)
    libc.free.argtypes = [ctypes.c_void_p]
    for p in pointers:
        if p:
            libc.free(p)


def to_mlir(sched: Schedule, *, parallel: bool = True, check_bounds: bool = True) -> MlirKernel:
    """The MLIR kernel of a schedule: its loops as scf loops in the schedule's order, the
    krnl.parallel loops legality proves parallel as scf.parallel (OpenMP where LLVM's
    libomp is installed; `parallel=False`: every loop sequential). Before each call the
    kernel refuses sizes for which an access would leave its array (`check_bounds`)."""
    w = write_function(sched, parallel=parallel)
    notes = tuple(f"{loop} runs sequentially: {why}" for loop, why in w.sequential)
    if w.parallel_loops and not openmp_available():
        notes += (
            f"{', '.join(w.parallel_loops)} run sequentially: LLVM's OpenMP runtime is not "
            "installed (apt-get install libomp-19-dev)",
        )
    return MlirKernel(sched, w.source, w.symbol, w.parallel_loops, notes, check_bounds)
