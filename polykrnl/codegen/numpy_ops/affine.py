"""NumPy emitters of the `affine` ops that compute values (maps on index values)."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import cast

from xdsl.dialects import affine
from xdsl.dialects.builtin import AffineMapAttr
from xdsl.ir import Operation
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymExpr,
)

from polykrnl.codegen.numpy_ops.core import (
    NUMPY,
    Ctx,
    Emitter,
    Expr,
    binop,
    int_const,
    neg,
    npcall,
    offset,
    operand_types,
    require,
)
from polykrnl.dialect.std_ext import MaxOp


def affine_value(e: AffineExpr, dims: Sequence[Expr], syms: Sequence[Expr]) -> Expr:
    """`e` as a Python expression over the values of its dims and symbols."""
    if isinstance(e, AffineConstantExpr):
        return int_const(e.value)
    if isinstance(e, AffineDimExpr):
        return dims[e.position]
    if isinstance(e, AffineSymExpr):
        return syms[e.position]
    assert isinstance(e, AffineBinaryOpExpr)
    kind = e.kind
    if kind == AffineBinaryOpKind.Add:
        rhs = e.rhs
        if (  # x + y * -c is written x - y * c
            isinstance(rhs, AffineBinaryOpExpr)
            and rhs.kind == AffineBinaryOpKind.Mul
            and isinstance(rhs.rhs, AffineConstantExpr)
            and rhs.rhs.value < 0
        ):
            lhs = affine_value(e.lhs, dims, syms)
            y = affine_value(rhs.lhs, dims, syms)
            c = -rhs.rhs.value
            if c != 1:
                return binop(lhs, ast.Sub(), binop(y, ast.Mult(), ast.Constant(c)))
            if isinstance(y, ast.UnaryOp) and isinstance(y.op, ast.USub):  # x - -(z): x + z
                return binop(lhs, ast.Add(), y.operand)
            return binop(lhs, ast.Sub(), y)
        return offset(affine_value(e.lhs, dims, syms), affine_value(rhs, dims, syms), True)
    lhs, rhs_e = affine_value(e.lhs, dims, syms), affine_value(e.rhs, dims, syms)
    if kind == AffineBinaryOpKind.Mul:
        if isinstance(e.rhs, AffineConstantExpr) and e.rhs.value == -1:
            return neg(lhs)
        return binop(lhs, ast.Mult(), rhs_e)
    if kind == AffineBinaryOpKind.Mod:
        return binop(lhs, ast.Mod(), rhs_e)
    if kind == AffineBinaryOpKind.FloorDiv:
        return binop(lhs, ast.FloorDiv(), rhs_e)
    assert kind == AffineBinaryOpKind.CeilDiv
    return neg(binop(neg(lhs), ast.FloorDiv(), rhs_e))


def _affine_map(fold: str | None) -> Emitter:
    """The results of an op's affine map on index values: the first (fold None), or
    all of them folded with NumPy's `fold` ufunc."""

    def emitter(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
        ins, (t,) = operand_types(op)
        require(t.kind == "x" and all(x.kind == "x" for x in ins))
        attr = op.properties.get("map")
        require(isinstance(attr, AffineMapAttr))
        m = cast(AffineMapAttr, attr).data
        require(m.num_dims + m.num_symbols == len(args) and len(m.results) >= 1)
        dims, syms = args[: m.num_dims], args[m.num_dims :]
        results = [affine_value(r, dims, syms) for r in m.results]
        if fold is None or len(results) == 1:
            return results[:1]
        e = results[0]
        for r in results[1:]:
            e = npcall(fold, e, r)
        return [cx.index(e)]

    return emitter


NUMPY.add(_affine_map(None), affine.ApplyOp)
NUMPY.add(_affine_map("minimum"), affine.MinOp)
NUMPY.add(_affine_map("maximum"), MaxOp)
