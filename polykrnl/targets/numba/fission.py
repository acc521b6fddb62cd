"""A sum carried by a loop of exps, moved to a loop of its own (Numba kernels).

Softmax's second nest stores `e = exp(x[i, j] - max[i])` to `out[i, j]` and adds the
same `e` to the row's sum: one loop, whose float sum (in order, as the interpreter
adds) keeps LLVM from vectorizing anything in it, the exps included. When a loop's
carried values (the sum) are computed from values the loop also stores, each in its own
element, :func:`split_sums` splits the loop in two: the first computes and stores as
before, the second adds the stored elements in the same order. The second reads back
exactly what the first stored (the stored value already has its element type), so the
sum is bit for bit the same; the first loop carries nothing and its exps vectorize
(vector_math.py). Softmax's exp nest: 18.5 ms in one loop, 11.7 in two (Intel Xeon).

The loop is split only when that is sure to compute the same, read from the AST:

* an innermost `for` over `range` whose body is single-target assignments;
* the statements that read a carried name, directly or through names they assign, (the
  chain) assign names only, and no other statement reads a name the chain assigns;
* each use in the chain of a value computed from the other statements is, after
  inlining the loop's own names, the value of a store `A[s] = v` of the other
  statements, where A has a root (aliases.py) no other store of the loop may reach and
  one index of s is the loop's variable (plus a constant), the rest not assigned in the
  loop: one element per iteration, each stored once (other stores of A only at rows an
  unrolled loop keeps apart);
* the chain then reads no other name the loop assigns and no array element;
* the split pays: a value the chain reads back contains an exp.
"""

from __future__ import annotations

import ast
import copy

from polykrnl.targets.numba.aliases import Root, may_alias
from polykrnl.targets.numba.loop_shape import (
    carried,
    names,
    read_outside,
    replace_loops,
    straight_line,
)
from polykrnl.targets.numba.promote import index_offsets, index_terms


def split_sums(fn: ast.FunctionDef, roots: dict[str, Root]) -> None:
    """Split each loop of `fn` whose carried sum can be read back (see the module)."""
    replace_loops(fn, lambda loop: _split(loop, roots, fn))


def _split(loop: ast.For, roots: dict[str, Root], fn: ast.FunctionDef) -> list[ast.For] | None:
    if not straight_line(loop):
        return None
    body: list[ast.Assign] = loop.body  # type: ignore[assignment]
    chain_names = carried(body)
    targets = [n for st in body for n in _targets(st)]
    if not chain_names or len(targets) != len(set(targets)):
        return None  # (a name assigned twice would make inlining below wrong)
    chain: list[ast.Assign] = []
    for st in body:  # the statements that read the chain's names, in order
        if names(st.value) & chain_names:
            chain.append(st)
            chain_names |= _targets(st)
    rest = [st for st in body if st not in chain]
    if any(not isinstance(st.targets[0], ast.Name) for st in chain) or any(
        names(st) & chain_names for st in rest
    ):
        return None
    stores = _stores(rest, roots, loop, index_offsets(fn))
    if not stores:
        return None
    # The chain's own names stay names: no stored value reads them.
    reader = _ReadBack(stores, _definitions(rest))
    new_chain = [reader.visit(copy.deepcopy(st)) for st in chain]
    if not reader.pays:
        return None
    new_chain = _live(new_chain, read_outside(fn, loop))
    assigned = {n for st in body for n in _targets(st)}
    for st in new_chain:
        reads = names(st.value) - chain_names
        subscripts = [n for n in ast.walk(st.value) if isinstance(n, ast.Subscript)]
        if reads & assigned or any(id(n) not in reader.loads for n in subscripts):
            return None
    first = ast.For(loop.target, loop.iter, list[ast.stmt](rest), [], None)
    second = ast.For(
        copy.deepcopy(loop.target), copy.deepcopy(loop.iter), list[ast.stmt](new_chain), [], None
    )
    return [first, second]


def _stores(
    rest: list[ast.Assign],
    roots: dict[str, Root],
    loop: ast.For,
    offsets: dict[str, tuple[str, int]],
) -> dict[str, ast.Assign]:
    """Dump of an inlined stored value -> its store, for the stores a second loop may
    read back (see the module)."""
    assert isinstance(loop.target, ast.Name)
    var = loop.target.id
    assigned = {n for st in rest for n in _targets(st)}
    targets = [st.targets[0] for st in rest if isinstance(st.targets[0], ast.Subscript)]
    out: dict[str, ast.Assign] = {}
    for st in rest:
        t = st.targets[0]
        if not (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)):
            continue
        root = roots.get(t.value.id)
        if root is None or any(
            not _apart(t, o, offsets, var) and _may_reach(roots.get(_array(o)), root)
            for o in targets
            if o is not t
        ):
            continue
        if names(t.slice) & assigned or not _one_per_iteration(t, var, offsets):
            continue
        value = _inline(st.value, _definitions(rest))
        if _reads_stored(value, roots, targets) or not _cast_to(st.value, root.dtype):
            continue
        out[ast.dump(value)] = st
    return out


def _reads_stored(value: ast.expr, roots: dict[str, Root], targets: list[ast.Subscript]) -> bool:
    """Whether `value` loads an element some store of the loop may reach (then two equal
    texts need not be equal values)."""
    for n in ast.walk(value):
        if isinstance(n, ast.Subscript):
            root = roots.get(_array(n))
            others = [roots.get(_array(t)) for t in targets]
            if root is None or any(o is None or may_alias(o, root) for o in others):
                return True
    return False


def _cast_to(value: ast.expr, dtype: str | None) -> bool:
    """Whether `value` is `np.<dtype>(...)`: the element stored is the value itself."""
    return (
        dtype is not None
        and isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == "np"
        and value.func.attr == dtype
    )


def _may_reach(other: Root | None, root: Root) -> bool:
    return other is None or may_alias(other, root)


def _apart(
    a: ast.Subscript, b: ast.Subscript, offsets: dict[str, tuple[str, int]], var: str
) -> bool:
    """Whether `a` and `b` (one array by name) are different elements in every pair of
    iterations: one index of both is one name the loop leaves alone (not its variable)
    plus different constants (the rows of an unrolled loop)."""
    if not (isinstance(a.value, ast.Name) and isinstance(b.value, ast.Name)):
        return False
    ta, tb = index_terms(a, offsets), index_terms(b, offsets)
    return (
        a.value.id == b.value.id
        and len(ta) == len(tb)
        and any(
            x is not None and y is not None and x[0] == y[0] != var and x[1] != y[1]
            for x, y in zip(ta, tb, strict=True)
        )
    )


def _one_per_iteration(t: ast.Subscript, var: str, offsets: dict[str, tuple[str, int]]) -> bool:
    """Whether one of the subscript's indices is `var` plus a constant."""
    return any(term is not None and term[0] == var for term in index_terms(t, offsets))


class _ReadBack(ast.NodeTransformer):
    """The chain's uses of a stored value, as loads of the element that holds it."""

    def __init__(self, stores: dict[str, ast.Assign], definitions: dict[str, ast.expr]):
        self.stores = stores
        self.definitions = definitions
        self.loads: set[int] = set()
        self.pays = False

    def visit_Call(self, node: ast.Call) -> ast.AST:
        store = self.stores.get(ast.dump(_inline(node, self.definitions)))
        if store is None:
            return self.generic_visit(node)
        load = copy.deepcopy(store.targets[0])
        assert isinstance(load, ast.Subscript)
        for n in ast.walk(load):
            if hasattr(n, "ctx"):
                n.ctx = ast.Load()
        self.loads.add(id(load))
        self.pays = self.pays or "np.exp(" in ast.unparse(node)
        return load


def _inline(e: ast.expr, definitions: dict[str, ast.expr], depth: int = 0) -> ast.expr:
    """`e` with each name the loop assigns replaced by what it assigns (recursively)."""

    class Inline(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            d = definitions.get(node.id)
            if d is None or depth > 8:
                return node
            return _inline(d, definitions, depth + 1)

    return Inline().visit(copy.deepcopy(e))


def _live(chain: list[ast.Assign], outside: set[str]) -> list[ast.Assign]:
    """`chain` without the assignments nothing reads any more (copies of values it now
    reads back): not carried, not read after them, not read outside the loop."""
    carried_names = carried(chain)
    out = list(chain)
    changed = True
    while changed:
        changed = False
        for k, st in enumerate(out):
            (name,) = _targets(st)  # the chain assigns names only
            later = set().union(*(names(s.value) for s in out[k + 1 :]))
            if name not in carried_names and name not in later and name not in outside:
                del out[k]
                changed = True
                break
    return out


def _definitions(body: list[ast.Assign]) -> dict[str, ast.expr]:
    return {st.targets[0].id: st.value for st in body if isinstance(st.targets[0], ast.Name)}


def _targets(st: ast.Assign) -> set[str]:
    return {st.targets[0].id} if isinstance(st.targets[0], ast.Name) else set()


def _array(t: ast.Subscript) -> str:
    return t.value.id if isinstance(t.value, ast.Name) else ""
