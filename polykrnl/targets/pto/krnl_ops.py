"""The Krnl and MLIR ops the PTO patterns recognize, by op class, and the PTO instruction
each elementwise or reducing op becomes (from the table of :mod:`.instructions`)."""

from __future__ import annotations

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Operation, OpResult, SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.nest.values import Loop, LoopNest
from polykrnl.targets.pto.instructions import by_op_class

__all__ = [
    "BINARY_INSTR",
    "RECOGNIZED",
    "ROW_REDUCE_INSTR",
    "UNARY_INSTR",
    "constant_value",
    "is_add",
    "is_alloc",
    "is_load",
    "is_mul",
    "is_store",
    "loop_of_value",
    "unwrap_extf",
]

# Derived from the instruction table: an op class reaches an instruction by the table
# entry's `implements` (the NaN note on max/min is there).
UNARY_INSTR: dict[type[Operation], str] = by_op_class("unary")
BINARY_INSTR: dict[type[Operation], str] = by_op_class("binary")
#: The combining op of a ``krnl.yield old op e`` -> the row reduction it is.
ROW_REDUCE_INSTR: dict[type[Operation], str] = by_op_class("rowreduce")

#: Every op class some PTO pattern recognizes (the instructions above, memory, constants,
#: the recipe's values, krnl.matmul, krnl.memset, the tile-buffer copies): what
#: `polykrnl ops` shows in its pto column. A pattern may still refuse an op in a context
#: it does not match (PtoError names the statement).
RECOGNIZED: frozenset[type[Operation]] = frozenset(
    {
        *UNARY_INSTR,
        *BINARY_INSTR,
        *ROW_REDUCE_INSTR,
        k.LoadOp,
        k.StoreOp,
        memref.LoadOp,
        memref.StoreOp,
        memref.AllocOp,
        memref.AllocaOp,
        memref.DeallocOp,
        arith.ConstantOp,
        arith.ExtFOp,
        k.GetInductionVarValueOp,
        k.MatMulOp,
        k.MemsetOp,
        k.CopyToTileBufferOp,
        k.CopyFromTileBufferOp,
    }
)


def is_load(op: Operation) -> bool:
    """A krnl.load or memref.load (operands: the memref, then the subscripts)."""
    return isinstance(op, k.LoadOp | memref.LoadOp)


def is_store(op: Operation) -> bool:
    """A krnl.store or memref.store (operands: the value, the memref, then the subscripts)."""
    return isinstance(op, k.StoreOp | memref.StoreOp)


def is_alloc(op: Operation) -> bool:
    return isinstance(op, memref.AllocOp | memref.AllocaOp)


def is_add(op: Operation) -> bool:
    return isinstance(op, arith.AddfOp | arith.AddiOp)


def is_mul(op: Operation) -> bool:
    return isinstance(op, arith.MulfOp | arith.MuliOp)


def constant_value(v: SSAValue) -> float | int | None:
    """The number `v` is when an arith.constant defines it."""
    if isinstance(v, OpResult) and isinstance(v.op, arith.ConstantOp):
        attr = v.op.value
        if isinstance(attr, FloatAttr):
            return float(attr.value.data)
        if isinstance(attr, IntegerAttr):
            return int(attr.value.data)
    return None


def unwrap_extf(v: SSAValue) -> SSAValue:
    """The value under an arith.extf (the cube widens f16/bf16 products to f32 itself)."""
    if isinstance(v, OpResult) and isinstance(v.op, arith.ExtFOp):
        return v.op.operands[0]
    return v


def loop_of_value(nest: LoopNest, v: SSAValue) -> Loop | None:
    """The loop whose value `v` is, when a `krnl.get_induction_var_value` reads it."""
    if isinstance(v, OpResult) and isinstance(v.op, k.GetInductionVarValueOp):
        return nest.loop_of.get(v.op.operands[v.index])
    return None
