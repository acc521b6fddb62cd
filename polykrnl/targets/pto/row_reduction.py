"""A reduction along the columns, carried by iter_args (``krnl.yield old op e`` with +, max,
min) or through a temporary (``T[r] = T[r] op e``): TROWSUM, TROWMAX or TROWMIN into a
column of per-row values, combined with the value before unless it is the identity."""

from __future__ import annotations

from xdsl.ir import Operation, OpResult

from polykrnl.poly import Statement
from polykrnl.targets.pto.elementwise import tile_value
from polykrnl.targets.pto.instructions import INSTRUCTIONS
from polykrnl.targets.pto.krnl_ops import ROW_REDUCE_INSTR, is_load
from polykrnl.targets.pto.lowering_state import lowering_error
from polykrnl.targets.pto.program import Instr, Scalar
from polykrnl.targets.pto.vec_tiles import TileValue, TilewiseNest, tmp_tile_for

__all__ = ["lower_memory_reduction", "lower_row_reduction"]


def lower_row_reduction(t: TilewiseNest, s: Statement) -> None:
    """`krnl.yield old op e` along the column loop: a TROW* reduction into a column."""
    assert s.iterate is not None
    program = t.b.sched.program
    term = s.anchor
    if len(term.operands) != 1 or len(s.iterate.iter_args) != 1:
        raise lowering_error(s, "an iterate carrying several values (one reduction per iterate)")
    carried = s.iterate.iter_args[0]
    arr = program.virtual[carried][0]
    y = term.operands[0]
    if t.col is None or not t.col_names & set(s.dim_origins or s.dims):
        raise lowering_error(s, "a reduction that is not along the column loop")
    if not isinstance(y, OpResult) or type(y.op) not in ROW_REDUCE_INSTR:
        raise lowering_error(s, "a reduction that is not +, max or min")
    op = y.op
    if op.operands[0] is carried:
        e = op.operands[1]
    elif op.operands[1] is carried:
        e = op.operands[0]
    else:
        raise lowering_error(s, "a yield that does not combine the carried value")
    x = tile_value(t, s, e)
    if x.kind != "tile":
        raise lowering_error(s, "a reduction of a value that is not a tile of the nest")
    init = t.inits.get(arr)
    if init is None:
        raise lowering_error(s, "an iter_args reduction without its initial value")
    t.virtual[arr] = _reduce(t, s, type(op), x, TileValue("scalar", scalar=init), y.name_hint)


def lower_memory_reduction(
    t: TilewiseNest, s: Statement, array: str, current: TileValue
) -> TileValue:
    """`T[r] = T[r] op e` inside the column loop (a reduction through a temporary, as
    onnx-mlir writes them): the row reduction of e combined with T's current value."""
    y = s.anchor.operands[0]
    op = y.op if isinstance(y, OpResult) else None
    if op is None or type(op) not in ROW_REDUCE_INSTR:
        raise lowering_error(s, f"the temporary {array} is updated inside the column loop by "
                             "something else than +, max or min")  # fmt: skip
    program = t.b.sched.program
    others = [
        e for e in op.operands
        if not (isinstance(e, OpResult) and is_load(e.op)
                and program.array_names.get(e.op.operands[0]) == array)
    ]  # fmt: skip
    if len(others) != 1:
        raise lowering_error(s, f"an update of {array} that does not combine its old value")
    x = tile_value(t, s, others[0])
    if x.kind != "tile":
        raise lowering_error(s, "a reduction of a value that is not a tile of the nest")
    return _reduce(t, s, type(op), x, current, y.name_hint)


def _reduce(
    t: TilewiseNest,
    s: Statement,
    op: type[Operation],
    x: TileValue,
    start: TileValue,
    hint: str | None,
) -> TileValue:
    """TROW<op> of tile `x` into a column, combined with `start` (a constant, skipped when it
    is the identity, or a column of per-row values)."""
    instr = ROW_REDUCE_INSTR[op]
    info = INSTRUCTIONS[instr]
    red = t.new_col(instr.lower()[4:])
    tmp = tmp_tile_for(t, s, instr, t.row, t.col)
    t.items.append(Instr(instr, red, (x.tile,), tmp=tmp, comment=f"{s.name}: {hint or instr}"))
    if start.kind == "scalar" and start.scalar == info.identity:
        return TileValue("col", red)
    assert info.combine is not None, f"{instr}: the table gives no combining instruction"
    combine = info.combine
    if start.kind == "scalar":
        # pto-isa's tile-scalar forms take row-major tiles only (TBinSOps.hpp's
        # static_assert), and red is a column: the constant becomes a column too.
        first = t.new_col("init")
        t.items.append(
            Instr("TEXPANDS", first, (Scalar(start.scalar),), comment=f"{s.name}: initial value")
        )
        start, note = TileValue("col", first), "with the initial value"
    else:
        note = "with the value before"
    out = t.new_col(instr.lower()[4:])
    t.items.append(Instr(combine, out, (start.tile, red), comment=f"{s.name}: {note}"))
    return TileValue("col", out)
