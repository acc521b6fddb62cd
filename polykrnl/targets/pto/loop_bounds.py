"""Loop bounds of the schedule as sympy expressions: the C++ loop limits of the tile loops
and the static extents of the tiles."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sympy  # type: ignore[import-untyped]
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymExpr,
)

from polykrnl.targets.pto.lowering_state import lowering_error
from polykrnl.transforms.bounds import Bound

__all__ = ["bounds_expr", "int_symbol", "static_value"]


def int_symbol(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, integer=True)


def _affine(e: AffineExpr, operands: Sequence[sympy.Expr]) -> sympy.Expr:
    if isinstance(e, AffineConstantExpr):
        return sympy.Integer(e.value)
    if isinstance(e, AffineDimExpr | AffineSymExpr):
        return operands[e.position]
    assert isinstance(e, AffineBinaryOpExpr)
    a, b = _affine(e.lhs, operands), _affine(e.rhs, operands)
    if e.kind == AffineBinaryOpKind.Add:
        return a + b
    if e.kind == AffineBinaryOpKind.Mul:
        return a * b
    if e.kind == AffineBinaryOpKind.FloorDiv:
        return sympy.floor(a / b)
    if e.kind == AffineBinaryOpKind.CeilDiv:
        return sympy.ceiling(a / b)
    return sympy.Mod(a, b)


def _bound(b: Bound, values: Mapping[str, sympy.Expr], what: str) -> sympy.Expr:
    ops: list[sympy.Expr] = []
    for r in b.operands:
        if r.kind == "const":
            ops.append(sympy.Integer(r.value))
        elif r.kind == "param":
            ops.append(int_symbol(r.name))
        elif r.name in values:
            ops.append(values[r.name])
        else:
            raise lowering_error(
                None,
                f"the {what} uses the value of loop {r.name}, which is not a tile loop",
                hint="PTO tiles are rectangular: use bounds of constants and sizes",
            )
    return _affine(b.expr, ops)


def bounds_expr(bs: Sequence[Bound], values: Mapping[str, sympy.Expr], what: str, lo: bool) -> Any:
    xs = [_bound(b, values, what) for b in bs]
    return (sympy.Max if lo else sympy.Min)(*xs) if len(xs) > 1 else xs[0]


def static_value(e: sympy.Expr, params: Mapping[str, int]) -> int | None:
    v = sympy.sympify(e).subs({int_symbol(p): n for p, n in params.items()})
    return int(v) if v.is_Integer else None
