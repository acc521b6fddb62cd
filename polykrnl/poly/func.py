"""The func dialect in the polyhedral model."""

from __future__ import annotations

from xdsl.dialects import func

from polykrnl.poly.table import POLY, OpModel, no_accesses, opaque

POLY.add(OpModel(terminator=True, accesses=no_accesses), func.ReturnOp)
# A call may read and write every memref it is given.
POLY.add(OpModel(accesses=opaque), func.CallOp)
