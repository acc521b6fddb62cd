"""``krnl.memset Y, c`` on its own: one tile filled with c, stored over every window of Y.

onnx-mlir sets an output to a constant before a nest accumulates into it (a reduction's
identity) or to clear padding. Y is seen as its contiguous rows (every dimension but the
last folded into the rows) by its last dimension; a tile of up to 16 KiB is filled once
(``TEXPANDS``, vector unit), then stored window by window (``TSTORE``), the windows at the
edges with a smaller valid shape. A nest that reads Y afterwards waits for the stores
(synchronization through global memory). A memset of a temporary that fused nests keep
in UB emits nothing here: the tile-wise body starts the temporary from the constant
(:mod:`.tilewise`).
"""

from __future__ import annotations

import sympy  # type: ignore[import-untyped]

from polykrnl.dialect.krnl import MemsetOp
from polykrnl.poly import Statement
from polykrnl.targets.pto.dtypes import ALIGN_BYTES
from polykrnl.targets.pto.krnl_ops import constant_value
from polykrnl.targets.pto.lowering_state import KernelBuilder, lowering_error, round_up
from polykrnl.targets.pto.program import GlobalView, Instr, Item, Loop, Scalar, SetValid
from polykrnl.targets.pto.types import vec_tile

__all__ = ["lower_memset", "memset_of"]

TILE_BYTES = 16 * 1024  # the fill tile: small against UB, large enough to store in bursts
ROW_BYTES = 4 * 1024  # at most this much of a row per window


def memset_of(b: KernelBuilder, s: Statement) -> tuple[str, float | int] | None:
    """The tensor a `krnl.memset` of a constant fills and the constant, if `s` is one."""
    op = s.anchor
    if not isinstance(op, MemsetOp):
        return None
    value = constant_value(op.value)
    tensor = b.tensor_of_value.get(op.dest)
    if value is None or tensor is None:
        return None
    return tensor, value


def lower_memset(b: KernelBuilder, s: Statement) -> list[Item]:
    """TEXPANDS once, then a TSTORE per window of the tensor (see the module)."""
    found = memset_of(b, s)
    if found is None:
        raise lowering_error(
            s,
            "a statement outside every loop (only a krnl.memset of a constant into a "
            "tensor argument or a returned buffer is lowered on its own)",
            hint="put the statement in a loop nest",
        )
    name, value = found
    tensor = b.tensors[name]
    dt = tensor.dtype
    shape = tensor.shape or (sympy.Integer(1),)
    rows_total = sympy.Mul(*shape[:-1]) if len(shape) > 1 else sympy.Integer(1)
    cols_total = shape[-1]
    lanes = ALIGN_BYTES // dt.size  # a row-major tile's row is a multiple of 32 bytes
    widest = ROW_BYTES // dt.size
    cols = (
        min(round_up(int(cols_total), lanes), widest)
        if isinstance(cols_total, sympy.Integer)
        else widest
    )
    rows = max(1, TILE_BYTES // (cols * dt.size))
    if isinstance(rows_total, sympy.Integer):
        rows = min(rows, int(rows_total))
    tile = b.tile("fill", vec_tile(dt, rows, cols, None, None), "tile")
    r, c = b.fresh("mr"), b.fresh("mc")
    rv = sympy.Symbol(r, integer=True)
    # one window per row block when a tile holds whole rows (no column loop)
    whole_rows = isinstance(cols_total, sympy.Integer) and int(cols_total) <= cols
    cv = sympy.Integer(0) if whole_rows else sympy.Symbol(c, integer=True)
    valid_r, valid_c = sympy.Min(rows, rows_total - rv), sympy.Min(cols, cols_total - cv)
    view = GlobalView(name, sympy.expand(rv * cols_total + cv), valid_r, valid_c, cols_total)
    store = Instr("TSTORE", view, (tile,), comment=f"{s.name}: {name} = {value}")
    inner: list[Item] = [SetValid(tile, valid_r, valid_c), store]
    body: list[Item] = (
        inner if whole_rows else [Loop(c, 0, cols_total, cols, inner, comment=f"columns of {name}")]
    )
    return [
        Instr("TEXPANDS", tile, (Scalar(value),), comment=f"{s.name}: krnl.memset {name}"),
        Loop(r, 0, rows_total, rows, body, comment=f"rows of {name}"),
    ]
