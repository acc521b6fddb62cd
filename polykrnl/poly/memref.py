"""The memref dialect in the polyhedral model.

Loads and stores are exact. An allocation (or a free) writes its whole buffer,
which orders it before (after) every use; views and casts are aliases, each
with the map from its elements to its source's (`poly/views.py` follows
accesses through them to the buffer behind). A view whose map is not affine
(dynamic strides, a source with a strided layout) leaves accesses through it
may-accesses of the whole buffer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseArrayBase, MemRefType
from xdsl.ir import Operation, SSAValue

from polykrnl.dialect.std_ext import CastOp, ReshapeOp
from polykrnl.poly.domains import dim_size
from polykrnl.poly.table import (
    POLY,
    Accessor,
    Exprs,
    OpModel,
    indexed,
    may_read_memrefs,
    no_accesses,
    opaque,
    writes_result,
)
from polykrnl.poly.views import contiguous_shape, delinearize, element_bytes, linearize


#: the static value MLIR writes for a dynamic offset, size or stride
def _copy(op: Operation, expr: Exprs, access: Accessor) -> None:
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


# -- views: where the element at `subs` of the view is in its source


def _same_element(op: Operation, subs: Sequence[str], expr: Exprs) -> list[str] | None:
    """A cast: the same subscripts (the same array, with another type)."""
    src = op.operands[0].type
    return list(subs) if isinstance(src, MemRefType) and len(src.get_shape()) == len(subs) else None


def _reshape(op: Operation, subs: Sequence[str], expr: Exprs) -> list[str] | None:
    src, res = contiguous_shape(op.operands[0].type), contiguous_shape(op.results[0].type)
    if src is None or res is None:
        return None
    return delinearize(linearize(subs, res), src)


def _static(op: Operation, prop: str, dynamic: Sequence[SSAValue], expr: Exprs) -> list[str] | None:
    """Static offsets (sizes, strides) with the dynamic ones as isl expressions."""
    values = cast(DenseArrayBase[Any], op.properties[prop]).get_values()
    it = iter(dynamic)
    out: list[str] = []
    for x in values:
        e = expr.of(next(it)) if x == DYNAMIC_INDEX else str(int(x))
        if e is None:
            return None
        out.append(e)
    return out


def _int_strides(op: Operation) -> list[int] | None:
    """The strides, when all static (a dynamic stride times a subscript is not affine)."""
    values = cast(DenseArrayBase[Any], op.properties["static_strides"]).get_values()
    return None if any(x == DYNAMIC_INDEX for x in values) else [int(x) for x in values]


def _reinterpret_cast(op: Operation, subs: Sequence[str], expr: Exprs) -> list[str] | None:
    op = cast(memref.ReinterpretCastOp, op)
    src = contiguous_shape(op.source.type)
    offsets = _static(op, "static_offsets", op.offsets, expr)
    strides = _int_strides(op)
    if src is None or offsets is None or strides is None or len(strides) != len(subs):
        return None
    flat = " + ".join(
        [f"({offsets[0]})", *(f"{s}*({x})" for s, x in zip(strides, subs, strict=True))]
    )
    return delinearize(flat, src)


def _subview(op: Operation, subs: Sequence[str], expr: Exprs) -> list[str] | None:
    op = cast(memref.SubviewOp, op)
    offsets = _static(op, "static_offsets", op.offsets, expr)
    strides = _int_strides(op)
    if offsets is None or strides is None or not (len(offsets) == len(strides) == len(subs)):
        return None  # a rank-reducing subview: which dimensions it drops is not kept here
    return [f"({o}) + {s}*({x})" for o, s, x in zip(offsets, strides, subs, strict=True)]


def _view(op: Operation, subs: Sequence[str], expr: Exprs) -> list[str] | None:
    """`memref.view %pool[%shift][sizes]`: the first byte of the element in the pool."""
    op = cast(memref.ViewOp, op)
    res = contiguous_shape(op.results[0].type)
    shift = expr.of(op.byte_shift)
    res_type = op.results[0].type
    assert isinstance(res_type, MemRefType)
    width = element_bytes(res_type.element_type)
    if res is None or shift is None or width is None:
        return None
    return [f"({shift}) + {width}*({linearize(subs, res)})"]


POLY.add(
    OpModel(pure=True, alias=True, accesses=no_accesses, view=_same_element),
    memref.CastOp,
    CastOp,
    memref.AssumeAlignmentOp,
)
POLY.add(OpModel(pure=True, alias=True, accesses=no_accesses, view=_subview), memref.SubviewOp)
POLY.add(
    OpModel(pure=True, alias=True, accesses=no_accesses, view=_reinterpret_cast),
    memref.ReinterpretCastOp,
)
POLY.add(OpModel(pure=True, alias=True, accesses=no_accesses, view=_view), memref.ViewOp)
POLY.add(OpModel(pure=True, alias=True, accesses=no_accesses, view=_reshape), ReshapeOp)
POLY.add(OpModel(accesses=opaque), memref.AllocaScopeOp)
