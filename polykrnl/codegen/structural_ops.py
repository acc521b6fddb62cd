"""The ops NumPy code generation handles by their structure, not by an expression.

Loops, memory accesses, allocations and the Krnl recipe shape the generated code
itself (a slice, a loop, an in-place update), so the statement writer
(:mod:`polykrnl.codegen.statements`, :mod:`polykrnl.codegen.memory_ops`) and the
vectorizer handle them, not an entry of the expression table ``NUMPY``. This list
is what the `polykrnl ops` table reports for them; tests/test_ops_table.py compiles
a corpus program using each one.
"""

from __future__ import annotations

from xdsl.dialects import affine, func, memref, scf, vector
from xdsl.ir import Operation

from polykrnl.codegen.numpy_ops import NUMPY
from polykrnl.dialect import krnl as k

STRUCTURAL_OPS: tuple[type[Operation], ...] = (
    # loops and regions
    k.DefineLoopsOp,
    k.BlockOp,
    k.PermuteOp,
    k.ParallelOp,
    k.UnrollOp,
    k.IterateOp,
    k.GetInductionVarValueOp,
    k.YieldOp,
    k.TerminateOp,
    k.RegionOp,
    k.MovableOp,
    scf.ForOp,
    scf.IfOp,
    scf.YieldOp,
    scf.ExecuteRegionOp,
    affine.ForOp,
    affine.IfOp,
    affine.YieldOp,
    func.CallOp,
    func.ReturnOp,
    # memory
    k.LoadOp,
    k.StoreOp,
    memref.LoadOp,
    memref.StoreOp,
    affine.LoadOp,
    affine.StoreOp,
    vector.LoadOp,
    vector.StoreOp,
    vector.TransferReadOp,
    vector.TransferWriteOp,
    vector.MaskedLoadOp,
    vector.MaskedStoreOp,
    memref.AllocOp,
    memref.AllocaOp,
    memref.DeallocOp,
    k.GlobalOp,
    k.MemsetOp,
    k.MemcpyOp,
    k.MatMulOp,
    # a placeholder consuming its loops: no statement (polykrnl.poly.krnl), no code
    k.SpecializedKernelOp,
    k.CopyToTileBufferOp,
    k.CopyFromTileBufferOp,
    k.CallOp,
    k.SeqAllocOp,
    k.SeqStoreOp,
    k.SeqExtractOp,
    k.SeqDeallocOp,
)


def written(op: type[Operation]) -> bool:
    """Whether the Python writer (both Python targets) translates ops of this class: the
    scalar ops of the NUMPY table and the structural ops above."""
    return op in NUMPY or op in STRUCTURAL_OPS
