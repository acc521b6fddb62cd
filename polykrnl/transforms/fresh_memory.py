"""Which allocations need no initial fill: every element the program reads, or returns,
is written by it first.

The reference interpreter fills fresh memory with NaN (floats) or zeros, so that a read
before any write shows. A generated kernel must do the same wherever such a read may
happen, but filling costs a pass over the buffer (and its page faults) before the real
first write: where isl's dataflow analysis proves that no read of the buffer is without
a write of its element before it in the program's order, and that a returned buffer has
every element written, the fill cannot be observed and the kernel allocates the buffer
empty (`np.empty`).

The proof holds for any schedule that keeps the program's dependences: a read with a
source keeps that source, and one without (an uninitialized read) keeps having none. A
buffer whose memref reaches anything the model does not see as an access of it (an
iter_args value, a returned view) keeps its fill.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import islpy as isl
from xdsl.dialects import func, memref
from xdsl.ir import Operation, SSAValue

from polykrnl.poly import POLY, PolyProgram, Statement
from polykrnl.transforms.dependences import union_of


@dataclass(frozen=True)
class FillVerdict:
    """Whether the allocation of `array` may start empty, and why (or why not)."""

    array: str
    empty: bool
    why: str


_CACHE: weakref.WeakKeyDictionary[PolyProgram, dict[str, FillVerdict]] = weakref.WeakKeyDictionary()


def fill_verdicts(program: PolyProgram) -> dict[str, FillVerdict]:
    """Per array of `program` allocated by memref.alloc, whether it needs its fill
    (computed once per program, in the program's order)."""
    found = _CACHE.get(program)
    if found is None:
        found = {}
        for s in program.statements:
            if isinstance(s.anchor, memref.AllocOp):
                array = program.array_names.get(s.anchor.results[0])
                if array is not None:
                    found[array] = _verdict(program, s, array)
        _CACHE[program] = found
    return found


def _verdict(program: PolyProgram, alloc: Statement, array: str) -> FillVerdict:
    result = alloc.anchor.results[0]
    escape = _escape(program, result, array)
    if escape is not None:
        return FillVerdict(array, False, escape)
    # The allocation (and the free) are modelled as writes of the whole buffer, to order
    # its uses: they write no value, so they are no source here.
    reads: list[isl.Map] = []
    must: list[isl.Map] = []
    writes: list[isl.Map] = []
    for s in program.statements:
        if isinstance(s.anchor, memref.AllocOp | memref.DeallocOp):
            continue
        for a in s.accesses:
            if a.array != array:
                continue
            if not a.write:
                reads.append(a.relation)
            else:
                writes.append(a.relation)
                if not a.may:
                    must.append(a.relation)
    returned = _returned(result)
    if returned and not _covered(program, alloc, array, must):
        return FillVerdict(array, False, "returned without every element written first")
    if not reads:
        return FillVerdict(array, True, "written whole, never read" if returned else "never read")
    info = isl.UnionAccessInfo.from_sink(union_of(reads))
    info = info.set_must_source(union_of(must)).set_may_source(union_of(writes))
    try:
        flow = info.set_schedule(program.order_schedule).compute_flow()
        unwritten = flow.get_may_no_source()
    except isl.Error:
        return FillVerdict(array, False, "the dataflow analysis failed")
    if not unwritten.intersect_params(program.context).is_empty():
        first = _first_statement(unwritten)
        return FillVerdict(array, False, f"{first} may read an element before it is written")
    what = "every element read or returned" if returned else "every element read"
    return FillVerdict(array, True, f"{what} is written first")


def _escape(program: PolyProgram, result: SSAValue, array: str) -> str | None:
    """Why the buffer may be used where the model sees no access of it (None: it is not):
    every use of it, or of a view of it, is an access the model records, a view, a size
    query, a free, or the return of the buffer itself."""
    recorded = {id(a.op) for s in program.statements for a in s.accesses if a.array == array}
    todo = [result]
    while todo:
        v = todo.pop()
        for use in v.uses:
            user: Operation = use.operation
            model = POLY.get(user)
            if model is not None and model.alias and use.index == 0:
                todo.extend(r for r in user.results)
            elif isinstance(user, func.ReturnOp):
                if v is not result:
                    return "a view of it is returned"
            elif isinstance(user, memref.DimOp | memref.DeallocOp) or id(user) in recorded:
                continue
            else:
                return f"{user.name} uses it"
    return None


def _returned(result: SSAValue) -> bool:
    return any(isinstance(u.operation, func.ReturnOp) for u in result.uses)


def _covered(program: PolyProgram, alloc: Statement, array: str, must: list[isl.Map]) -> bool:
    """Whether the must-writes write every element of the buffer (its allocation's access
    is the whole buffer), for every value of the parameters."""
    whole = next(a.relation for a in alloc.accesses if a.array == array and a.write)
    everything = whole.range().intersect_params(program.context)
    if not must:
        return everything.is_empty()
    written = union_of(must).range()
    return isl.UnionSet.from_set(everything).is_subset(written)


def _first_statement(reads: isl.UnionMap) -> str:
    maps: list[isl.Map] = []
    reads.foreach_map(maps.append)
    return sorted(str(m.get_tuple_name(isl.dim_type.in_)) for m in maps)[0]
