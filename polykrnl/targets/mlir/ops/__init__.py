"""The MLIR target's op table, one module per dialect (see :mod:`.core`)."""

from polykrnl.targets.mlir.ops import affine, arith, krnl, math, memref, scf  # noqa: F401
from polykrnl.targets.mlir.ops.core import MLIR, STRUCTURAL, Emission, Emitter

__all__ = ["MLIR", "STRUCTURAL", "Emission", "Emitter"]
