"""Which top-level nests run as one tile loop: those that share a function-level temporary.

onnx-mlir writes a softmax or a layer normalization as several nests that pass per-row
values through buffers allocated at function level (``%max = memref.alloc() :
memref<16xf32>``, filled by one nest, read by the next). Such a buffer is a *temporary*
when the function does not return it; every nest from the first that touches it to the
last is *fused*: one loop over row tiles runs the nests' bodies one after another, and
the temporary lives in UB, one tile's rows at a time (a row vector becomes a column
tile). Whether that is legal is checked where the group is lowered
(:func:`polykrnl.targets.pto.nest_plan.lower_group`). Nests that share no temporary keep their
own tile loops.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass

from xdsl.dialects import func, memref
from xdsl.ir import SSAValue

from polykrnl.targets.pto.krnl_ops import is_alloc
from polykrnl.transforms.core import Schedule, SLoop, SNode, SStmt

__all__ = ["Temporary", "arrays_in", "nest_groups", "returned_buffers", "temporaries"]


@dataclass(frozen=True)
class Temporary:
    """A buffer allocated at function level and not returned: it can live in UB."""

    array: str
    alloc: str  # the statement that allocates it
    frees: tuple[str, ...]  # its memref.dealloc statements


def temporaries(sched: Schedule) -> dict[str, Temporary]:
    """Array name -> the temporary, for every top-level memref.alloc the function does not
    return (a returned buffer is an output, not a temporary)."""
    program = sched.program
    returned = {
        v
        for op in program.function.op.body.block.ops
        if isinstance(op, func.ReturnOp)
        for v in op.operands
    }
    out: dict[str, Temporary] = {}
    frees: dict[str, list[str]] = {}
    for node in sched.nodes:
        if not isinstance(node, SStmt):
            continue
        s = sched.statements[node.name]
        op = s.anchor
        if is_alloc(op) and op.results[0] not in returned:
            array = program.array_names.get(op.results[0])
            if array is not None:
                out[array] = Temporary(array, s.name, ())
        elif isinstance(op, memref.DeallocOp):
            array = program.array_names.get(op.operands[0])
            if array is not None:
                frees.setdefault(array, []).append(s.name)
    return {a: Temporary(a, t.alloc, tuple(frees.get(a, ()))) for a, t in out.items()}


def returned_buffers(sched: Schedule) -> list[tuple[SSAValue, str]]:
    """The buffers the function allocates at top level and returns (onnx-mlir's outputs),
    with the statement that allocates each: the kernel takes them as output tensors."""
    ret = next(
        (op for op in sched.program.function.op.body.block.ops if isinstance(op, func.ReturnOp)),
        None,
    )
    allocs: dict[SSAValue, str] = {
        sched.statements[n.name].anchor.results[0]: n.name
        for n in sched.nodes
        if isinstance(n, SStmt) and is_alloc(sched.statements[n.name].anchor)
    }
    return [(v, allocs[v]) for v in (ret.operands if ret else ()) if v in allocs]


def nest_groups(
    sched: Schedule, temps: dict[str, Temporary], outputs: Set[str] = frozenset()
) -> list[list[SNode]]:
    """The top-level nodes in order, grouped: a group of several nests shares temporaries
    (from the first nest that touches one to the last); the allocations and frees of
    temporaries are left out (UB tiles need neither), and so are the allocations of the
    returned buffers (statements `outputs`: the caller passes them)."""
    skipped = {t.alloc for t in temps.values()} | {f for t in temps.values() for f in t.frees}
    skipped |= outputs
    nodes = [n for n in sched.nodes if not (isinstance(n, SStmt) and n.name in skipped)]
    span: list[tuple[int, int]] = []
    for array in temps:
        touching = [i for i, n in enumerate(nodes) if array in arrays_in(sched, n)]
        if touching:
            span.append((touching[0], touching[-1]))
    last_of = list(range(len(nodes)))  # node -> the last node of its group
    for first, last in span:
        for i in range(first, last + 1):
            last_of[i] = max(last_of[i], last)
    groups: list[list[SNode]] = []
    i = 0
    while i < len(nodes):
        end = last_of[i]
        j = i
        while j <= end:  # a group grows while its members' spans reach further
            end = max(end, last_of[j])
            j += 1
        groups.append(nodes[i:j])
        i = j
    return groups


def arrays_in(sched: Schedule, node: SNode) -> set[str]:
    """The arrays the statements of `node` access."""
    if isinstance(node, SStmt):
        return {a.array for a in sched.statements[node.name].accesses}
    assert isinstance(node, SLoop)
    return {a for x in node.body for a in arrays_in(sched, x)}
