"""Scratch buffers allocated outside a krnl.iterate but private to its iterations.

onnx-mlir allocates the scalar accumulator of a reduction it does not vectorize (pooling,
Gemm without krnl.matmul) once, before the loops, and resets it as the first op of the
output nest's body (its lit tests, onnx_to_krnl/NN/Pooling.mlir: `memref.alloca()` before
`krnl.define_loops`, `krnl.store %identity, %acc[]` first in the body). Read as written,
that one cell carries a dependence from every iteration to the next, so the output loops
are neither parallel nor reorderable and array code keeps them as Python loops.

The cell is in fact private when no value flows through it between iterations. Then the
program means the same as the one with the allocation moved to the start of the body,
which the model already understands (one copy per iteration, `ArrayInfo.site`). The rule,
decided exactly:

* syntactic preconditions (where the copy would be allocated): a memref.alloc/alloca with
  a static shape of at most `MAX_ELEMENTS` elements, every use of its result inside the
  body of one krnl.iterate that does not enclose the allocation (the innermost iterate
  holding all uses), the first of those uses inside an op directly in that body that
  holds no region (the copy is allocated just before that op). A use outside the body, a
  dealloc or a return or a view made before the loops, leaves the buffer shared;
* dataflow, by isl on the schedule as written: every read of the buffer has a write of
  the buffer as its source (never the allocation's undefined contents), and every flow
  dependence joins two instances of the same iteration of the loops around that body.
  Nothing reads the buffer after the iterate, since no use is outside it.

A buffer that carries a value between iterations (a running sum through an outer cell, a
reset under `j == 0`, a read before the reset) fails the dataflow test and keeps its
dependences.
"""

from __future__ import annotations

from collections.abc import Mapping

import islpy as isl
from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation

from polykrnl.dialect import krnl as k
from polykrnl.ir import Function
from polykrnl.poly.program import CTX, PolyProgram, Statement

# A privatized buffer becomes, in array code, one array of copies per iteration of the
# vectorized loops around it: worth it for scratch cells, not for big buffers.
MAX_ELEMENTS = 256


def candidates(fn: Function) -> dict[Operation, Operation]:
    """The allocations that meet the syntactic preconditions, each with the op of the
    iterate's body before which its copy would be allocated (allocation -> that op)."""
    out: dict[Operation, Operation] = {}
    for op in fn.op.walk():
        if not isinstance(op, memref.AllocOp | memref.AllocaOp) or op.operands:
            continue
        t = op.results[0].type
        if not isinstance(t, MemRefType) or _elements(t) > MAX_ELEMENTS:
            continue
        users = [use.operation for use in op.results[0].uses]
        if not users:
            continue
        iterate = _common_iterate(users, op)
        if iterate is None:
            continue
        anchor = _first_in_body(users, iterate)
        if anchor is not None and not anchor.regions:
            out[op] = anchor
    return out


def private_cells(
    program: PolyProgram, found: Mapping[Operation, Operation]
) -> dict[Operation, Operation]:
    """The `found` candidates (allocation -> first op) whose buffer carries no value
    between iterations, on `program`, the model with every buffer shared."""
    return {alloc: anchor for alloc, anchor in found.items() if _private(program, alloc, anchor)}


def _elements(t: MemRefType) -> int:
    n = 1
    for size in t.get_shape():
        if size < 0:
            return MAX_ELEMENTS + 1
        n *= size
    return n


def _iterates_around(op: Operation) -> list[k.IterateOp]:
    """The krnl.iterate ops enclosing `op`, innermost first."""
    out: list[k.IterateOp] = []
    p = op.parent_op()
    while p is not None:
        if isinstance(p, k.IterateOp):
            out.append(p)
        p = p.parent_op()
    return out


def _common_iterate(users: list[Operation], alloc: Operation) -> k.IterateOp | None:
    """The innermost iterate whose body holds every user and not the allocation."""
    around_alloc = set(_iterates_around(alloc))
    for it in _iterates_around(users[0]):
        if it in around_alloc:
            return None
        if all(it.is_ancestor(u) for u in users[1:]):
            return it
    return None


def _first_in_body(users: list[Operation], iterate: k.IterateOp) -> Operation | None:
    """The op directly in `iterate`'s body that holds the first use."""
    block = iterate.body.block
    tops: list[Operation] = []
    for u in users:
        top: Operation | None = u
        while top is not None and top.parent_block() is not block:
            top = top.parent_op()
        if top is None:
            return None
        tops.append(top)
    return min(tops, key=block.get_operation_index)


def _private(program: PolyProgram, alloc: Operation, anchor: Operation) -> bool:
    v = alloc.results[0]
    array = program.array_names.get(v)
    home = next((st for st in program.statements if anchor in st.ops), None)
    if array is None or home is None:
        return False
    n = len(home.loops)
    touching = [
        st
        for st in program.statements
        if st.anchor is not alloc and any(a.array == array for a in st.accesses)
    ]
    for st in program.statements:
        if st.anchor is alloc or st in touching:
            continue
        # A use the model records no access for could read the cell unseen.
        if any(v in inner.operands for op in st.ops for inner in op.walk()):
            return False
    if not touching or any(st.loops[:n] != home.loops for st in touching):
        return False
    reads, must, writes, site = _relations(touching, array, n)
    if reads.is_empty():
        return False
    order = program.schedule.get_map().intersect_domain(reads.domain().union(writes.domain()))
    info = isl.UnionAccessInfo.from_sink(reads).set_must_source(must).set_may_source(writes)
    try:
        flow = info.set_schedule_map(order).compute_flow()
    except isl.Error:
        return False
    if not flow.get_may_no_source().is_empty():
        return False
    # Source -> sink, as the iterations of the loops around the body of each.
    pairs = flow.get_may_dependence().apply_domain(site).apply_range(site)
    maps: list[isl.Map] = []
    pairs.foreach_map(maps.append)
    for m in maps:
        deltas = m.deltas()
        zero = isl.Set.universe(deltas.get_space())
        for d in range(n):
            zero = zero.fix_val(isl.dim_type.set, d, isl.Val.zero(CTX))
        if not deltas.is_subset(zero):
            return False
    return True


def _relations(
    touching: list[Statement], array: str, n: int
) -> tuple[isl.UnionMap, isl.UnionMap, isl.UnionMap, isl.UnionMap]:
    """The reads, must writes and writes of `array` by `touching`, and each statement's
    instances -> the values of its first `n` loops."""
    empty = isl.UnionMap.empty(isl.Space.params_alloc(CTX, 0))
    reads, must, writes, site = empty, empty, empty, empty
    for st in touching:
        values = st.loop_values
        values = values.project_out(isl.dim_type.out, n, values.dim(isl.dim_type.out) - n)
        site = site.union(isl.UnionMap.from_map(values))
        for a in st.accesses:
            if a.array != array:
                continue
            rel = isl.UnionMap.from_map(a.relation)
            if not a.write:
                reads = reads.union(rel)
                continue
            writes = writes.union(rel)
            if not a.may:
                must = must.union(rel)
    return reads, must, writes, site
