"""Buffers allocated inside loops that compiled code keeps in a local variable.

A memref.alloc/alloca inside a loop body is a new buffer per iteration of the loops
around it (MLIR: an alloca lives for one execution of its region), so the polyhedral
model gives each iteration its own copy (`ArrayInfo.site`). The Python writer keeps the
copies in a dictionary keyed by the iteration, right in any legal order, including
orders that interleave iterations; compiled code pays a typed-dictionary lookup per
access for that (gemm's k loop over a scalar accumulator ran 20x slower than over an
argument), and a loop whose statements share a dictionary cannot run on threads.

A local variable, rebound by each execution of the allocation, is right when the
schedule never runs the allocation of another iteration between an iteration's
allocation and one of its uses: then every use reads the copy of its own iteration.
isl decides it on the schedule's map, so a permuted or tiled nest keeps the local
while an order that interleaves the iterations keeps the dictionary. A rank-0 buffer
that only element loads and stores use (onnx-mlir's scalar accumulator) is then a scalar
variable, which LLVM keeps in a register: no allocation per iteration.
"""

from __future__ import annotations

import islpy as isl
from xdsl.dialects import affine, memref
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.poly import PolyProgram
from polykrnl.transforms.core import Schedule


def local_buffers(sched: Schedule) -> tuple[SSAValue, ...]:
    """The buffers allocated inside loops whose copies may live in one local variable."""
    program = sched.program
    out: list[SSAValue] = []
    for st in program.statements:
        if not isinstance(st.anchor, memref.AllocOp | memref.AllocaOp):
            continue
        v = st.anchor.results[0]
        array = program.array_names.get(v)
        info = program.arrays.get(array) if array is not None else None
        if info is None or not info.site or _used_unseen(program, v, info.name):
            continue
        if _contiguous(sched, program, st.name, info.name, len(info.site)):
            out.append(v)
    return tuple(out)


def _used_unseen(program: PolyProgram, v: SSAValue, array: str) -> bool:
    """Whether a statement uses `v` without an access of its array the model records
    (then the check below would not see that use)."""
    for st in program.statements:
        if any(a.array == array for a in st.accesses):
            continue
        for op in st.ops:
            if any(v in inner.operands for inner in op.walk()):
                return True
    return False


def _contiguous(sched: Schedule, program: PolyProgram, alloc: str, array: str, n_site: int) -> bool:
    """Whether no allocation of another iteration runs between an iteration's
    allocation (statement `alloc`) and any access of its copy of `array`."""
    time = sched.schedule_map
    allocs: isl.UnionMap | None = None
    uses: isl.UnionMap | None = None
    for st in program.statements:
        for a in st.accesses:
            if a.array != array:
                continue
            rel = a.relation
            copy = rel.project_out(isl.dim_type.out, n_site, rel.dim(isl.dim_type.out) - n_site)
            at = isl.UnionMap.from_map(copy).reverse().apply_range(time)
            uses = at if uses is None else uses.union(at)
            if st.name == alloc and a.write:
                allocs = at if allocs is None else allocs.union(at)
    if allocs is None or uses is None:
        return False
    ta = isl.Map.from_union_map(allocs)
    tu = isl.Map.from_union_map(uses)
    # p -> q: the allocation of q runs after p's; and after it, a use of p's copy.
    later = ta.lex_lt_map(ta)
    before_use = ta.lex_lt_map(tu).reverse()
    return bool(later.intersect(before_use).is_empty())


def scalar_only(v: SSAValue) -> bool:
    """Whether `v` is a rank-0 buffer that only element loads and stores of it use."""
    if not isinstance(v.type, MemRefType) or v.type.get_shape():
        return False
    for use in v.uses:
        op = use.operation
        if isinstance(op, k.LoadOp | memref.LoadOp | affine.LoadOp) and use.index == 0:
            continue
        if isinstance(op, k.StoreOp | memref.StoreOp | affine.StoreOp) and use.index == 1:
            continue
        return False
    return True
