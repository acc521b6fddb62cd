"""The vector dialect in the polyhedral model.

`vector.load` and `vector.store` touch a run of elements: the leading indices
are exact, each of the last dimensions (as many as the vector has) covers
[index, index + size). Every other vector op is a pure value.
"""

from __future__ import annotations

from xdsl.dialects import vector
from xdsl.dialects.builtin import VectorType
from xdsl.ir import Operation

from polykrnl.model.poly.domains import Expr
from polykrnl.model.poly.table import POLY, PURE, AccessFn, Accessor, OpModel, no_accesses
from polykrnl.model.std_vector import STD_VECTOR_OPS


def _run(value_index: int, memref_index: int, write: bool) -> AccessFn:
    def fn(op: Operation, expr: Expr, access: Accessor) -> None:
        t = op.operands[value_index].type if write else op.results[0].type
        assert isinstance(t, VectorType)
        shape = t.get_shape()
        mem = op.operands[memref_index]
        subs = [expr.of(v) for v in op.operands[memref_index + 1 :]]
        lead = len(subs) - len(shape)
        if lead < 0 or any(s is None for s in subs):
            access(mem, None, write, True, op)
            return
        region = [
            ("", f"_a{d} = {s}" if d < lead else f"{s} <= _a{d} < {s} + {shape[d - lead]}")
            for d, s in enumerate(subs)
        ]
        access(mem, None, write, False, op, region)

    return fn


POLY.add(
    OpModel(pure=True, reads_memory=True, accesses=_run(0, 0, False), writes=False),
    vector.LoadOp,
)
POLY.add(OpModel(accesses=_run(0, 1, True), writes=1), vector.StoreOp)
POLY.add(
    PURE,
    vector.BroadcastOp,
    vector.FMAOp,
    vector.ExtractOp,
    vector.InsertOp,
    vector.ShuffleOp,
    vector.ReductionOp,
    vector.BitcastOp,
    vector.CreateMaskOp,
    *STD_VECTOR_OPS,
)
POLY.add(OpModel(io=True, writes=False, accesses=no_accesses), vector.PrintOp)
