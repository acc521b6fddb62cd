"""Branches whose condition is affine: `scf.if` and `affine.if` the model keeps exact.

A branch without results whose condition is an affine comparison of loop values and
parameters (`arith.cmpi` of index or integer values, combined with `arith.andi`,
`ori`, `xori` with true; affine.if's integer set) does not make its contents
approximate: the statements inside are statements of their own, whose domains
include the condition (the else branch's, its negation). onnx-mlir's parallel fork
(`scf.if t == 0 { nest A } scf.if t == 1 { nest B }` in a parallel loop over t) is
then exact, and its parallel loop provably parallel. Any other branch stays one
statement with may-accesses (poly/scf.py).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import affine, arith, scf
from xdsl.dialects.builtin import AffineSetAttr, IndexType, IntegerType
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.ir.affine import AffineConstraintKind

from polykrnl.dialect.std_ext import CmpiOp
from polykrnl.ir import const_int
from polykrnl.poly.domains import Expr, affine_expr

# A guard: the branch op, and whether its then branch (True) or else branch runs.
Guard = tuple[Operation, bool]

_SIGNED: dict[str, Callable[[str, str], str]] = {
    "eq": lambda a, b: f"{a} = {b}",
    "ne": lambda a, b: f"{a} != {b}",
    "slt": lambda a, b: f"{a} < {b}",
    "sle": lambda a, b: f"{a} <= {b}",
    "sgt": lambda a, b: f"{a} > {b}",
    "sge": lambda a, b: f"{a} >= {b}",
}


def _unsigned(a: str, b: str, op: str) -> str:
    """a <op> b as unsigned numbers of one width: a negative value is larger than
    every non-negative one, and two of one sign compare as signed."""
    same = f"(({a} >= 0 and {b} >= 0) or ({a} < 0 and {b} < 0))"
    return f"(({same} and {a} {op} {b}) or ({a} >= 0 and {b} < 0))"


_UNSIGNED: dict[str, Callable[[str, str], str]] = {
    "ult": lambda a, b: _unsigned(a, b, "<"),
    "ule": lambda a, b: _unsigned(a, b, "<="),
    "ugt": lambda a, b: _unsigned(b, a, "<"),
    "uge": lambda a, b: _unsigned(b, a, "<="),
}


def branches(op: Operation, expr: Expr) -> list[tuple[Block, bool]] | None:
    """The blocks of a branch op the model can keep exact (no results, one block per
    region, an affine condition over `expr`), each with whether it is the then branch;
    None for any other op."""
    if not isinstance(op, scf.IfOp | affine.IfOp) or op.results:
        return None
    if condition((op, True), expr) is None:
        return None
    out: list[tuple[Block, bool]] = []
    for region, then in zip(op.regions, (True, False), strict=False):
        if len(region.blocks) > 1:
            return None
        out.extend((b, then) for b in region.blocks)
    return out


def condition(guard: Guard, expr: Expr) -> str | None:
    """The guard's condition as an isl constraint over `expr`'s loop variables and
    parameters (None: not affine)."""
    op, then = guard
    if isinstance(op, scf.IfOp):
        text = _bool(op.cond, expr)
    elif isinstance(op, affine.IfOp):
        text = _integer_set(op, expr)
    else:
        return None
    if text is None:
        return None
    return f"({text})" if then else f"not ({text})"


def _bool(v: SSAValue, expr: Expr) -> str | None:
    c = const_int(v)
    if c is not None:
        return "0 = 0" if c else "0 = 1"
    if not isinstance(v, OpResult):
        return None
    op = v.op
    if isinstance(op, CmpiOp | arith.CmpiOp):
        if not all(isinstance(x.type, IndexType | IntegerType) for x in op.operands):
            return None
        a, b = (expr.of(x) for x in op.operands)
        if a is None or b is None:
            return None
        word = CmpiOp.PREDICATES[op.predicate.value.data]
        form = _SIGNED.get(word) or _UNSIGNED[word]
        return form(f"({a})", f"({b})")
    if isinstance(op, arith.AndIOp | arith.OrIOp | arith.XOrIOp):
        lhs, rhs = (_bool(x, expr) for x in op.operands)
        if lhs is None or rhs is None:
            return None
        if isinstance(op, arith.AndIOp):
            return f"({lhs}) and ({rhs})"
        if isinstance(op, arith.OrIOp):
            return f"({lhs}) or ({rhs})"
        # xor of two conditions: exactly one holds.
        return f"(({lhs}) and not ({rhs})) or (not ({lhs}) and ({rhs}))"
    return None


_KIND = {
    AffineConstraintKind.ge: ">=",
    AffineConstraintKind.le: "<=",
    AffineConstraintKind.eq: "=",
}


def _integer_set(op: affine.IfOp, expr: Expr) -> str | None:
    attr = op.properties.get("condition")
    if not isinstance(attr, AffineSetAttr):
        return None
    s = attr.data
    args = [expr.of(x) for x in op.operands]
    parts: list[str] = []
    for c in s.constraints:
        lhs = affine_expr(c.lhs, args, s.num_dims)
        rhs = affine_expr(c.rhs, args, s.num_dims)
        if lhs is None or rhs is None:
            return None
        parts.append(f"({lhs}) {_KIND[c.kind]} ({rhs})")
    return " and ".join(parts) or "0 = 0"
