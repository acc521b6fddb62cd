"""Code generation targets behind one protocol (:class:`Target`), found by name.

A target turns a :class:`~polykrnl.transforms.core.Schedule` into a kernel: NumPy
(vectorized Python), Numba (scalar loops compiled by Numba), PTO (C++ for the Ascend tile
ISA, with a NumPy model), MLIR (standard MLIR run natively through LLVM's tools). Each
says which op classes it translates (`supports`, from its own op table), whether it can
run on this machine (`missing`: a dependency), and builds kernels (`build`).
`pk.compile(fn, target=...)`, `polykrnl run --target` and `polykrnl ops` (one column per
target) read this registry, so adding a target is adding a module here that registers one.
"""

from __future__ import annotations

# The order of registration is the order of `polykrnl ops`'s columns.
from polykrnl.targets.base import TARGETS, Target, target
from polykrnl.targets.numpy import NUMPY

# isort: split
from polykrnl.targets.numba import NUMBA

# isort: split
from polykrnl.targets.pto.target import PTO

# isort: split
from polykrnl.targets.mlir.target import MLIR_TARGET

__all__ = ["MLIR_TARGET", "NUMBA", "NUMPY", "PTO", "TARGETS", "Target", "target"]
