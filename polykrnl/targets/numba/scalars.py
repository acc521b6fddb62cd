"""Scalar work a loop repeats, done once (Numba kernels).

Two rewrites of a Numba kernel's AST, after promote.py's, each exact:

* `hoist_scalars`: statements of a loop's body that compute the same values in every
  iteration move before the loop, under its non-emptiness guard. A gather's
  normalize-and-clamp chain of the row index (`idx < 0 ? idx + V : idx`, clamped) and
  the check of the clamped row were computed for each element of the row, and the
  check's conditional store kept LLVM from vectorizing the copy (4.5x C).
* `forward_loads`: a load of an element the same straight-line block already loaded,
  with no store in between that may reach it, takes the first load's value. Each
  statement of the polyhedral model computes its own values, so softmax's exp-and-sum
  body loaded `x[i, j]` twice; with one load (and one `t0[i]`, promoted) LLVM computes
  the exp once.

A statement moves only if it runs in every iteration (not under a branch or inner
loop), reads only names the loop does not assign (or that statements moved before it
assign), loads only elements no store of the loop may reach (aliases.py), and calls
only NumPy's functions and polykrnl's pure helpers; a name it assigns is assigned by no
statement that stays and read by none before it. A conditional whose test and branch
are such (the flag a checked subscript raises, `_pk_oob`) moves whole when the arrays
it stores to are touched nowhere else in the loop. Moved statements then run once, in
their order, on the values they had in each iteration: the same operations on the same
values, so the kernel stays bit for bit the interpreter.
"""

from __future__ import annotations

import ast

from polykrnl.targets.numba.aliases import ALLOCATIONS, Root, may_alias
from polykrnl.targets.numba.promote import loop_accesses, nonempty


def hoist_scalars(fn: ast.FunctionDef, roots: dict[str, Root], pure: frozenset[str]) -> None:
    """Move the statements each loop of `fn` repeats unchanged before it (see module)."""
    _hoist_body(fn.body, roots, pure)


def _hoist_body(body: list[ast.stmt], roots: dict[str, Root], pure: frozenset[str]) -> None:
    # Innermost loops first: what they hoist can move further out.
    for i, st in enumerate(body):
        for part in ("body", "orelse"):
            inner = getattr(st, part, None)
            if isinstance(inner, list):
                _hoist_body(inner, roots, pure)
        if isinstance(st, ast.For):
            replacement = _hoisted(st, roots, pure)
            if replacement is not None:
                body[i] = replacement


def _hoisted(loop: ast.For, roots: dict[str, Root], pure: frozenset[str]) -> ast.stmt | None:
    guard = nonempty(loop)
    found = loop_accesses(loop, roots, pure) if guard is not None else None
    if guard is None or found is None:
        return None
    varying, accesses = found
    blocked: set[int] = set()
    while True:
        moved = _movable(loop.body, varying, accesses, roots, pure, blocked)
        stay = [st for st in loop.body if st not in moved]
        # A name a moved statement assigns must not be assigned by one that stays.
        kept = {n for st in stay for n in _stored_names(st)}
        wrong = {id(st) for st in moved if _stored_names(st) & kept}
        if not wrong:
            break
        blocked |= wrong
    if all(isinstance(st, ast.Assign) and isinstance(st.value, ast.Name) for st in moved):
        return None  # copies of names only: nothing LLVM would compute again
    loop.body = stay or [ast.Pass()]
    return ast.If(guard, [*moved, loop], [])


def _movable(
    body: list[ast.stmt],
    varying: set[str],
    accesses: list[ast.Subscript],
    roots: dict[str, Root],
    pure: frozenset[str],
    blocked: set[int],
) -> list[ast.stmt]:
    """The statements of `body` that may run once before the loop, in order."""
    moved: list[ast.stmt] = []
    fixed = _Fixed(varying, accesses, roots, pure)
    read_before: set[str] = set()  # names read by statements that stay, so far
    for st in body:
        names = _stored_names(st)
        if id(st) not in blocked and not (names & read_before) and fixed.statement(st):
            moved.append(st)
            fixed.varying -= names
        else:
            read_before |= _loaded_names(st)
    return moved


class _Fixed:
    """What computes the same in every iteration of one loop."""

    def __init__(
        self,
        varying: set[str],
        accesses: list[ast.Subscript],
        roots: dict[str, Root],
        pure: frozenset[str],
    ) -> None:
        self.varying = set(varying)  # less the names moved statements assign
        self.accesses = accesses
        self.roots = roots
        self.pure = pure
        self.stored = [roots[_array(n)] for n in accesses if isinstance(n.ctx, ast.Store)]

    def statement(self, st: ast.stmt) -> bool:
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            # A constant (`half = np.float64(0.5)`) stays: LLVM folds it anyway.
            reads = any(
                (isinstance(n, ast.Name) and n.id != "np") or isinstance(n, ast.Subscript)
                for n in ast.walk(st.value)
            )
            return isinstance(st.targets[0], ast.Name) and reads and self.expr(st.value)
        if not (isinstance(st, ast.If) and not st.orelse and self.expr(st.test)):
            return False
        # The flag of a checked subscript: assignments, and stores to arrays nothing
        # else in the loop touches.
        inside = {id(n) for n in ast.walk(st)}
        for s in st.body:
            if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and self.expr(s.value)):
                return False
            t = s.targets[0]
            if isinstance(t, ast.Name):
                continue
            if not (isinstance(t, ast.Subscript) and _array(t) in self.roots):
                return False
            if _array(t) in self.varying or not self.expr(t.slice):
                return False
            root = self.roots[_array(t)]
            if any(
                id(n) not in inside and may_alias(self.roots[_array(n)], root)
                for n in self.accesses
            ):
                return False
        return True

    def expr(self, e: ast.expr) -> bool:
        """Whether `e` has the same value in every iteration and no effect."""
        for n in ast.walk(e):
            if isinstance(n, ast.Name):
                if isinstance(n.ctx, ast.Load) and n.id in self.varying:
                    return False
            elif isinstance(n, ast.Call):
                f = ast.unparse(n.func)
                if f.split(".")[0] not in ("np", *self.pure) or f in ALLOCATIONS:
                    return False
            elif isinstance(n, ast.Subscript):
                if isinstance(n.value, ast.Attribute) and n.value.attr == "shape":
                    continue
                array = n.value.id if isinstance(n.value, ast.Name) else None
                if array is None or array not in self.roots:
                    return False
                root = self.roots[array]
                if any(may_alias(root, s) for s in self.stored):
                    return False
            elif not isinstance(n, _PLAIN):
                return False
        return True


_PLAIN = (
    ast.Constant,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.Attribute,
    ast.Tuple,
    ast.Slice,
    ast.keyword,
    ast.expr_context,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
)


def _array(n: ast.Subscript) -> str:
    return n.value.id if isinstance(n.value, ast.Name) else ""


def _stored_names(st: ast.stmt) -> set[str]:
    return {n.id for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def forward_loads(fn: ast.FunctionDef, roots: dict[str, Root], pure: frozenset[str]) -> None:
    """Loads of an element its block already loaded take the earlier load's value."""
    for st in [fn, *(n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.If)))]:
        for part in ("body", "orelse"):
            block = getattr(st, part, None)
            if isinstance(block, list):
                _forward_block(block, roots, pure)


def _forward_block(block: list[ast.stmt], roots: dict[str, Root], pure: frozenset[str]) -> None:
    loaded: dict[tuple[str, str], str] = {}  # (array, subscript) -> the name holding it
    for st in block:
        key = _element_load(st, roots)
        if key is not None and key in loaded:
            st.value = ast.Name(loaded[key], ast.Load())  # type: ignore[attr-defined]
        # What the statement writes ends what was known of it.
        names = _stored_names(st)
        stores: list[Root | None] = [
            roots.get(_array(n))
            for n in ast.walk(st)
            if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store)
        ]
        calls = any(
            isinstance(n, ast.Call) and ast.unparse(n.func).split(".")[0] not in ("np", *pure)
            for n in ast.walk(st)
        )
        for k, holder in list(loaded.items()):
            uses = {holder, k[0]} | {
                n.id for n in ast.walk(ast.parse(k[1], mode="eval")) if isinstance(n, ast.Name)
            }
            if calls or uses & names or any(s is None or may_alias(s, roots[k[0]]) for s in stores):
                del loaded[k]
        if key is not None and key not in loaded and isinstance(st, ast.Assign):
            target = st.targets[0].id  # type: ignore[attr-defined]
            if target not in _names_in(st.value):
                loaded[key] = target


def _element_load(st: ast.stmt, roots: dict[str, Root]) -> tuple[str, str] | None:
    """(array, subscript) of `name = array[subscript]`, an element of an array with a root."""
    if not (
        isinstance(st, ast.Assign)
        and len(st.targets) == 1
        and isinstance(st.targets[0], ast.Name)
        and isinstance(v := st.value, ast.Subscript)
        and isinstance(v.value, ast.Name)
        and v.value.id in roots
        and "np.uint64" in ast.unparse(v.slice)
    ):
        return None
    return v.value.id, ast.unparse(v.slice)


def _loaded_names(st: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _names_in(e: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(e) if isinstance(n, ast.Name)}
