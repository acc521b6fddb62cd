"""math.exp and math.tanh of float32 values in arithmetic LLVM can vectorize (Numba kernels).

A float32 `math.exp` or `math.tanh` is computed in float64 and rounded once
(numpy_ops), which Numba compiles to a call of the C library's `exp` or `tanh` per
element: LLVM has no vector form of those calls, so the loop stays scalar (5 ns an exp,
16 a tanh, Intel Xeon VM, glibc 2.36). The helpers here are arithmetic and selects
only, which LLVM vectorizes: 4M exps in 3.8 ms against 21 with the C library's, 4M
tanhs in 6.0 against 66.

Each helper takes a float32 value and returns a float64 whose rounding to float32 is
that of NumPy's function of `np.float64(x)`, for every one of the 2**32 float32 values
(NaNs, infinities, signed zeros and subnormals included): checked exhaustively on x86-64
against NumPy's and glibc's (``python tools/check_vector_math.py``, about 100 s a
function on 2 cores; the tests check a sample). The float64 itself may differ from the
C library's in its last bits; only its float32 rounding is used.

* `_pk_exp32`: x = k ln2 + r with k = round(x / ln2) (adding and subtracting 1.5 *
  2**52, which leaves k in the sum's low bits) and ln2 in two parts (the first with 20
  zero low bits, so that k times it is exact), |r| <= ln2/2; exp(r) by its Taylor
  polynomial of degree 13 (error below 5e-18) in fused multiply-adds; 2**k from its
  exponent bits; the inputs beyond [-110, 89] (0 or inf once rounded) by selects.
* `_pk_tanh32`: for |x| < 0.875, x + x**3 P(x**2) with P a Chebyshev fit of
  (tanh(a) - a) / a**3 in a**2 (15 terms, error below 2e-18; :data:`TANH_FIT` says how it
  was made, ``tools/check_vector_math.py --fit`` makes it again), which keeps its
  relative accuracy down to the subnormals; above, 1 - 2 / (exp(2|x|) + 1) with the exp
  above (|x| clamped at 9.5, where the float32 result is 1); the sign from x's sign bit
  (tanh(-0.0) = -0.0); both branches computed, one selected, so that no branch is left.

The fused multiply-add and the bits are intrinsics (bits.py): where Numba's target has
no FMA instruction the functions keep the C library's (a call of `fma` per step would be
slower).

Which calls use them: :func:`use_vector_math` rewrites `np.f(np.float64(np.float32(e)))`
for f = exp or tanh, and `np.f(np.float64(v))` where the loop assigns v once from a
float32 array's element, in an innermost loop whose body is straight-line assignments
with no value carried from one iteration to the next (a loop LLVM can vectorize). In a
loop that carries a value LLVM vectorizes nothing, so those keep the C library's
(fission.py first moves a sum out of the loop of its exps where it can).
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

#: NumPy's function -> the name of its helper among a kernel's helpers
HELPERS = {"exp": "_pk_exp32", "tanh": "_pk_tanh32"}

#: the degree of the Taylor polynomial of exp(r) - 1 on |r| <= ln2/2 (error below 5e-18)
DEGREE = 13

# 1.5 * 2**52: x + MAGIC rounds x to an integer, kept in the low bits of the sum's bits
MAGIC = 6755399441055744.0

#: below it, tanh is its odd polynomial; above, 1 - 2 / (exp(2|x|) + 1)
TANH_SMALL = 0.875

#: how TANH_POLY was made (mpmath 1.3, 50 digits)
TANH_FIT = (
    "mpmath.chebyfit(lambda z: (tanh(sqrt(z)) - sqrt(z)) / z**1.5 (-1/3 at 0), "
    "[0, 0.875**2], 15): coefficients of z**14 down to z**0"
)
TANH_POLY = (
    -1.3037928719242213e-07,
    1.070360309846551e-06,
    -4.5755399255996345e-06,
    1.4261086694241563e-05,
    -3.820653633317692e-05,
    9.640640221692903e-05,
    -0.0002389519301249939,
    0.0005899826658036132,
    -0.0014558263309485413,
    0.003592127037088968,
    -0.00886323544861719,
    0.021869488532160076,
    -0.053968253968150824,
    0.13333333333333228,
    -0.3333333333333333,
)


@functools.cache  # once per process, not per kernel (decimals)
def _parts() -> tuple[float, float, float]:
    """1/ln2, and ln2 in two parts (see the module)."""
    with localcontext() as ctx:
        ctx.prec = 60
        ln2 = Decimal(2).ln()
        (pattern,) = struct.unpack("<Q", struct.pack("<d", float(ln2)))
        (hi,) = struct.unpack("<d", struct.pack("<Q", pattern & ~((1 << 20) - 1)))
        return float(1 / ln2), float(hi), float(ln2 - Decimal(hi))


def _exp_lines(y: str) -> str:
    """Statements that leave exp(y) = e for a float64 y in [-110, 90] (see the module)."""
    inverse, hi, lo = _parts()
    lines = [
        f"t = {y} * {inverse!r} + {MAGIC!r}",
        f"kf = t - {MAGIC!r}",
        f"r = ({y} - kf * {hi!r}) - kf * {lo!r}",
        f"p = {1 / math.factorial(DEGREE)!r}",
        *(f"p = _pk_fma(r, p, {1 / math.factorial(n)!r})" for n in range(DEGREE - 1, 0, -1)),
        f"s = _pk_from_bits((_pk_to_bits(t) - _pk_to_bits({MAGIC!r}) + 1023) << 52)",
        "e = _pk_fma(r, p, 1.0) * s",
    ]
    return "\n    ".join(lines)


def _tanh_poly_lines() -> str:
    """Statements that leave P(z) = w (see the module)."""
    lines = [f"w = {TANH_POLY[0]!r}", *(f"w = _pk_fma(z, w, {c!r})" for c in TANH_POLY[1:])]
    return "\n    ".join(lines)


def source(helper: str, cache: bool) -> str:
    """A decorated helper (a value of HELPERS), as a kernel module carries it (after
    bits.SOURCE)."""
    decorator = f'@njit(cache={cache}, error_model="numpy", inline="always")'
    if helper == HELPERS["exp"]:
        return f'''
{decorator}
def {helper}(x):
    """np.exp(np.float64(x)) for a float32 x, as float32 rounds it (vector_math.py)."""
    d = np.float64(x)
    c = d if d > -110.0 else -110.0  # NaN too: no exponent from a NaN below
    c = c if c < 90.0 else 90.0
    {_exp_lines("c")}
    y = np.inf if d > 89.0 else e
    y = 0.0 if d < -110.0 else y
    return d if d != d else y
'''
    assert helper == HELPERS["tanh"], helper
    return f'''
{decorator}
def {helper}(x):
    """np.tanh(np.float64(x)) for a float32 x, as float32 rounds it (vector_math.py)."""
    d = np.float64(x)
    negative = _pk_to_bits(d) < 0
    a = -d if negative else d
    a = a if a < 9.5 else 9.5  # NaN too: no exponent from a NaN below
    z = a * a
    {_tanh_poly_lines()}
    small = _pk_fma(a * z, w, a)
    y = a + a
    {_exp_lines("y")}
    v = small if a < {TANH_SMALL!r} else 1.0 - 2.0 / (e + 1.0)
    v = -v if negative else v
    return d if d != d else v
'''


def use_vector_math(fn: ast.FunctionDef, roots: Mapping[str, Root] | None = None) -> set[str]:
    """Rewrite the float32 exps and tanhs of `fn`'s vectorizable loops to their helpers
    (see the module); the helpers used. With `roots` (aliases.py), a call of a name the
    loop loads from a float32 array is one too."""
    used: set[str] = set()
    if not bits.fma_native():
        return used  # `_pk_fma` would be a call of the C library's fma: scalar, slow
    for loop in ast.walk(fn):
        if isinstance(loop, ast.For) and straight_line(loop) and not carried(loop.body):
            rewriter = _Narrow(_float32_names(loop.body, roots or {}))
            for st in loop.body:
                rewriter.visit(st)
            used |= rewriter.used
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


class _Narrow(ast.NodeTransformer):
    def __init__(self, narrow: set[str]) -> None:
        self.used: set[str] = set()
        self.narrow = narrow  # names of float32 values

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        for function, helper in HELPERS.items():
            wide = _np_call(node, function)
            narrow = _np_call(wide, "float64") if wide is not None else None
            if narrow is not None and (
                _np_call(narrow, "float32") is not None
                or (isinstance(narrow, ast.Name) and narrow.id in self.narrow)
            ):
                self.used.add(helper)
                return ast.Call(ast.Name(helper, ast.Load()), [narrow], [])
        return node
