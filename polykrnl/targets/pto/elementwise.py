"""What one SSA value of a statement is on the tile: a load (TLOAD, with TTRANS for a
transposed window, or a column of one value per row), an elementwise arith/math op (TADD,
TEXP, ... with a constant: TADDS, ...; with a per-row value: TROWEXPANDADD, ...)."""

from __future__ import annotations

from collections.abc import Sequence

import sympy  # type: ignore[import-untyped]
from xdsl.ir import BlockArgument, OpResult, SSAValue

from polykrnl.poly import Statement
from polykrnl.targets.pto.dtypes import DType, dtype
from polykrnl.targets.pto.instructions import INSTRUCTIONS, Instruction
from polykrnl.targets.pto.krnl_ops import (
    BINARY_INSTR,
    UNARY_INSTR,
    constant_value,
    is_load,
    loop_of_value,
)
from polykrnl.targets.pto.lowering_state import lowering_error
from polykrnl.targets.pto.program import GlobalView, Instr, Scalar
from polykrnl.targets.pto.vec_tiles import (
    TileValue,
    TilewiseNest,
    check_same_dtype,
    tmp_tile_for,
    transposed_tile,
)

__all__ = ["check_one_window", "subscript_loops", "tile_value", "tile_window"]


def _element_dtype(s: Statement, v: SSAValue) -> DType:
    try:
        return dtype(str(v.type))
    except Exception as e:
        raise lowering_error(s, f"values of type {v.type} have no PTO tile") from e


def subscript_loops(t: TilewiseNest, s: Statement, idx: Sequence[SSAValue]) -> list[str]:
    """The original loop each subscript is (PTO windows are plain index ranges)."""
    nest = t.b.sched.program.nest
    out: list[str] = []
    for v in idx:
        origin = nest.origin_of_iv.get(v) if isinstance(v, BlockArgument) else None
        if (lp := loop_of_value(nest, v)) is not None:
            # onnx-mlir's subscripts: the value of a loop handle, the induction variable
            # when the handle is the loop that carries it (not a tile loop's start)
            origin = lp.origin if lp.origin.carrier is lp else None
        name = None
        if origin is not None and origin.carrier is not None:
            name = t.b.sched.program.loop_names[origin.carrier]
            name = t.b.sched.loop(name).origin if name in t.b.sched.loop_names() else name
            name = t.canon(name)
        if name is None or name not in t.axes:
            raise lowering_error(
                s,
                "a subscript that is not a loop's induction variable (PTO windows are "
                "rectangular ranges of rows and columns)",
            )
        out.append(name)
    return out


def tile_window(
    t: TilewiseNest, s: Statement, tensor: str, subs: list[str]
) -> tuple[GlobalView, bool]:
    """The global window of the tile for `tensor[subs]`, and whether it is transposed."""
    tp = t.b.tensors[tensor]
    row, col = t.row, t.col
    if len(subs) == 1 and len(tp.shape) == 1 and subs[0] == row.origin:
        # One value per row: a column window (row stride 1).
        return GlobalView(
            tensor, sympy.expand(row.start), row.extent, sympy.Integer(1), sympy.Integer(1)
        ), False
    if len(subs) == 1 and len(tp.shape) == 1 and col is not None and subs[0] == col.origin:
        # One value per column: a row window (a row stride below the width is no ND window).
        return GlobalView(
            tensor, sympy.expand(col.start), sympy.Integer(1), col.extent, col.extent
        ), False
    if (
        col is None
        or len(subs) != 2
        or len(tp.shape) != 2
        or row.origin not in subs
        or not (set(subs) - {row.origin}) <= t.col_names
        or subs[0] == subs[1]
    ):
        raise lowering_error(
            s,
            f"{tensor}[{', '.join(subs)}] is not a window of rows {row.origin} and columns "
            f"{', '.join(sorted(t.col_names)) or '-'}",
        )
    if subs[0] == row.origin:
        return GlobalView.of(tp, row.start, col.start, row.extent, col.extent), False
    return GlobalView.of(tp, col.start, row.start, col.extent, row.extent), True


def tile_value(t: TilewiseNest, s: Statement, v: SSAValue, defining: bool = False) -> TileValue:
    """`v` on the tile; `defining`: `s` computes it (it is not read from another statement)."""
    found = t.env.get(v)
    if found is not None:
        return found
    program = t.b.sched.program
    if v in program.virtual and not defining:
        arr = program.virtual[v][0]
        if arr not in t.virtual:
            raise lowering_error(
                s, f"the value {v.name_hint or arr} comes from a statement PTO does not run"
            )
        t.env[v] = t.virtual[arr]
        return t.env[v]
    c = constant_value(v)
    if c is not None:
        t.env[v] = TileValue("scalar", scalar=c)
        return t.env[v]
    if not isinstance(v, OpResult):
        raise lowering_error(s, f"the value {v.name_hint or '?'} is not available on the tile")
    op = v.op
    if is_load(op):
        array = program.array_names.get(op.operands[0])
        if array is not None and array in t.temps:
            subs = subscript_loops(t, s, op.operands[1:])
            found = t.stored.get((array, tuple(subs)))
            if found is None:
                raise lowering_error(
                    s,
                    f"{array}[{', '.join(subs)}] is read before a statement of this tile "
                    "wrote it there (a temporary in UB holds only the current tile's values)",
                )
            t.env[v] = found
            return found
        tensor = t.b.tensor_of_value.get(op.operands[0])
        if tensor is None:
            raise lowering_error(s, "a load from a buffer that is not a function argument")
        subs = subscript_loops(t, s, op.operands[1:])
        key = (tensor, tuple(subs))
        check_one_window(t, s, tensor, subs)
        known = t.stored.get(key) or t.loaded.get(key)
        if known is not None:
            # Written by an earlier statement of this tile, or loaded by one: in UB already.
            t.env[v] = known
            return known
        t.env[v] = _load(t, s, tensor, subs)
        t.loaded[key] = t.env[v]
        return t.env[v]
    unary = UNARY_INSTR.get(type(op))
    if unary is not None:
        x = tile_value(t, s, op.operands[0])
        check_same_dtype(t, s, _element_dtype(s, v))
        return _unary(t, s, v, unary, x)
    instr = BINARY_INSTR.get(type(op))
    if instr is not None:
        check_same_dtype(t, s, _element_dtype(s, v))
        x, y = tile_value(t, s, op.operands[0]), tile_value(t, s, op.operands[1])
        zero_form = INSTRUCTIONS[instr].zero_form
        if zero_form is not None and y.kind == "scalar" and y.scalar == 0 and x.kind == "tile":
            return _unary(t, s, v, zero_form, x)
        if zero_form is not None and x.kind == "scalar" and x.scalar == 0 and y.kind == "tile":
            return _unary(t, s, v, zero_form, y)
        return _binary(t, s, v, instr, x, y)
    raise lowering_error(s, f"{op.name} has no PTO instruction")


def check_one_window(
    t: TilewiseNest, s: Statement, tensor: str, subs: list[str], writing: bool = False
) -> None:
    """In fused nests, a tensor written in the tile is accessed at one window only: a
    later nest reading or writing other rows or columns of what an earlier nest wrote (or
    read) in another tile would break the order of the unfused nests."""
    if not t.fused or not (writing or any(k[0] == tensor for k in t.stored)):
        return
    for name, other in [*t.stored, *t.loaded]:
        if name == tensor and other != tuple(subs):
            raise lowering_error(
                s,
                f"{tensor}[{', '.join(subs)}] and {tensor}[{', '.join(other)}] in fused nests: "
                f"a dependence on {tensor} between other rows or columns than the tile's "
                "prevents running the nests tile by tile",
                hint="only nests that access a written tensor at the same [row, column] "
                "fuse; pass the value through a temporary of its own",
            )


def _load(t: TilewiseNest, s: Statement, tensor: str, subs: list[str]) -> TileValue:
    """A TLOAD of `tensor[subs]` (with a TTRANS for a transposed window)."""
    t.dt = t.dt or t.b.tensors[tensor].dtype
    check_same_dtype(t, s, t.b.tensors[tensor].dtype)
    view, transposed = tile_window(t, s, tensor, subs)
    if len(subs) == 1:
        kind = "col" if subs[0] == t.row.origin else "row"
        name = t.new_col(f"{tensor.lower()}_col") if kind == "col" else t.new_row(tensor.lower())
        t.items.append(Instr("TLOAD", name, (view,), comment=f"{s.name}: {tensor}[{subs[0]}]"))
        return TileValue(kind, name)
    if transposed:
        src = transposed_tile(t, s, f"{tensor.lower()}_t")
        t.items.append(
            Instr("TLOAD", src, (view,), comment=f"{s.name}: {tensor}[{', '.join(subs)}]")
        )
        name = t.new_tile(tensor.lower())
        assert t.col is not None
        tmp = tmp_tile_for(t, s, "TTRANS", t.col, t.row)
        t.items.append(Instr("TTRANS", name, (src,), tmp=tmp, comment=f"{s.name}: transpose"))
    else:
        name = t.new_tile(tensor.lower())
        t.items.append(
            Instr("TLOAD", name, (view,), comment=f"{s.name}: {tensor}[{', '.join(subs)}]")
        )
    return TileValue("tile", name)


def _expanded(t: TilewiseNest, s: Statement, x: TileValue) -> TileValue:
    """A column of per-row values as a full tile (TROWEXPAND): the tile-scalar and unary
    instructions take row-major tiles only, and a column tile is column-major. Each element
    then goes through the same operations as its row's value, so results do not change."""
    if x.kind != "col":
        return x
    name = t.new_tile("e")
    t.items.append(Instr("TROWEXPAND", name, (x.tile,), comment=f"{s.name}: per-row values"))
    return TileValue("tile", name)


def _unary(t: TilewiseNest, s: Statement, v: SSAValue, instr: str, x: TileValue) -> TileValue:
    if x.kind == "scalar":
        raise lowering_error(s, f"{instr} of a constant (fold it in the Krnl program)")
    x = _expanded(t, s, x)
    name = t.new_row("r") if x.kind == "row" else t.new_tile("t")
    t.items.append(Instr(instr, name, (x.tile,), comment=f"{s.name}: {v.name_hint or instr}"))
    t.env[v] = TileValue(x.kind, name)
    return t.env[v]


def _binary(
    t: TilewiseNest, s: Statement, v: SSAValue, instr: str, x: TileValue, y: TileValue
) -> TileValue:
    note = f"{s.name}: {v.name_hint or instr}"
    info = INSTRUCTIONS[instr]
    if x.kind == y.kind == "scalar":
        raise lowering_error(s, "arithmetic on constants only (fold it in the Krnl program)")
    if x.kind == y.kind:
        name = {"tile": t.new_tile, "col": t.new_col, "row": t.new_row}[x.kind](x.kind[0])
        t.items.append(Instr(instr, name, (x.tile, y.tile), comment=note))
        t.env[v] = TileValue(x.kind, name)
        return t.env[v]
    if "scalar" in (x.kind, y.kind):
        return _with_scalar(t, s, v, info, x, y, note)
    if {x.kind, y.kind} == {"col", "row"}:
        raise lowering_error(
            s, "a per-row value and a per-column value together (an outer product) have no "
            "PTO instruction",
        )  # fmt: skip
    if "row" in (x.kind, y.kind):
        # A tile and a row of per-column values: TCOLEXPAND<OP>.
        if (x.kind == "row" and not info.commutes) or info.colexpand_form is None:
            raise lowering_error(
                s, f"a per-column value {instr[1:].lower()} a tile has no PTO instruction"
            )
        full, per_col = (x, y) if x.kind == "tile" else (y, x)
        name = t.new_tile("t")
        op = info.colexpand_form
        t.items.append(Instr(op, name, (full.tile, per_col.tile), comment=note))
        t.env[v] = TileValue("tile", name)
        return t.env[v]
    # A tile and a column of per-row values: TROWEXPAND<OP>.
    full, per_row = (x, y) if x.kind == "tile" else (y, x)
    if (x.kind == "col" and not info.commutes) or info.rowexpand_form is None:
        raise lowering_error(
            s, f"a per-row value {instr[1:].lower()} a tile has no PTO instruction"
        )
    name = t.new_tile("t")
    op = info.rowexpand_form
    tmp = tmp_tile_for(t, s, op, t.row, None)
    t.items.append(Instr(op, name, (full.tile, per_row.tile), tmp=tmp, comment=note))
    t.env[v] = TileValue("tile", name)
    return t.env[v]


def _with_scalar(
    t: TilewiseNest,
    s: Statement,
    v: SSAValue,
    info: Instruction,
    x: TileValue,
    y: TileValue,
    note: str,
) -> TileValue:
    """A tile (or per-row or per-column values) and a constant: the scalar form, with the
    constant first only where the instruction commutes or takes it first (TDIVS)."""
    tile, c = (x, y) if y.kind == "scalar" else (y, x)
    tile = _expanded(t, s, tile)
    name = t.new_row("r") if tile.kind == "row" else t.new_tile("t")
    if info.scalar_form is None:
        raise lowering_error(s, f"{info.name} with a constant has no PTO instruction")
    form = INSTRUCTIONS[info.scalar_form]
    if y.kind == "scalar" or info.commutes:
        t.items.append(Instr(form.name, name, (tile.tile, Scalar(c.scalar)), comment=note))
    elif form.scalar_first:
        t.items.append(Instr(form.name, name, (Scalar(c.scalar), tile.tile), comment=note))
    else:
        raise lowering_error(s, "a constant minus a tile has no PTO instruction (write x * -1 + c)")
    t.env[v] = TileValue(tile.kind, name)
    return t.env[v]
