"""The MLIR target's op table: how each op of a statement is written as standard MLIR.

An emitter gets the statement being written (`Emission`: the SSA name of each operand,
where to write lines, how to name results) and the op. Most standard ops are written
back as they are, in MLIR's generic form with their operands renamed (`generic`); Krnl's
ops become their standard equivalents (`krnl.load` -> `memref.load`). An op without an
entry is refused by name (`MLIR.require`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from xdsl.dialects import func
from xdsl.ir import Attribute, Operation, SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.dialect.registry import OpTable
from polykrnl.errors import UnsupportedError
from polykrnl.targets.mlir.writer import MlirWriter


class Emission(Protocol):
    """What an emitter needs of the statement it writes into."""

    w: MlirWriter

    def value(self, v: SSAValue) -> str:
        """The SSA name of `v` here (computing it first if it is a pure value)."""
        ...

    def bind(self, v: SSAValue, name: str) -> None:
        """`v` is `name` from now on."""
        ...

    def unsupported(self, message: str, hint: str | None = None) -> UnsupportedError: ...

    def region_op(self, op: Operation) -> None:
        """An op with regions (scf.if, scf.for) written with its regions."""
        ...


Emitter = Callable[[Emission, Operation], None]

MLIR: OpTable[Emitter] = OpTable(
    "mlir",
    "the MLIR target",
    "run it with the NumPy target (`--target numpy`) or pk.run_reference",
)


#: Ops the target writes by their structure, not through the table: the loops and their
#: values (isl's AST), the function and its return (emit.py).
STRUCTURAL: frozenset[type[Operation]] = frozenset(
    {k.IterateOp, k.YieldOp, k.GetInductionVarValueOp, func.FuncOp, func.ReturnOp}
)


def attr_text(attrs: dict[str, Attribute]) -> str:
    """`name = value, ...` in MLIR's syntax (xDSL prints builtin attributes as MLIR does)."""
    return ", ".join(f"{k} = {v}" for k, v in sorted(attrs.items()))


def types_text(values: list[Attribute]) -> str:
    return ", ".join(str(t) for t in values)


def generic_line(
    e: Emission, op: Operation, name: str | None = None, operands: list[str] | None = None
) -> None:
    """`op` in MLIR's generic form (`%r = "arith.addf"(%a, %b) <{...}> : (f32, f32) -> f32`),
    as op `name` when given, its results bound to fresh names."""
    args = operands if operands is not None else [e.value(x) for x in op.operands]
    results = [e.w.fresh(r.name_hint or "r") for r in op.results]
    props = f" <{{{attr_text(dict(op.properties))}}}>" if op.properties else ""
    attrs = f" {{{attr_text(dict(op.attributes))}}}" if op.attributes else ""
    head = f"{', '.join(results)} = " if results else ""
    signature = (
        f"({types_text([x.type for x in op.operands])}) -> "
        f"({types_text([r.type for r in op.results])})"
    )
    e.w.line(f'{head}"{name or op.name}"({", ".join(args)}){props}{attrs} : {signature}')
    for r, n in zip(op.results, results, strict=True):
        e.bind(r, n)


def generic(e: Emission, op: Operation) -> None:
    """The op as it is: a standard op MLIR reads."""
    generic_line(e, op)


def renamed(name: str) -> Emitter:
    """The op as the standard op `name`, which takes the same operands and attributes."""

    def emit(e: Emission, op: Operation) -> None:
        generic_line(e, op, name)

    return emit


def with_regions(e: Emission, op: Operation) -> None:
    e.region_op(op)


def load(e: Emission, op: Operation) -> None:
    """`memref.load %m[%i, ...] : type` (krnl.load and memref.load: memref, indices)."""
    if op.properties:
        generic_line(e, op, "memref.load")
        return
    mem, *idx = (e.value(x) for x in op.operands)
    r = op.results[0]
    out = e.w.op(r.name_hint or "v", f"memref.load {mem}[{', '.join(idx)}] : {op.operands[0].type}")
    e.bind(r, out)


def store(e: Emission, op: Operation) -> None:
    """`memref.store %v, %m[%i, ...] : type` (krnl.store and memref.store)."""
    if op.properties:
        generic_line(e, op, "memref.store")
        return
    val, mem, *idx = (e.value(x) for x in op.operands)
    e.w.line(f"memref.store {val}, {mem}[{', '.join(idx)}] : {op.operands[1].type}")
