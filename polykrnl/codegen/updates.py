"""Statements that update an array in place: reductions as NumPy reductions, contractions as
`@`/einsum, chains of in-place updates."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import AnyFloat, IntegerType, VectorType
from xdsl.ir import Operation, OpResult, SSAValue

from polykrnl.codegen.pyast import const, same_tree
from polykrnl.codegen.pyast import name as name_
from polykrnl.codegen.statements import StatementWriter
from polykrnl.dialect import krnl as k
from polykrnl.poly import Statement


def as_matmul(arrays: list[ast.expr], specs: list[str], out: str) -> ast.expr | None:
    """Two operands contracting one index into `out`, as `x @ y` (BLAS, no einsum overhead)."""
    if len(arrays) != 2 or any(len(sp) > 2 for sp in specs):
        return None
    shared = set(specs[0]) & set(specs[1])
    if len(shared) != 1 or shared & set(out) or len(specs[0]) + len(specs[1]) - 2 != len(out):
        return None
    (c,) = shared
    for first, second in ((0, 1), (1, 0)):
        a, b = specs[first], specs[second]
        xa, xb = arrays[first], arrays[second]
        if len(a) == 2 and a[0] == c:
            a, xa = a[::-1], ast.Attribute(xa, "T", ast.Load())
        if len(b) == 2 and b[1] == c:
            b, xb = b[::-1], ast.Attribute(xb, "T", ast.Load())
        if a[-1] == c and b[0] == c and a[:-1] + b[1:] == out:
            return ast.BinOp(xa, ast.MatMult(), xb)
    return None


def is_load(op: Operation) -> bool:
    return isinstance(op, k.LoadOp | memref.LoadOp)


def index_of(idx: list[ast.expr]) -> ast.expr:
    return ast.Tuple(idx, ast.Load()) if len(idx) != 1 else idx[0]


@dataclass(frozen=True)
class Update:
    """A statement `X[f] = X[f] op value` (or `X[f] - value`)."""

    store: Operation  # the store, or the krnl.yield of an iter_args update
    old: Operation | None  # the load of X[f] (None for an iter_args update)
    kind: str  # add, sub, mul, max, min, fmax, fmin
    value: SSAValue
    exact: bool  # combining in another order gives the same values
    identity: ast.expr | None  # np.max/np.min's `initial`, so that no iteration is fine
    carried: SSAValue | None = None  # the iter_args value a krnl.yield updates


_UPDATE_OPS = {
    "arith.addf": "add",
    "arith.addi": "add",
    "arith.subf": "sub",
    "arith.subi": "sub",
    "arith.mulf": "mul",
    "arith.muli": "mul",
    "arith.maximumf": "max",
    "arith.minimumf": "min",
    "arith.maxsi": "max",
    "arith.minsi": "min",
    "arith.maxnumf": "fmax",
    "arith.minnumf": "fmin",
}
REDUCE = {
    "add": "np.sum",
    "sub": "np.sum",
    "mul": "np.prod",
    "max": "np.max",
    "min": "np.min",
    "fmax": "np.fmax.reduce",
    "fmin": "np.fmin.reduce",
}
COMBINE: dict[str, ast.operator | str] = {
    "add": ast.Add(),
    "sub": ast.Sub(),
    "mul": ast.Mult(),
    "max": "np.maximum",
    "min": "np.minimum",
    "fmax": "np.fmax",
    "fmin": "np.fmin",
}


def update_of(s: Statement) -> Update | None:
    """The reduction form of `s`: it stores `old op e` into the element `old` is from,
    or yields `old op e` for the iter_args value `old` (one value carried)."""
    store = s.anchor
    carried: SSAValue | None = None
    if isinstance(store, k.YieldOp):
        if s.iterate is None or len(store.operands) != 1 or len(s.iterate.iter_args) != 1:
            return None
        carried = s.iterate.iter_args[0]
    elif not isinstance(store, k.StoreOp | memref.StoreOp):
        return None
    val = store.operands[0]
    if not isinstance(val, OpResult) or val.op.name not in _UPDATE_OPS:
        return None
    op = val.op
    kind = _UPDATE_OPS[op.name]
    pairs = [(op.operands[0], op.operands[1])]
    if kind != "sub":
        pairs.append((op.operands[1], op.operands[0]))
    for x, e in pairs:
        if carried is not None:
            if x is not carried:
                continue
            old = None
        else:
            if not (isinstance(x, OpResult) and is_load(x.op)):
                continue
            if x.op.operands[0] is not store.operands[1]:
                continue
            old = x.op
        # A vector accumulator (iter_args of a SIMD loop) combines lanes of its element type.
        t = val.type.element_type if isinstance(val.type, VectorType) else val.type
        is_float = isinstance(t, AnyFloat)
        identity: ast.expr | None = None
        if kind in ("max", "min"):
            if is_float:
                inf = ast.Attribute(name_("np"), "inf", ast.Load())
                identity = ast.UnaryOp(ast.USub(), inf) if kind == "max" else inf
            else:
                bits = t.width.data if isinstance(t, IntegerType) else 64
                identity = const(-(2 ** (bits - 1)) if kind == "max" else 2 ** (bits - 1) - 1)
        elif kind in ("fmax", "fmin"):
            identity = ast.Attribute(name_("np"), "nan", ast.Load())
        # Integer sums and products wrap the same in any order; max and min pick
        # the same value (of +0.0 and -0.0, possibly the other one).
        exact = not is_float or kind not in ("add", "sub", "mul")
        return Update(store, old, kind, e, exact, identity, carried)
    return None


def dotted(path: str, *args: ast.expr) -> ast.expr:
    """`np.a.b` as an expression, or a call of it with `args`."""
    parts = path.split(".")
    e: ast.expr = name_(parts[0])
    for p in parts[1:]:
        e = ast.Attribute(e, p, ast.Load())
    return ast.Call(e, list(args), []) if args else e


def product_factors(v: SSAValue) -> list[SSAValue]:
    if isinstance(v, OpResult) and isinstance(v.op, arith.MulfOp | arith.MuliOp):
        return [*product_factors(v.op.operands[0]), *product_factors(v.op.operands[1])]
    return [v]


# Helpers of arith.maxnumf / minnumf and the NumPy function that updates in place with
# the interpreter's semantics (interpreter/arith.py: np.fmax / np.fmin, a NaN ignored);
# a tie of +0.0 and -0.0 stays the exception numpy_ops documents (NumPy's array loops
# and the interpreter's scalar calls may pick different zeros).
IN_PLACE_CALLS = {"_maxnumf": "np.fmax", "_minnumf": "np.fmin"}


def in_place(body: list[ast.stmt]) -> list[ast.stmt]:
    """`x = X[s]; y1 = x + e1; y2 = y1 * e2; X[s] = y2` as `X[s] += e1; X[s] *= e2`,
    and `X[s] = _maxnumf(X[s], e)` as `np.fmax(X[s], e, out=X[s])` (a window loop of
    pooling: one pass over the output per window element, as a hand-written pool).

    No temporary array and no copy, and the same operations in the same order
    (IEEE + and * commute). Only when each of x, y1, ... is used once, by the
    next step, and nothing between the load and the store reads X (or a value
    read from X before): the updates then happen where the steps were, before
    the store, and nothing sees X change earlier. NumPy evaluates `e` first and
    copies where it overlaps X[s].
    """
    if not body or not isinstance(body[-1], ast.Assign):
        return body
    store = body[-1]
    target = store.targets[0]
    if not (isinstance(target, ast.Subscript) and isinstance(store.value, ast.Name)):
        return body
    where = {
        st.targets[0].id: i
        for i, st in enumerate(body)
        if isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Name)
    }
    wanted = ast.Subscript(target.value, target.slice, ast.Load())

    # Walk back from the stored value: y_k = y_(k-1) op e_k, down to the load. A step's
    # operation is an operator, or a NumPy function with the old value first or second.
    Step = tuple[int, ast.operator | tuple[str, bool], ast.expr]

    def walk(current: str) -> tuple[int, list[Step]] | None:
        i = where.get(current)
        if i is None:
            return None
        v = body[i].value  # type: ignore[attr-defined]
        if same_tree(v, wanted):
            return i, []
        sides: list[tuple[ast.expr, ast.expr, ast.operator | tuple[str, bool]]] = []
        if isinstance(v, ast.BinOp) and isinstance(v.op, ast.Add | ast.Mult | ast.Sub | ast.Div):
            sides.append((v.left, v.right, v.op))
            if isinstance(v.op, ast.Add | ast.Mult):
                sides.append((v.right, v.left, v.op))
        elif (
            isinstance(v, ast.Call)
            and isinstance(v.func, ast.Name)
            and v.func.id in IN_PLACE_CALLS
            and len(v.args) == 2
            and not v.keywords
        ):
            fn = IN_PLACE_CALLS[v.func.id]
            sides += [(v.args[0], v.args[1], (fn, True)), (v.args[1], v.args[0], (fn, False))]
        for prev, rest, how in sides:
            if isinstance(prev, ast.Name) and where.get(prev.id, i) < i:
                found = walk(prev.id)
                if found is not None:
                    return found[0], [*found[1], (i, how, rest)]
        return None

    found = walk(store.value.id)
    if found is None or not found[1]:
        return body
    load_at, steps = found
    chain_at = {i for i, _, _ in steps} | {load_at}
    temps = {name for name, i in where.items() if i in chain_at}
    # Each temporary used once (by the next step or the store), nowhere else.
    uses = [n.id for st in body for n in ast.walk(st) if isinstance(n, ast.Name) and n.id in temps]
    if any(uses.count(t) != 2 for t in temps):  # its definition and its one use
        return body
    # Values that are X or views of it: nothing after the load may read them.
    array = target.value
    tainted: set[str] = set()
    for i, st in enumerate(body[:-1]):
        reads_x = any(
            same_tree(n, array) or (isinstance(n, ast.Name) and n.id in tainted)
            for n in ast.walk(st.value if isinstance(st, ast.Assign) else st)
        )
        if i > load_at and i not in chain_at and reads_x:
            return body
        if (
            isinstance(st, ast.Assign)
            and isinstance(st.targets[0], ast.Name)
            and reads_x
            and i != load_at
        ):
            tainted.add(st.targets[0].id)
    for _, _, rest in steps:
        if any(isinstance(n, ast.Name) and n.id in tainted for n in ast.walk(rest)) or any(
            same_tree(n, array) for n in ast.walk(rest)
        ):
            return body
    updates = {i: _updated_in_place(target, how, rest) for i, how, rest in steps}
    out: list[ast.stmt] = []
    for i, st in enumerate(body[:-1]):
        if i == load_at:
            continue
        out.append(updates.get(i, st))
    return out


def _updated_in_place(
    target: ast.Subscript, how: ast.operator | tuple[str, bool], rest: ast.expr
) -> ast.stmt:
    """`X[s] op= e`, or `fn(X[s], e, out=X[s])` (the old value where it was)."""
    if isinstance(how, ast.operator):
        return ast.AugAssign(target, how, rest)
    fn, old_first = how
    old = ast.Subscript(target.value, target.slice, ast.Load())
    args = [old, rest] if old_first else [rest, old]
    e = dotted(fn, *args)
    assert isinstance(e, ast.Call)
    e.keywords = [ast.keyword("out", ast.Subscript(target.value, target.slice, ast.Load()))]
    return ast.Expr(e)


def contraction(w: StatementWriter, value: SSAValue, rank: int, n_par: int) -> ast.expr | None:
    """The sum over the reduction axes of a product of loads, as `@` or np.einsum."""
    factors = product_factors(value)
    letters = "abcdefghijklmnopqrstuvwxyz"
    arrays: list[ast.expr] = []
    specs: list[str] = []
    scalars: list[ast.expr] = []
    for f in factors:
        if isinstance(f.owner, Operation) and is_load(f.owner):
            op = f.owner
            mem = w.value(op.operands[0])
            sliced = w.slices(w.private_subs(mem, [w.value(x) for x in op.operands[1:]]))
            if sliced is None:
                return None
            idx, axes = sliced
            arrays.append(ast.Subscript(mem, index_of(idx), ast.Load()))
            specs.append("".join(letters[a] for a in axes))
        else:
            v = w.value(f)
            if w.vector_names(v):
                return None  # a factor computed from the loops: np.sum of the product
            scalars.append(v)
    if len(arrays) < 2:
        return None  # one array: np.sum says it better than np.einsum
    # Every loop must index some operand: einsum sums a loop no operand uses
    # once, where the loop adds the same product once per iteration.
    if set(range(rank)) - {letters.index(c) for sp in specs for c in sp}:
        return None
    total: ast.expr | None = as_matmul(arrays, specs, letters[:n_par])
    if total is None:
        spec = ",".join(specs) + "->" + letters[:n_par]
        total = ast.Call(
            dotted("np.einsum"),
            [ast.Constant(spec), *arrays],
            [ast.keyword("optimize", ast.Constant(True))],
        )
    for c in scalars:
        total = ast.BinOp(c, ast.Mult(), total)
    return total
