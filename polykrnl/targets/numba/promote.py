"""What a loop does not change, computed before it (Numba kernels).

Four rewrites of a Numba kernel's AST, each exact: values passed through a dictionary
set once become locals (`unbox_set_once`), or set first in each iteration of a loop and
kept to it (`localize_per_iteration`), views rebuilt in every iteration are built
before the loop (`hoist_views`), and array elements the loop does not move live in
locals (`promote_invariants`, below).

Numba cannot know that two array arguments are distinct buffers, so LLVM reloads
`r[i]` in every iteration of a `j` loop that stores to another array, and a reduction
into `q[i]` stores and reloads memory each iteration: neither loop vectorizes (bicg:
4x slower than C). polykrnl's model treats distinct memref arguments as distinct
buffers, which is what makes these rewrites exact:

* a load of `X[s]`, `s` fixed in the loop and X not stored to in it, is read once
  before the loop (hoisted);
* an element `X[s]`, `s` fixed, that the loop reads and writes, with no other access to
  X in the loop, lives in a local during the loop and is stored once after it
  (promoted); each write is converted to X's element type, as the store would. An access
  of X whose subscript differs from `s` by a nonzero constant from the same name
  (`index_offsets`: `i_1 = i_t + 1`, the rows of an unrolled loop) is another element:
  the sums of a tile's rows each live in a local.

The same operations run on the same values in the same order: the kernel stays bit for
bit the interpreter. Only arrays with a `Root` (aliases.py: memref arguments, fresh
allocations and their views, a pool's row temporaries apart when their ranges are)
qualify, and only in a `range` loop (never a prange) that calls nothing but NumPy and
polykrnl's pure helpers and stores only to arrays with a root; "no other access" means
none to an array that may alias it. The loop is guarded by its non-emptiness, so
nothing is read that the loop would not read.
"""

from __future__ import annotations

import ast
import copy
import itertools
from collections import Counter
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TypeGuard

from polykrnl.targets.numba.aliases import ALLOCATIONS, Root, array_roots, may_alias

#: calls that neither write memory nor read arrays
_PURE = frozenset({"min", "max", "abs", "int", "float", "bool", "range", "len"})


def unbox_set_once(fn: ast.FunctionDef) -> None:
    """Values the statements pass through a dictionary (`_out_at[0]`, Numba's form of a
    value defined outside every loop) that is set once, before any loop, become plain
    locals: every later read gets the same object, without a typed-dict lookup in each
    iteration (which also hid the array from `promote_invariants`)."""
    created = _created_dicts(fn)
    top_sets = Counter(
        t.value.id
        for st in fn.body
        if isinstance(st, ast.Assign)
        and len(st.targets) == 1
        and _is_key0(t := st.targets[0])
        and isinstance(t.value, ast.Name)
    )
    # Every other mention of the dictionary (another key, the dictionary itself as a
    # value) keeps it: then it is not one value under one key.
    through_key0 = {
        id(n.value) for n in ast.walk(fn) if _is_key0(n) and isinstance(n.value, ast.Name)
    }
    creators = {id(target) for _, target in created.values()}
    other_uses = {
        n.id
        for n in ast.walk(fn)
        if isinstance(n, ast.Name) and id(n) not in through_key0 and id(n) not in creators
    }
    candidates = {d for d in created if top_sets[d] == 1 and d not in other_uses}
    if not candidates:
        return
    taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    local: dict[str, str] = {}
    for d in sorted(candidates):
        base = d.strip("_").removesuffix("_at") or "v"
        names = itertools.chain([base], (f"{base}_{k}" for k in itertools.count()))
        name = next(c for c in names if c not in taken)
        taken.add(name)
        local[d] = name

    class Unbox(ast.NodeTransformer):
        def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
            if isinstance(node.value, ast.Name) and node.value.id in local:
                return ast.Name(local[node.value.id], node.ctx)
            self.generic_visit(node)
            return node

    drop = {created[d][0] for d in candidates}
    fn.body = [Unbox().visit(st) for i, st in enumerate(fn.body) if i not in drop]


def localize_per_iteration(fn: ast.FunctionDef) -> None:
    """A dictionary whose every access is under one key inside one loop, and written
    first in each iteration, becomes a local of that loop (an iter_args accumulator kept
    per row, `_m_at[i,]`: a typed-dict lookup in every tile otherwise).

    Exact: the key's names do not change inside the loop's body, so each iteration
    touches one entry; the first statement of the body that mentions the dictionary
    writes the entry without reading it, so nothing an iteration reads was written by
    another one; nothing outside the loop mentions the dictionary."""
    created = _created_dicts(fn)
    taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    drop: set[int] = set()
    for d, (at, _) in sorted(created.items()):
        loop = _loop_of_one_entry(fn, d)
        if loop is None:
            continue
        base = d.strip("_").removesuffix("_at") or "v"
        names = itertools.chain([base], (f"{base}_{k}" for k in itertools.count()))
        local = next(c for c in names if c not in taken)
        taken.add(local)
        _Renamed(d, local).visit(loop)
        drop.add(at)
    fn.body = [st for i, st in enumerate(fn.body) if i not in drop]


class _Renamed(ast.NodeTransformer):
    """`D[key]` as the local `name`."""

    def __init__(self, d: str, local: str) -> None:
        self.d, self.local = d, local

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == self.d:
            return ast.Name(self.local, node.ctx)
        self.generic_visit(node)
        return node


def _loop_of_one_entry(fn: ast.FunctionDef, d: str) -> ast.For | ast.FunctionDef | None:
    """The loop whose iterations each use one entry of dictionary `d`, written first
    (see `localize_per_iteration`; the function itself when no loop holds every use),
    or None."""
    subscripts = [
        n for n in ast.walk(fn) if isinstance(n, ast.Subscript) and _names(n.value) == {d}
    ]
    mentions = sum(1 for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == d)
    if not subscripts or mentions != len(subscripts) + 1:  # + its creation
        return None
    keys = {ast.dump(n.slice) for n in subscripts}
    if len(keys) != 1:
        return None
    inside = {id(n) for n in subscripts}
    loops = [
        n for n in ast.walk(fn) if isinstance(n, ast.For) and inside <= {id(x) for x in ast.walk(n)}
    ]
    # The innermost loop holding every access (every other one holds it), or the whole
    # function: a dictionary of one entry, set first, is a local of the function.
    loop: ast.For | ast.FunctionDef = (
        min(loops, key=lambda n: sum(1 for _ in ast.walk(n))) if loops else fn
    )
    key_names = _names(subscripts[0].slice)
    stored = {
        n.id
        for n in ast.walk(ast.Module(loop.body, []))
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    if key_names & stored:
        return None
    first = next((st for st in loop.body if any(id(x) in inside for x in ast.walk(st))), None)
    if not (
        isinstance(first, ast.Assign)
        and len(first.targets) == 1
        and id(first.targets[0]) in inside
        and not any(id(x) in inside for x in ast.walk(first.value))
    ):
        return None
    return loop


def _created_dicts(fn: ast.FunctionDef) -> dict[str, tuple[int, ast.Name]]:
    """The dictionaries the kernel's body creates empty: name -> its `D = {}` (position
    in the body, target)."""
    return {
        st.targets[0].id: (i, st.targets[0])
        for i, st in enumerate(fn.body)
        if isinstance(st, ast.Assign)
        and len(st.targets) == 1
        and isinstance(st.targets[0], ast.Name)
        and isinstance(st.value, ast.Dict)
        and not st.value.keys
    }


def _is_key0(e: ast.AST) -> TypeGuard[ast.Subscript]:
    """`D[0]`: a value kept in dictionary D (key 0: Numba's key outside every loop)."""
    return isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Constant) and e.slice.value == 0


def hoist_views(fn: ast.FunctionDef) -> None:
    """Assignments in a loop of a value the loop does not change and that reads no
    element (another name for an array, a slice, `.view`, `.reshape`: the views of an
    i8 pool each statement rebuilds) move before the loop, under its non-emptiness
    guard: Numba built the view anew in every iteration."""
    assigned: dict[str, int] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            assigned[n.id] = assigned.get(n.id, 0) + 1
    _hoist_in(fn.body, {n for n, c in assigned.items() if c == 1})


def _hoist_in(body: list[ast.stmt], once: set[str]) -> None:
    for i, st in enumerate(body):
        for part in ("body", "orelse"):
            inner = getattr(st, part, None)
            if isinstance(inner, list):
                _hoist_in(inner, once)
        if not isinstance(st, ast.For) or (guard := nonempty(st)) is None:
            continue
        hoisted: list[ast.stmt] = []
        while True:
            varying = {
                n.id
                for n in ast.walk(ast.Module(st.body, []))
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            } | {n.id for n in ast.walk(st.target) if isinstance(n, ast.Name)}
            written = _written_arrays(st.body)
            movable = [
                s
                for s in st.body
                if isinstance(s, ast.Assign)
                and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name)
                and s.targets[0].id in once
                and _view_of_invariants(s.value, varying, written)
            ]
            if not movable:
                break
            hoisted += movable
            st.body = [s for s in st.body if s not in movable] or [ast.Pass()]
        if hoisted:
            body[i] = ast.If(guard, [*hoisted, st], [])


def merge_views(fn: ast.FunctionDef) -> None:
    """A view assigned once that an earlier statement of its block already made (the same
    expression, names that are other such views read as the first one) is that name:
    each statement views the pool again, and LLVM does not see that two loads through
    `t0_3` and `t0_4` read one element (softmax computed its exp twice)."""
    counts = Counter(
        n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    )
    same: dict[str, str] = {}
    written = _written_arrays(fn.body)
    for block in [fn.body, *(b for n in ast.walk(fn) for b in _blocks_of(n))]:
        made: dict[str, str] = {}  # expression -> the name that holds it
        for st in block:
            if not (
                isinstance(st, ast.Assign)
                and len(st.targets) == 1
                and isinstance(t := st.targets[0], ast.Name)
                and counts[t.id] == 1
                and _view_of_invariants(st.value, set(), written)
            ):
                continue
            names = {n.id for n in ast.walk(st.value) if isinstance(n, ast.Name)}
            if any(counts[n] != 1 for n in names - {"np"}):
                continue
            text = ast.unparse(_Rename(same).visit(copy.deepcopy(st.value)))
            if text in made:
                same[t.id] = made[text]
            else:
                made[text] = t.id
    if not same:
        return
    _Rename(same).visit(fn)
    for n in [fn, *ast.walk(fn)]:
        for block in _blocks_of(n):
            kept = [
                st
                for st in block
                if not (isinstance(st, ast.Assign) and ast.unparse(st.targets[0]) in same)
            ]
            if len(kept) != len(block):
                block[:] = kept or [ast.Pass()]


def _blocks_of(n: ast.AST) -> list[list[ast.stmt]]:
    return [b for part in ("body", "orelse") if isinstance(b := getattr(n, part, None), list)]


class _Rename(ast.NodeTransformer):
    """Reads of a name replaced by the name it equals."""

    def __init__(self, same: dict[str, str]) -> None:
        self.same = same

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.same:
            return ast.Name(self.same[node.id], ast.Load())
        return node


def _written_arrays(body: list[ast.stmt]) -> set[str]:
    """The names whose elements `body` stores to (`a[i] = ...`, `out=a[...]`)."""
    out: set[str] = set()
    for n in ast.walk(ast.Module(body, [])):
        target: ast.expr | None = None
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store):
            target = n
        elif isinstance(n, ast.keyword) and n.arg == "out":
            target = n.value
        while isinstance(target, ast.Subscript):
            target = target.value
        if isinstance(target, ast.Name):
            out.add(target.id)
    return out


def _view_of_invariants(
    e: ast.expr, varying: set[str], written: AbstractSet[str] = frozenset()
) -> bool:
    """Whether `e` names or views arrays (reads no element) from values fixed in the loop.
    Arithmetic is on index values: a name whose elements are `written` is an array, which
    arithmetic would read (`a_acc - b_acc` of two accumulators changes in the loop)."""
    if isinstance(e, ast.Name):
        return e.id not in varying
    if isinstance(e, ast.Constant):
        return True
    if isinstance(e, ast.Attribute):  # np.float32 (a dtype argument)
        return isinstance(e.value, ast.Name) and e.value.id == "np"
    if isinstance(e, ast.BinOp):
        if any(isinstance(n, ast.Name) and n.id in written for n in ast.walk(e)):
            return False
        return _view_of_invariants(e.left, varying, written) and _view_of_invariants(
            e.right, varying, written
        )
    if isinstance(e, ast.Tuple):
        return all(_view_of_invariants(x, varying, written) for x in e.elts)
    if isinstance(e, ast.Subscript):
        parts = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
        # Only slices: `a[()]` and `a[i]` read an element.
        return (
            bool(parts)
            and _view_of_invariants(e.value, varying, written)
            and all(
                isinstance(p, ast.Slice)
                and all(
                    b is None or _view_of_invariants(b, varying, written)
                    for b in (p.lower, p.upper, p.step)
                )
                for p in parts
            )
        )
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute):
        return (
            e.func.attr in ("view", "reshape")
            and not e.keywords
            and _view_of_invariants(e.func.value, varying, written)
            and all(_view_of_invariants(a, varying, written) for a in e.args)
        )
    return False


def promote_invariants(
    fn: ast.FunctionDef, element_types: dict[str, str], pure: frozenset[str]
) -> None:
    """Rewrite the loops of `fn` in place. `element_types`: memref parameter -> NumPy
    dtype name of its elements; `pure`: helper functions without side effects."""
    taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | set(element_types)
    fresh = (f"_e{i}" for i in itertools.count() if f"_e{i}" not in taken)
    roots = array_roots(fn, element_types)
    _rewrite_body(fn.body, _Promotion(roots, _PURE | pure, fresh, index_offsets(fn)))


@dataclass
class _Promotion:
    roots: dict[str, Root]
    pure: frozenset[str]
    fresh: Iterator[str]
    offsets: dict[str, tuple[str, int]]  # see `index_offsets`


def index_offsets(fn: ast.FunctionDef) -> dict[str, tuple[str, int]]:
    """Names assigned once as another name plus a constant (`i_1 = i_t + 1`, the rows of
    an unrolled loop) -> (that name, resolved to the first name of the chain, the
    constant). Each name of a kernel is assigned in one place, so where both are
    visible the relation holds: two such subscripts of one array with one base and
    different constants are different elements."""
    count: Counter[str] = Counter(
        n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    )
    direct: dict[str, tuple[str, int]] = {}
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Assign) and len(n.targets) == 1):
            continue
        t = n.targets[0]
        if isinstance(t, ast.Name) and count[t.id] == 1:
            found = _name_plus_constant(n.value)
            if found is not None:
                direct[t.id] = found
    out: dict[str, tuple[str, int]] = {}
    for name, (base, k) in direct.items():
        seen = {name}
        while base in direct and base not in seen:
            seen.add(base)
            base, k = direct[base][0], k + direct[base][1]
        if count[base] <= 1:  # a base assigned again would break the relation
            out[name] = (base, k)
    return out


def _name_plus_constant(e: ast.expr) -> tuple[str, int] | None:
    """(name, c) for `name`, `name + c`, `c + name`, `name - c` (c an int), else None."""
    if isinstance(e, ast.Name):
        return e.id, 0
    if not isinstance(e, ast.BinOp) or not isinstance(e.op, (ast.Add, ast.Sub)):
        return None
    a, b = e.left, e.right
    if isinstance(e.op, ast.Add) and isinstance(a, ast.Constant):
        a, b = b, a
    if isinstance(a, ast.Name) and isinstance(b, ast.Constant) and type(b.value) is int:
        return a.id, b.value if isinstance(e.op, ast.Add) else -b.value
    return None


def index_terms(
    access: ast.Subscript, offsets: dict[str, tuple[str, int]]
) -> list[tuple[str, int] | None]:
    """Each subscript of `access` as (base name or "", constant), None when not of that
    form; `np.uint64(x)` reads as x."""
    parts = access.slice.elts if isinstance(access.slice, ast.Tuple) else [access.slice]
    out: list[tuple[str, int] | None] = []
    for p in parts:
        if (
            isinstance(p, ast.Call)
            and ast.unparse(p.func) == "np.uint64"
            and len(p.args) == 1
            and not p.keywords
        ):
            p = p.args[0]
        if isinstance(p, ast.Constant) and type(p.value) is int:
            out.append(("", p.value))
            continue
        found = _name_plus_constant(p)
        if found is not None and found[0] in offsets:
            base, k = offsets[found[0]]
            found = (base, k + found[1])
        out.append(found)
    return out


def _distinct(a: ast.Subscript, b: ast.Subscript, offsets: dict[str, tuple[str, int]]) -> bool:
    """Whether `a` and `b`, accesses of one array by name, are surely different elements:
    some subscript differs by a nonzero constant from the same base."""
    if not (isinstance(a.value, ast.Name) and isinstance(b.value, ast.Name)):
        return False
    if a.value.id != b.value.id:
        return False
    ta, tb = index_terms(a, offsets), index_terms(b, offsets)
    return len(ta) == len(tb) and any(
        x is not None and y is not None and x[0] == y[0] and x[1] != y[1]
        for x, y in zip(ta, tb, strict=True)
    )


def _rewrite_body(body: list[ast.stmt], p: _Promotion) -> None:
    # Innermost loops first: what they hoist can move further out.
    for i, st in enumerate(body):
        for part in ("body", "orelse"):
            inner = getattr(st, part, None)
            if isinstance(inner, list):
                _rewrite_body(inner, p)
        if isinstance(st, ast.For):
            replacement = _promoted(st, p)
            if replacement is not None:
                body[i] = replacement


def loop_accesses(
    loop: ast.For, roots: dict[str, Root], pure: frozenset[str]
) -> tuple[set[str], list[ast.Subscript]] | None:
    """The names `loop` assigns (its iterator too) and its element accesses of arrays
    with a root; None when it calls what may write memory, or stores to (or indexes an
    element of) an array without a root."""
    if not isinstance(loop.target, ast.Name):
        return None
    varying = {loop.target.id}
    accesses: list[ast.Subscript] = []
    for node in ast.walk(ast.Module(loop.body, [])):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            varying.add(node.id)
        elif isinstance(node, ast.Call):
            if ast.unparse(node.func).split(".")[0] not in ("np", *pure):
                return None  # a call that may write memory
            if ast.unparse(node.func) in ALLOCATIONS:
                return None  # a new buffer in each iteration: no element stays put
        elif isinstance(
            node, (ast.Raise, ast.While, ast.AugAssign, ast.Return, ast.Break, ast.Continue)
        ):
            return None  # an iteration that may end early, or a name updated in place
        elif isinstance(node, ast.Subscript):
            array = node.value.id if isinstance(node.value, ast.Name) else None
            if array in roots:
                accesses.append(node)
            elif isinstance(node.ctx, ast.Store) or "np.uint64" in ast.unparse(node.slice):
                return None  # an array that may alias any other
    return varying, accesses


def _promoted(loop: ast.For, p: _Promotion) -> ast.stmt | None:
    """`loop` with its fixed elements in locals, under its guard; None if nothing moves."""
    roots = p.roots
    guard = nonempty(loop)
    found = loop_accesses(loop, roots, p.pure) if guard is not None else None
    if guard is None or found is None:
        return None
    varying, accesses = found
    by_element: dict[tuple[str, str], list[ast.Subscript]] = {}
    for node in accesses:
        key = (node.value.id, ast.unparse(node.slice))  # type: ignore[attr-defined]
        by_element.setdefault(key, []).append(node)
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
    dtypes: dict[str, str] = {}
    for (array, _), nodes in by_element.items():
        root = roots[array]
        if (
            array in varying
            or _names(nodes[0].slice) & varying
            or any(id(n) not in direct for n in nodes)
        ):
            continue
        written = any(isinstance(n.ctx, ast.Store) for n in nodes)
        others = [
            n
            for n in accesses
            if n not in nodes
            and may_alias(roots[n.value.id], root)  # type: ignore[attr-defined]
            and not _distinct(n, nodes[0], p.offsets)
        ]
        # A fixed element read only moves out if nothing in the loop may write it; one
        # written stays in a local only if nothing else in the loop may touch it.
        if (others and written) or any(isinstance(n.ctx, ast.Store) for n in others):
            continue
        if written and root.dtype is None:
            continue
        local = next(p.fresh)
        before.append(ast.Assign([ast.Name(local, ast.Store())], _element(nodes[0], ast.Load())))
        if written:
            after.append(ast.Assign([_element(nodes[0], ast.Store())], ast.Name(local, ast.Load())))
            dtypes[local] = root.dtype  # type: ignore[assignment]
        local_of.update((id(n), local) for n in nodes)
    if not before:
        return None
    return ast.If(guard, [*before, _Swap(local_of, dtypes).visit(loop), *after], [])


def _element(access: ast.Subscript, ctx: ast.expr_context) -> ast.Subscript:
    return ast.Subscript(copy.deepcopy(access.value), copy.deepcopy(access.slice), ctx)


class _Swap(ast.NodeTransformer):
    """Promoted accesses (identified by node identity) replaced by their locals; a write
    converted to the array's element type, as storing it would."""

    def __init__(self, local_of: dict[int, str], dtypes: dict[str, str]) -> None:
        self.local_of = local_of
        self.dtypes = dtypes  # local written -> its array's element dtype

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        self.generic_visit(node)
        t = node.targets[0]
        if len(node.targets) == 1 and isinstance(t, ast.Name) and t.id in self.dtypes:
            dtype = self.dtypes[t.id]
            node.value = ast.Call(
                ast.Attribute(ast.Name("np", ast.Load()), dtype, ast.Load()), [node.value], []
            )
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        local = self.local_of.get(id(node))
        if local is None:
            self.generic_visit(node)
            return node
        return ast.Name(local, node.ctx)


def _names(e: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(e) if isinstance(n, ast.Name) and n.id != "np"}


def nonempty(loop: ast.For) -> ast.expr | None:
    """A test true exactly when `loop` (a `range` loop with step 1, or a positive
    constant step: a vector loop's tiles) runs at least once."""
    it = loop.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"):
        return None
    if it.keywords or not 1 <= len(it.args) <= 3:
        return None
    if len(it.args) == 3:
        step = it.args[2]
        if not (isinstance(step, ast.Constant) and type(step.value) is int and step.value > 0):
            return None
    lo, hi = (ast.Constant(0), it.args[0]) if len(it.args) == 1 else it.args[:2]
    return ast.Compare(copy.deepcopy(hi), [ast.Gt()], [copy.deepcopy(lo)])
