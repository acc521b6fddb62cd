"""memref: loads, stores, sizes, allocations and views, written back as they are."""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.ir import Operation

from polykrnl.dialect.std_ext import CastOp, ReshapeOp
from polykrnl.poly.table import base
from polykrnl.targets.mlir.ops.core import MLIR, Emission, generic, load, store

MLIR.add(
    generic,
    memref.DimOp,
    memref.RankOp,
    memref.AllocOp,
    memref.AllocaOp,
    memref.ReinterpretCastOp,
    memref.SubviewOp,
    memref.CopyOp,
    CastOp,
    ReshapeOp,
)
MLIR.add(load, memref.LoadOp)
MLIR.add(store, memref.StoreOp)


@MLIR.register(memref.DeallocOp)
def _dealloc(e: Emission, op: Operation) -> None:
    """Frees a memref.alloc; a memref.alloca's memory is the stack's (the interpreter and
    NumPy accept freeing it; freeing it natively would corrupt the heap)."""
    owner = base(op.operands[0]).owner
    if isinstance(owner, memref.AllocaOp):
        e.w.line("// memref.dealloc of a memref.alloca: its memory is freed with the frame")
        return
    generic(e, op)
