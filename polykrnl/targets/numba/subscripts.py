"""Signed subscripts for the values a loop does not change (Numba kernels).

The kernel writer makes every element subscript unsigned (`x[np.uint64(i), np.uint64(j)]`):
MLIR has no negative indexing, a negative subscript is then out of bounds instead of read
from the end, and LLVM vectorizes a loop only when it knows its subscripts are not
negative. A subscript that the innermost loop does not change needs none of that once
the bounds guard has proven every access of the function in bounds (bounds_guard.py):
it is not negative, and its sign does not matter to the vectorizer (Numba's check of a
negative index is then a test LLVM moves out of the loop).

It matters inside a `prange`: softmax's exp loop of 8 unrolled rows, `out[np.uint64(i_1),
np.uint64(j)] = exp(x[np.uint64(i_1), np.uint64(j)] - m)`, ran 4x slower in a parallel
region than outside it (Intel Xeon VM, Numba 0.68: 23 ms against 6 on one thread), and
as fast with the rows' subscripts signed (6.2 ms); outside a parallel region the
unsigned ones cost nothing measurable, so only loops in a `prange` change:
:func:`sign_invariant_subscripts` writes `np.uint64(r)` as `r` in the subscripts of each
innermost straight-line loop (loop_shape.py) inside a `prange` where r is a name the loop
does not assign, other than its variable, nor a name of an unsigned subscript expression
of the loop (`np.uint64(i - 1)`: a stencil's neighbours; with `i` signed beside it LLVM
could not relate the two addresses, and fdtd-2d's and jacobi-2d's tiles in wavefronts ran
twice as slow, on one thread and on two). (Why the parallel region makes the difference is
not known: a minimal prange of the same shape does not reproduce it.)
"""

from __future__ import annotations

import ast

from polykrnl.targets.numba.loop_shape import straight_line


def sign_invariant_subscripts(fn: ast.FunctionDef) -> None:
    """Rewrite the loop-invariant unsigned subscripts of `fn`'s loops in a `prange` (see
    the module); only for a function whose every access the bounds guard has proven in
    bounds."""
    parallel = [
        n
        for n in ast.walk(fn)
        if isinstance(n, ast.For)
        and isinstance(n.iter, ast.Call)
        and isinstance(n.iter.func, ast.Name)
        and n.iter.func.id == "prange"
    ]
    inner = [loop for p in parallel for loop in ast.walk(p) if loop is not p]
    for loop in inner:
        if isinstance(loop, ast.For) and straight_line(loop):
            assigned = {
                n.id
                for st in loop.body
                for n in ast.walk(st)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            }
            if isinstance(loop.target, ast.Name):
                assigned.add(loop.target.id)
            assigned |= _in_unsigned_expressions(loop)
            for st in loop.body:
                for sub in ast.walk(st):
                    if isinstance(sub, ast.Subscript):
                        sub.slice = _Signed(assigned).visit(sub.slice)


def _in_unsigned_expressions(loop: ast.For) -> set[str]:
    """The names in an unsigned subscript of `loop` that is more than a name
    (`np.uint64(i - 1)`): a name signed in one subscript and unsigned in another of the
    same loop leaves LLVM unable to relate their addresses, and the loop unvectorized
    (fdtd-2d's tiles in wavefronts, `hz[i, j]` beside `hz[np.uint64(i - 1), j]`: 1.13 s
    on one thread with `i` signed, 0.56 unsigned)."""
    out: set[str] = set()
    for n in ast.walk(loop):
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr == "uint64"
            and len(n.args) == 1
            and not isinstance(n.args[0], ast.Name)
        ):
            out |= {x.id for x in ast.walk(n.args[0]) if isinstance(x, ast.Name)}
    return out


class _Signed(ast.NodeTransformer):
    def __init__(self, assigned: set[str]) -> None:
        self.assigned = assigned

    def visit_Call(self, node: ast.Call) -> ast.AST:
        f = node.func
        if (
            isinstance(f, ast.Attribute)
            and isinstance(f.value, ast.Name)
            and f.value.id == "np"
            and f.attr == "uint64"
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id not in self.assigned
        ):
            return node.args[0]
        self.generic_visit(node)
        return node
