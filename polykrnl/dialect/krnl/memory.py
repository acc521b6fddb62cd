"""Krnl's memory ops: load, store, memset, memcpy, tile-buffer copies, matmul, sizes, views,
globals and sequences."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    BoolAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
)
from xdsl.ir import (
    Attribute,
    Operation,
    SSAValue,
)
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
)

from polykrnl.dialect.krnl.checks import Namer, SelfChecks, ints, rank_of
from polykrnl.ir import value_name

# --------------------------------------------------------------------------- types


# ------------------------------------------------------------------ memory ops


@irdl_op_definition
class LoadOp(IRDLOperation):
    """`%v = krnl.load %m[%i, %j] : memref<...>`."""

    name = "krnl.load"

    T: ClassVar = VarConstraint("T", AnyAttr())
    memref = operand_def(MemRefType.constr(T))
    indices = var_operand_def(IndexType)
    result = result_def(T)

    assembly_format = "$memref `[` $indices `]` attr-dict `:` type($memref)"

    def __init__(self, memref: SSAValue | Operation, indices: Sequence[SSAValue | Operation]):
        m = SSAValue.get(memref)
        elem = cast(MemRefType, m.type).element_type
        super().__init__(operands=[m, list(indices)], result_types=[elem])


@irdl_op_definition
class StoreOp(IRDLOperation):
    """`krnl.store %v, %m[%i, %j] : memref<...>`."""

    name = "krnl.store"

    T: ClassVar = VarConstraint("T", AnyAttr())
    value = operand_def(T)
    memref = operand_def(MemRefType.constr(T))
    indices = var_operand_def(IndexType)

    assembly_format = "$value `,` $memref `[` $indices `]` attr-dict `:` type($memref)"

    def __init__(
        self,
        value: SSAValue | Operation,
        memref: SSAValue | Operation,
        indices: Sequence[SSAValue | Operation],
    ):
        super().__init__(operands=[value, memref, list(indices)])


@irdl_op_definition
class MemsetOp(IRDLOperation):
    """`krnl.memset %m, %v : memref<...>` (fills the whole memref)."""

    name = "krnl.memset"

    T: ClassVar = VarConstraint("T", AnyAttr())
    dest = operand_def(MemRefType.constr(T))
    value = operand_def(T)
    delayed = opt_prop_def(BoolAttr)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$dest `,` $value attr-dict `:` type($dest)"

    def __init__(self, dest: SSAValue | Operation, value: SSAValue | Operation):
        super().__init__(operands=[dest, value])


@irdl_op_definition
class MemcpyOp(IRDLOperation):
    """`krnl.memcpy`: flat copy of num_elems elements at the given flat offsets."""

    name = "krnl.memcpy"

    dest = operand_def(MemRefType)
    src = operand_def(MemRefType)
    num_elems = operand_def(I64)
    dest_offset = operand_def(IndexType)
    src_offset = operand_def(IndexType)


@irdl_op_definition
class CopyToTileBufferOp(SelfChecks, IRDLOperation):
    name = "krnl.copy_to_tile_buffer"

    T: ClassVar = VarConstraint("T", AnyAttr())
    buffer = operand_def(MemRefType.constr(T))
    source = operand_def(MemRefType.constr(T))
    starts = var_operand_def(IndexType)
    padValue = operand_def(T)
    tileSize = opt_prop_def(ArrayAttr[IntegerAttr[IntegerType]])
    padToNext = opt_prop_def(ArrayAttr[IntegerAttr[IntegerType]])
    transpose = opt_prop_def(BoolAttr)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$buffer `,` $source `[` $starts `]` `,` $padValue attr-dict "
        "`:` type($buffer) `,` type($source)"
    )

    def problems(self, name: Namer = value_name) -> Iterator[tuple[str, str]]:
        return tile_copy_problems(self, name)


@irdl_op_definition
class CopyFromTileBufferOp(SelfChecks, IRDLOperation):
    name = "krnl.copy_from_tile_buffer"

    buffer = operand_def(MemRefType)
    dest = operand_def(MemRefType)
    starts = var_operand_def(IndexType)
    tileSize = opt_prop_def(ArrayAttr[IntegerAttr[IntegerType]])

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$buffer `,` $dest `[` $starts `]` attr-dict `:` type($buffer) `,` type($dest)"
    )

    def problems(self, name: Namer = value_name) -> Iterator[tuple[str, str]]:
        return tile_copy_problems(self, name)


@irdl_op_definition
class MatMulOp(SelfChecks, IRDLOperation):
    """`krnl.matmul`: C += A * B on one tile panel (see the op reference)."""

    name = "krnl.matmul"

    A = operand_def(MemRefType)
    aGlobalIndexMemStart = var_operand_def(IndexType)
    B = operand_def(MemRefType)
    bGlobalIndexMemStart = var_operand_def(IndexType)
    C = operand_def(MemRefType)
    cGlobalIndexMemStart = var_operand_def(IndexType)
    loops = var_operand_def()
    iGlobalIndexComputeStart = operand_def(IndexType)
    jGlobalIndexComputeStart = operand_def(IndexType)
    kGlobalIndexComputeStart = operand_def(IndexType)
    iGlobalUB = operand_def(IndexType)
    jGlobalUB = operand_def(IndexType)
    kGlobalUB = operand_def(IndexType)
    computeTileSize = opt_prop_def(ArrayAttr[IntegerAttr[IntegerType]])
    aTileSize = opt_prop_def(ArrayAttr[IntegerAttr[IntegerType]])
    bTileSize = opt_prop_def(ArrayAttr[IntegerAttr[IntegerType]])
    cTileSize = opt_prop_def(ArrayAttr[IntegerAttr[IntegerType]])
    simdize = opt_prop_def(BoolAttr)
    unroll = opt_prop_def(BoolAttr)
    overcompute = opt_prop_def(BoolAttr)

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "$A `[` $aGlobalIndexMemStart `]` `,` "
        "$B `[` $bGlobalIndexMemStart `]` `,` "
        "$C `[` $cGlobalIndexMemStart `]` `,` "
        "`(` $loops `)` `,` "
        "`(` $iGlobalIndexComputeStart `,` $jGlobalIndexComputeStart `,` "
        "$kGlobalIndexComputeStart `)` `,` "
        "`(` $iGlobalUB `,` $jGlobalUB `,` $kGlobalUB `)` "
        "attr-dict `:` type($A) `,` type($B) `,` type($C) `,` `(` type($loops) `)`"
    )

    def problems(self, name: Namer = value_name) -> Iterator[tuple[str, str]]:
        """What is wrong with the op itself (ranks, start counts, handles, sizes)."""
        op = self
        mats = (
            ("A", op.A, op.aGlobalIndexMemStart),
            ("B", op.B, op.bGlobalIndexMemStart),
            ("C", op.C, op.cGlobalIndexMemStart),
        )
        for label, ref, starts in mats:
            rank = rank_of(ref.type) or 0
            if rank < 2:
                yield (
                    f"krnl.matmul needs matrices of rank >= 2, but {label} "
                    f"({name(ref)}: {ref.type}) has rank {rank}",
                    "give A, B and C as 2-D (or higher, broadcast) memrefs",
                )
            elif len(starts) != rank:
                yield (
                    f"krnl.matmul gives {len(starts)} global start indices for {label} "
                    f"({name(ref)}), but {ref.type} has rank {rank}",
                    f"give one start index per dimension of {label}: "
                    f"{name(ref)}[" + ", ".join(["%s"] * rank) + "]",
                )
        if len(op.loops) != 3:
            yield (
                f"krnl.matmul takes exactly 3 loop handles (i, j, k), got {len(op.loops)}",
                "pass the point handles of the i, j and k loops: (%ii, %jj, %kk)",
            )
        sizes = (
            ("computeTileSize", op.computeTileSize, 3, "(I, J, K)"),
            ("aTileSize", op.aTileSize, 2, "of A's last two dimensions"),
            ("bTileSize", op.bTileSize, 2, "of B's last two dimensions"),
            ("cTileSize", op.cTileSize, 2, "of C's last two dimensions"),
        )
        for attr_name, attr, want, what in sizes:
            values = ints(attr)
            if values is not None and len(values) not in (0, want):
                yield (
                    f"krnl.matmul {attr_name} has {len(values)} values; it takes 0 or {want}",
                    f"give the {want} sizes {what}, e.g. {attr_name} = [{', '.join(['4'] * want)}]",
                )


@irdl_op_definition
class DimOp(IRDLOperation):
    name = "krnl.dim"

    alloc = operand_def(MemRefType)
    index = operand_def(IndexType)
    dimension = result_def(IndexType)


@irdl_op_definition
class ShapeOp(IRDLOperation):
    name = "krnl.shape"

    alloc = operand_def(MemRefType)
    shape = result_def(MemRefType)


@irdl_op_definition
class GetRefOp(IRDLOperation):
    name = "krnl.getref"

    mempool = operand_def(MemRefType)
    offset = operand_def(IntegerType)
    value = var_operand_def(IndexType)
    output = result_def(MemRefType)


@irdl_op_definition
class GlobalOp(IRDLOperation):
    name = "krnl.global"

    shape = prop_def(AnyAttr())
    name_ = prop_def(StringAttr, prop_name="name")
    value = opt_prop_def(AnyAttr())
    offset = opt_prop_def(IntegerAttr[IntegerType])
    alignment = opt_prop_def(IntegerAttr[IntegerType])
    output = result_def(MemRefType)


@irdl_op_definition
class VectorTypeCastOp(IRDLOperation):
    name = "krnl.vector_type_cast"

    source = operand_def(MemRefType)
    result = result_def(MemRefType)

    assembly_format = "$source attr-dict `:` type($source) `to` type($result)"


# ----------------------------------------------------------------- sequences


@irdl_op_definition
class SeqAllocOp(IRDLOperation):
    name = "krnl.seqalloc"

    length = var_operand_def(IndexType)
    output = result_def(MemRefType)


@irdl_op_definition
class SeqDeallocOp(IRDLOperation):
    name = "krnl.seqdealloc"

    input_sequence = operand_def(MemRefType)


@irdl_op_definition
class SeqExtractOp(IRDLOperation):
    name = "krnl.seqextract"

    seq = operand_def(MemRefType)
    index = operand_def(IndexType)
    copy = opt_prop_def(IntegerAttr[IntegerType])
    output = result_def()


@irdl_op_definition
class SeqStoreOp(IRDLOperation):
    name = "krnl.seqstore"

    input = operand_def()
    seq = operand_def(MemRefType)
    index = operand_def(IndexType)


def tile_copy_problems(
    self: CopyToTileBufferOp | CopyFromTileBufferOp, name: Namer
) -> Iterator[tuple[str, str]]:
    """What is wrong with the op itself (buffer shape, ranks, starts, sizes): (message, hint)."""
    op = self
    buf = op.buffer
    mem = op.source if isinstance(op, CopyToTileBufferOp) else op.dest
    what = "source" if isinstance(op, CopyToTileBufferOp) else "destination"
    if not isinstance(buf.type, MemRefType) or not isinstance(mem.type, MemRefType):
        return
    shape = list(buf.type.get_shape())
    brank, mrank = len(shape), len(mem.type.get_shape())
    if any(d < 0 for d in shape):
        yield (
            f"{op.name} needs a buffer of static shape, but {name(buf)} has type {buf.type}",
            "allocate the tile buffer with constant sizes, e.g. memref<10x8xf32>",
        )
    if mrank < brank:
        yield (
            f"{op.name}: the {what} {name(mem)} has rank {mrank}, smaller than the "
            f"rank {brank} of the buffer {name(buf)}",
            f"the buffer holds a tile of the {what}: give it at most {mrank} dimensions",
        )
    if len(op.starts) != mrank:
        yield (
            f"{op.name} gives {len(op.starts)} start indices, but the {what} "
            f"{name(mem)} has rank {mrank}",
            f"give one start index per dimension of the {what}",
        )
    attrs: list[tuple[str, Attribute | None]] = [("tileSize", op.tileSize)]
    if isinstance(op, CopyToTileBufferOp):
        attrs.append(("padToNext", op.padToNext))
    for attr_name, attr in attrs:
        values = ints(attr)
        if values is None:
            continue
        if len(values) not in (0, brank):
            yield (
                f"{op.name} {attr_name} has {len(values)} values, but the buffer "
                f"{name(buf)} has rank {brank}",
                f"give one {attr_name} value per buffer dimension ({brank}), or none",
            )
        elif attr_name == "tileSize" and any(
            0 <= d < t for t, d in zip(values, shape, strict=False)
        ):
            yield (
                f"{op.name} tileSize {values} is larger than the buffer {name(buf)} ({buf.type})",
                "each tileSize value must be at most the buffer size in that dimension",
            )
    if (
        isinstance(op, CopyToTileBufferOp)
        and op.transpose is not None
        and op.transpose.value.data
        and brank < 2
    ):
        yield (
            f"krnl.copy_to_tile_buffer with transpose needs a buffer of rank >= 2, but "
            f"{name(buf)} has rank {brank}",
            "transpose swaps the last two dimensions: use a 2-D buffer or drop transpose",
        )
