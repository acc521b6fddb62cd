"""Which integer arguments hold memory indices, and how far their values may go.

Random inputs for a gather (`Y[i] = X[idx[i]]`), a reduction over data-given axes
or a reverse-sequence would index out of bounds on almost every draw, and the
interpreter rightly refuses those runs. `index_limits` follows the values loaded
from each integer memref argument through the integer ops that carry an index
(casts, select, add/sub, min/max, affine.apply/min/max) to the subscripts they end
up in; the argument's elements are then drawn in ``[0, n)``, with ``n`` the smallest
dimension they index. This is a help for random runs, not an analysis polykrnl relies
on: data that reaches memory some other way (a loop bound, an allocation size) keeps
the ordinary integer range, and ``run --input`` gives any argument exact data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from xdsl.dialects import affine, arith, memref, vector
from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType
from xdsl.ir import Operation, SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.dialect import std_ext
from polykrnl.ir import Function

# Ops whose result is an index computed from an operand without leaving its range
# by more than a constant shift (the `idx < 0 ? idx + n : idx` that onnx-mlir writes
# for negative indices, a clamp with min/max).
_CARRY: tuple[type[Operation], ...] = (
    arith.IndexCastOp,
    std_ext.IndexCastUIOp,
    arith.ExtSIOp,
    arith.ExtUIOp,
    arith.TruncIOp,
    std_ext.ExtSIOp,
    std_ext.ExtUIOp,
    std_ext.TruncIOp,
    arith.SelectOp,
    std_ext.SelectOp,
    arith.AddiOp,
    arith.SubiOp,
    arith.MinSIOp,
    arith.MaxSIOp,
    arith.MinUIOp,
    arith.MaxUIOp,
    affine.ApplyOp,
    affine.MinOp,
    std_ext.MaxOp,
)

_LOADS: tuple[type[Operation], ...] = (k.LoadOp, memref.LoadOp)
# Views of the same elements (GatherND reads its indices through a reinterpret_cast).
_VIEWS: tuple[type[Operation], ...] = (
    memref.ReinterpretCastOp,
    memref.CastOp,
    memref.CollapseShapeOp,
    memref.ExpandShapeOp,
    memref.SubviewOp,
    std_ext.CastOp,
    std_ext.ReshapeOp,
)
_WITH_MEMREF: tuple[type[Operation], ...] = (k.LoadOp, k.StoreOp, memref.LoadOp, memref.StoreOp)
# Ops with a memref operand and its subscripts (`indices`), in dimension order.
_SUBSCRIPTED: tuple[type[Operation], ...] = (
    k.LoadOp,
    k.StoreOp,
    memref.LoadOp,
    memref.StoreOp,
    vector.LoadOp,
    vector.StoreOp,
)


def _memref_and_indices(op: Operation) -> tuple[SSAValue, tuple[SSAValue, ...]]:
    base = op.memref if isinstance(op, _WITH_MEMREF) else op.base  # type: ignore[attr-defined]
    return base, tuple(op.indices)  # type: ignore[attr-defined]


def _indexed_dims(
    value: SSAValue, dim_size: Callable[[SSAValue, int], int | None]
) -> Iterator[int | None]:
    """The sizes of the dimensions that `value`, or an index computed from it, subscripts."""
    seen: set[SSAValue] = set()
    todo = [value]
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        for use in v.uses:
            op = use.operation
            if isinstance(op, _SUBSCRIPTED):
                base, indices = _memref_and_indices(op)
                for d, index in enumerate(indices):
                    if index is v:
                        yield dim_size(base, d)
            elif isinstance(op, k.SeqExtractOp | k.SeqStoreOp) and op.index is v:
                yield dim_size(op.seq, 0)  # a position in an ONNX sequence
            elif isinstance(op, _CARRY) and not (
                isinstance(op, arith.SelectOp | std_ext.SelectOp) and use.index == 0
            ):
                todo.extend(op.results)


def _loads(array: SSAValue) -> Iterator[Operation]:
    """The loads of `array`'s elements, directly or through views of it."""
    for use in array.uses:
        op = use.operation
        if isinstance(op, _LOADS):
            yield op
        elif isinstance(op, _VIEWS) and use.index == 0:
            yield from _loads(op.results[0])


def index_limits(fn: Function, dim_size: Callable[[SSAValue, int], int | None]) -> dict[str, int]:
    """Integer memref arguments of `fn` whose elements subscript memory: name -> the
    smallest size of a dimension they subscript (`dim_size(memref, d)`; None, unknown,
    does not limit them)."""
    return _element_limits(fn, dim_size, _indexed_dims)


def _element_limits(
    fn: Function,
    dim_size: Callable[[SSAValue, int], int | None],
    limited: Callable[[SSAValue, Callable[[SSAValue, int], int | None]], Iterator[int | None]],
) -> dict[str, int]:
    """Integer memref arguments of `fn` -> the smallest of the sizes `limited` finds for
    the values loaded from them (what each loaded element may be at most)."""
    limits: dict[str, int] = {}
    if not fn.op.body.blocks:
        return limits
    for arg, value in zip(fn.arguments, fn.op.body.block.args, strict=True):
        t = arg.type
        if not (isinstance(t, MemRefType) and isinstance(t.element_type, IntegerType)):
            continue
        for load in _loads(value):
            for n in limited(load.results[0], dim_size):
                if n is not None and n > 0:
                    limits[arg.name] = min(limits.get(arg.name, n), n)
    return limits


def scalar_limits(fn: Function, dim_size: Callable[[SSAValue, int], int | None]) -> dict[str, int]:
    """Index and integer scalar arguments of `fn` that subscript memory or a sequence
    (directly or through the ops that carry an index): name -> the smallest size of what
    they subscript. A run's default value (`--size`) would index one past the end of a
    dimension of that size."""
    limits: dict[str, int] = {}
    if not fn.op.body.blocks:
        return limits
    for arg, value in zip(fn.arguments, fn.op.body.block.args, strict=True):
        if not isinstance(arg.type, IndexType | IntegerType):
            continue
        for n in _indexed_dims(value, dim_size):
            if n is not None and n > 0:
                limits[arg.name] = min(limits.get(arg.name, n), n)
    return limits


def _loop_values(it: k.IterateOp, handle: SSAValue, iv: SSAValue) -> Iterator[SSAValue]:
    """The values of one loop of `it`: its induction variable and the results of
    krnl.get_induction_var_value for its handle."""
    yield iv
    for use in handle.uses:
        op = use.operation
        if isinstance(op, k.GetInductionVarValueOp):
            yield op.results[use.index]


def _bounded_dims(
    value: SSAValue, dim_size: Callable[[SSAValue, int], int | None]
) -> Iterator[int | None]:
    """The sizes of the dimensions subscripted by the induction variable of a loop whose
    upper bound is `value` (or an index computed from it): a bound above such a size
    makes the loop index past its end."""
    seen: set[SSAValue] = set()
    todo = [value]
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        for use in v.uses:
            op = use.operation
            if isinstance(op, k.IterateOp):
                for e in op.entries:
                    if any(x is v for x in e.ub_operands):
                        for iv in _loop_values(op, e.handle, e.iv):
                            yield from _indexed_dims(iv, dim_size)
            elif isinstance(op, _CARRY) and not (
                isinstance(op, arith.SelectOp | std_ext.SelectOp) and use.index == 0
            ):
                todo.extend(op.results)


def size_limits(fn: Function, dim_size: Callable[[SSAValue, int], int | None]) -> dict[str, int]:
    """Integer memref arguments whose elements bound loops that subscript memory (TopK's
    k): name -> the smallest size such a loop subscripts, the largest element a run may
    hold. Random values in [-10, 10] would run the loop past that size, or not at all."""
    return _element_limits(fn, dim_size, _bounded_dims)
