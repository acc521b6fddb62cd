"""Python AST building blocks of generated kernels: names, calls, affine expressions."""

from __future__ import annotations

import ast
from typing import Any

from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)

#: marks a statement that the kernel's source shows as a `#` line (kernel._with_comments)
COMMENT = "__polykrnl_comment__: "


def comment(text: str) -> ast.stmt:
    """A line that the kernel's source shows as `# text`."""
    return ast.Expr(ast.Constant(COMMENT + text))


def name(x: str) -> ast.Name:
    return ast.Name(x, ast.Load())


def store(x: str) -> ast.Name:
    return ast.Name(x, ast.Store())


def call(fn: str, *args: ast.expr) -> ast.Call:
    """`fn(args)`; `fn` may be dotted (`np.zeros`)."""
    parts = fn.split(".")
    f: ast.expr = name(parts[0])
    for p in parts[1:]:
        f = ast.Attribute(f, p, ast.Load())
    return ast.Call(f, list(args), [])


def const(v: Any) -> ast.Constant:
    return ast.Constant(v)


def assign(target: str, value: ast.expr) -> ast.Assign:
    return ast.Assign([store(target)], value)


def iterator_plus_constant(e: ast.expr) -> tuple[str, int] | None:
    if isinstance(e, ast.Name):
        return e.id, 0
    if (
        isinstance(e, ast.BinOp)
        and isinstance(e.op, ast.Add | ast.Sub)
        and isinstance(e.left, ast.Name)
        and isinstance(e.right, ast.Constant)
        and isinstance(e.right.value, int)
    ):
        c = e.right.value
        return e.left.id, c if isinstance(e.op, ast.Add) else -c
    if (
        isinstance(e, ast.BinOp)
        and isinstance(e.op, ast.Add)
        and isinstance(e.right, ast.Name)
        and isinstance(e.left, ast.Constant)
        and isinstance(e.left.value, int)
    ):
        return e.right.id, e.left.value
    return None


def add_constant(e: ast.expr, c: int) -> ast.expr:
    if c == 0:
        return e
    if isinstance(e, ast.Constant) and isinstance(e.value, int):
        return const(e.value + c)
    return ast.BinOp(e, ast.Add() if c > 0 else ast.Sub(), const(abs(c)))


def affine_expr(e: AffineExpr, dims: list[ast.expr], syms: list[ast.expr]) -> ast.expr:
    """An affine expression on Python ints (floordiv/mod as Python's, which floor)."""
    if isinstance(e, AffineDimExpr):
        return dims[e.position]
    if isinstance(e, AffineSymExpr):
        return syms[e.position]
    if isinstance(e, AffineConstantExpr):
        return const(e.value)
    assert isinstance(e, AffineBinaryOpExpr)
    a, b = affine_expr(e.lhs, dims, syms), affine_expr(e.rhs, dims, syms)
    if e.kind is AffineBinaryOpKind.CeilDiv:
        return ast.UnaryOp(ast.USub(), ast.BinOp(ast.UnaryOp(ast.USub(), a), ast.FloorDiv(), b))
    op = {
        AffineBinaryOpKind.Add: ast.Add(),
        AffineBinaryOpKind.Mul: ast.Mult(),
        AffineBinaryOpKind.FloorDiv: ast.FloorDiv(),
        AffineBinaryOpKind.Mod: ast.Mod(),
    }[e.kind]
    return ast.BinOp(a, op, b)


def affine_bound(m: AffineMap, operands: list[ast.expr], combine: str) -> ast.expr:
    dims, syms = operands[: m.num_dims], operands[m.num_dims :]
    parts = [affine_expr(r, dims, syms) for r in m.results]
    return parts[0] if len(parts) == 1 else call(combine, *parts)


def int_constant(e: ast.expr) -> int | None:
    return e.value if isinstance(e, ast.Constant) and isinstance(e.value, int) else None


def same_tree(a: object, b: object) -> bool:
    """Whether two Python expressions are the same tree (same node kinds, fields and
    constants; line numbers aside)."""
    if isinstance(a, ast.AST):
        return type(a) is type(b) and all(
            same_tree(getattr(a, f, None), getattr(b, f, None)) for f in a._fields
        )
    if isinstance(b, ast.AST):
        return False
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_tree(x, y) for x, y in zip(a, b, strict=True))
    # Leaves: `1`, `1.0` and `True` are equal in Python but not the same constant.
    return type(a) is type(b) and a == b
