"""Statements at tile level that move whole tile buffers (onnx-mlir's tiled copies):
allocations, ``krnl.copy_to_tile_buffer`` and ``krnl.copy_from_tile_buffer``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sympy  # type: ignore[import-untyped]
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import OpResult, SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.poly import Statement
from polykrnl.targets.pto import tmp_rules
from polykrnl.targets.pto.dtypes import ALIGN_BYTES, dtype
from polykrnl.targets.pto.krnl_ops import constant_value, is_alloc
from polykrnl.targets.pto.lowering_state import KernelBuilder, lowering_error, round_up
from polykrnl.targets.pto.program import GlobalView, Instr, Item, SetValid
from polykrnl.targets.pto.types import BLayout, Loc, PadValue, TileType

__all__ = ["lower_tile_buffers"]


def lower_tile_buffers(
    b: KernelBuilder, values: Mapping[str, sympy.Expr], statements: list[Statement]
) -> list[Item]:
    """Statements at tile level that move whole tile buffers (onnx-mlir's tiled copies):
    ``memref.alloca`` a buffer, ``krnl.copy_to_tile_buffer`` (TLOAD of the part inside the
    source, then TFILLPAD with the pad value; ``transpose`` through TTRANS),
    ``krnl.copy_from_tile_buffer`` (TSTORE of the part inside the destination)."""
    items: list[Item] = []
    tiles: dict[SSAValue, str] = {}  # buffer value -> its tile (padded, full valid shape)
    for s in statements:
        op = s.anchor
        if is_alloc(op):
            t = op.results[0].type
            assert isinstance(t, MemRefType)
            shape = t.get_shape()
            if len(shape) != 2 or min(shape) < 1:
                raise lowering_error(
                    s, f"a tile buffer of shape {shape} (PTO tiles are 2-D and static)"
                )
            dt = dtype(str(t.element_type))
            cols = round_up(shape[1], ALIGN_BYTES // dt.size)
            tiles[op.results[0]] = b.tile(
                "buf", TileType(Loc.Vec, dt, shape[0], cols, BLayout.RowMajor, None, None), "tile"
            )
        elif isinstance(op, k.CopyToTileBufferOp):
            items += _copy_to(b, s, op, values, tiles)
        elif isinstance(op, k.CopyFromTileBufferOp):
            buf = tiles.get(op.buffer)
            tensor = b.tensor_of_value.get(op.dest)
            if buf is None or tensor is None:
                raise lowering_error(
                    s, "a copy from a buffer this nest did not fill, or into a local buffer"
                )
            starts = [_index_value(b, s, v, values) for v in op.starts]
            tp = b.tensors[tensor]
            buf_type = next(x.type for x in b.tiles if x.name == buf)
            tile = _ints(op.tileSize) or [buf_type.rows, _buffer_cols(s, op.buffer)]
            w = [sympy.Min(tile[d], tp.shape[d] - starts[d]) for d in range(2)]
            items.append(SetValid(buf, w[0], w[1]))
            items.append(
                Instr(
                    "TSTORE",
                    GlobalView.of(tp, starts[0], starts[1], w[0], w[1]),
                    (buf,),
                    comment=f"{s.name}: copy_from_tile_buffer into {tensor}",
                )
            )
        else:
            raise lowering_error(s, f"{op.name} at tile level has no PTO pattern")
    return items


def _buffer_cols(s: Statement, buf: SSAValue) -> int:
    t = buf.type
    assert isinstance(t, MemRefType)
    return t.get_shape()[1]


def _ints(attr: Any) -> list[int] | None:
    if attr is None:
        return None
    return [int(x.value.data) for x in attr.data]


def _index_value(
    b: KernelBuilder, s: Statement, v: SSAValue, values: Mapping[str, sympy.Expr]
) -> sympy.Expr:
    """A start index of a copy: a constant, or the value of a tile loop."""
    c = constant_value(v)
    if c is not None:
        return sympy.Integer(int(c))
    if isinstance(v, OpResult) and isinstance(v.op, k.GetInductionVarValueOp):
        program = b.sched.program
        for h, r in zip(v.op.loops, v.op.results, strict=True):
            if r is v:
                name = program.handle_names.get(h)
                if name is not None and name in b.sched.loop_names():
                    vid = b.sched.loop(name).vid
                    if vid in values:
                        return values[vid]
    raise lowering_error(s, "a copy whose start is not a constant or a tile loop's value")


_PADS = {0.0: "Zero", float("inf"): "Max", float("-inf"): "Min"}


def _copy_to(
    b: KernelBuilder,
    s: Statement,
    op: k.CopyToTileBufferOp,
    values: Mapping[str, sympy.Expr],
    tiles: dict[SSAValue, str],
) -> list[Item]:
    buf = tiles.get(op.buffer)
    tensor = b.tensor_of_value.get(op.source)
    if buf is None or tensor is None:
        raise lowering_error(s, "a copy into a buffer allocated elsewhere, or from a local buffer")
    tp = b.tensors[tensor]
    if len(tp.shape) != 2:
        raise lowering_error(s, f"a copy from the {len(tp.shape)}-D {tensor} (PTO windows are 2-D)")
    pad = constant_value(op.padValue)
    kind = _PADS.get(float(pad)) if pad is not None else None
    if kind is None:
        raise lowering_error(
            s,
            f"pad value {pad}: a PTO tile pads with 0, the type's maximum or its minimum",
            hint="pad with 0.0 (or +-inf)",
        )
    if _ints(op.padToNext) is not None:
        raise lowering_error(s, "padToNext (TFILLPAD pads the whole tile)", hint="drop padToNext")
    starts = [_index_value(b, s, v, values) for v in op.starts]
    decl = next(x for x in b.tiles if x.name == buf)
    tile = _ints(op.tileSize) or [decl.type.rows, _buffer_cols(s, op.buffer)]
    transpose = op.transpose is not None and op.transpose.value.data
    src_dims = [1, 0] if transpose else [0, 1]
    read = [sympy.Min(tile[d], tp.shape[src_dims[d]] - starts[src_dims[d]]) for d in range(2)]
    dt = decl.type.dtype
    raw_type = TileType(Loc.Vec, dt, decl.type.rows, decl.type.cols, BLayout.RowMajor, None, None)
    raw = b.tile("raw", raw_type, "tile")
    # The buffer pads: its type carries the pad value (TFILLPAD fills outside the source's
    # valid region with it).
    for x in b.tiles:
        if x.name == buf:
            x.type = TileType(
                Loc.Vec,
                dt,
                decl.type.rows,
                decl.type.cols,
                BLayout.RowMajor,
                None,
                None,
                pad=PadValue[kind],
            )
    note = f"{s.name}: copy_to_tile_buffer from {tensor}"
    items: list[Item] = [SetValid(buf, tile[0], tile[1])]
    if not transpose:
        items += [
            SetValid(raw, read[0], read[1]),
            Instr(
                "TLOAD",
                raw,
                (GlobalView.of(tp, starts[0], starts[1], read[0], read[1]),),
                comment=note,
            ),
        ]
    else:
        per_block = ALIGN_BYTES // dt.size
        src_type = TileType(
            Loc.Vec, dt, tile[1], round_up(tile[0], per_block), BLayout.RowMajor, None, None
        )
        src = b.tile("raw_t", src_type, "tile")
        tmp_type = tmp_rules.tmp_tile(
            "TTRANS", b.arch, dtype=dt, valid_row=tile[1], valid_col=tile[0]
        )
        tmp = b.tile("ttrans_tmp", tmp_type, "tmp")
        b.tmp_needs[tmp] = ("TTRANS", dt, s, "", "")
        b.tmp_static[tmp] = (tile[1], tile[0])
        items += [
            SetValid(src, read[1], read[0]),
            # Starts are in the source's dimension order; buffer dim d reads source dim 1 - d.
            Instr(
                "TLOAD",
                src,
                (GlobalView.of(tp, starts[0], starts[1], read[1], read[0]),),
                comment=note,
            ),
            SetValid(raw, read[0], read[1]),
            Instr("TTRANS", raw, (src,), tmp=tmp, comment=f"{s.name}: transpose"),
        ]
    items.append(Instr("TFILLPAD", buf, (raw,), comment=f"{s.name}: pad with {pad}"))
    return items
