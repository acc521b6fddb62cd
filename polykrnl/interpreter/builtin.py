"""The builtin dialect's ops in the reference interpreter."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects import builtin
from xdsl.dialects.builtin import IntegerType, MemRefType, TensorType
from xdsl.ir import Attribute, Operation

from polykrnl.errors import UnsupportedError
from polykrnl.interpreter.core import INTERPRET, Frame, Interpreter
from polykrnl.interpreter.values import lane_type, lanewise, wrap_int


def reinterprets_integers(src: Attribute, dst: Attribute) -> bool:
    """Whether a cast from `src` to `dst` reads the bits of one integer width in another
    signedness (onnx-mlir's ui8 <-> i8 around signless arithmetic), lane by lane."""
    a, b = lane_type(src), lane_type(dst)
    return (
        isinstance(a, IntegerType)
        and isinstance(b, IntegerType)
        and a.width == b.width
        and (type(src) is type(dst))
        and getattr(src, "shape", None) == getattr(dst, "shape", None)
    )


def _reinterpret(value: Any, t: Attribute) -> Any:
    dst = lane_type(t)
    return lanewise(lambda x: wrap_int(int(x), dst), t, value)


@INTERPRET.register(builtin.UnrealizedConversionCastOp)
def _unrealized_cast(it: Interpreter, op: Operation, fr: Frame) -> Sequence[Any]:
    if len(op.operands) != len(op.results):
        raise UnsupportedError(
            "builtin.unrealized_conversion_cast with "
            f"{len(op.operands)} operands and {len(op.results)} results: the reference "
            "interpreter reads only casts of one value to one other",
            hint="lower the cast first",
            location=it.location(op),
        )
    out: list[Any] = []
    for v, r in zip(op.operands, op.results, strict=True):
        buffers = all(isinstance(t, MemRefType | TensorType) for t in (v.type, r.type))
        if v.type == r.type or buffers:
            # onnx-mlir's casts between a memref and the tensor it stands for, at the
            # edges of a lowering: the same buffer on both sides.
            out.append(fr.get(v))
        elif reinterprets_integers(v.type, r.type):
            out.append(_reinterpret(fr.get(v), r.type))
        else:
            raise UnsupportedError(
                f"builtin.unrealized_conversion_cast from {v.type} to {r.type}: the reference "
                "interpreter reads it only between a memref and its tensor, or between "
                "integers of one width (a change of signedness)",
                hint="lower the cast to arith ops (arith.bitcast, arith.extsi, ...) first",
                location=it.location(op),
            )
    return out
