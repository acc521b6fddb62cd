"""How much work a prange launch would share out, estimated before the launch.

A Numba prange costs a launch of the thread pool each time it runs: about 2 us when
the threads are still spinning from the last one, tens of us when they went to sleep
between calls (benchmarks/README.md, "prange launches"). A kernel called on a batch of
one row pays it for a loop of one iteration. So a prange runs on threads only when its
trip count times the work of one iteration reaches PRANGE_MIN_TRIPS iterations of a
loop-free body, the break-even measured on two threads; below, the same body runs as a
plain loop. The work is counted in iterations of loop-free bodies: a loop multiplies its
body's count by its extent, statements outside every loop count one.
"""

from __future__ import annotations

import ast
import copy

__all__ = ["PRANGE_MIN_TRIPS", "iteration_work", "loop_extent", "stored_names"]

# Iterations of a loop-free body (a few ns each) that pay for a launch: 16384 of them
# (about 20 us) give two threads 1.7x (benchmarks/README.md, atax and jacobi-1d; and a
# batch of rows x 64 elements breaks even at 256 rows, 16384 elements).
PRANGE_MIN_TRIPS = 16384


def stored_names(body: list[ast.stmt]) -> set[str]:
    """The names `body` assigns: an extent that uses one is not known before it runs."""
    return {
        n.id
        for st in body
        for n in ast.walk(st)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def loop_extent(loop: ast.For, unknown: set[str]) -> ast.expr | None:
    """`max(0, trips)` of a `for` over range/prange, or None if its bounds use `unknown`."""
    call = loop.iter
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id in ("range", "prange")
        and 1 <= len(call.args) <= 3
        and not call.keywords
    ):
        return None
    if any(isinstance(n, ast.Name) and n.id in unknown for a in call.args for n in ast.walk(a)):
        return None
    args = [copy.deepcopy(a) for a in call.args]
    span = args[0] if len(args) == 1 else _minus(args[1], args[0])
    if len(args) == 3:
        span = ast.BinOp(span, ast.FloorDiv(), args[2])
    return _max0(span)


def iteration_work(body: list[ast.stmt], unknown: set[str]) -> ast.expr | None:
    """Iterations of loop-free bodies one run of `body` does, as an expression of names
    known before it runs; None when a loop's extent is not (bounds that `body` computes,
    a while loop)."""
    terms: list[ast.expr] = []
    for st in body:
        if isinstance(st, ast.For):
            extent = loop_extent(st, unknown)
            inner = iteration_work(st.body, unknown)
            if extent is None or inner is None:
                return None
            terms.append(_product(extent, inner))
        elif isinstance(st, ast.If):
            then, other = iteration_work(st.body, unknown), iteration_work(st.orelse, unknown)
            if then is None or other is None:
                return None
            terms.append(_larger(then, other))
        elif any(isinstance(n, ast.For | ast.While) for n in ast.walk(st)):
            return None  # a while loop, or a loop under another statement
    if not terms:
        return ast.Constant(1)
    total = terms[0]
    for t in terms[1:]:
        total = _sum(total, t)
    return total


def _constant(e: ast.expr) -> int | None:
    return e.value if isinstance(e, ast.Constant) and isinstance(e.value, int) else None


def _minus(a: ast.expr, b: ast.expr) -> ast.expr:
    if _constant(b) == 0:
        return a
    ca, cb = _constant(a), _constant(b)
    if ca is not None and cb is not None:
        return ast.Constant(ca - cb)
    return ast.BinOp(a, ast.Sub(), b)


def _max0(e: ast.expr) -> ast.expr:
    c = _constant(e)
    if c is not None:
        return ast.Constant(max(0, c))
    return ast.Call(ast.Name("max", ast.Load()), [ast.Constant(0), e], [])


def _product(a: ast.expr, b: ast.expr) -> ast.expr:
    ca, cb = _constant(a), _constant(b)
    if ca is not None and cb is not None:
        return ast.Constant(ca * cb)
    if ca == 1:
        return b
    if cb == 1:
        return a
    return ast.BinOp(a, ast.Mult(), b)


def _sum(a: ast.expr, b: ast.expr) -> ast.expr:
    ca, cb = _constant(a), _constant(b)
    if ca is not None and cb is not None:
        return ast.Constant(ca + cb)
    return ast.BinOp(a, ast.Add(), b)


def _larger(a: ast.expr, b: ast.expr) -> ast.expr:
    ca, cb = _constant(a), _constant(b)
    if ca is not None and cb is not None:
        return ast.Constant(max(ca, cb))
    return ast.Call(ast.Name("max", ast.Load()), [a, b], [])
