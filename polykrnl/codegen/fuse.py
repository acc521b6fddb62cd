"""Fuse single-use temporaries of generated kernels into the expressions that use them.

Generated code names every SSA value (`s1 = a0 + a1; s2 = s1 + a2`). A named
full-size temporary defeats NumPy's elision of temporaries (an intermediate
array that only the expression holds is reused in place), so each step
allocates a fresh array. Writing `s2 = a0 + a1 + a2` instead evaluates the same
operations in the same order (bit for bit the same values) and lets NumPy reuse
the intermediate.

A definition `t = E` is folded into its one use when E only computes (names,
constants, operators, calls of NumPy functions, `astype` and the value helpers
of the prelude: no subscript, so no memory read moves), the use comes later in
the same list of statements (not inside a loop or a branch, where it would run
again), and nothing between them rebinds a name E reads. A pure definition nothing reads goes.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterable

from polykrnl.codegen.numpy_ops import PRELUDE

_PURE_METHODS = frozenset({"astype", "reshape"})


def fuse_temporaries(body: list[ast.stmt]) -> list[ast.stmt]:
    """`body` (a function's statements) with single-use pure temporaries folded in."""
    uses = Counter(
        n.id
        for st in body
        for n in ast.walk(st)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    )
    return _fuse_block(body, uses)[0]


def _fuse_block(stmts: list[ast.stmt], uses: Counter[str]) -> tuple[list[ast.stmt], set[str]]:
    """The block fused, and the names its statements bind (nested blocks included)."""
    out: list[ast.stmt] = []
    # name -> its pure definition, not yet used, and the names that definition reads
    pending: dict[str, tuple[ast.expr, set[str]]] = {}
    folded: set[str] = set()  # the names whose definition was folded into its use
    definition: dict[str, ast.stmt] = {}
    binds: dict[int, set[str]] = {}
    for st in stmts:
        # Each nested block reports what it binds, so no statement is walked once per
        # enclosing loop (deep nests were quadratic).
        bound = _own_bound_names(st)
        for nested in _blocks(st):
            nested[:], inner = _fuse_block(nested, uses)
            bound |= inner
        binds[id(st)] = bound
        # A statement that rebinds a name a pending definition reads ends that definition.
        for name, (_, reads) in list(pending.items()):
            if bound & reads or name in bound:
                del pending[name]
        if not _nested(st):
            folded |= _substitute(st, pending)
        if (
            isinstance(st, ast.Assign)
            and all(isinstance(t, ast.Name) and not uses[t.id] for t in st.targets)
            and _pure(st.value)
        ):
            continue  # a value nothing reads (a comparison a select no longer needs)
        if (
            isinstance(st, ast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Name)
            and uses[st.targets[0].id] == 1
            and _pure(st.value)
        ):
            pending[st.targets[0].id] = (st.value, _names(st.value))
            definition[st.targets[0].id] = st
        out.append(st)
    # Definitions that were folded into their use go.
    gone = {id(definition[n]) for n in folded}
    kept = [s for s in out if id(s) not in gone]
    return kept, set().union(*(binds[id(s)] for s in kept))


def _substitute(st: ast.stmt, pending: dict[str, tuple[ast.expr, set[str]]]) -> set[str]:
    """Replace, in `st`, each load of a pending name by its definition; the names
    folded."""
    folded: set[str] = set()
    if not pending:
        return folded

    class Fold(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if isinstance(node.ctx, ast.Load) and node.id in pending:
                e, _ = pending.pop(node.id)
                folded.add(node.id)
                return self.visit(e)
            return node

    Fold().visit(st)
    return folded


def _pure(e: ast.expr) -> bool:
    for n in ast.walk(e):
        if isinstance(n, ast.Subscript | ast.Lambda | ast.NamedExpr | ast.Await | ast.Yield):
            return False
        if isinstance(n, ast.Dict | ast.List | ast.Set):
            return False  # a new mutable object: its one use may be a store into it
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Attribute):
                if not (_is_np(f.value) or f.attr in _PURE_METHODS):
                    return False
            elif not (isinstance(f, ast.Name) and (f.id in PRELUDE or f.id in ("int", "float"))):
                return False
    return True


def _is_np(e: ast.expr) -> bool:
    while isinstance(e, ast.Attribute):
        e = e.value
    return isinstance(e, ast.Name) and e.id == "np"


def _names(e: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(e) if isinstance(n, ast.Name)}


def _own_bound_names(st: ast.stmt) -> set[str]:
    """The names `st` binds or deletes outside the nested blocks `_blocks` yields."""
    blocks = {id(b) for b in _blocks(st)}
    out: set[str] = set()
    for _, value in ast.iter_fields(st):
        if id(value) in blocks:
            continue
        for part in value if isinstance(value, list) else [value]:
            if isinstance(part, ast.AST):
                for n in ast.walk(part):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
                        out.add(n.id)
    return out


def _nested(st: ast.stmt) -> bool:
    return isinstance(st, ast.For | ast.While | ast.If | ast.With | ast.Try | ast.FunctionDef)


def _blocks(st: ast.stmt) -> Iterable[list[ast.stmt]]:
    if isinstance(st, ast.For | ast.While | ast.If):
        yield st.body
        yield st.orelse
    elif isinstance(st, ast.FunctionDef | ast.With):
        yield st.body
