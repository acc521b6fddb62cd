"""The vector dialect in the polyhedral model.

`vector.load` and `vector.store` touch a run of elements: the leading indices
are exact, each of the last dimensions (as many as the vector has) covers
[index, index + size). `vector.transfer_read`/`transfer_write` touch the same
kind of box, along the memref dimensions their permutation map names; lanes a
transfer skips because they leave the memref are points outside the array, which
no access inside it meets, so the box stays exact; a masked transfer touches a
subset of its box that depends on data: a may-access of the box. Every other
vector op is a pure value.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import vector
from xdsl.dialects.builtin import VectorType
from xdsl.ir import Operation, SSAValue

from polykrnl.dialect.std_vector import STD_VECTOR_OPS, transfer_dims
from polykrnl.poly.table import POLY, PURE, AccessFn, Accessor, Exprs, OpModel, no_accesses


def _box(
    op: Operation,
    expr: Exprs,
    access: Accessor,
    mem: SSAValue,
    indices: Sequence[SSAValue],
    sizes: dict[int, int],
    write: bool,
    why: str | None = None,
) -> None:
    """An access of `mem` from `indices`, `sizes[d]` elements along each dimension d in
    `sizes`, one along the others; may-access when `why` says why."""
    subs = [expr.of(v) for v in indices]
    if any(s is None for s in subs):
        access(mem, None, write, True, op)
        return
    region = [
        ("", f"{s} <= _a{d} < {s} + {sizes[d]}" if d in sizes else f"_a{d} = {s}")
        for d, s in enumerate(subs)
    ]
    access(mem, None, write, why is not None, op, region, why)


def _run(value_index: int, memref_index: int, write: bool) -> AccessFn:
    def fn(op: Operation, expr: Exprs, access: Accessor) -> None:
        t = op.operands[value_index].type if write else op.results[0].type
        assert isinstance(t, VectorType)
        shape = t.get_shape()
        indices = op.operands[memref_index + 1 :]
        lead = len(indices) - len(shape)
        if lead < 0:
            access(op.operands[memref_index], None, write, True, op)
            return
        sizes = {lead + k: n for k, n in enumerate(shape)}
        _box(op, expr, access, op.operands[memref_index], indices, sizes, write)

    return fn


def _transfer(op: Operation, expr: Exprs, access: Accessor) -> None:
    assert isinstance(op, vector.TransferReadOp | vector.TransferWriteOp)
    write = isinstance(op, vector.TransferWriteOp)
    t = (op.vector if isinstance(op, vector.TransferWriteOp) else op.result).type
    assert isinstance(t, VectorType)
    dims = transfer_dims(op)
    if dims is None:
        access(op.source, None, write, True, op)
        return
    sizes = {d: n for d, n in zip(dims, t.get_shape(), strict=True) if d is not None}
    why = None if op.mask is None else f"{op.name} with a mask touches the lanes the mask selects"
    _box(op, expr, access, op.source, op.indices, sizes, write, why)


def _masked(op: Operation, expr: Exprs, access: Accessor) -> None:
    assert isinstance(op, vector.MaskedLoadOp | vector.MaskedStoreOp)
    n = len(op.indices)
    t = op.result.type if isinstance(op, vector.MaskedLoadOp) else op.value_to_store.type
    assert isinstance(t, VectorType)
    why = f"{op.name} touches the lanes its mask selects"
    _box(op, expr, access, op.base, op.indices, {n - 1: t.get_shape()[0]}, not op.results, why)


POLY.add(
    OpModel(pure=True, reads_memory=True, accesses=_run(0, 0, False), writes=False),
    vector.LoadOp,
)
POLY.add(
    OpModel(pure=True, reads_memory=True, accesses=_masked, writes=False, clips=True),
    vector.MaskedLoadOp,
)
POLY.add(OpModel(accesses=_masked, writes=0, clips=True), vector.MaskedStoreOp)
POLY.add(OpModel(accesses=_run(0, 1, True), writes=1), vector.StoreOp)
POLY.add(
    OpModel(pure=True, reads_memory=True, accesses=_transfer, writes=False, clips=True),
    vector.TransferReadOp,
)
POLY.add(OpModel(accesses=_transfer, writes=1, clips=True), vector.TransferWriteOp)
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
