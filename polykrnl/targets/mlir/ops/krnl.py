"""krnl: Krnl's memory and scalar ops as their standard equivalents."""

from __future__ import annotations

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation

from polykrnl.dialect import krnl as k
from polykrnl.targets.mlir.ops.core import MLIR, Emission, load, renamed, store

# Same operands (value, memref, indices) and types as the memref ops.
MLIR.add(load, k.LoadOp)
MLIR.add(store, k.StoreOp)

# Krnl's scalar functions are math's (same operand and result types).
for _cls, _name in (
    (k.AcosOp, "math.acos"),
    (k.AcoshOp, "math.acosh"),
    (k.AsinOp, "math.asin"),
    (k.AsinhOp, "math.asinh"),
    (k.AtanOp, "math.atan"),
    (k.AtanhOp, "math.atanh"),
    (k.TanOp, "math.tan"),
    (k.ErfOp, "math.erf"),
    (k.RoundEvenOp, "math.roundeven"),
    (k.IsNaNOp, "math.isnan"),
    (k.IsInfOp, "math.isinf"),
):
    MLIR.add(renamed(_name), _cls)


@MLIR.register(k.MemsetOp)
def _memset(e: Emission, op: Operation) -> None:
    """Every element of the memref set: one scf.for per dimension around a store."""
    assert isinstance(op, k.MemsetOp)
    t = op.dest.type
    assert isinstance(t, MemRefType)
    mem, val = e.value(op.dest), e.value(op.value)
    ivs: list[str] = []
    for d, n in enumerate(t.get_shape()):
        size = e.w.index(n) if n >= 0 else e.w.op("n", f"memref.dim {mem}, {e.w.index(d)} : {t}")
        iv = e.w.fresh(f"m{d}")
        e.w.line(f"scf.for {iv} = {e.w.index(0)} to {size} step {e.w.index(1)} {{")
        e.w.depth += 1
        ivs.append(iv)
    e.w.line(f"memref.store {val}, {mem}[{', '.join(ivs)}] : {t}")
    for _ in ivs:
        e.w.depth -= 1
        e.w.line("}")


def _nothing(e: Emission, op: Operation) -> None:
    """Recipe ops: the schedule's loops already are what they describe."""


MLIR.add(_nothing, k.DefineLoopsOp, k.BlockOp, k.PermuteOp, k.ParallelOp, k.UnrollOp)
