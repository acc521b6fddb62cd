"""A reduction along the columns carried by iter_args (``krnl.yield old op e`` with +, max,
min): TROWSUM, TROWMAX or TROWMIN into a column of per-row values, combined with the
initial value unless it is the identity."""

from __future__ import annotations

from xdsl.ir import OpResult

from polykrnl.model.poly import Statement
from polykrnl.tiles.elementwise import tile_value
from polykrnl.tiles.krnl_ops import ROW_REDUCE_INSTR
from polykrnl.tiles.lowering_state import lowering_error
from polykrnl.tiles.program import Instr, Scalar
from polykrnl.tiles.vec_tiles import TileValue, TilewiseNest, tmp_tile_for

__all__ = ["lower_row_reduction"]


_IDENTITY = {"TROWSUM": 0.0, "TROWMAX": float("-inf"), "TROWMIN": float("inf")}


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
    instr = ROW_REDUCE_INSTR[type(op)]
    red = t.new_col(instr.lower()[4:])
    tmp = tmp_tile_for(t, s, instr, t.row, t.col)
    t.items.append(
        Instr(instr, red, (x.tile,), tmp=tmp, comment=f"{s.name}: {y.name_hint or instr}")
    )
    init = t.inits.get(arr)
    if init is None:
        raise lowering_error(s, "an iter_args reduction without its initial value")
    if init != _IDENTITY[instr]:
        combine = {"TROWSUM": "TADDS", "TROWMAX": "TMAXS", "TROWMIN": "TMINS"}[instr]
        out = t.new_col(instr.lower()[4:])
        t.items.append(
            Instr(combine, out, (red, Scalar(init)), comment=f"{s.name}: with the initial value")
        )
        red = out
    t.virtual[arr] = TileValue("col", red)
