"""math: every op of MLIR's math dialect, written back as it is."""

from __future__ import annotations

from xdsl.dialects import math

from polykrnl.dialect.std_ext import STD_EXT_OPS
from polykrnl.targets.mlir.ops.core import MLIR, generic

MLIR.add(
    generic,
    *math.Math.operations,
    *(op for op in STD_EXT_OPS if op.name.startswith("math.")),
)
