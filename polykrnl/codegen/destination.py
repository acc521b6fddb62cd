"""Array code that computes a stored value straight into the memory it is stored to.

`out[0:n] = x + y` builds `x + y` in a temporary, then copies it: a second pass over the
data, and a fresh buffer whose pages the kernel faults in on every call. When the value's
last operation is a NumPy ufunc, `np.add(x, y, out=out[0:n])` writes the same elements
with the same values: the ufunc's loop is chosen from its inputs as for the operator, its
result is cast to the destination's type as the assignment casts it (float to a float of
the same or lower precision, round to nearest, both `same_kind`), and NumPy makes the
temporary itself when the destination overlaps an input. The destination must be a view
of the memory: a basic slice is one, and a reshape is written with `copy=False`, which
raises rather than write into a copy.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import numpy as np

from polykrnl.codegen.pyast import call

_OPERATORS: dict[type[ast.operator], str] = {
    ast.Add: "np.add",
    ast.Sub: "np.subtract",
    ast.Mult: "np.multiply",
    ast.Div: "np.divide",
}

#: ufuncs whose loop writes wrong values into a strided `out` from a strided input:
#: NumPy 2.4's float32 negative reads the input as if contiguous (`-x` is right)
_WRONG_WITH_OUT = frozenset({np.negative})

#: the prelude's helpers (numpy_ops/prelude.py) that take `out` as a ufunc does, with
#: their number of operands
OUT_HELPERS = {
    "_maximumf": 2,
    "_minimumf": 2,
    "_maxnumf": 2,
    "_minnumf": 2,
    "_maximumf0": 1,
    "_maxnumf0": 1,
}


def view_reshaped(e: ast.expr, shape: ast.expr) -> ast.expr:
    """`e` (a view) seen with `shape`, never a copy."""
    out = call("np.reshape", e, shape)
    out.keywords = [ast.keyword("copy", ast.Constant(False))]
    return out


@dataclass
class Destinations:
    """The stores the statement writer marked as computable into their destination (float
    memory, a view as target), each kept with its target node: the passes after it
    (fusion folds the stored value in) keep the statement, others replace it (a masked
    store), and a replaced one is left as it is."""

    marked: dict[int, tuple[ast.Assign, ast.expr, np.dtype[np.generic]]] = field(
        default_factory=dict
    )

    def store(self, target: ast.expr, val: ast.expr, dtype: np.dtype[np.generic]) -> ast.Assign:
        """`target = val`, marked when `dtype` is a float type."""
        st = ast.Assign([target], val)
        if dtype.kind == "f":
            self.marked[id(st)] = (st, target, dtype)
        return st

    def rewrite(self, body: list[ast.stmt]) -> list[ast.stmt]:
        """`body` with each marked store whose value ends with a ufunc computed into its
        target (nested blocks included)."""
        out: list[ast.stmt] = []
        for st in body:
            for block in _blocks(st):
                block[:] = self.rewrite(block)
            found = self.marked.get(id(st))
            if found is not None and found[0] is st and st.targets == [found[1]]:
                into = _computed_into(found[1], st.value, found[2])
                if into is not None:
                    out.append(into)
                    continue
            out.append(st)
        return out


def _computed_into(target: ast.expr, val: ast.expr, dtype: np.dtype[np.generic]) -> ast.stmt | None:
    """`val` written by its last ufunc into `target`'s view; None when `val` does not end
    with a ufunc."""
    if (
        isinstance(val, ast.Call)
        and isinstance(val.func, ast.Attribute)
        and val.func.attr == "astype"
        and len(val.args) == 1
        and not val.keywords
        and _is_dtype(val.args[0], dtype)
    ):
        # Computing in another precision and rounding to the destination's is what the
        # ufunc's output cast does (a float64 exp then float32, as the interpreter does).
        val = val.func.value
    ufunc = _ufunc_call(val)
    if ufunc is None:
        return None
    fn, args, keywords = ufunc
    dest = _loaded(target)
    out = call(fn, *args)
    out.keywords = [*keywords, ast.keyword("out", dest)]
    return ast.Expr(out)


def _loaded(target: ast.expr) -> ast.expr:
    """The view a store's target writes: `a[i:j]` read as a value, `v[...]` as `v`."""
    assert isinstance(target, ast.Subscript)
    if isinstance(target.slice, ast.Constant) and target.slice.value is Ellipsis:
        return target.value
    return ast.Subscript(target.value, target.slice, ast.Load())


def _blocks(st: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(st, ast.For | ast.While | ast.If):
        return [st.body, st.orelse]
    if isinstance(st, ast.With):
        return [st.body]
    return []


def _ufunc_call(val: ast.expr) -> tuple[str, list[ast.expr], list[ast.keyword]] | None:
    """The ufunc, its arguments and keywords of `val`, when it is one call of a ufunc."""
    if isinstance(val, ast.BinOp) and type(val.op) in _OPERATORS:
        return _OPERATORS[type(val.op)], [val.left, val.right], []
    if (
        isinstance(val, ast.Call)
        and isinstance(val.func, ast.Name)
        and len(val.args) == OUT_HELPERS.get(val.func.id, -1)
        and not val.keywords
    ):
        return val.func.id, list(val.args), []
    if not (
        isinstance(val, ast.Call)
        and isinstance(val.func, ast.Attribute)
        and isinstance(val.func.value, ast.Name)
        and val.func.value.id == "np"
    ):
        return None
    fn = getattr(np, val.func.attr, None)
    if not isinstance(fn, np.ufunc) or fn.nout != 1 or len(val.args) != fn.nin:
        return None
    if fn.signature is not None or fn in _WRONG_WITH_OUT:
        return None
    if any(k.arg != "dtype" for k in val.keywords):
        return None
    return f"np.{val.func.attr}", list(val.args), list(val.keywords)


def _is_dtype(e: ast.expr, dtype: np.dtype[np.generic]) -> bool:
    """Whether `e` is `np.<dtype's name>`."""
    return (
        isinstance(e, ast.Attribute)
        and isinstance(e.value, ast.Name)
        and e.value.id == "np"
        and e.attr == dtype.name
    )
