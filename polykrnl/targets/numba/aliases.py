"""Which arrays of a Numba kernel may share memory, read from the kernel's AST.

The rewrites of promote.py and scalars.py move a load out of a loop, or keep an element
in a local, only when no store in the loop can reach the same memory. An array name of
the entry function has a `Root` when it is assigned once and is a memref argument (the
model treats distinct memref arguments as distinct buffers), a fresh allocation
(`np.full`, `np.empty`, `np.zeros`, `np.ones`, `np.array` of a vector constant, an
array's `.copy()`: no other name reaches it before it is made), or another name, a
slice, a `.view` or a `.reshape` of an array with a root (the views of an i8 pool: a
constant slice of the pool itself keeps its element range, so that two row
temporaries of one pool stay apart). Names without a root may alias
anything; the rewrites leave loops that store through them alone. A zero-dimensional
allocation (a scalar accumulator, memref.alloca's) has none here: keeping it in a
local is another rewrite's.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

#: NumPy calls that return a new array, shared with no other name
ALLOCATIONS = frozenset({"np.full", "np.empty", "np.zeros", "np.ones"})
#: ... and the calls whose result is a new array too: a vector constant's `np.array`
#: (not an allocation a loop may repeat, for the rewrites: a constant)
NEW_ARRAYS = ALLOCATIONS | {"np.array"}


@dataclass(frozen=True)
class Root:
    """The buffer an array name reaches: `base` (an argument or an allocation) and, when
    known, the range [lo, hi) of base's elements it covers (None: possibly all)."""

    base: str
    span: tuple[int, int] | None = None
    # the base itself under another name (same dtype and shape): a constant slice of it
    # is a range of base's elements
    plain: bool = True
    # the NumPy dtype name of its elements, when the kernel's text says it
    dtype: str | None = None


def may_alias(a: Root, b: Root) -> bool:
    """Whether some element reached through `a` may be one reached through `b`."""
    if a.base != b.base:
        return False
    if a.span is None or b.span is None:
        return True
    return a.span[0] < b.span[1] and b.span[0] < a.span[1]


def array_roots(fn: ast.FunctionDef, arguments: dict[str, str]) -> dict[str, Root]:
    """Array name -> its Root, for the names of `fn` that have one (see the module).
    `arguments`: memref parameter -> NumPy dtype name of its elements."""
    counts = Counter(
        n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    )
    roots = {a: Root(a, dtype=t) for a, t in arguments.items() if counts[a] == 0}
    # Assignments in source order: a view is made after the array it views.
    for node in statements_in_order(fn.body):
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(t := node.targets[0], ast.Name)
            and counts[t.id] == 1
        ):
            continue
        root = _root_of(node.value, roots, t.id)
        if root is not None:
            roots[t.id] = root
    return roots


def _root_of(e: ast.expr, roots: dict[str, Root], name: str) -> Root | None:
    if isinstance(e, ast.Name):
        return roots.get(e.id)
    if isinstance(e, ast.Call):
        f = e.func
        if ast.unparse(f) in NEW_ARRAYS:
            if e.args and isinstance(e.args[0], ast.Tuple) and not e.args[0].elts:
                # memref.alloca's scalar accumulators are left to their own rewrite
                return None
            dtype = next((k.value for k in e.keywords if k.arg == "dtype"), None)
            return Root(name, dtype=_dtype_name(dtype))
        if isinstance(f, ast.Attribute) and f.attr == "copy" and not e.args and not e.keywords:
            # a new array (a vector accumulator's start: `zv.copy()`), whatever it copies
            copied = _root_of(f.value, roots, name)
            return Root(name, dtype=copied.dtype if copied is not None else None)
        if isinstance(f, ast.Attribute) and f.attr in ("view", "reshape"):
            inner = _root_of(f.value, roots, name)
            if inner is None:
                return None
            viewed = _dtype_name(e.args[0]) if f.attr == "view" and e.args else inner.dtype
            return Root(inner.base, inner.span, plain=False, dtype=viewed)
        return None
    if isinstance(e, ast.Subscript) and _only_slices(e.slice):
        inner = _root_of(e.value, roots, name)
        if inner is None:
            return None
        span = _constant_slice(e.slice)
        if inner.plain and inner.span is None and span is not None:
            return Root(inner.base, span, plain=False, dtype=inner.dtype)
        return Root(inner.base, inner.span, plain=False, dtype=inner.dtype)
    return None


def _only_slices(s: ast.expr) -> bool:
    parts = s.elts if isinstance(s, ast.Tuple) else [s]
    return bool(parts) and all(isinstance(p, ast.Slice) for p in parts)


def _constant_slice(s: ast.expr) -> tuple[int, int] | None:
    """[lo, hi) of a one-dimensional slice with constant bounds and no step."""
    if not isinstance(s, ast.Slice) or s.step is not None or s.upper is None:
        return None
    lo = 0 if s.lower is None else constant_int(s.lower)
    hi = constant_int(s.upper)
    if lo is None or hi is None or not 0 <= lo <= hi:
        return None
    return lo, hi


def constant_int(e: ast.expr) -> int | None:
    """The value of an integer expression of constants (`0 + 1 * 6 * 4`), else None."""
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult)):
        a, b = constant_int(e.left), constant_int(e.right)
        if a is None or b is None:
            return None
        if isinstance(e.op, ast.Add):
            return a + b
        return a - b if isinstance(e.op, ast.Sub) else a * b
    return None


def _dtype_name(e: ast.expr | None) -> str | None:
    """`np.float32` -> "float32"; anything else (a dtype the text does not spell) None."""
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "np":
        return e.attr
    return None


def statements_in_order(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of `body` and of the blocks in them, in source order."""
    for st in body:
        yield st
        for part in ("body", "orelse"):
            inner = getattr(st, part, None)
            if isinstance(inner, list):
                yield from statements_in_order(inner)
