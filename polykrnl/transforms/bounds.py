"""Krnl-style loop bounds: affine expressions over loop values, parameters and constants.

A :class:`Bound` is one xDSL ``AffineExpr`` over ``d0, d1, ...`` with the
:class:`Ref` each dimension stands for. This module evaluates bounds as isl
piecewise affine values, reads them as linear forms (for trip counts), and
writes them in MLIR affine syntax.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import islpy as isl
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymExpr,
)

from polykrnl.nest.loops import linear_form


@dataclass(frozen=True)
class Ref:
    """An operand of a bound: a loop value (by id), a parameter, or a constant."""

    kind: Literal["value", "param", "const"]
    name: str = ""
    value: int = 0


@dataclass(frozen=True)
class Bound:
    """One affine expression (xDSL AffineExpr over d0, d1, ...) of `operands`."""

    expr: AffineExpr
    operands: tuple[Ref, ...]

    @staticmethod
    def value_plus(vid: str, offset: int) -> Bound:
        e: AffineExpr = AffineDimExpr(0)
        if offset:
            e = e + offset
        return Bound(e, (Ref("value", vid),))

    @staticmethod
    def const(c: int) -> Bound:
        return Bound(AffineConstantExpr(c), ())


def const_on(dom: isl.Set, c: int) -> isl.PwAff:
    """The constant `c` on the points of `dom`."""
    return isl.PwAff.val_on_domain(dom, isl.Val.int_from_si(dom.get_ctx(), c))


def param_on(dom: isl.Set, name: str) -> isl.PwAff:
    """The parameter `name` on the points of `dom`."""
    sp = isl.Space.create_from_names(dom.get_ctx(), set=[], params=[name])
    dom = dom.align_params(sp)
    pos = dom.find_dim_by_name(isl.dim_type.param, name)
    ident = dom.get_space().get_dim_id(isl.dim_type.param, pos)
    return isl.PwAff.param_on_domain_id(dom, ident)


def eval_affine(e: AffineExpr, args: Sequence[isl.PwAff], dom: isl.Set) -> isl.PwAff:
    """`e` with d_k replaced by args[k] (symbols follow the dims)."""
    if isinstance(e, AffineConstantExpr):
        return const_on(dom, e.value)
    if isinstance(e, AffineDimExpr):
        return args[e.position]
    if isinstance(e, AffineSymExpr):
        raise AssertionError("bounds are stored with symbols turned into dims")
    assert isinstance(e, AffineBinaryOpExpr)
    lhs = eval_affine(e.lhs, args, dom)
    if e.kind == AffineBinaryOpKind.Add:
        return lhs.add(eval_affine(e.rhs, args, dom))
    if e.kind == AffineBinaryOpKind.Mul:
        if isinstance(e.rhs, AffineConstantExpr):
            return lhs.scale_val(isl.Val.int_from_si(dom.get_ctx(), e.rhs.value))
        if isinstance(e.lhs, AffineConstantExpr):
            rhs = eval_affine(e.rhs, args, dom)
            return rhs.scale_val(isl.Val.int_from_si(dom.get_ctx(), e.lhs.value))
        raise AssertionError("non-affine bound")
    assert isinstance(e.rhs, AffineConstantExpr)
    c = isl.Val.int_from_si(dom.get_ctx(), e.rhs.value)
    if e.kind == AffineBinaryOpKind.FloorDiv:
        return lhs.scale_down_val(c).floor()
    if e.kind == AffineBinaryOpKind.CeilDiv:
        return lhs.scale_down_val(c).ceil()
    return lhs.mod_val(c)


Linear = tuple[dict[Ref, int], int]


def linear(b: Bound) -> Linear | None:
    """`b` as (coefficient of each operand, constant), when it is linear."""
    return _linear_expr(b.expr, b.operands)


def _linear_expr(e: AffineExpr, ops: Sequence[Ref]) -> Linear | None:
    def leaf(x: AffineDimExpr | AffineSymExpr) -> tuple[dict[Any, int], int]:
        r = ops[x.position]
        return ({}, r.value) if r.kind == "const" else ({r: 1}, 0)

    return linear_form(e, leaf)


def tile_relative(lbs: Sequence[Bound], ubs: Sequence[Bound]) -> tuple[str, int] | None:
    """(tile value id, extent) when the loop runs from a tile value to tile + extent (min ...)."""
    if len(lbs) != 1:
        return None
    lo = linear(lbs[0])
    if lo is None or lo[1] != 0 or len(lo[0]) != 1:
        return None
    ((ref, c),) = lo[0].items()
    if ref.kind != "value" or c != 1:
        return None
    first = linear(ubs[0])
    if first is None or first[0] != {ref: 1}:
        return None
    return ref.name, first[1]


def format_affine(e: AffineExpr, names: Sequence[str]) -> str:
    """`e` in MLIR affine syntax with dims named by `names` (`%i_t + 4`, `%N * 8`)."""
    return _fmt(e, names, 0)


def _fmt(e: AffineExpr, names: Sequence[str], prec: int) -> str:
    if isinstance(e, AffineConstantExpr):
        return str(e.value) if e.value >= 0 or prec == 0 else f"({e.value})"
    if isinstance(e, AffineDimExpr):
        return names[e.position]
    if isinstance(e, AffineSymExpr):
        return f"s{e.position}"
    assert isinstance(e, AffineBinaryOpExpr)
    if e.kind == AffineBinaryOpKind.Add:
        rhs = e.rhs
        # x + (-c) and x + y * -1 read as subtractions
        if isinstance(rhs, AffineConstantExpr) and rhs.value < 0:
            out = f"{_fmt(e.lhs, names, 1)} - {-rhs.value}"
        elif (
            isinstance(rhs, AffineBinaryOpExpr)
            and rhs.kind == AffineBinaryOpKind.Mul
            and isinstance(rhs.rhs, AffineConstantExpr)
            and rhs.rhs.value == -1
        ):
            out = f"{_fmt(e.lhs, names, 1)} - {_fmt(rhs.lhs, names, 2)}"
        else:
            out = f"{_fmt(e.lhs, names, 1)} + {_fmt(rhs, names, 1)}"
        return f"({out})" if prec > 1 else out
    op = {
        AffineBinaryOpKind.Mul: "*",
        AffineBinaryOpKind.FloorDiv: "floordiv",
        AffineBinaryOpKind.CeilDiv: "ceildiv",
        AffineBinaryOpKind.Mod: "mod",
    }[e.kind]
    out = f"{_fmt(e.lhs, names, 2)} {op} {_fmt(e.rhs, names, 3)}"
    return f"({out})" if prec > 2 else out
