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
import copy
from collections import Counter
from collections.abc import Callable
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


#: the shape of an array value: the names of the vectorized loops' lengths, in axis
#: order (values of one vectorized band with every axis have this shape)
Shape = tuple[str, ...]


@dataclass(frozen=True)
class ArrayValue:
    """A value the statement writer bound: the node of its last op, a NumPy ufunc whose
    result is a new array of `dtype` elements, varying along every vectorized axis."""

    node: ast.expr
    dtype: np.dtype[np.generic]
    shape: Shape


@dataclass
class Destinations:
    """The stores the statement writer marked as computable into their destination (float
    memory, a view as target), each kept with its target node: the passes after it
    (fusion folds the stored value in) keep the statement, others replace it (a masked
    store), and a replaced one is left as it is.

    The array values it bound let two more temporaries go (a 16 MB one costs its page
    faults on every call): a value whose last op is computed into the destination may
    have its first operand computed there too, op after op (`np.subtract(x, m, out=o);
    np.divide(o, sd, out=o)`), and a temporary read only by one op of the same shape
    becomes that op's output (`np.multiply(d, d, out=d)`), as NumPy's own temporary
    elision does for an unnamed operand."""

    marked: dict[int, tuple[ast.Assign, ast.expr, np.dtype[np.generic], Shape | None]] = field(
        default_factory=dict
    )
    values: dict[int, ArrayValue] = field(default_factory=dict)
    # the locals bound to such values (never a view of memory)
    fresh_locals: dict[str, ArrayValue] = field(default_factory=dict)

    def store(
        self,
        target: ast.expr,
        val: ast.expr,
        dtype: np.dtype[np.generic],
        shape: Shape | None = None,
    ) -> ast.Assign:
        """`target = val`, marked when `dtype` is a float type; `shape` is the target's
        when it is the vectorized loops' (its operands may then be computed into it)."""
        st = ast.Assign([target], val)
        if dtype.kind == "f":
            self.marked[id(st)] = (st, target, dtype, shape)
        return st

    def value(self, local: str, e: ast.expr, dtype: np.dtype[np.generic], shape: Shape) -> None:
        """Note that `local = e` binds a new array of `shape` and `dtype` elements (kept
        only when `e` is a ufunc's result, in float32 or float64)."""
        if dtype in (np.dtype(np.float32), np.dtype(np.float64)) and _plain_ufunc(e):
            found = ArrayValue(e, dtype, shape)
            self.values[id(e)] = found
            self.fresh_locals[local] = found

    def rewrite(self, body: list[ast.stmt], fresh: Callable[[str], str]) -> list[ast.stmt]:
        """`body` with each marked store whose value ends with a ufunc computed into its
        target, then each temporary read by one op of its shape reused as its output
        (nested blocks included); `fresh` names the operands computed first."""
        body = self._into_destinations(body, fresh)
        uses = Counter(
            n.id
            for st in body
            for n in ast.walk(st)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        )
        self._reuse_temporaries(body, uses)
        return body

    def _into_destinations(
        self, body: list[ast.stmt], fresh: Callable[[str], str]
    ) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for st in body:
            for block in _blocks(st):
                block[:] = self._into_destinations(block, fresh)
            found = self.marked.get(id(st))
            if found is not None and found[0] is st and st.targets == [found[1]]:
                _, target, dtype, shape = found
                into = self._computed_into(target, st.value, dtype, shape, fresh)
                if into is not None:
                    out += into
                    continue
            out.append(st)
        return out

    def _computed_into(
        self,
        target: ast.expr,
        val: ast.expr,
        dtype: np.dtype[np.generic],
        shape: Shape | None,
        fresh: Callable[[str], str],
    ) -> list[ast.stmt] | None:
        """`val` written by its last ufunc into `target`'s view (after the statements
        that compute an operand there first); None when `val` does not end with a
        ufunc."""
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
        before: list[ast.stmt] = []
        k = self._chained(args, dtype, shape) if shape is not None else None
        if k is not None:
            # The other operands are read before the destination is written: each is a
            # constant or a new array (computed first when it is an expression).
            hoisted = [(j, a) for j, a in enumerate(args) if j != k and not self._apart(a)]
            if all(_ufunc_call(a) is not None for _, a in hoisted):
                first = self._computed_into(target, args[k], dtype, shape, fresh)
                assert first is not None
                args = list(args)
                for j, a in hoisted:
                    local = fresh("t")
                    before.append(ast.Assign([ast.Name(local, ast.Store())], a))
                    args[j] = ast.Name(local, ast.Load())
                before += first
                args[k] = copy.deepcopy(_loaded(target))
        out = call(fn, *args)
        out.keywords = [*keywords, ast.keyword("out", _loaded(target))]
        return [*before, ast.Expr(out)]

    def _chained(
        self, args: list[ast.expr], dtype: np.dtype[np.generic], shape: Shape | None
    ) -> int | None:
        """The operand that may be computed into the destination first: a ufunc's new
        array of the destination's shape and element type (so the op reads the same
        values from the destination as from the temporary)."""
        for k, a in enumerate(args):
            found = self.values.get(id(a))
            if (
                found is not None
                and found.node is a
                and (found.dtype, found.shape)
                == (
                    dtype,
                    shape,
                )
            ):
                return k
        return None

    def _apart(self, e: ast.expr) -> bool:
        """Whether `e` never reads memory: constants, and the locals bound to new arrays."""
        if isinstance(e, ast.Name):
            return e.id in self.fresh_locals
        return not any(
            isinstance(n, ast.Subscript) or (isinstance(n, ast.Name) and n.id != "np")
            for n in ast.walk(e)
        )

    def _reuse_temporaries(self, body: list[ast.stmt], uses: Counter[str]) -> None:
        """Each temporary all of whose reads are operands of one op of its shape, in the
        next statement of its block that reads it, becomes that op's output."""
        for i, st in enumerate(body):
            for block in _blocks(st):
                self._reuse_temporaries(block, uses)
            if not (
                isinstance(st, ast.Assign)
                and len(st.targets) == 1
                and isinstance(st.targets[0], ast.Name)
            ):
                continue
            local = st.targets[0].id
            found = self.fresh_locals.get(local)
            if found is None or found.node is not st.value:
                continue
            reader = next((r for r in body[i + 1 :] if _reads(r, local)), None)
            if reader is None or _blocks(reader) or isinstance(reader, ast.FunctionDef):
                continue  # a loop would read the temporary again after it is overwritten
            _ReuseOutput(self, local, found, uses[local]).visit(reader)

    def reusable(self, node: ast.expr, local: str, found: ArrayValue, count: int) -> bool:
        """Whether `node` is an op of `found`'s shape and type reading `local` as `count`
        of its operands."""
        op = self.values.get(id(node))
        if op is None or op.node is not node or (op.dtype, op.shape) != (found.dtype, found.shape):
            return False
        ufunc = _ufunc_call(node)
        if ufunc is None or ufunc[2]:
            return False
        return sum(isinstance(a, ast.Name) and a.id == local for a in ufunc[1]) == count


class _ReuseOutput(ast.NodeTransformer):
    """The op that reads the temporary `local` as all its `count` reads, given `local` as
    its output."""

    def __init__(self, dests: Destinations, local: str, found: ArrayValue, count: int) -> None:
        self.dests, self.local, self.found, self.count = dests, local, found, count
        self.done = False

    def visit(self, node: ast.AST) -> ast.AST:
        if (
            not self.done
            and isinstance(node, ast.expr)
            and self.dests.reusable(node, self.local, self.found, self.count)
        ):
            ufunc = _ufunc_call(node)
            assert ufunc is not None
            fn, args, _ = ufunc
            out = call(fn, *args)
            out.keywords = [ast.keyword("out", ast.Name(self.local, ast.Load()))]
            self.done = True
            return out
        return super().visit(node)


def _reads(st: ast.stmt, local: str) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == local and isinstance(n.ctx, ast.Load)
        for n in ast.walk(st)
    )


def _plain_ufunc(e: ast.expr) -> bool:
    """Whether `e` is one ufunc's call without keywords (its result a new array)."""
    ufunc = _ufunc_call(e)
    return ufunc is not None and not ufunc[2]


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
