"""Float min/max reductions as integer ones, which LLVM vectorizes (Numba kernels).

Softmax's first nest reduces each row with `arith.maxnumf`: the larger value, a NaN
ignored, +0.0 above -0.0 (the helper `_maxnumf`). The loop carries that value through
compares and branches, which LLVM does not vectorize (3.4 of softmax's 13 ms), and
LLVM's own float max reductions need fast-math flags that would give up the signed
zeros and NaNs. But each of `maxnumf`, `minnumf`, `maximumf` and `minimumf`
is the max or min over a total order of the floats: -inf < ... < -0.0 < +0.0 < ... <
+inf, with a NaN either an identity (maxnumf, minnumf: the number wins) or an absorbing
element (maximumf, minimumf: the NaN wins), put at the bottom or the top of the order.
Read as integers, a float's bits with the magnitude bits of negative values flipped
are in exactly that order (`_pk_key32`), and the two extreme integers (INT_MIN and
INT_MAX, both the bits of NaNs after the flip) serve as the NaN's place. A max or min
of integers is associative and commutative to LLVM, so the loop vectorizes, and the
value after the loop is the same float as the chain of helper calls computes, in any
order of its operands. (A NaN result is the canonical NaN of the key, not necessarily
the operand's NaN payload; NaN payloads are no part of MLIR's arith semantics.)

:func:`use_minmax_keys` rewrites an innermost straight-line loop (loop_shape.py) whose
every carried value c is such a chain:

    m = c                                  # copies of c, each assigned once
    c = np.float32(..(_maxnumf(m, v))..)   # c's one assignment: casts of one helper call

where v reads neither c nor a copy, no other statement reads c or a copy, and the
copies are read nowhere outside the loop. The outer cast names the element type
(float32 or float64); v is cast to it before its key is taken, which is exact since
rounding to it keeps the order (float32 values are unchanged by it). The loop becomes

    c_key = _pk_key32(c, NAN)              # before the loop
    c_key = max(c_key, _pk_key32(v, NAN))  # in the loop, the copies removed
    c = _pk_float32(c_key)                 # after the loop

A row max of 4096x1024 float32 (Intel Xeon VM, benchmarks/bench_numba_rewrites.py): 4.1
ms with the helpers, 0.6 with keys; NumPy's `x.max(axis=1)` takes 0.8.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from polykrnl.codegen.statements import Names
from polykrnl.targets.numba.loop_shape import (
    carried,
    names,
    read_outside,
    replace_loops,
    straight_line,
)

#: the helper's name among a kernel's helpers (it defines the keys of both widths)
NAME = "_pk_keys"

# helper -> (the reduction of the keys, whether a NaN goes to the top of the order)
_OPS: dict[str, tuple[str, bool]] = {
    "_maxnumf": ("max", False),
    "_minnumf": ("min", True),
    "_maximumf": ("max", True),
    "_minimumf": ("min", False),
}

_WIDTHS = {"float32": (32, "int32"), "float64": (64, "int64")}


def source(cache: bool) -> str:
    """The decorated helpers, as a kernel module carries them (after bits.SOURCE)."""
    out = []
    for dtype, (width, ints) in _WIDTHS.items():
        low = f"np.{ints}({(1 << (width - 1)) - 1})"
        shift = f"np.{ints}({width - 1})"
        out.append(f'''
@njit(cache={cache}, error_model="numpy", inline="always")
def _pk_key{width}(x, nan):
    """A {dtype} as an {ints} in the floats' total order, a NaN as `nan` (minmax_keys.py)."""
    b = _pk_to_bits(np.{dtype}(x))
    return nan if x != x else np.{ints}(b ^ ((b >> {shift}) & {low}))


@njit(cache={cache}, error_model="numpy", inline="always")
def _pk_{dtype}(k):
    """The {dtype} of a key (minmax_keys.py); a NaN for a NaN's place."""
    return _pk_from_bits(np.{ints}(k ^ ((k >> {shift}) & {low})))
''')
    return "".join(out)


@dataclass(frozen=True)
class _Chain:
    name: str
    dtype: str
    reduce: str  # "max" or "min"
    nan_top: bool
    other: ast.expr  # the operand that is not the chain's value
    update: ast.Assign
    copies: tuple[ast.Assign, ...]

    def nan_key(self) -> ast.expr:
        width, ints = _WIDTHS[self.dtype]
        value = (1 << (width - 1)) - 1 if self.nan_top else -(1 << (width - 1))
        return ast.parse(f"np.{ints}({value})", mode="eval").body

    def key(self, value: ast.expr) -> ast.expr:
        width, _ = _WIDTHS[self.dtype]
        return ast.Call(ast.Name(f"_pk_key{width}", ast.Load()), [value, self.nan_key()], [])


def use_minmax_keys(fn: ast.FunctionDef) -> bool:
    """Rewrite `fn`'s min/max chains to integer keys (see the module); whether any was."""

    taken = Names(names(fn))  # the new keys' names are added as they are taken

    def rewrite(loop: ast.For) -> list[ast.stmt] | None:
        chains = _chains(loop, fn)
        return _rewritten(loop, chains, taken) if chains else None

    return replace_loops(fn, rewrite) > 0


def _chains(loop: ast.For, fn: ast.FunctionDef) -> list[_Chain] | None:
    """The loop's min/max chains, if every value it carries is one."""
    if not straight_line(loop):
        return None
    body: list[ast.Assign] = loop.body  # type: ignore[assignment]
    values = carried(body)
    out = [_chain(c, body) for c in sorted(values)]
    if not values or any(c is None for c in out):
        return None
    chains = [c for c in out if c is not None]
    chain_names = set().union(*({c.name} | {_target(s) for s in c.copies} for c in chains))
    outside = read_outside(fn, loop)
    for c in chains:
        if names(c.other) & chain_names or any(_target(s) in outside for s in c.copies):
            return None
    own = {id(s) for c in chains for s in (c.update, *c.copies)}
    if any(names(st) & chain_names for st in body if id(st) not in own):
        return None
    return chains


def _chain(name: str, body: list[ast.Assign]) -> _Chain | None:
    updates = [st for st in body if _target(st) == name]
    if len(updates) != 1:
        return None
    (update,) = updates
    before = body[: body.index(update)]
    copies = tuple(st for st in before if isinstance(st.value, ast.Name) and st.value.id == name)
    copy_names = [_target(st) for st in copies]
    if any(sum(_target(st) == c for st in body) != 1 for c in copy_names):
        return None
    dtype, call = _unwrap(update.value)
    if dtype not in _WIDTHS or not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id in _OPS
        and len(call.args) == 2
        and not call.keywords
    ):
        return None
    own = {name, *copy_names}
    a, b = call.args
    reads = [isinstance(e, ast.Name) and e.id in own for e in (a, b)]
    if reads.count(True) != 1:
        return None
    reduce, nan_top = _OPS[call.func.id]
    other = b if reads[0] else a
    return _Chain(name, dtype, reduce, nan_top, other, update, copies)


def _unwrap(e: ast.expr) -> tuple[str, ast.expr]:
    """The outermost cast's type and what the casts wrap: `np.float32(np.float32(x))`
    -> ("float32", x); ("", e) if e is no cast."""
    dtype = ""
    while (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and isinstance(e.func.value, ast.Name)
        and e.func.value.id == "np"
        and e.func.attr in _WIDTHS
        and len(e.args) == 1
    ):
        dtype = dtype or e.func.attr
        if e.func.attr != dtype:
            return "", e  # a float64 value rounded to float32 first: not one type
        e = e.args[0]
    return dtype, e


def _rewritten(loop: ast.For, chains: list[_Chain], taken: Names) -> list[ast.stmt]:
    before: list[ast.stmt] = []
    after: list[ast.stmt] = []
    drop = {id(s) for c in chains for s in c.copies}
    replace: dict[int, ast.stmt] = {}
    for c in chains:
        key = taken.fresh(f"{c.name}_key")
        before.append(_assign(key, c.key(ast.Name(c.name, ast.Load()))))
        cast = ast.parse(f"np.{c.dtype}(0)", mode="eval").body
        assert isinstance(cast, ast.Call)
        cast.args = [c.other]
        both = [ast.Name(key, ast.Load()), c.key(cast)]
        replace[id(c.update)] = _assign(key, ast.Call(ast.Name(c.reduce, ast.Load()), both, []))
        back = ast.Call(ast.Name(f"_pk_{c.dtype}", ast.Load()), [ast.Name(key, ast.Load())], [])
        after.append(_assign(c.name, back))
    loop.body = [replace.get(id(st), st) for st in loop.body if id(st) not in drop]
    return [*before, loop, *after]


def _assign(name: str, value: ast.expr) -> ast.Assign:
    return ast.Assign([ast.Name(name, ast.Store())], value, lineno=0)


def _target(st: ast.Assign) -> str:
    t = st.targets[0]
    return t.id if isinstance(t, ast.Name) else ""
