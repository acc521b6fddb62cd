"""scf: conditionals and loops inside one statement, written with their regions."""

from __future__ import annotations

from xdsl.dialects import scf

from polykrnl.targets.mlir.ops.core import MLIR, with_regions

MLIR.add(with_regions, scf.IfOp, scf.ForOp)
