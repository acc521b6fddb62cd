"""How long the reference interpreter would take on given inputs, estimated before it runs:
its work in op executions, bounded per statement by the polyhedral model, against the
limits `polykrnl run` refuses or announces."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import islpy as isl
import numpy as np
from xdsl.dialects import affine, func
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.errors import PolykrnlError
from polykrnl.interpreter import Interpreter
from polykrnl.interpreter.core import Frame
from polykrnl.ir import Function
from polykrnl.poly import DimParam, PolyProgram, poly_program

#: op executions the reference interpreter runs a second, typically (2.3e5 to 2.8e5
#: on most programs of a 2-core machine, up to 2e6 where it runs vectors as arrays)
REFERENCE_RATE = 250_000


#: op executions (`reference_work`), and loop iterations, the reference interpreter is
#: asked to run at most (about two minutes); beyond NOTICE_REFERENCE_STEPS (about 20 s)
#: `run` says how long it may take before it starts
MAX_REFERENCE_STEPS = 30_000_000


MAX_REFERENCE_ITERATIONS = 50_000_000


NOTICE_REFERENCE_STEPS = 5_000_000


def reference_work(fn: Function, inputs: Mapping[str, Any]) -> int | None:
    """About how many ops the interpreter executes to run `fn` on `inputs`, at most
    (None: unknown).

    Each statement's domain, with the parameters fixed to the inputs (sizes computed
    before the loops are computed from the arguments), is bounded by its box, and each
    instance costs its ops (`_steps`); a function the polyhedral model cannot represent
    has no estimate.
    """
    try:
        program = poly_program(fn)
    except PolykrnlError:
        return None
    values = param_values(program, inputs)
    total = 0
    for st in program.statements:
        dom = st.domain
        for pos in range(dom.dim(isl.dim_type.param)):
            pname = dom.get_dim_name(isl.dim_type.param, pos)
            if pname not in values:
                return None
            dom = dom.fix_val(isl.dim_type.param, pos, isl.Val(values[pname]))
        if dom.is_empty():
            continue
        count = _steps(st.ops)
        for d in range(dom.dim(isl.dim_type.set)):
            lo, hi = dom.dim_min_val(d), dom.dim_max_val(d)
            if not (lo.is_int() and hi.is_int()):
                return None
            count *= max(0, hi.to_python() - lo.to_python() + 1)
        total += count
    return total


def param_values(program: PolyProgram, inputs: Mapping[str, Any]) -> dict[str, int]:
    """The value of each parameter of `program` (isl names) on these arguments: dynamic
    sizes from the arrays, index arguments, and sizes computed from them before the
    loops; a parameter with no value here is left out."""
    fn = program.function
    values: dict[str, int] = {}
    for name, src in program.param_sources.items():
        if isinstance(src, DimParam):
            arr = inputs.get(src.array_name)
            if isinstance(arr, np.ndarray) and src.dim < arr.ndim:
                values[name] = arr.shape[src.dim]
        else:
            v = inputs.get(str(src))
            if not isinstance(v, int | np.integer):
                v = _fixed_value(fn, inputs, src.value)
            if isinstance(v, int | np.integer):
                values[name] = int(v)
    return values


def _fixed_value(fn: Function, inputs: Mapping[str, Any], value: SSAValue) -> Any:
    """The value of `value`, computed before the loops from the arguments (a size that is
    the max of two dimensions), by the interpreter's own ops; None when it takes more
    than ops without regions, calls or memory results."""
    interpreter = Interpreter(fn.module)
    try:
        args, _ = interpreter.bind_arguments(fn, inputs)
    except PolykrnlError:
        return None
    frame = Frame(fn, interpreter.nest_of(fn))
    for a, v in zip(fn.op.body.block.args, args, strict=True):
        frame.env[a] = v

    def compute(v: SSAValue) -> bool:
        if v in frame.env:
            return True
        op = v.owner
        if (
            not isinstance(op, Operation)
            or op.parent_op() is not fn.op
            or op.regions
            or isinstance(op, func.CallOp | k.CallOp)
            or any(isinstance(r.type, MemRefType) for r in op.results)
        ):
            return False
        if not all(compute(x) for x in op.operands):
            return False
        try:
            interpreter.exec_op(op, frame)
        except PolykrnlError:
            return False
        return True

    return frame.env[value] if compute(value) else None


def _steps(ops: Sequence[Operation]) -> int:
    """What one instance of a statement made of `ops` costs the interpreter, in op
    executions: each op once, the ops inside an affine.for with constant bounds
    (onnx-mlir's inner SIMD reductions) once per iteration, the ops of other regions
    once. (Vector ops mostly run as NumPy arrays, so lanes do not count.)"""
    total = 0
    for op in ops:
        inner = sum(_steps(list(b.ops)) for r in op.regions for b in r.blocks)
        total += 1 + inner * _trips(op)
    return total


def _trips(op: Operation) -> int:
    """The trip count of an affine.for with constant bounds; 1 for any other op."""
    if not isinstance(op, affine.ForOp) or op.lowerBoundOperands or op.upperBoundOperands:
        return 1
    lb, ub = op.lowerBoundMap.data, op.upperBoundMap.data
    if len(lb.results) != 1 or len(ub.results) != 1:
        return 1
    lo, hi = lb.eval([], [])[0], ub.eval([], [])[0]
    return max(1, -(-(hi - lo) // op.step.value.data))
