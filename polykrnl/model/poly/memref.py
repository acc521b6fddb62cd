"""The memref dialect in the polyhedral model.

Loads and stores are exact. An allocation (or a free) writes its whole buffer,
which orders it before (after) every use; views and casts are aliases: an
access through one is a may-access of the whole buffer behind it.
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.ir import Operation

from polykrnl.model.poly.domains import Expr, dim_size
from polykrnl.model.poly.table import (
    POLY,
    Accessor,
    OpModel,
    indexed,
    may_read_memrefs,
    no_accesses,
    opaque,
    writes_result,
)
from polykrnl.model.std_ext import CastOp, ReshapeOp


def _copy(op: Operation, expr: Expr, access: Accessor) -> None:
    access(op.operands[0], None, False, False, op)
    access(op.operands[1], None, True, False, op)


POLY.add(
    OpModel(pure=True, load=True, reads_memory=True, accesses=indexed(1, False), writes=False),
    memref.LoadOp,
)
POLY.add(OpModel(accesses=indexed(2, True), writes=1), memref.StoreOp)
POLY.add(
    OpModel(allocates=True, storage=True, accesses=writes_result, writes=False),
    memref.AllocOp,
    memref.AllocaOp,
)
POLY.add(OpModel(accesses=writes_result), memref.DeallocOp)
POLY.add(OpModel(accesses=_copy), memref.CopyOp)
POLY.add(OpModel(pure=True, accesses=no_accesses, index=dim_size), memref.DimOp)
POLY.add(OpModel(pure=True, storage=True, accesses=may_read_memrefs), memref.GetGlobalOp)
POLY.add(
    OpModel(pure=True, accesses=may_read_memrefs),
    memref.RankOp,
    memref.ExtractAlignedPointerAsIndexOp,
)
# Views: an access through one is a may-access of the whole buffer behind it
# (two views of one i8 pool may overlap).
POLY.add(
    OpModel(pure=True, alias=True, accesses=no_accesses),
    memref.CastOp,
    CastOp,
    memref.SubviewOp,
    memref.ReinterpretCastOp,
    memref.AssumeAlignmentOp,
    memref.ViewOp,
    ReshapeOp,
)
POLY.add(OpModel(accesses=opaque), memref.AllocaScopeOp)
