"""What the affine dialect's ops do in the reference interpreter."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from xdsl.dialects import affine
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AffineSetAttr,
    IntegerAttr,
)
from xdsl.ir import Operation
from xdsl.ir.affine.affine_set import AffineConstraintKind

from polykrnl.dialect.std_ext import MaxOp
from polykrnl.interpreter.core import (
    INTERPRET,
    Frame,
    Interpreter,
    eval_map,
    run_branch,
    run_loop_body,
)
from polykrnl.interpreter.memory import (
    load_element,
    store_element,
)

# ------------------------------------------------------------------ affine


@INTERPRET.register(affine.ApplyOp)
def _affine_apply(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    m = cast(AffineMapAttr, op.properties["map"]).data
    return eval_map(m, [fr.index(v) for v in op.operands])[:1]


@INTERPRET.register(affine.MinOp)
def _affine_min(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    m = cast(AffineMapAttr, op.properties["map"]).data
    return [min(eval_map(m, [fr.index(v) for v in op.operands]))]


@INTERPRET.register(MaxOp)
def _affine_max(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    m = cast(AffineMapAttr, op.properties["map"]).data
    return [max(eval_map(m, [fr.index(v) for v in op.operands]))]


@INTERPRET.register(affine.ForOp)
def _affine_for(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    lbm = cast(AffineMapAttr, op.properties["lowerBoundMap"]).data
    ubm = cast(AffineMapAttr, op.properties["upperBoundMap"]).data
    step = cast(IntegerAttr[Any], op.properties["step"]).value.data
    nl = lbm.num_dims + lbm.num_symbols
    nu = ubm.num_dims + ubm.num_symbols
    operands = op.operands
    lb = max(eval_map(lbm, [fr.index(v) for v in operands[:nl]]))
    ub = min(eval_map(ubm, [fr.index(v) for v in operands[nl : nl + nu]]))
    state = [fr.get(v) for v in operands[nl + nu :]]
    steps = range(lb, ub, step)
    it.charge(len(steps))
    return run_loop_body(it, op, fr, steps, state)


_AFFINE_TESTS: dict[AffineConstraintKind, Callable[[int], bool]] = {
    AffineConstraintKind.eq: lambda x: x == 0,
    AffineConstraintKind.ge: lambda x: x >= 0,
    AffineConstraintKind.le: lambda x: x <= 0,
}


@INTERPRET.register(affine.IfOp)
def _affine_if(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    s = cast(AffineSetAttr, op.properties["condition"]).data
    vals = [fr.index(v) for v in op.operands]
    dims, syms = vals[: s.num_dims], vals[s.num_dims :]
    ok = all(
        _AFFINE_TESTS[c.kind](c.lhs.eval(dims, syms) - c.rhs.eval(dims, syms))
        for c in s.constraints
    )
    return run_branch(it, op, fr, ok)


@INTERPRET.register(affine.LoadOp)
def _affine_load(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    mem, *ops = op.operands
    m = cast(AffineMapAttr, op.properties["map"]).data
    return [load_element(fr, mem, eval_map(m, [fr.index(v) for v in ops]), "affine.load")]


@INTERPRET.register(affine.StoreOp)
def _affine_store(it: Interpreter, op: Operation, fr: Frame) -> None:
    val, mem, *ops = op.operands
    m = cast(AffineMapAttr, op.properties["map"]).data
    store_element(fr, fr.get(val), mem, eval_map(m, [fr.index(v) for v in ops]), "affine.store")
