"""The arith dialect in the polyhedral model: pure values; index arithmetic is affine."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import Operation

from polykrnl.dialect.std_ext import STD_EXT_OPS, ExtSIOp, ExtUIOp, IndexCastUIOp
from polykrnl.ir import const_int
from polykrnl.poly.table import POLY, Exprs, OpModel, may_read_memrefs


def _same(op: Operation, expr: Exprs) -> str | None:
    """A cast between integer types keeps the value (the model does not wrap)."""
    return expr.of(op.operands[0])


def _binary(op: Operation, expr: Exprs) -> str | None:
    lhs, rhs = expr.of(op.operands[0]), expr.of(op.operands[1])
    if lhs is None or rhs is None:
        return None
    cl, cr = const_int(op.operands[0]), const_int(op.operands[1])
    if isinstance(op, arith.AddiOp):
        return f"({lhs}) + ({rhs})"
    if isinstance(op, arith.SubiOp):
        return f"({lhs}) - ({rhs})"
    if isinstance(op, arith.MuliOp) and cr is not None:
        return f"{cr} * ({lhs})"  # affine only with one constant factor (isl wants it bare)
    if isinstance(op, arith.MuliOp) and cl is not None:
        return f"{cl} * ({rhs})"
    if isinstance(op, arith.FloorDivSIOp) and cr is not None and cr > 0:
        return f"floor(({lhs})/{cr})"
    if isinstance(op, arith.CeilDivSIOp) and cr is not None and cr > 0:
        return f"ceil(({lhs})/{cr})"
    return None


_INDEX = {
    arith.IndexCastOp: _same,
    IndexCastUIOp: _same,
    arith.ExtSIOp: _same,
    arith.ExtUIOp: _same,
    ExtSIOp: _same,
    ExtUIOp: _same,
    arith.AddiOp: _binary,
    arith.SubiOp: _binary,
    arith.MuliOp: _binary,
    arith.FloorDivSIOp: _binary,
    arith.CeilDivSIOp: _binary,
}

for _op in (*arith.Arith.operations, *(o for o in STD_EXT_OPS if o.name.startswith("arith."))):
    _index = _INDEX.get(_op)
    POLY.add(
        OpModel(pure=True, accesses=may_read_memrefs, index=_index, index_final=_index is _same),
        _op,
    )
