"""The scf dialect in the polyhedral model: control flow inside a statement is opaque.

The model does not look into scf regions: an scf op is one statement that may
read and write every memref its regions use (an over-approximation, so the
legality check stays sound).
"""

from __future__ import annotations

from xdsl.dialects import scf

from polykrnl.model.poly.table import POLY, OpModel, no_accesses, opaque

POLY.add(OpModel(terminator=True, accesses=no_accesses), scf.YieldOp)
POLY.add(
    OpModel(accesses=opaque),
    scf.IfOp,
    scf.ForOp,
    scf.WhileOp,
    scf.ExecuteRegionOp,
    scf.ParallelOp,
    scf.IndexSwitchOp,
)
