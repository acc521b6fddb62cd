"""What the func dialect's ops do in the reference interpreter."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    SymbolRefAttr,
)
from xdsl.ir import Operation

from polykrnl.interpreter.core import (
    INTERPRET,
    Frame,
    Interpreter,
)
from polykrnl.interpreter.values import (
    Fail,
)

# ------------------------------------------------------------------ func


@INTERPRET.register(func.CallOp)
def _func_call(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    callee = cast(SymbolRefAttr, op.properties["callee"]).root_reference.data
    target = next((f for f in it.module.functions if f.name == callee), None)
    if target is None:
        raise Fail(
            f"func.call to @{callee}, which the module does not define",
            "the interpreter calls functions of the same module",
        )
    return it.run_function(target, [fr.get(v) for v in op.operands])
