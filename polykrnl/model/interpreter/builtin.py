"""The builtin dialect's ops in the reference interpreter."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects import builtin
from xdsl.ir import Operation

from polykrnl.model.interpreter.core import INTERPRET, Frame, Interpreter


@INTERPRET.register(builtin.UnrealizedConversionCastOp)
def _unrealized_cast(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    # onnx-mlir's casts between a memref and the tensor it stands for, at the edges of a
    # lowering: the same buffer on both sides.
    return [fr.get(v) for v in op.operands]
