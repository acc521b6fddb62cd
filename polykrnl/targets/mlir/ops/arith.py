"""arith: every op MLIR's arith dialect has, written back as it is."""

from __future__ import annotations

from xdsl.dialects import arith

from polykrnl.dialect.std_ext import STD_EXT_OPS
from polykrnl.targets.mlir.ops.core import MLIR, generic

MLIR.add(
    generic,
    *(op for op in arith.Arith.operations if op not in MLIR),
    *(op for op in STD_EXT_OPS if op.name.startswith("arith.") and op not in MLIR),
)
