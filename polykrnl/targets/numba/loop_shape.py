"""The loops of a Numba kernel that LLVM can vectorize, read from the kernel's AST.

An innermost `for ... in range(...)` whose body is single-target assignments is
straight-line code; LLVM vectorizes it when no value passes from one iteration to the
next (an in-order float sum does: LLVM keeps its order, so the whole loop stays scalar).
fission.py splits such a value off a loop, vector_math.py writes vector exps and tanhs
only in loops that carry nothing, minmax_keys.py makes min/max chains integer ones.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence


def straight_line(loop: ast.For) -> bool:
    """An innermost `for ... in range(...)` whose body is single-target assignments."""
    return (
        isinstance(loop.iter, ast.Call)
        and isinstance(loop.iter.func, ast.Name)
        and loop.iter.func.id == "range"
        and isinstance(loop.target, ast.Name)
        and not loop.orelse
        and all(isinstance(st, ast.Assign) and len(st.targets) == 1 for st in loop.body)
    )


def carried(body: Sequence[ast.stmt]) -> set[str]:
    """The names `body` reads before it assigns them: values from the last iteration."""
    assigned: set[str] = set()
    out: set[str] = set()
    for st in body:
        assert isinstance(st, ast.Assign)
        for n in ast.walk(st.value):
            if isinstance(n, ast.Name) and n.id not in assigned:
                out.add(n.id)
        for t in ast.walk(st.targets[0]):
            if isinstance(t, ast.Subscript):
                out |= {n.id for n in ast.walk(t.slice) if isinstance(n, ast.Name)} - assigned
        if isinstance(st.targets[0], ast.Name):
            assigned.add(st.targets[0].id)
    return out & assigned


def names(e: ast.AST) -> set[str]:
    """The names `e` reads or assigns."""
    return {n.id for n in ast.walk(e) if isinstance(n, ast.Name)}


def read_outside(fn: ast.FunctionDef, loop: ast.For) -> set[str]:
    """The names `fn` reads outside `loop`."""
    inside = {id(n) for n in ast.walk(loop)}
    return {
        n.id
        for n in ast.walk(fn)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in inside
    }


def replace_loops(
    fn: ast.FunctionDef, rewrite: Callable[[ast.For], Sequence[ast.stmt] | None]
) -> int:
    """Put `rewrite(loop)` in place of each `for` loop of `fn` it returns statements for
    (loops of the original tree, each once: not the new statements); how many."""
    count = 0
    for node in list(ast.walk(fn)):
        for part in ("body", "orelse"):
            block = getattr(node, part, None)
            if not isinstance(block, list):
                continue
            for k in range(len(block) - 1, -1, -1):
                st = block[k]
                if isinstance(st, ast.For):
                    new = rewrite(st)
                    if new is not None:
                        block[k : k + 1] = new
                        count += 1
    return count
