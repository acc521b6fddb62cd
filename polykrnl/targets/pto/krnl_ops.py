"""The Krnl and MLIR ops the PTO patterns recognize, by op class, and the PTO instruction
each elementwise or reducing op becomes."""

from __future__ import annotations

from xdsl.dialects import arith, math, memref
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Operation, OpResult, SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.nest.values import Loop, LoopNest

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

UNARY_INSTR: dict[type[Operation], str] = {
    math.ExpOp: "TEXP",
    math.SqrtOp: "TSQRT",
    math.AbsFOp: "TABS",
    arith.NegfOp: "TNEG",
    math.LogOp: "TLOG",
    math.RsqrtOp: "TRSQRT",
}
# maximumf/minimumf (NaN wins) and maxnumf/minnumf (the number wins, what onnx-mlir
# writes for max reductions) differ only on NaN, which PTO leaves undefined: both
# become the one instruction (docs/pto.md, "NaN and max/min").
BINARY_INSTR: dict[type[Operation], str] = {
    arith.AddfOp: "TADD",
    arith.SubfOp: "TSUB",
    arith.MulfOp: "TMUL",
    arith.DivfOp: "TDIV",
    arith.MaximumfOp: "TMAX",
    arith.MinimumfOp: "TMIN",
    arith.MaxnumfOp: "TMAX",
    arith.MinnumfOp: "TMIN",
}
#: The combining op of a ``krnl.yield old op e`` -> the row reduction it is.
ROW_REDUCE_INSTR: dict[type[Operation], str] = {
    arith.AddfOp: "TROWSUM",
    arith.MaximumfOp: "TROWMAX",
    arith.MinimumfOp: "TROWMIN",
    arith.MaxnumfOp: "TROWMAX",
    arith.MinnumfOp: "TROWMIN",
}

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
