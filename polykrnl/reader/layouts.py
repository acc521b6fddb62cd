"""Memrefs whose layout is an affine map (a tiled layout), normalized where a module is read.

onnx-mlir runs MLIR's `--normalize-memrefs` before it lowers such memrefs: a memref
`memref<?x128x256xf32, #map>` with `#map = (d0, d1, d2) -> (d0, d1 floordiv 64, d2 floordiv
32, d2 mod 32, d1 mod 64)` becomes the identity-layout memref of the map's image,
`memref<?x2x8x32x64xf32>`, every access composes the map into its subscripts, and the ops
that see the buffer's elements in their order (`krnl.memcpy`, `krnl.memset`,
`krnl.get_linear_offset_index`) then mean what they mean on that memref. The layout is
where an element lies, so only those ops see it; polykrnl's stages (the interpreter
included) read every memref as of identity layout, so the reader does onnx-mlir's
normalization once and every stage sees the same normalized function.

Each dimension of the image is the range of one result of the map over the box of the
old shape: for a static dimension isl's maximum over the box, plus one (a result that
can be negative or is unbounded is not normalized); a result that reads a dynamic
dimension is dynamic, and an allocation computes it from its sizes as MLIR does for a
tiled layout (`d` its size, `d floordiv c` the size ceildiv c, `d mod c` c). A module
with a layout polykrnl cannot normalize (a symbol, a semi-affine map, another use of
such a memref than an access, an allocation, a whole-buffer op or a return) is left as
it was: the ops that need the layout then refuse with today's words.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping, Sequence
from dataclasses import dataclass

from xdsl.dialects import affine, func, memref, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    VectorType,
)
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)
from xdsl.rewriter import Rewriter

from polykrnl.dialect.krnl import access as ka
from polykrnl.dialect.krnl import memory as km
from polykrnl.dialect.krnl.access import has_identity_layout
from polykrnl.ir import LayoutNote


@dataclass(frozen=True)
class _Normal:
    """How one memref type normalizes: the new type and, per new dynamic dimension, its
    size as a map over the old type's dynamic sizes."""

    old: MemRefType[Attribute]
    new: MemRefType[Attribute]
    layout: AffineMap
    sizes: AffineMap


class _Refused(Exception):
    """Why the module keeps its layouts (internal: the module is then left as it was)."""


# Ops whose memref operand is indexed by the op's own `map` (composed with the layout).
_MAP_ACCESSES: tuple[type[Operation], ...] = (
    affine.LoadOp,
    affine.StoreOp,
    ka.GetLinearOffsetIndexOp,
    ka.PrefetchOp,
)
# Ops whose trailing operands are the subscripts of their `memref` operand.
_INDEX_ACCESSES: tuple[type[Operation], ...] = (
    km.LoadOp,
    km.StoreOp,
    memref.LoadOp,
    memref.StoreOp,
)
# Ops that read or write a 1-D vector of consecutive elements of their `base` operand, at
# their trailing operands' subscripts: normalized only where a run along the last
# dimension stays a run (`_keeps_runs`).
_VECTOR_ACCESSES: tuple[type[Operation], ...] = (vector.LoadOp, vector.StoreOp)
# Ops that take the buffer whole: its elements in their (normalized) order, or its life.
_WHOLE = (km.MemcpyOp, km.MemsetOp, memref.DeallocOp, func.ReturnOp)
_ALLOCS = (memref.AllocOp, memref.AllocaOp)


def has_tiled_layout(t: Attribute) -> bool:
    """`t` is a memref whose layout is an affine map other than the identity (a rank-0
    memref has one element wherever it lies: MLIR leaves it as it is too)."""
    return (
        isinstance(t, MemRefType)
        and isinstance(t.layout, AffineMapAttr)
        and bool(t.get_shape())
        and not has_identity_layout(t)
    )


def normalize_layouts(
    module: ModuleOp, names: MutableMapping[SSAValue, str]
) -> tuple[tuple[LayoutNote, ...], str | None]:
    """Normalize every memref with a tiled layout in `module`, in place.

    Returns the notes on changed signatures, and why nothing changed when a layout
    could not be normalized (None when every layout was, or there was none). `names`,
    the source's value names, follows the values the rewrite replaces.
    """
    if not any(has_tiled_layout(t) for t in _types(module)):
        return (), None
    try:
        layouts = [t for t in _types(module) if isinstance(t, MemRefType)]
        normals: dict[Attribute, _Normal] = {t: _normal(t) for t in layouts if has_tiled_layout(t)}
        for op in module.walk():
            for v in (*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)):
                if has_tiled_layout(v.type):
                    _check_value(v)
    except _Refused as e:
        return (), str(e)
    notes: list[LayoutNote] = []
    for f in [op for op in module.walk() if isinstance(op, func.FuncOp)]:
        notes += _rewrite_function(f, normals, names)
    return tuple(notes), None


def _types(module: ModuleOp) -> Iterator[Attribute]:
    for op in module.walk():
        if isinstance(op, func.FuncOp):
            yield from op.function_type.inputs.data
            yield from op.function_type.outputs.data
        yield from (r.type for r in op.results)
        for region in op.regions:
            for block in region.blocks:
                yield from (a.type for a in block.args)


# ------------------------------------------------------------------ the normalized type


def _normal(t: MemRefType[Attribute]) -> _Normal:
    layout = t.layout
    assert isinstance(layout, AffineMapAttr)
    m = layout.data
    shape = t.get_shape()
    if m.num_symbols:
        raise _Refused(f"the layout of {t} takes symbols")
    if m.num_dims != len(shape):
        raise _Refused(f"the layout of {t} takes {m.num_dims} dimensions, not {len(shape)}")
    if any(n == 0 for n in shape):
        raise _Refused(f"{t} has no elements")
    dynamic = [d for d, n in enumerate(shape) if n == DYNAMIC_INDEX]
    new_shape: list[int] = []
    sizes: list[AffineExpr] = []
    for e in m.results:
        used = _dims(e)
        if used & set(dynamic):
            sizes.append(_dynamic_size(e, t, dynamic))
            new_shape.append(DYNAMIC_INDEX)
        else:
            new_shape.append(_static_extent(e, shape, t))
    new = MemRefType(t.element_type, new_shape, NoneAttr(), t.memory_space)
    return _Normal(t, new, m, AffineMap(len(dynamic), 0, tuple(sizes)))


def _dims(e: AffineExpr) -> set[int]:
    if isinstance(e, AffineDimExpr):
        return {e.position}
    if isinstance(e, AffineBinaryOpExpr):
        return _dims(e.lhs) | _dims(e.rhs)
    return set()


def _dynamic_size(e: AffineExpr, t: MemRefType[Attribute], dynamic: list[int]) -> AffineExpr:
    """The extent of result `e` of a tiled layout, over the old dynamic sizes (MLIR's rule,
    which onnx-mlir's allocations follow: a dimension, its tiles, a tile's positions)."""
    if isinstance(e, AffineDimExpr):
        return AffineDimExpr(dynamic.index(e.position))
    if (
        isinstance(e, AffineBinaryOpExpr)
        and isinstance(e.lhs, AffineDimExpr)
        and isinstance(e.rhs, AffineConstantExpr)
        and e.rhs.value > 0
    ):
        size = AffineDimExpr(dynamic.index(e.lhs.position))
        if e.kind == AffineBinaryOpKind.FloorDiv:
            return AffineBinaryOpExpr(AffineBinaryOpKind.CeilDiv, size, e.rhs)
        if e.kind == AffineBinaryOpKind.Mod:
            return e.rhs
    raise _Refused(
        f"the layout of {t} maps a dynamic dimension by {e}, not a dimension, its "
        "floordiv or its mod by a constant"
    )


def _static_extent(e: AffineExpr, shape: Sequence[int], t: MemRefType[Attribute]) -> int:
    """One more than the largest value of `e` over the box of `shape` (isl's bounds).

    A remainder `x mod c` counts as any value of [0, c), as in MLIR's bound, whose
    constraint system does not narrow it to the box: a tile keeps its whole size
    (onnx-mlir's `memref<1x16x4x4xf32>` tiled by 32x32 is `memref<1x16x1x1x32x32xf32>`,
    which a krnl.memcpy of 16384 elements fills).
    """
    import islpy as isl  # only for layouts: reading other modules loads no isl

    remainders: list[int] = []
    value = _isl(e, t, remainders)
    names = [f"d{i}" for i in range(len(shape))] + [f"m{j}" for j in range(len(remainders))]
    box = [f"0 <= d{i} < {n}" for i, n in enumerate(shape) if n != DYNAMIC_INDEX]
    box += [f"0 <= m{j} < {c}" for j, c in enumerate(remainders)]
    text = (
        f"{{ [r] : exists ({', '.join(names)} : r = {value} and {' and '.join(box) or 'true'}) }}"
    )
    image = isl.Set(text)
    low, high = image.dim_min_val(0), image.dim_max_val(0)
    if not (low.is_int() and high.is_int()):
        raise _Refused(f"the layout of {t} maps its elements to an unbounded range ({e})")
    if low.to_python() < 0:
        raise _Refused(f"the layout of {t} maps elements to negative positions ({e})")
    return int(high.to_python()) + 1


def _isl(e: AffineExpr, t: MemRefType[Attribute], remainders: list[int]) -> str:
    """`e` in isl's syntax; each `mod c` a variable `m<j>` whose range `remainders[j] = c`
    gives."""
    if isinstance(e, AffineDimExpr):
        return f"d{e.position}"
    if isinstance(e, AffineConstantExpr):
        return str(e.value)
    if isinstance(e, AffineBinaryOpExpr):
        if isinstance(e.rhs, AffineConstantExpr) and e.rhs.value > 0:
            c = e.rhs.value
            if e.kind == AffineBinaryOpKind.Mod:
                _isl(e.lhs, t, remainders)  # its own divisions must be affine too
                remainders.append(c)
                return f"m{len(remainders) - 1}"
            if e.kind == AffineBinaryOpKind.FloorDiv:
                return f"floor(({_isl(e.lhs, t, remainders)}) / {c})"
            if e.kind == AffineBinaryOpKind.CeilDiv:
                return f"ceil(({_isl(e.lhs, t, remainders)}) / {c})"
        lhs, rhs = _isl(e.lhs, t, remainders), _isl(e.rhs, t, remainders)
        if e.kind == AffineBinaryOpKind.Add:
            return f"({lhs} + {rhs})"
        if e.kind == AffineBinaryOpKind.Mul and (
            isinstance(e.lhs, AffineConstantExpr) or isinstance(e.rhs, AffineConstantExpr)
        ):
            return f"({lhs} * {rhs})"
    raise _Refused(f"the layout of {t} is semi-affine or takes symbols ({e})")


# ------------------------------------------------------------------ which uses it rewrites


def _check_value(v: SSAValue) -> None:
    """Refuse a memref of tiled layout that comes from, or goes to, an op the
    normalization does not rewrite (MLIR's pass also leaves such memrefs alone)."""
    if isinstance(v, OpResult) and not isinstance(v.op, _ALLOCS):
        raise _Refused(f"`{v.op.name}` makes a memref of type {v.type}")
    if isinstance(v, BlockArgument) and not isinstance(v.block.parent_op(), func.FuncOp):
        raise _Refused(f"a block argument of type {v.type} (not a function's)")
    for use in v.uses:
        op = use.operation
        if _accessed(op) is op.operands[use.index]:
            if isinstance(op, _VECTOR_ACCESSES) and not _keeps_runs(op, v.type):
                raise _Refused(
                    f"`{op.name}` reads a run of elements of type {v.type}, whose layout "
                    "does not keep the last dimension's elements consecutive"
                )
            continue
        if isinstance(op, _WHOLE):
            continue
        raise _Refused(f"`{op.name}` uses a memref of type {v.type}")


# ------------------------------------------------------------------ the rewrite


def _accessed(op: Operation) -> SSAValue | None:
    """The memref an access op indexes (None for other ops)."""
    if isinstance(op, (*_MAP_ACCESSES, *_INDEX_ACCESSES)):
        target = getattr(op, "memref", None)
        return target if isinstance(target, SSAValue) else None
    if isinstance(op, vector.LoadOp | vector.StoreOp):
        return op.base
    return None


def _keeps_runs(op: Operation, t: Attribute) -> bool:
    """A 1-D vector along the last dimension is a run of the normalized memref too: the
    layout's last result is the last dimension, which no other result reads."""
    lanes = op.result.type if isinstance(op, vector.LoadOp) else op.operands[0].type
    if not isinstance(lanes, VectorType) or len(lanes.get_shape()) != 1:
        return False
    assert isinstance(t, MemRefType) and isinstance(t.layout, AffineMapAttr)
    m = t.layout.data
    last = m.num_dims - 1
    return m.results[-1] == AffineDimExpr(last) and all(
        last not in _dims(e) for e in m.results[:-1]
    )


def _rewrite_function(
    f: func.FuncOp, normals: dict[Attribute, _Normal], names: MutableMapping[SSAValue, str]
) -> list[LayoutNote]:
    def new_type(t: Attribute) -> Attribute:
        n = normals.get(t)
        return n.new if n is not None else t

    ftype = f.function_type
    notes: list[LayoutNote] = []
    name = f.sym_name.data
    # The values of normalized type the rewrite makes, each with its layout.
    made: dict[SSAValue, _Normal] = {}
    if f.body.blocks:
        for a in list(f.body.block.args):
            if (n := normals.get(a.type)) is not None:
                label = names.get(a, f"%arg{a.index}")
                notes.append(LayoutNote(name, f"argument {label}", str(n.old), str(n.new)))
                new = Rewriter.replace_value_with_new_type(a, n.new)
                _rename(a, new, names)
                made[new] = n
    for i, t in enumerate(ftype.outputs.data):
        if (n := normals.get(t)) is not None:
            notes.append(LayoutNote(name, f"result {i}", str(n.old), str(n.new)))
    f.function_type = func.FunctionType.from_lists(
        [new_type(t) for t in ftype.inputs.data], [new_type(t) for t in ftype.outputs.data]
    )
    for op in list(f.walk()):
        if isinstance(op, _ALLOCS) and (n := normals.get(op.memref.type)) is not None:
            made[_rewrite_alloc(op, n, names)] = n
    for op in list(f.walk()):
        if (target := _accessed(op)) is not None and target in made:
            _rewrite_access(op, made[target], names)
    return notes


def _rename(old: SSAValue, new: SSAValue, names: MutableMapping[SSAValue, str]) -> None:
    if old in names:
        names[new] = names[old]


def _rewrite_alloc(
    op: memref.AllocOp | memref.AllocaOp, n: _Normal, names: MutableMapping[SSAValue, str]
) -> SSAValue:
    """The allocation of the normalized type, its dynamic sizes computed from the old
    ones (affine.apply ops at the allocation, located there)."""
    block = op.parent_block()
    assert block is not None
    new_sizes: list[SSAValue] = []
    for e in n.sizes.results:
        size_map = AffineMap(n.sizes.num_dims, 0, (e,))
        apply = affine.ApplyOp(list(op.dynamic_sizes), AffineMapAttr(size_map))
        apply.location = op.location
        block.insert_op_before(apply, op)
        new_sizes.append(apply.result)
    new = type(op).build(
        operands=[new_sizes, list(op.symbol_operands)],
        result_types=[n.new],
        properties={"alignment": op.alignment},
        attributes=dict(op.attributes),
    )
    new.location = op.location
    block.insert_op_before(new, op)
    _rename(op.memref, new.memref, names)
    op.memref.replace_all_uses_with(new.memref)
    block.erase_op(op)
    return new.memref


def _rewrite_access(op: Operation, n: _Normal, names: MutableMapping[SSAValue, str]) -> None:
    if isinstance(op, _MAP_ACCESSES):
        attr = op.properties.get("map")
        m = attr.data if isinstance(attr, AffineMapAttr) else AffineMap.identity(n.layout.num_dims)
        op.properties["map"] = AffineMapAttr(n.layout.compose(m))
        return
    # Plain subscripts: one affine.apply per subscript of the normalized memref.
    rank = n.layout.num_dims
    head, indices = list(op.operands[: len(op.operands) - rank]), op.operands[-rank:]
    block = op.parent_block()
    assert block is not None
    subscripts: list[SSAValue] = []
    for e in n.layout.results:
        apply = affine.ApplyOp(list(indices), AffineMapAttr(AffineMap(rank, 0, (e,))))
        apply.location = op.location
        block.insert_op_before(apply, op)
        subscripts.append(apply.result)
    new = type(op).create(
        operands=[*head, *subscripts],
        result_types=[r.type for r in op.results],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
        location=op.location,
    )
    block.insert_op_before(new, op)
    for old_r, new_r in zip(op.results, new.results, strict=True):
        _rename(old_r, new_r, names)
        old_r.replace_all_uses_with(new_r)
    block.erase_op(op)
