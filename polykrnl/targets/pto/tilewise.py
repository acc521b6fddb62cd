"""A nest run tile-wise: each statement over the whole tile before the next one (iter_args
initial values, row reductions, values kept for later statements, stores)."""

from __future__ import annotations

from collections.abc import Mapping, Set

import sympy  # type: ignore[import-untyped]
from xdsl.dialects.builtin import MemRefType

from polykrnl.dialect.krnl import MemsetOp
from polykrnl.poly import Statement
from polykrnl.targets.pto.elementwise import (
    check_one_window,
    subscript_loops,
    tile_value,
    tile_window,
)
from polykrnl.targets.pto.krnl_ops import constant_value, is_store
from polykrnl.targets.pto.lowering_state import Axis, KernelBuilder, lowering_error
from polykrnl.targets.pto.program import Instr, Item
from polykrnl.targets.pto.row_reduction import lower_memory_reduction, lower_row_reduction
from polykrnl.targets.pto.vec_tiles import (
    TileValue,
    TilewiseNest,
    check_same_dtype,
    tmp_tile_for,
    transposed_tile,
)

__all__ = ["lower_tilewise"]


def lower_tilewise(
    b: KernelBuilder,
    axes: dict[str, Axis],
    order: list[str],
    statements: list[Statement],
    alias: Mapping[str, str] | None = None,
    temps: Set[str] = frozenset(),
) -> list[Item]:
    """Row axis: the outer point loop; columns: every other point loop, all of one range
    (sibling krnl.iterate ops over the same columns, as softmax writes them). Fused nests
    give `alias` (each nest's loops -> these axes) and the temporaries they keep in UB."""
    row = axes[order[0]]
    cols = [axes[o] for o in order[1:]]
    for c in cols[1:]:
        if (
            c.size != cols[0].size
            or sympy.simplify(c.extent - cols[0].extent) != 0
            or (sympy.simplify(c.start - cols[0].start) != 0)
        ):
            raise lowering_error(
                statements[0],
                f"column loops {cols[0].origin} and {c.origin} run over different ranges "
                "(one tile has one column range)",
            )
    # Every column loop is one axis (checked above): the same window under two loops is
    # one tile, loaded once (or read back from UB after a store).
    names = dict(alias or {})
    names.update({c.origin: cols[0].origin for c in cols[1:]})
    col_origins = {c.origin for c in cols}
    col_names = col_origins | {x for x, a in names.items() if a in col_origins}
    t = TilewiseNest(
        b, axes, row, cols[0] if cols else None, col_names=col_names, alias=names,
        temps=temps, fused=alias is not None,
    )  # fmt: skip
    for s in statements:
        _statement(t, s)
    return t.items


def _statement(t: TilewiseNest, s: Statement) -> None:
    program = t.b.sched.program
    if isinstance(s.anchor, MemsetOp):
        _memset_temporary(t, s, s.anchor)
        return
    dims = {t.canon(d) for d in s.dim_origins or s.dims}
    if t.row.origin not in dims:
        raise lowering_error(s, f"a statement outside the row loop {t.row.origin}")
    if s.kind == "init":
        assert s.iterate is not None
        for arg, init in zip(s.iterate.iter_args, s.iterate.iter_inits, strict=True):
            c = constant_value(init)
            if c is None:
                raise lowering_error(s, "an iter_args initial value that is not a constant")
            t.inits[program.virtual[arg][0]] = c
        return
    if s.kind == "yield":
        lower_row_reduction(t, s)
        return
    anchor = s.anchor
    if not is_store(anchor):
        if not s.exports:
            raise lowering_error(s, f"{anchor.name} has no PTO pattern")
        # A value computed once per row (or per tile element) for later statements.
        for v, arr in s.exports:
            t.virtual[arr] = tile_value(t, s, v, defining=True)
        return
    mem = anchor.operands[1]
    array = program.array_names.get(mem)
    if array is not None and array in t.temps:
        _store_temporary(t, s, array, dims)
        return
    value = tile_value(t, s, anchor.operands[0])
    tensor = t.b.tensor_of_value.get(mem)
    if tensor is None:
        raise lowering_error(s, "a store into a buffer that is not a function argument")
    subs = subscript_loops(t, s, anchor.operands[2:])
    check_one_window(t, s, tensor, subs, writing=True)
    key = (tensor, tuple(subs))
    earlier = t.store_instr.get(key)
    if earlier is not None:
        # Overwritten in the same tile before anything reads the window from global memory
        # (later statements read it back from UB; other tiles touch other windows): the
        # earlier TSTORE writes nothing anyone sees.
        t.items.remove(earlier)
    _store(t, s, tensor, subs, value)
    t.store_instr[key] = next(
        x for x in reversed(t.items) if isinstance(x, Instr) and x.op == "TSTORE"
    )
    t.loaded = {k: v for k, v in t.loaded.items() if k[0] != tensor}
    t.stored[key] = value


def _memset_temporary(t: TilewiseNest, s: Statement, op: MemsetOp) -> None:
    """`krnl.memset T, c` of a temporary kept in UB: every row tile's part of T starts as
    c, a constant the statements after it read (a reduction into T combines with it, and
    skips it when it is the reduction's identity); no instruction."""
    array = t.b.sched.program.array_names.get(op.dest)
    value = constant_value(op.value)
    if array is None or array not in t.temps or value is None:
        raise lowering_error(s, "a krnl.memset of a value that is not a constant")
    mtype = op.dest.type
    rank = len(mtype.get_shape()) if isinstance(mtype, MemRefType) else 0
    if rank not in (1, 2) or (rank == 2 and t.col is None):
        raise lowering_error(
            s,
            f"a krnl.memset of the temporary {array} of rank {rank}: a temporary kept in UB "
            "is indexed by the row, or the row and the column",
        )
    subs = (t.row.origin,) if rank == 1 else (t.row.origin, t.col.origin if t.col else "")
    t.stored[(array, subs)] = TileValue("scalar", scalar=value)


def _store_temporary(t: TilewiseNest, s: Statement, array: str, dims: set[str]) -> None:
    """A store into a temporary: no instruction, the tile's value is what later statements
    read there; `T[r] = T[r] op e` inside the column loop is a row reduction."""
    anchor = s.anchor
    subs = subscript_loops(t, s, anchor.operands[2:])
    key = (array, tuple(subs))
    if subs not in ([t.row.origin], [t.row.origin, t.col.origin if t.col else ""]):
        raise lowering_error(
            s,
            f"the temporary {array} is written at [{', '.join(subs)}]: a temporary kept in "
            f"UB is indexed by the row ({t.row.origin}) or the row and the column",
        )
    if len(subs) == 1 and dims & t.col_names:
        current = t.stored.get(key)
        if current is None:
            raise lowering_error(s, f"a reduction into {array} before any value was stored there")
        t.stored[key] = lower_memory_reduction(t, s, array, current)
        return
    # Outside the column loop a value is per row even as a full tile (a per-row value
    # through a scalar op is expanded along the row first: vec_tiles' _expanded).
    t.stored[key] = tile_value(t, s, anchor.operands[0])


def _store(t: TilewiseNest, s: Statement, tensor: str, subs: list[str], value: TileValue) -> None:
    if value.kind == "scalar":
        raise lowering_error(s, "a store of a constant (TEXPANDS then TSTORE is not emitted yet)")
    view, transposed = tile_window(t, s, tensor, subs)
    check_same_dtype(t, s, t.b.tensors[tensor].dtype)
    if value.kind == "row":
        if view.rows != 1 or len(subs) != 1:
            raise lowering_error(s, "a per-column value stored into a tile window")
        t.items.append(
            Instr("TSTORE", view, (value.tile,), comment=f"{s.name}: {tensor}[{subs[0]}]")
        )
        return
    if value.kind == "col":
        if view.cols != 1:
            raise lowering_error(s, "a per-row value stored into a tile window")
        t.items.append(
            Instr("TSTORE", view, (value.tile,), comment=f"{s.name}: {tensor}[{subs[0]}]")
        )
        return
    if len(subs) == 1 and t.col is not None and subs[0] not in t.col_names:
        # T[r] = T[r] op e inside the column loop through a tensor: the row reduction
        # through memory is lowered for temporaries kept in UB only
        raise lowering_error(
            s,
            f"a tile of the nest stored into {tensor}[{subs[0]}], one value per row",
            hint="reduce along the row with iter_args (krnl.yield), or keep the buffer a "
            "temporary the nests can share in UB",
        )
    src = value.tile
    if transposed:
        dst = transposed_tile(t, s, f"{tensor.lower()}_t")
        tmp = tmp_tile_for(t, s, "TTRANS", t.row, t.col)
        t.items.append(Instr("TTRANS", dst, (src,), tmp=tmp, comment=f"{s.name}: transpose"))
        src = dst
    t.items.append(Instr("TSTORE", view, (src,), comment=f"{s.name}: {tensor}[{', '.join(subs)}]"))
