"""The scf dialect in the polyhedral model: control flow inside one statement.

An scf op is one statement with everything in its regions. Each op inside
accesses what it would on its own, as a may-access: whether a branch runs, or
how often an scf.for body runs, depends on values the model does not follow.
Subscripts that use an scf.for induction variable or a value read from memory
are not affine, so they range over their whole dimension. Where an op inside
has no model of its own (or is a krnl.iterate), the whole scf op may read and
write every memref it uses. Either way the legality check stays sound, and each
approximation says why in the statement's accesses (``check`` lists them).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import scf
from xdsl.ir import Operation, SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.poly.table import POLY, Accessor, Exprs, OpModel, model_of, no_accesses, opaque

_WHY = {
    scf.IfOp: "which branch of scf.if runs depends on a value",
    scf.IndexSwitchOp: "which case of scf.index_switch runs depends on a value",
    scf.ForOp: "the body of scf.for may run any number of times",
    scf.WhileOp: "the body of scf.while may run any number of times",
    scf.ParallelOp: "the body of scf.parallel may run any number of times",
    scf.ExecuteRegionOp: "scf.execute_region may leave its region early",
}


def inside_regions(op: Operation, expr: Exprs, access: Accessor) -> None:
    """The accesses of the ops in `op`'s regions, each a may-access."""
    inner = [o for o in op.walk() if o is not op]
    if any(isinstance(o, k.IterateOp) or model_of(o) is None for o in inner):
        opaque(op, expr, access)
        return
    why = f"inside {op.name}: {_WHY.get(type(op), 'it may not run')}"

    def may(
        array: SSAValue,
        subs: Sequence[str | None] | None,
        write: bool,
        _may: bool,
        at: Operation,
        region: Sequence[tuple[str, str]] | None = None,
        _why: str | None = None,
        /,
    ) -> None:
        access(array, subs, write, True, at, region, _why or why)

    for o in inner:
        m = model_of(o)
        if m is not None and m.accesses is not None and not o.regions:
            m.accesses(o, expr, may)


POLY.add(OpModel(terminator=True, accesses=no_accesses), scf.YieldOp, scf.ConditionOp)
POLY.add(
    OpModel(accesses=inside_regions),
    scf.IfOp,
    scf.ForOp,
    scf.WhileOp,
    scf.ExecuteRegionOp,
    scf.ParallelOp,
    scf.IndexSwitchOp,
)
