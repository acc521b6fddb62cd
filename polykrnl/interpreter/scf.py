"""What the scf dialect's ops do in the reference interpreter."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from xdsl.dialects import scf
from xdsl.dialects.builtin import (
    IntegerType,
)
from xdsl.ir import Operation

from polykrnl.interpreter.core import (
    INTERPRET,
    Frame,
    Interpreter,
    run_branch,
    run_loop_body,
)
from polykrnl.interpreter.values import (
    Fail,
    wrap_int,
)

# ------------------------------------------------------------------ scf


@INTERPRET.register(scf.ForOp)
def _scf_for(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    lb, ub, step, *inits = op.operands
    s = fr.index(step)
    if s <= 0:
        raise Fail(f"scf.for with step {s}", "the step must be positive")
    t = lb.type
    steps = range(fr.index(lb), fr.index(ub), s)
    it.charge(len(steps))
    ivs: Iterable[int] = steps
    if isinstance(t, IntegerType):
        ivs = (wrap_int(i, t) for i in ivs)
    return run_loop_body(it, op, fr, ivs, [fr.get(v) for v in inits])


@INTERPRET.register(scf.IfOp)
def _scf_if(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    return run_branch(it, op, fr, bool(fr.get(op.operands[0])))


@INTERPRET.register(scf.WhileOp)
def _scf_while(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    before, after = op.regions[0].block, op.regions[1].block
    state = [fr.get(v) for v in op.operands]
    while True:
        for a, v in zip(before.args, state, strict=True):
            fr.env[a] = v
        cond, *args = it.exec_block(before, fr)
        if not cond:
            return args
        for a, v in zip(after.args, args, strict=True):
            fr.env[a] = v
        state = it.exec_block(after, fr)


@INTERPRET.register(scf.ExecuteRegionOp)
def _execute_region(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    return it.exec_block(op.regions[0].block, fr)
