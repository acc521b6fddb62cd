"""affine: accesses and index maps as memref ops on `affine.apply` values.

The loops around a statement are `scf` loops, whose induction variables are not affine
dimensions: affine.load / affine.store would not verify. Each subscript is an
`affine.apply` of the op's map instead (affine.apply takes any index value), which
`--lower-affine` turns into arith.
"""

from __future__ import annotations

from xdsl.dialects import affine
from xdsl.ir import Operation
from xdsl.ir.affine import AffineMap

from polykrnl.dialect.std_ext import MaxOp
from polykrnl.targets.mlir.ops.core import MLIR, Emission


def apply(e: Emission, m: AffineMap, operands: list[str], hint: str = "ix") -> list[str]:
    """One `affine.apply` per result of `m` on the SSA names `operands`."""
    dims = ", ".join(operands[: m.num_dims])
    syms = ", ".join(operands[m.num_dims :])
    out = []
    for r in m.results:
        one = AffineMap(m.num_dims, m.num_symbols, (r,))
        out.append(e.w.op(hint, f"affine.apply affine_map<{one}>({dims})[{syms}]"))
    return out


def _subscripts(e: Emission, op: affine.LoadOp | affine.StoreOp) -> list[str]:
    idx = [e.value(x) for x in op.indices]
    if op.map is None:
        return idx
    return apply(e, op.map.data, idx)


@MLIR.register(affine.LoadOp)
def _load(e: Emission, op: Operation) -> None:
    assert isinstance(op, affine.LoadOp)
    subs = _subscripts(e, op)
    t = op.memref.type
    r = op.results[0]
    out = e.w.op(r.name_hint or "v", f"memref.load {e.value(op.memref)}[{', '.join(subs)}] : {t}")
    e.bind(r, out)


@MLIR.register(affine.StoreOp)
def _store(e: Emission, op: Operation) -> None:
    assert isinstance(op, affine.StoreOp)
    subs = _subscripts(e, op)
    v, mem = e.value(op.value), e.value(op.memref)
    e.w.line(f"memref.store {v}, {mem}[{', '.join(subs)}] : {op.memref.type}")


@MLIR.register(affine.ApplyOp)
def _apply(e: Emission, op: Operation) -> None:
    assert isinstance(op, affine.ApplyOp)
    m = op.map.data
    (out,) = apply(e, m, [e.value(x) for x in op.operands], op.results[0].name_hint or "ix")
    e.bind(op.results[0], out)


def _minmax(kind: str) -> object:
    def emit(e: Emission, op: Operation) -> None:
        m = op.properties["map"].data  # type: ignore[attr-defined]
        parts = apply(e, m, [e.value(x) for x in op.operands])
        out = parts[0]
        for p in parts[1:]:
            out = e.w.op("ix", f"arith.{kind}si {out}, {p} : index")
        e.bind(op.results[0], out)

    return emit


MLIR.add(_minmax("min"), affine.MinOp)  # type: ignore[arg-type]
MLIR.add(_minmax("max"), MaxOp)  # type: ignore[arg-type]
