"""The krnl dialect in the polyhedral model.

Loads and stores are exact; krnl.memset, krnl.memcpy (flat ranges of static
shapes) and the tile-buffer copies (the tile's box in the source) are regions;
krnl.matmul touches the boxes of A, B and C one compute tile covers; calls and
specialized kernels may read and write every memref they see.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.dialect.krnl.access import has_identity_layout
from polykrnl.ir import int_list
from polykrnl.poly.domains import dim_size, map_results
from polykrnl.poly.table import (
    POLY,
    PURE,
    Accessor,
    Exprs,
    OpModel,
    indexed,
    may_read_memrefs,
    may_write_memrefs,
    no_accesses,
    opaque,
    writes_result,
)


def _memcpy(op: Operation, expr: Exprs, access: Accessor) -> None:
    op = cast(k.MemcpyOp, op)
    n, d_off, s_off = expr.of(op.num_elems), expr.of(op.dest_offset), expr.of(op.src_offset)
    for mem, off, write in ((op.src, s_off, False), (op.dest, d_off, True)):
        t = mem.type
        assert isinstance(t, MemRefType)
        shape = t.get_shape()
        if n is None or off is None or any(s < 0 for s in shape[1:]):
            access(mem, None, write, True, op)
            continue
        rank = len(shape)
        names = [f"_a{d}" for d in range(rank)]
        flat = names[-1] if rank else "0"
        stride = 1
        for d in range(rank - 2, -1, -1):
            stride *= shape[d + 1]
            flat = f"{stride}*{names[d]} + {flat}"
        # Row-major: the dimensions after the first stay inside their extents, so a flat
        # range past the end shows as rows past the first dimension's (memory safety).
        inner = [("", f"0 <= {names[d]} < {shape[d]}") for d in range(1, rank)]
        region = [("", f"({off}) <= {flat} < ({off}) + ({n})"), *inner]
        access(mem, None, write, False, op, region)


def _matmul_boxes(op: k.MatMulOp, expr: Exprs) -> tuple[list[tuple[str, str]], ...] | None:
    """The elements of A, B and C one compute tile touches, as in the interpreter.

    The tile covers rows [i0, i0 + ci), columns [j0, j0 + cj) and k in
    [k0, k0 + ck), each clipped by its global upper bound; a buffer holds the
    data from its memory start on, and dimensions before the last two are
    fixed at the memory start.
    """

    def exprs(vs: Sequence[SSAValue]) -> list[str] | None:
        out = [expr.of(v) for v in vs]
        return None if any(x is None for x in out) else [str(x) for x in out]

    a_mem, b_mem, c_mem = (
        exprs(op.aGlobalIndexMemStart),
        exprs(op.bGlobalIndexMemStart),
        exprs(op.cGlobalIndexMemStart),
    )
    starts = exprs(
        [op.iGlobalIndexComputeStart, op.jGlobalIndexComputeStart, op.kGlobalIndexComputeStart]
    )
    ubs = exprs([op.iGlobalUB, op.jGlobalUB, op.kGlobalUB])
    if a_mem is None or b_mem is None or c_mem is None or starts is None or ubs is None:
        return None
    shapes = []
    for v in (op.A, op.B, op.C):
        t = v.type
        assert isinstance(t, MemRefType)
        shapes.append(list(t.get_shape()))
    a_tile = int_list(op.aTileSize) or shapes[0][-2:]
    c_tile = int_list(op.cTileSize) or shapes[2][-2:]
    compute = int_list(op.computeTileSize) or [c_tile[0], c_tile[1], a_tile[1]]
    if len(compute) != 3 or any(x < 0 for x in compute):
        return None
    for mem, shape in zip((a_mem, b_mem, c_mem), shapes, strict=True):
        if len(shape) < 2 or len(mem) != len(shape):
            return None
    ranges = [(s, f"({s}) + {n}", ub) for s, n, ub in zip(starts, compute, ubs, strict=True)]

    def box(mem: list[str], rows: int, cols: int) -> list[tuple[str, str]]:
        out = [("", f"_a{d} = {m}") for d, m in enumerate(mem[:-2])]
        for d, which in ((len(mem) - 2, rows), (len(mem) - 1, cols)):
            lo, hi, ub = ranges[which]
            g = f"_a{d} + ({mem[d]})"  # the global index of the element
            out.append(("", f"{lo} <= {g} < {hi} and {g} < {ub}"))
        return out

    return box(a_mem, 0, 2), box(b_mem, 2, 1), box(c_mem, 0, 1)


def _tile_region(
    op: k.CopyToTileBufferOp | k.CopyFromTileBufferOp, mem: SSAValue, expr: Exprs
) -> list[tuple[str, str]] | None:
    """Constraints on `mem`'s elements a tile copy touches (None: the whole memref)."""
    buf_t, mem_t = op.buffer.type, mem.type
    assert isinstance(buf_t, MemRefType) and isinstance(mem_t, MemRefType)
    b_rank, m_rank = len(buf_t.get_shape()), len(mem_t.get_shape())
    off = m_rank - b_rank
    starts = [expr.of(v) for v in op.starts]
    if any(s is None for s in starts) or off < 0 or len(starts) != m_rank:
        return None
    tile_attr = op.tileSize
    tile = ([int(a.value.data) for a in tile_attr.data] if tile_attr is not None else None) or list(
        buf_t.get_shape()
    )
    if any(t < 0 for t in tile):
        return None
    transpose = (
        isinstance(op, k.CopyToTileBufferOp)
        and op.transpose is not None
        and bool(op.transpose.value.data)
    )
    dim_of = list(range(m_rank))
    if transpose:
        dim_of[-2], dim_of[-1] = dim_of[-1], dim_of[-2]
    out: list[tuple[str, str]] = []
    for s in range(m_rank):
        if s < off:
            out.append(("", f"_a{s} = {starts[s]}"))
        else:
            d = dim_of.index(s) - off
            out.append(("", f"{starts[s]} <= _a{s} < ({starts[s]}) + {tile[d]}"))
    return out


def _memset(op: Operation, expr: Exprs, access: Accessor) -> None:
    access(op.operands[0], None, True, False, op)


def _copy_to_tile_buffer(op: Operation, expr: Exprs, access: Accessor) -> None:
    op = cast(k.CopyToTileBufferOp, op)
    access(op.source, None, False, True, op, _tile_region(op, op.source, expr))
    access(op.buffer, None, True, True, op)


def _copy_from_tile_buffer(op: Operation, expr: Exprs, access: Accessor) -> None:
    op = cast(k.CopyFromTileBufferOp, op)
    access(op.buffer, None, False, True, op)
    access(op.dest, None, True, True, op, _tile_region(op, op.dest, expr))


def _matmul(op: Operation, expr: Exprs, access: Accessor) -> None:
    op = cast(k.MatMulOp, op)
    boxes = _matmul_boxes(op, expr)
    if boxes is None:
        # Starts or bounds that are not affine: the whole buffers, as may-accesses.
        access(op.A, None, False, True, op)
        access(op.B, None, False, True, op)
        access(op.C, None, False, True, op)
        access(op.C, None, True, True, op)
    else:
        a, b, c = boxes
        access(op.A, None, False, False, op, a)
        access(op.B, None, False, False, op, b)
        access(op.C, None, False, False, op, c)
        access(op.C, None, True, False, op, c)


def _linear_offset(op: Operation, expr: Exprs) -> str | None:
    """Row-major offset of the element: affine when every size but the first is static."""
    op = cast(k.GetLinearOffsetIndexOp, op)
    t = op.memref.type
    if not isinstance(t, MemRefType) or not has_identity_layout(t):
        return None
    shape = t.get_shape()
    subs = map_results(op.map.data, [expr.of(v) for v in op.indices])
    if any(s is None for s in subs) or any(n < 0 for n in shape[1:]):
        return None
    offset = "0"
    for sub, n in zip(subs, shape, strict=True):
        offset = f"{n}*({offset}) + ({sub})"
    return offset


# The recipe is the loop nest's business; these ops have no part in the statements.
POLY.add(
    OpModel(skip=True),
    k.EntryPointOp,
    k.PrefetchOp,  # a cache hint: no value, no access
    # A placeholder for a kernel a later pass substitutes: it consumes its loops
    # (they do not run, polykrnl.nest.loops) and has no other operand, so no value
    # and no access; the interpreter and the kernels do nothing for it.
    k.SpecializedKernelOp,
    k.DefineLoopsOp,
    k.BlockOp,
    k.PermuteOp,
    k.ParallelOp,
    k.UnrollOp,
)
# Its loops are the model's loops (polykrnl.nest.loops); the builder walks its body.
POLY.add(OpModel(), k.IterateOp)
POLY.add(OpModel(inline=True), k.RegionOp, k.MovableOp)
POLY.add(OpModel(terminator=True, accesses=no_accesses), k.YieldOp, k.TerminateOp)

POLY.add(
    OpModel(pure=True, load=True, reads_memory=True, accesses=indexed(1, False), writes=False),
    k.LoadOp,
)
POLY.add(OpModel(accesses=indexed(2, True), writes=1), k.StoreOp)
POLY.add(OpModel(accesses=_memset, writes=0), k.MemsetOp, k.RandomNormalOp)
POLY.add(OpModel(accesses=_memcpy), k.MemcpyOp)
POLY.add(OpModel(accesses=_copy_to_tile_buffer, clips=True), k.CopyToTileBufferOp)
POLY.add(OpModel(accesses=_copy_from_tile_buffer, clips=True), k.CopyFromTileBufferOp)
POLY.add(OpModel(accesses=_matmul), k.MatMulOp)
POLY.add(OpModel(accesses=opaque), k.CallOp)

POLY.add(PURE, k.GetInductionVarValueOp, k.ShapeOp)
POLY.add(OpModel(pure=True, accesses=no_accesses, index=dim_size), k.DimOp)
POLY.add(OpModel(pure=True, accesses=no_accesses, index=_linear_offset), k.GetLinearOffsetIndexOp)
POLY.add(OpModel(pure=True, storage=True, accesses=may_read_memrefs), k.GlobalOp)
POLY.add(OpModel(pure=True, alias=True, accesses=no_accesses), k.GetRefOp, k.VectorTypeCastOp)
POLY.add(
    OpModel(pure=True, accesses=may_read_memrefs),
    k.AcosOp,
    k.AcoshOp,
    k.AsinOp,
    k.AsinhOp,
    k.AtanOp,
    k.AtanhOp,
    k.TanOp,
    k.ErfOp,
    k.RoundEvenOp,
    k.IsInfOp,
    k.IsNaNOp,
)
POLY.add(
    OpModel(pure=True, reads_memory=True, accesses=may_read_memrefs),
    k.StrlenOp,
    k.StrncmpOp,
    k.FindIndexOp,
)
# Output keeps its order (the builder gives io ops one pseudo-array to read and write).
POLY.add(
    OpModel(io=True, writes=False, accesses=may_read_memrefs),
    k.PrintOp,
    k.PrintTensorOp,
    k.RuntimeInstrumentOp,
)
# A sequence is a buffer of its own (of element buffers); an extract reads any element.
POLY.add(OpModel(allocates=True, storage=True, accesses=writes_result, writes=False), k.SeqAllocOp)
POLY.add(OpModel(accesses=may_read_memrefs), k.SeqExtractOp)
POLY.add(OpModel(accesses=may_write_memrefs), k.SeqStoreOp, k.SeqDeallocOp)
