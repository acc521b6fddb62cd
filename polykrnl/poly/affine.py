"""The affine dialect in the polyhedral model: loads and stores through maps are exact."""

from __future__ import annotations

from typing import cast

from xdsl.dialects import affine
from xdsl.ir import Operation

from polykrnl.dialect.std_ext import MaxOp
from polykrnl.poly.domains import map_results
from polykrnl.poly.table import POLY, Accessor, Exprs, IndexFn, OpModel, no_accesses, opaque


def _apply(op: Operation, expr: Exprs) -> str | None:
    op = cast(affine.ApplyOp, op)
    return map_results(op.map.data, [expr.of(x) for x in op.operands])[0]


def _extreme(fn: str) -> IndexFn:
    """The least (`min`) or greatest (`max`) result of the op's map, as isl writes it."""

    def index(op: Operation, expr: Exprs) -> str | None:
        m = cast(affine.MinOp | MaxOp, op).map.data
        results = map_results(m, [expr.of(x) for x in op.operands])
        known = [r for r in results if r is not None]
        if not known or len(known) < len(results):
            return None
        return known[0] if len(known) == 1 else f"{fn}({', '.join(known)})"

    return index


def _load(op: Operation, expr: Exprs, access: Accessor) -> None:
    op = cast(affine.LoadOp, op)
    args = [expr.of(i) for i in op.indices]
    access(op.memref, map_results(op.map.data, args) if op.map else args, False, False, op)


def _store(op: Operation, expr: Exprs, access: Accessor) -> None:
    op = cast(affine.StoreOp, op)
    args = [expr.of(i) for i in op.indices]
    access(op.memref, map_results(op.map.data, args) if op.map else args, True, False, op)


POLY.add(OpModel(pure=True, accesses=no_accesses, index=_apply, index_final=True), affine.ApplyOp)
# The least / greatest result of a map of affine values: a piecewise affine value, which
# isl takes exactly in loop bounds and subscripts (`min(a, b)`). Of values that are not
# affine: a parameter outside every loop, an approximated subscript inside.
POLY.add(OpModel(pure=True, accesses=no_accesses, index=_extreme("min")), affine.MinOp)
POLY.add(OpModel(pure=True, accesses=no_accesses, index=_extreme("max")), MaxOp)
POLY.add(
    OpModel(pure=True, load=True, reads_memory=True, accesses=_load, writes=False), affine.LoadOp
)
POLY.add(OpModel(accesses=_store, writes=1), affine.StoreOp)
POLY.add(OpModel(terminator=True, accesses=no_accesses), affine.YieldOp)
POLY.add(OpModel(accesses=opaque), affine.ForOp, affine.IfOp, affine.ParallelOp)
