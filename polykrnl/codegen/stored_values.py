"""Values a statement reads back from the memory an earlier part of a distributed loop
body stored them into, instead of computing them again.

Each statement of the polyhedral model holds the ops its value needs, so a value two
statements share is computed by both: onnx-mlir's softmax stores `exp(x - max)` into the
output and adds the same value to the row's sum, one Krnl statement each. When array
code distributes the body (vectorize.py: every iteration of the first part, then every
iteration of the next), the second part can read the first part's output instead of
computing `exp` again: the hand-written NumPy softmax's `e = np.exp(...); e.sum()`.

Reading `mem[subs]` at iteration `it` gives the value stored at `it` when:

* the store and the reading statement are ops of one block, the store first (one
  iteration space, and the store runs before the read in each iteration);
* the store's access is affine and exact, and injective: no other iteration of it writes
  the same element later;
* no other statement of the parts from the store's to the reader's (both included)
  writes the array: its element still holds the stored value when the reader's part runs.

The stored value has the value's own type (krnl.store takes the memref's element type),
so the read is bit for bit the value the reader would compute.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xdsl.dialects import memref
from xdsl.ir import Operation, OpResult, SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.poly import Statement, is_pure

__all__ = ["stored_values"]

_LOADS = (k.LoadOp, memref.LoadOp)


def stored_values(
    statements: Mapping[str, Statement], parts: Sequence[set[str]]
) -> dict[str, dict[SSAValue, Operation]]:
    """For the statements of the distributed `parts` (in their order): each computed
    value a statement uses that a statement of an earlier part stored and it may read
    back, with that store. A statement in several parts (an unrolled loop's copies) is
    left out: its instances run in more than one place."""
    where: dict[str, int] = {}
    for i, names in enumerate(parts):
        for name in names:
            where[name] = -1 if name in where else i
    out: dict[str, dict[SSAValue, Operation]] = {}
    for t, p in sorted(where.items()):
        store = statements[t].anchor
        if p < 0 or not isinstance(store, k.StoreOp | memref.StoreOp):
            continue
        value = store.operands[0]
        if not (isinstance(value, OpResult) and _computed(value)):
            continue
        array = _injective_write(statements[t], store)
        if array is None:
            continue
        for s, i in where.items():
            reader = statements[s]
            if (
                i > p
                and value.op in reader.ops
                and _before(store, reader.anchor)
                and not _written_between(statements, parts[p : i + 1], t, array)
            ):
                out.setdefault(s, {})[value] = store
    return out


def _computed(v: OpResult) -> bool:
    """A value an op computes (not read from memory: a read gains nothing)."""
    return is_pure(v.op) and not isinstance(v.op, _LOADS)


def _injective_write(s: Statement, store: Operation) -> str | None:
    """The array `store` writes when each instance of `s` writes its own element."""
    access = next((a for a in s.accesses if a.op is store and a.write), None)
    if access is None or access.may or access.subscripts is None:
        return None
    return access.array if access.relation.is_injective() else None


def _written_between(
    statements: Mapping[str, Statement], parts: Sequence[set[str]], writer: str, array: str
) -> bool:
    return any(
        a.write and a.array == array
        for names in parts
        for s in names
        if s != writer
        for a in statements[s].accesses
    )


def _before(store: Operation, anchor: Operation) -> bool:
    """Whether `store` comes before `anchor` in the one block that holds them both."""
    block = store.parent_block()
    if block is None or anchor.parent_block() is not block:
        return False
    return block.get_operation_index(store) < block.get_operation_index(anchor)
