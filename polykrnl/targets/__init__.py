"""Code generation targets behind one protocol (:class:`Target`), found by name.

A target turns a :class:`~polykrnl.transforms.core.Schedule` into a kernel: NumPy
(vectorized Python), Numba (scalar loops compiled by Numba), PTO (C++ for the Ascend tile
ISA, with a NumPy model), MLIR (standard MLIR run natively through LLVM's tools). Each
says which op classes it translates (`supports`, from its own op table), whether it can
run on this machine (`missing`: a dependency), and builds kernels (`build`).
`pk.compile(fn, target=...)`, `polykrnl run --target` and `polykrnl ops` (one column per
target) read this registry, so adding a target is adding a package here and its line in
`base.ENTRIES`.
"""

from __future__ import annotations

from polykrnl.targets.base import ENTRIES, Target, registry, target

__all__ = ["ENTRIES", "Target", "registry", "target"]
