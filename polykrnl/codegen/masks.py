"""Masked array code: a triangle of parallel loops computed over its bounding box.

A parallel loop whose bounds use an outer vectorized loop (syrk's `j <= i`) is no
slice of an array. It runs instead over its bounding box (the union of its ranges,
from the statements' domains), every statement computes over the whole box, and
each store keeps the old values outside the triangle:
`C[0:N, 0:N] = np.where(inside, new, C[0:N, 0:N])`. One matrix product over the
box then replaces a matrix-vector product per row. Exact when:

- the loops are parallel, as for any array code: points of the box outside the
  triangle only compute, and their results are dropped;
- each subscript uses at most one vectorized loop and every access is affine and
  exact: over the box, each array dimension then takes the indices the triangle
  itself uses (nothing out of bounds), and no index is read from memory that may
  hold anything outside the triangle;
- every store is a slice, so each point of the box writes its own element (a
  point outside cannot overwrite one inside);
- no value is kept between statements in dictionaries (keyed by loop ranges).

Points outside the triangle compute on whatever the arrays hold there:
floating-point exceptions are ignored under the kernels' errstate, and integer
array operations do not raise.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterable, Sequence
from typing import TypeGuard

import islpy as isl

from polykrnl.codegen.pyast import call
from polykrnl.codegen.statements import NotVectorizable
from polykrnl.codegen.vector_ranges import names_in
from polykrnl.poly import Statement


def unmaskable(statements: Iterable[Statement], loops: Sequence[str]) -> str | None:
    """Why `statements` cannot run over a bounding box of `loops` (the vectorized loops,
    in the order of their axes), or None."""
    for st in statements:
        if st.exports or st.imports:
            return "a value kept between statements"
        axis = {d: loops.index(loop) for d, loop in enumerate(st.dim_loops) if loop in loops}
        for a in st.accesses:
            if a.may or a.approximation or not a.relation.is_single_valued():
                return f"an access of {a.array} that is not affine"
            pma = a.relation.as_pw_multi_aff()
            for o in range(pma.dim(isl.dim_type.out)):
                # the affine functions only (a piece's domain involves every loop)
                used = {
                    axis[d]
                    for _dom, aff in pma.get_pw_aff(o).get_pieces()
                    for d in axis
                    if aff.involves_dims(isl.dim_type.in_, d, 1)
                }
                if len(used) > 1:
                    return f"a subscript of {a.array} that uses two vectorized loops"
    return None


def inside(it: str, start: ast.expr, stop: ast.expr, vectors: set[str]) -> list[ast.expr]:
    """The tests that put the values of iterator `it` (an arange over the box) inside
    [start, stop), for the bounds that use other vectorized iterators."""
    terms: list[ast.expr] = []
    loaded = ast.Name(it, ast.Load())
    if names_in(start) & vectors:
        terms.append(ast.Compare(loaded, [ast.GtE()], [array_bound(start)]))
    if names_in(stop) & vectors:
        terms.append(ast.Compare(loaded, [ast.Lt()], [array_bound(stop)]))
    return terms


def array_bound(e: ast.expr) -> ast.expr:
    """`e` with Python's min and max as np.minimum and np.maximum (its names may be
    arrays)."""

    class Arrays(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            f = node.func
            if isinstance(f, ast.Name) and f.id in ("min", "max") and len(node.args) >= 2:
                fn = "np.minimum" if f.id == "min" else "np.maximum"
                out = node.args[0]
                for a in node.args[1:]:
                    out = call(fn, out, a)
                return out
            return node

    out = Arrays().visit(_copy(e))
    assert isinstance(out, ast.expr)
    return out


def masked_stores(
    body: list[ast.stmt], mask: str, vectors: set[str], dicts: set[str]
) -> list[ast.stmt]:
    """`body` with each store into memory keeping the old values where `mask` is False."""
    out: list[ast.stmt] = []
    where = ast.Name(mask, ast.Load())
    for st in body:
        if isinstance(st, ast.Assign) and all(isinstance(t, ast.Name) for t in st.targets):
            out.append(st)
            continue
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            target = st.targets[0]
        elif isinstance(st, ast.AugAssign):
            target = st.target
        else:
            raise NotVectorizable("a statement masked array code does not cover")
        if not isinstance(target, ast.Subscript) or not _store_into_memory(target, vectors, dicts):
            raise NotVectorizable("a masked store that is not a slice of an array")
        old = _load(target)
        new = st.value
        if isinstance(st, ast.AugAssign):
            new = ast.BinOp(_load(target), st.op, st.value)
        perm = _store_axes(new)
        test: ast.expr = where if perm is None else call("np.transpose", where, perm)
        out.append(ast.Assign([target], call("np.where", test, new, old)))
    return out


def _store_axes(value: ast.expr) -> ast.expr | None:
    """The permutation of a store whose dimensions run across the loops' order: the
    writer stores `np.transpose(np.broadcast_to(value, lengths), axes)` then (see
    StatementWriter.write_to), and the mask, in the loops' order, needs the same."""
    if _numpy_call(value, "transpose") and _numpy_call(value.args[0], "broadcast_to"):
        return _copy(value.args[1])
    return None


def _numpy_call(e: ast.expr, fn: str) -> TypeGuard[ast.Call]:
    """Whether `e` is `np.<fn>(a, b)`."""
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and isinstance(e.func.value, ast.Name)
        and e.func.value.id == "np"
        and e.func.attr == fn
        and len(e.args) == 2
    )


def _store_into_memory(t: ast.Subscript, vectors: set[str], dicts: set[str]) -> bool:
    if not isinstance(t.value, ast.Name) or t.value.id in dicts:
        return False
    index = t.slice.elts if isinstance(t.slice, ast.Tuple) else [t.slice]
    return all(isinstance(x, ast.Slice) or not (names_in(x) & vectors) for x in index)


def _load(t: ast.expr) -> ast.expr:
    assert isinstance(t, ast.Subscript)
    return ast.Subscript(_copy(t.value), _copy(t.slice), ast.Load())


def _copy(e: ast.expr) -> ast.expr:
    return copy.deepcopy(e)
