"""Semi-affine expressions: MLIR's affine expressions that multiply, divide or take a
modulo by a symbolic expression (`d0 ceildiv s0`, `d0 * (s1 * s2)`), which onnx-mlir
writes for pooling windows and flattened shapes.

xDSL builds such nodes but its operators refuse them (`NotImplementedError`), so its
reader cannot read `affine_map<(d0)[s0] -> (d0 ceildiv s0)>`. `combine` builds every
binary expression: xDSL's operator (with its folding) when the result is pure affine,
otherwise the node itself, after MLIR's own rules for semi-affine expressions:

- in a product, one factor has no dimension (a constant or a symbolic expression);
- the right operand of `floordiv`, `ceildiv` and `mod` has no dimension.

MLIR defines the division and the modulo by a positive divisor: `floordiv` rounds
towards minus infinity, `ceildiv` towards plus infinity, `mod` is never negative.
`evaluate` computes them and refuses a divisor that is not positive (MLIR leaves it
undefined).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)

#: the operators that divide (a symbolic right operand makes them semi-affine)
DIVISIONS = (AffineBinaryOpKind.FloorDiv, AffineBinaryOpKind.CeilDiv, AffineBinaryOpKind.Mod)

_SPELLING = {
    AffineBinaryOpKind.Mul: "*",
    AffineBinaryOpKind.FloorDiv: "floordiv",
    AffineBinaryOpKind.CeilDiv: "ceildiv",
    AffineBinaryOpKind.Mod: "mod",
}


class SemiAffineError(ValueError):
    """An expression MLIR does not accept even as semi-affine (a product of two
    dimensions, a division by a dimension)."""


def has_dims(e: AffineExpr) -> bool:
    return any(isinstance(x, AffineDimExpr) for x in e.dfs())


def combine(kind: AffineBinaryOpKind, lhs: AffineExpr, rhs: AffineExpr) -> AffineExpr:
    """`lhs <kind> rhs`, semi-affine when MLIR allows it (SemiAffineError otherwise)."""
    if kind == AffineBinaryOpKind.Add:
        return lhs + rhs
    constant = isinstance(rhs, AffineConstantExpr)
    if kind == AffineBinaryOpKind.Mul:
        if constant or isinstance(lhs, AffineConstantExpr):
            return lhs * rhs
        if has_dims(lhs) and has_dims(rhs):
            raise SemiAffineError(
                f"non-affine expression: {lhs} * {rhs} multiplies two expressions of "
                "dimensions (one factor must be a constant or use symbols only)"
            )
        return AffineBinaryOpExpr(kind, lhs, rhs)
    if constant:
        ops = {
            AffineBinaryOpKind.FloorDiv: lhs.__floordiv__,
            AffineBinaryOpKind.CeilDiv: lhs.ceil_div,
            AffineBinaryOpKind.Mod: lhs.__mod__,
        }
        return ops[kind](rhs)
    if has_dims(rhs):
        raise SemiAffineError(
            f"non-affine expression: the right operand of {_SPELLING[kind]} ({rhs}) uses a "
            "dimension (it must be a constant or use symbols only)"
        )
    return AffineBinaryOpExpr(kind, lhs, rhs)


def is_semi_affine(e: AffineExpr) -> bool:
    """Whether `e` multiplies or divides by something that is not a constant."""
    return any(
        isinstance(x, AffineBinaryOpExpr)
        and x.kind != AffineBinaryOpKind.Add
        and not isinstance(x.rhs, AffineConstantExpr)
        and not (x.kind == AffineBinaryOpKind.Mul and isinstance(x.lhs, AffineConstantExpr))
        for x in e.dfs()
    )


def symbolic_divisors(e: AffineExpr) -> Iterator[AffineBinaryOpExpr]:
    """The divisions and modulos of `e` by an expression that is not a constant."""
    for x in e.dfs():
        if (
            isinstance(x, AffineBinaryOpExpr)
            and x.kind in DIVISIONS
            and not isinstance(x.rhs, AffineConstantExpr)
        ):
            yield x


class DivisorError(ArithmeticError):
    """A floordiv, ceildiv or mod by a divisor that is not positive (undefined in MLIR)."""


def evaluate(e: AffineExpr, dims: Sequence[int], symbols: Sequence[int]) -> int:
    """`e` at these values, with MLIR's floordiv, ceildiv and mod (DivisorError when a
    symbolic divisor is not positive)."""
    if isinstance(e, AffineConstantExpr):
        return e.value
    if isinstance(e, AffineDimExpr):
        return dims[e.position]
    if isinstance(e, AffineSymExpr):
        return symbols[e.position]
    assert isinstance(e, AffineBinaryOpExpr)
    a, b = evaluate(e.lhs, dims, symbols), evaluate(e.rhs, dims, symbols)
    if e.kind == AffineBinaryOpKind.Add:
        return a + b
    if e.kind == AffineBinaryOpKind.Mul:
        return a * b
    if b <= 0:
        raise DivisorError(
            f"{e} divides by {e.rhs} = {b}: MLIR defines {_SPELLING[e.kind]} only for a "
            "positive divisor"
        )
    if e.kind == AffineBinaryOpKind.FloorDiv:
        return a // b
    if e.kind == AffineBinaryOpKind.CeilDiv:
        return -(-a // b)
    return a % b


def evaluate_map(m: AffineMap, operands: Sequence[int]) -> list[int]:
    """The results of `m` on its dim operands then its symbol operands."""
    dims, syms = operands[: m.num_dims], operands[m.num_dims :]
    return [evaluate(e, dims, syms) for e in m.results]


def fold_operands(e: AffineExpr, values: Sequence[int | None], num_dims: int) -> AffineExpr:
    """`e` with each dim and symbol whose operand is a known constant replaced by its
    value and folded (`d0 * s0` with s0 = 2 is `d0 * 2`, affine again)."""

    def leaf(position: int, x: AffineExpr) -> AffineExpr:
        v = values[position] if position < len(values) else None
        return x if v is None else AffineExpr.constant(v)

    if isinstance(e, AffineDimExpr):
        return leaf(e.position, e)
    if isinstance(e, AffineSymExpr):
        return leaf(num_dims + e.position, e)
    if not isinstance(e, AffineBinaryOpExpr):
        return e
    lhs = fold_operands(e.lhs, values, num_dims)
    rhs = fold_operands(e.rhs, values, num_dims)
    if e.kind in DIVISIONS and isinstance(rhs, AffineConstantExpr) and rhs.value <= 0:
        return AffineBinaryOpExpr(e.kind, lhs, rhs)  # undefined: left for the caller to refuse
    return combine(e.kind, lhs, rhs)
