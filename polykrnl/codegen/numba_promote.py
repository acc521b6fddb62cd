"""Array elements a loop does not move, kept in local variables (Numba kernels).

Numba cannot know that two array arguments are distinct buffers, so LLVM reloads
`r[i]` in every iteration of a `j` loop that stores to another array, and a reduction
into `q[i]` stores and reloads memory each iteration: neither loop vectorizes (bicg:
4x slower than C). polykrnl's model treats distinct memref arguments as distinct
buffers, which is what makes these rewrites exact:

* a load of `X[s]`, `s` fixed in the loop and X not stored to in it, is read once
  before the loop (hoisted);
* an element `X[s]`, `s` fixed, that the loop reads and writes, with no other access to
  X in the loop, lives in a local during the loop and is stored once after it
  (promoted); each write is converted to X's element type, as the store would.

The same operations run on the same values in the same order: the kernel stays bit for
bit the interpreter. Only memref arguments qualify, and only in a `range` loop (never a
prange) that calls nothing but NumPy and polykrnl's pure helpers, stores only to
arguments, and touches no other array (a view of an argument could alias it). The loop
is guarded by its non-emptiness, so nothing is read that the loop would not read.
"""

from __future__ import annotations

import ast
import copy
import itertools
from collections.abc import Iterator

#: calls that neither write memory nor read arrays
_PURE = frozenset({"min", "max", "abs", "int", "float", "bool", "range", "len"})


def promote_invariants(
    fn: ast.FunctionDef, element_types: dict[str, str], pure: frozenset[str]
) -> None:
    """Rewrite the loops of `fn` in place. `element_types`: memref parameter -> NumPy
    dtype name of its elements; `pure`: helper functions without side effects."""
    taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | set(element_types)
    fresh = (f"_e{i}" for i in itertools.count() if f"_e{i}" not in taken)
    _rewrite_body(fn.body, element_types, _PURE | pure, fresh)


def _rewrite_body(
    body: list[ast.stmt], arrays: dict[str, str], pure: frozenset[str], fresh: Iterator[str]
) -> None:
    # Innermost loops first: what they hoist can move further out.
    for i, st in enumerate(body):
        for part in ("body", "orelse"):
            inner = getattr(st, part, None)
            if isinstance(inner, list):
                _rewrite_body(inner, arrays, pure, fresh)
        if isinstance(st, ast.For):
            replacement = _promoted(st, arrays, pure, fresh)
            if replacement is not None:
                body[i] = replacement


def _promoted(
    loop: ast.For, arrays: dict[str, str], pure: frozenset[str], fresh: Iterator[str]
) -> ast.stmt | None:
    """`loop` with its fixed elements in locals, under its guard; None if nothing moves."""
    guard = _nonempty(loop)
    if guard is None or not isinstance(loop.target, ast.Name):
        return None
    varying = {loop.target.id}
    accesses: dict[str, dict[str, list[ast.Subscript]]] = {}  # array -> subscript -> nodes
    stored: set[str] = set()
    for node in ast.walk(ast.Module(loop.body, [])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            varying.add(node.id)
        elif isinstance(node, ast.Call):
            if ast.unparse(node.func).split(".")[0] not in ("np", *pure):
                return None  # a call that may write memory
        elif isinstance(node, ast.Subscript):
            array = node.value.id if isinstance(node.value, ast.Name) else None
            if array in arrays:
                key = ast.unparse(node.slice)
                accesses.setdefault(array, {}).setdefault(key, []).append(node)
                if isinstance(node.ctx, ast.Store):
                    stored.add(array)
            elif isinstance(node.ctx, ast.Store) or "np.uint64" in ast.unparse(node.slice):
                return None  # another array: a view may alias an argument
    if varying & set(arrays):
        return None
    # Only accesses every iteration makes (not under an inner loop or branch) move out:
    # anything else could read an element the loop never reads.
    direct = {
        id(n)
        for st in loop.body
        if not isinstance(st, (ast.For, ast.While, ast.If))
        for n in ast.walk(st)
    }
    before: list[ast.stmt] = []
    after: list[ast.stmt] = []
    local_of: dict[int, str] = {}
    for array, by_subscript in accesses.items():
        if array in stored and len(by_subscript) > 1:
            continue
        for nodes in by_subscript.values():
            if _names(nodes[0].slice) & varying or any(id(n) not in direct for n in nodes):
                continue
            local = next(fresh)
            before.append(
                ast.Assign([ast.Name(local, ast.Store())], _element(nodes[0], ast.Load()))
            )
            if array in stored:
                after.append(
                    ast.Assign([_element(nodes[0], ast.Store())], ast.Name(local, ast.Load()))
                )
            local_of.update((id(n), local) for n in nodes)
    if not before:
        return None
    return ast.If(guard, [*before, _Swap(local_of, arrays).visit(loop), *after], [])


def _element(access: ast.Subscript, ctx: ast.expr_context) -> ast.Subscript:
    return ast.Subscript(copy.deepcopy(access.value), copy.deepcopy(access.slice), ctx)


class _Swap(ast.NodeTransformer):
    """Promoted accesses (identified by node identity) replaced by their locals; a write
    converted to the array's element type, as storing it would."""

    def __init__(self, local_of: dict[int, str], arrays: dict[str, str]) -> None:
        self.local_of = local_of
        self.arrays = arrays
        self.array_of: dict[str, str] = {}  # local -> array, for the locals written

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        self.generic_visit(node)
        t = node.targets[0]
        if len(node.targets) == 1 and isinstance(t, ast.Name) and t.id in self.array_of:
            dtype = self.arrays[self.array_of[t.id]]
            node.value = ast.Call(
                ast.Attribute(ast.Name("np", ast.Load()), dtype, ast.Load()), [node.value], []
            )
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        local = self.local_of.get(id(node))
        if local is None:
            self.generic_visit(node)
            return node
        if isinstance(node.ctx, ast.Store):
            self.array_of[local] = node.value.id  # type: ignore[attr-defined]
        return ast.Name(local, node.ctx)


def _names(e: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(e) if isinstance(n, ast.Name) and n.id != "np"}


def _nonempty(loop: ast.For) -> ast.expr | None:
    """A test true exactly when `loop` (a `range` loop with step 1) runs at least once."""
    it = loop.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"):
        return None
    if it.keywords or not 1 <= len(it.args) <= 2:
        return None
    lo, hi = (ast.Constant(0), it.args[0]) if len(it.args) == 1 else it.args
    return ast.Compare(copy.deepcopy(hi), [ast.Gt()], [copy.deepcopy(lo)])
