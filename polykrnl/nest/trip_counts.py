"""Trip counts of loops: constant ones, and the largest known divisor of symbolic ones
(which decides whether a block needs a partial last tile)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymExpr,
)

from polykrnl.nest.values import Bound, IVBound, Loop, MapBound


def constant_trip_count(loop: Loop) -> int | None:
    """The number of iterations of `loop` if it is the same every time, else None.

    As in MLIR's tiling (which onnx-mlir's krnl.block uses): a point loop runs
    the tile size T times when T divides the trip count of the loop that was
    blocked (its largest known divisor for a symbolic count: `8*N` blocked by
    8 qualifies), the whole trip count when that is a constant smaller than
    T, and otherwise has a partial last tile (a `min` bound): None. A point
    loop whose handle is never used runs once.
    """
    if loop.trivial:
        return 1
    return iterations(loop.lbs, loop.ubs, loop.step)[0]


def trip_count_divisor(loop: Loop) -> int:
    """The largest known divisor of the trip count of `loop` (the count itself if constant)."""
    if loop.trivial:
        return 1
    return iterations(loop.lbs, loop.ubs, loop.step)[1]


def iterations(lbs: tuple[Bound, ...], ubs: tuple[Bound, ...], step: int) -> tuple[int | None, int]:
    """(constant trip count or None, largest known divisor) of `for max(lbs) to min(ubs) step`."""
    first_lb, first_ub = lbs[0], ubs[0]
    if isinstance(first_lb, IVBound) or isinstance(first_ub, IVBound):
        # The point range of a tile loop `t`: [t, min(t + S, ubs of t)).
        if not (
            len(lbs) == 1
            and isinstance(first_lb, IVBound)
            and isinstance(first_ub, IVBound)
            and first_lb.loop is first_ub.loop
            and first_lb.offset == 0
        ):
            return None, 1
        tile = first_lb.loop
        size = tile.tile_size
        if size is None or tile.step % size or ubs[1:] != tile.ubs:
            return None, 1
        blocked_step = tile.step // size
        count, div = iterations(tile.lbs, tile.ubs, blocked_step)
        if count is not None and count < size:
            points: tuple[int | None, int] = (count, count)
        elif div % size == 0:
            points = (size, size)
        else:
            return None, 1  # a partial last tile
        # A tile loop of this point range (blocked again) steps by a multiple.
        ratio = step // blocked_step if step % blocked_step == 0 else 0
        if ratio == 0:
            return None, 1
        pcount, pdiv = points
        assert pcount is not None
        return -(-pcount // ratio), (pdiv // ratio if pdiv % ratio == 0 else 1)
    if not all(isinstance(b, MapBound) for b in (*lbs, *ubs)):
        return None, 1
    lo_maybe = [_linear(e, b) for b in lbs if isinstance(b, MapBound) for e in b.map.results]
    hi_maybe = [_linear(e, b) for b in ubs if isinstance(b, MapBound) for e in b.map.results]
    lo = [x for x in lo_maybe if x is not None]
    hi = [x for x in hi_maybe if x is not None]
    if len(lo) != len(lo_maybe) or len(hi) != len(hi_maybe):
        return None, 1
    if len(lo) != 1:
        # max of several lower bounds: only constant ones give a known count
        if not any(x[0] for x in (*lo, *hi)):
            n = max(0, -(-(min(x[1] for x in hi) - max(x[1] for x in lo)) // step))
            return n, n
        return None, 1
    low_terms, low_const = lo[0]
    counts: list[int] = []
    divisors: list[int] = []
    all_constant = True
    for x in hi:
        terms = dict(x[0])
        for v, c in low_terms.items():
            terms[v] = terms.get(v, 0) - c
        terms = {v: c for v, c in terms.items() if c}
        extent = x[1] - low_const
        if terms:
            all_constant = False
            divisors.append(math.gcd(extent, *terms.values()))
        else:
            n = max(0, -(-extent // step))
            counts.append(n)
            divisors.append(n)
    if all_constant:
        n = min(counts)
        return n, n
    div = math.gcd(*divisors)
    return None, (div // step if div % step == 0 else 1)


_Linear = tuple[dict[SSAValue, int], int]


def _linear(expr: AffineExpr, bound: MapBound) -> _Linear | None:
    """`expr` (over the bound's operands) as {operand: coefficient} + constant, if linear.

    Operands that are `arith.constant` results count as their value.
    """
    ndims = bound.map.num_dims

    def leaf(e: AffineDimExpr | AffineSymExpr) -> tuple[dict[Any, int], int]:
        pos = e.position if isinstance(e, AffineDimExpr) else ndims + e.position
        v = bound.operands[pos]
        if isinstance(v.owner, arith.ConstantOp) and isinstance(v.owner.value, IntegerAttr):
            return {}, v.owner.value.value.data
        return {v: 1}, 0

    return linear_form(expr, leaf)


def linear_form(
    expr: AffineExpr, leaf: Callable[[AffineDimExpr | AffineSymExpr], tuple[dict[Any, int], int]]
) -> tuple[dict[Any, int], int] | None:
    """`expr` as {key: coefficient} + constant if it is linear; `leaf` reads dims and symbols."""
    if isinstance(expr, AffineConstantExpr):
        return {}, expr.value
    if isinstance(expr, AffineDimExpr | AffineSymExpr):
        return leaf(expr)
    if not isinstance(expr, AffineBinaryOpExpr):
        return None
    lhs, rhs = linear_form(expr.lhs, leaf), linear_form(expr.rhs, leaf)
    if lhs is None or rhs is None:
        return None
    if expr.kind == AffineBinaryOpKind.Add:
        terms = dict(lhs[0])
        for key, c in rhs[0].items():
            terms[key] = terms.get(key, 0) + c
        return terms, lhs[1] + rhs[1]
    if expr.kind == AffineBinaryOpKind.Mul:
        if lhs[0] and rhs[0]:
            return None
        (terms, const), factor = (lhs, rhs[1]) if not rhs[0] else (rhs, lhs[1])
        return {key: c * factor for key, c in terms.items()}, const * factor
    if not lhs[0] and not rhs[0] and rhs[1] > 0:
        a, c = lhs[1], rhs[1]
        if expr.kind == AffineBinaryOpKind.FloorDiv:
            return {}, a // c
        if expr.kind == AffineBinaryOpKind.CeilDiv:
            return {}, -(-a // c)
        return {}, a % c
    return None
