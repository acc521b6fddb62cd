"""math.exp of a float32 value in arithmetic LLVM can vectorize (Numba kernels).

A float32 `math.exp` is computed in float64 and rounded once (numpy_ops), which Numba
compiles to a call of the C library's `exp` per element: LLVM has no vector form of
that call, so a loop of exps stays scalar. Softmax's exps ran at 5 ns each (Intel Xeon,
glibc 2.36); `_pk_exp32` (:func:`source`) is arithmetic and selects only, which LLVM
vectorizes: 4M exps in 3.8 ms against 21 ms for the C library's (the twelfth session's
form; the eleventh's, with three tables LLVM gathered from, took 8.2).

`_pk_exp32(x)` takes a float32 value and returns a float64 whose rounding to float32
is that of NumPy's `np.exp(np.float64(x))`, for every one of the 2**32 float32 values
(NaNs, infinities and subnormals included): checked exhaustively on x86-64 against
glibc's `exp` and NumPy's (``python tools/check_vector_exp.py``, 100 s on 2 cores; the
tests check a sample). The float64 itself may differ from the C library's in its last
bit; only its float32 rounding is used. How: x = k ln2 + r with k = round(x / ln2)
(adding and subtracting 1.5 * 2**52, which leaves k in the sum's low bits) and ln2 in
two parts (the first with 20 zero low bits, so that k times it is exact), |r| <= ln2/2;
exp(r) by its Taylor polynomial of degree 13 (error below 5e-18) in fused
multiply-adds; 2**k from its exponent bits; the inputs beyond [-110, 89] (0 or inf once
rounded) by selects, so that no branch is left. The fused multiply-add and the bits are
intrinsics (bits.py): where Numba's target has no FMA instruction the exps keep the C
library's (a call of `fma` per step would be slower).

Which exps use it: :func:`use_vector_exp` rewrites `np.exp(np.float64(np.float32(e)))`,
and `np.exp(np.float64(v))` where the loop assigns v once from a float32 array's element,
in an innermost loop whose body is straight-line assignments with no value carried from
one iteration to the next (a loop LLVM can vectorize). In a loop that carries a sum,
LLVM vectorizes nothing, so those keep `np.exp` (fission.py first moves such a sum out
of the loop of its exps where it can).
"""

from __future__ import annotations

import ast
import functools
import math
import struct
from collections.abc import Mapping
from decimal import Decimal, localcontext

from polykrnl.targets.numba import bits
from polykrnl.targets.numba.aliases import Root
from polykrnl.targets.numba.loop_shape import carried, straight_line

#: the helper's name among a kernel's helpers
NAME = "_pk_exp32"

#: the degree of the Taylor polynomial of exp(r) - 1 on |r| <= ln2/2 (error below 5e-18)
DEGREE = 13

# 1.5 * 2**52: x + MAGIC rounds x to an integer, kept in the low bits of the sum's bits
MAGIC = 6755399441055744.0


@functools.cache  # once per process, not per kernel (decimals)
def _parts() -> tuple[float, float, float]:
    """1/ln2, and ln2 in two parts (see the module)."""
    with localcontext() as ctx:
        ctx.prec = 60
        ln2 = Decimal(2).ln()
        (bits,) = struct.unpack("<Q", struct.pack("<d", float(ln2)))
        (hi,) = struct.unpack("<d", struct.pack("<Q", bits & ~((1 << 20) - 1)))
        return float(1 / ln2), float(hi), float(ln2 - Decimal(hi))


def source(cache: bool) -> str:
    """The decorated helper, as a kernel module carries it (after bits.SOURCE)."""
    inverse, hi, lo = _parts()
    horner = f"p = {1 / math.factorial(DEGREE)!r}\n"
    for n in range(DEGREE - 1, 0, -1):
        horner += f"    p = _pk_fma(r, p, {1 / math.factorial(n)!r})\n"
    return f'''
@njit(cache={cache}, error_model="numpy", inline="always")
def {NAME}(x):
    """np.exp(np.float64(x)) for a float32 x, as float32 rounds it (vector_exp.py)."""
    d = np.float64(x)
    c = d if d > -110.0 else -110.0  # NaN too: no exponent from a NaN below
    c = c if c < 90.0 else 90.0
    t = c * {inverse!r} + {MAGIC!r}
    kf = t - {MAGIC!r}
    r = (c - kf * {hi!r}) - kf * {lo!r}
    {horner.rstrip()}
    k = _pk_to_bits(t) - _pk_to_bits({MAGIC!r})
    y = _pk_fma(r, p, 1.0) * _pk_from_bits((k + 1023) << 52)
    y = np.inf if d > 89.0 else y
    y = 0.0 if d < -110.0 else y
    return d if d != d else y
'''


def use_vector_exp(fn: ast.FunctionDef, roots: Mapping[str, Root] | None = None) -> bool:
    """Rewrite the float32 exps of `fn`'s vectorizable loops to `_pk_exp32` (see the
    module); whether any was. With `roots` (aliases.py), an exp of a name the loop loads
    from a float32 array is one too."""
    used = False
    if not bits.fma_native():
        return False  # `_pk_fma` would be a call of the C library's fma: scalar, slow
    for loop in ast.walk(fn):
        if isinstance(loop, ast.For) and straight_line(loop) and not carried(loop.body):
            narrow = _float32_names(loop.body, roots or {})
            for st in loop.body:
                rewriter = _Exp32(narrow)
                rewriter.visit(st)
                used = used or rewriter.used
    return used


def _float32_names(body: list[ast.stmt], roots: Mapping[str, Root]) -> set[str]:
    """The names `body` assigns once, each a float32 load or a float32 cast."""
    targets = [
        n.id
        for st in body
        for n in ast.walk(st)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    ]
    out: set[str] = set()
    for st in body:
        if not (isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Name)):
            continue
        name, value = st.targets[0].id, st.value
        loaded = (
            isinstance(value, ast.Subscript)
            and isinstance(value.value, ast.Name)
            and value.value.id in roots
            and roots[value.value.id].dtype == "float32"
        )
        if targets.count(name) == 1 and (loaded or _np_call(value, "float32") is not None):
            out.add(name)
    return out


def _np_call(e: ast.expr, attr: str) -> ast.expr | None:
    """The argument of `np.<attr>(arg)`, else None."""
    if (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and isinstance(e.func.value, ast.Name)
        and e.func.value.id == "np"
        and e.func.attr == attr
        and len(e.args) == 1
        and not e.keywords
    ):
        return e.args[0]
    return None


class _Exp32(ast.NodeTransformer):
    def __init__(self, narrow: set[str]) -> None:
        self.used = False
        self.narrow = narrow  # names of float32 values

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        wide = _np_call(node, "exp")
        narrow = _np_call(wide, "float64") if wide is not None else None
        if narrow is not None and (
            _np_call(narrow, "float32") is not None
            or (isinstance(narrow, ast.Name) and narrow.id in self.narrow)
        ):
            self.used = True
            return ast.Call(ast.Name(NAME, ast.Load()), [narrow], [])
        return node
