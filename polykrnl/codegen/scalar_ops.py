"""Pure value ops as NumPy expressions: arith, math, affine.apply and Krnl's scalar ops.

``emit(op, args, helpers)`` turns one op into one Python expression per result,
built with :mod:`ast`, computing it from the expressions of its operands. The
same expression works on NumPy scalars (scalar loops) and on NumPy arrays
(vectorized loops, operands broadcast against each other).

Values in generated code (the contract with the kernel generator):

- ``f16``/``f32``/``f64``: NumPy scalar or array of float16/float32/float64;
- ``iN`` (N in 8..64; signless and signed types): intN; ``uiN``: uintN;
- ``i1``: ``np.bool_`` scalar or bool array;
- ``index``: a Python int, or an int64 array;
- ``!krnl.string``: a Python str, or an object array of str.

Results are bit for bit those of the reference interpreter
(:mod:`polykrnl.model.interpreter`): integer ops wrap, every float op rounds in
its own type (transcendental functions are computed in float64 and rounded
once), signed and unsigned readings are the op's own. That includes what the
interpreter inherits from NumPy and Python rather than from MLIR:
``math.powf``/``fpowi`` take NumPy's shortcuts for a scalar exponent (x ** 0.5
is sqrt(x), so (-0.0) ** 0.5 = -0.0 and (-inf) ** 0.5 = NaN; x ** 2 is x * x;
x ** -1 is 1 / x), ``arith.sitofp``/``uitofp`` of 64-bit integers round twice
(to float64, then to f32/f16), ``math.fma`` rounds a * b + c computed in
``np.longdouble``. The exceptions, where the interpreter's result cannot be
reproduced on arrays or is not what MLIR defines, are:

- ``arith.maximumf``/``minimumf``/``maxnumf``/``minnumf`` of +0.0 and -0.0:
  +0.0 is the larger (the interpreter returns whichever zero NumPy's scalar
  loop picks, which depends on the dtype, and NumPy's array loops pick
  differently);
- ``index`` values beyond the int64 range: the interpreter keeps unbounded
  Python ints, generated code wraps at 64 bits (equal modulo 2**64);
- ``krnl.erf``/``math.erf``: the interpreter calls the C library's erf
  through ``math.erf``; ``_erf`` below is glibc's (before 2.41) algorithm in
  NumPy, bit for bit equal where the C library is that glibc and NumPy's
  float64 ``np.exp`` is the C library's (x86-64 without AVX-512, where NumPy
  has no SIMD exp of its own).

Where the interpreter raises (undefined behaviour), generated code returns
some value and never hangs: integer division or remainder by zero gives 0
(``arith.remsi``/``remui`` through ``np.fmod``: 0 and a NumPy "divide by zero"
warning unless errors are ignored), ``INT_MIN / -1`` gives INT_MIN, shifts by
the bit width or more give 0 (or -1 for ``shrsi`` of a negative value;
``index`` ``shrsi`` by a negative amount raises ValueError), ``fptosi``/``fptoui``
of NaN, infinities and out-of-range values give NumPy's cast result (usually
INT_MIN) with an "invalid value" warning, ``math.ipowi`` of 0 to a negative
power gives 0. Float ops may warn on overflow or invalid operations like any
NumPy code; kernels run under ``np.errstate(all="ignore")`` as the interpreter
does.

Ops with operands or results of vector type, of types the interpreter has no
NumPy representation for (bf16, i4, ...), and ops that touch memory or loops
(loads, ``memref.dim``, ``krnl.get_induction_var_value``, ...) are not handled
here: :func:`supported` returns False for them.
"""

from __future__ import annotations

import ast
import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import (
    AffineMapAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute, Operation
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymExpr,
)

from polykrnl.errors import UnsupportedError
from polykrnl.model import dialect as k
from polykrnl.model.interpreter import make_value

__all__ = ["HELPER_DEPS", "PRELUDE", "emit", "op_names", "supported"]

# ------------------------------------------------------------------ helpers (generated code)

PRELUDE: dict[str, str] = {
    "_index": '''
def _index(x):
    """An index value: a Python int for a scalar, an int64 array otherwise."""
    if np.ndim(x) == 0:
        return int(x)
    return np.asarray(x).astype(np.int64, copy=False)
''',
    "_unsigned": '''
def _unsigned(x):
    """Integer x read as unsigned, in the unsigned dtype of its width (int: 64 bits)."""
    x = np.asarray(x)
    return x.astype(np.dtype(f"u{x.dtype.itemsize}"))[()]
''',
    "_signed": '''
def _signed(x):
    """Integer x read as signed, in the signed dtype of its width (int: 64 bits)."""
    x = np.asarray(x)
    return x.astype(np.dtype(f"i{x.dtype.itemsize}"))[()]
''',
    "_divsi": '''
def _divsi(a, b):
    """arith.divsi: signed division rounding toward zero (b == 0: 0; MIN / -1: MIN)."""
    with np.errstate(all="ignore"):
        q = np.floor_divide(a, b)
        return q + ((q * b != a) & ((a < 0) != (b < 0)))
''',
    "_divui": '''
def _divui(a, b):
    """arith.divui: division of the unsigned readings of a and b (b == 0: 0)."""
    with np.errstate(all="ignore"):
        return _signed(np.floor_divide(_unsigned(a), _unsigned(b)))
''',
    "_remui": '''
def _remui(a, b):
    """arith.remui: remainder of the unsigned readings of a and b (b == 0: 0)."""
    with np.errstate(all="ignore"):
        return _signed(np.remainder(_unsigned(a), _unsigned(b)))
''',
    "_floordivsi": '''
def _floordivsi(a, b):
    """arith.floordivsi: signed division rounding down (b == 0: 0; MIN / -1 wraps to MIN)."""
    with np.errstate(all="ignore"):
        return np.floor_divide(a, b)
''',
    "_ceildivsi": '''
def _ceildivsi(a, b):
    """arith.ceildivsi: signed division rounding up (b == 0: 0; MIN / -1 wraps to MIN)."""
    with np.errstate(all="ignore"):
        q = np.floor_divide(a, b)
        return q + (q * b != a)
''',
    "_ceildivui": '''
def _ceildivui(a, b):
    """arith.ceildivui: division of the unsigned readings of a and b rounding up (b == 0: 0)."""
    a, b = _unsigned(a), _unsigned(b)
    with np.errstate(all="ignore"):
        q = np.floor_divide(a, b)
        return _signed(q + (q * b != a))
''',
    "_maxui": '''
def _maxui(a, b):
    """arith.maxui: the larger of the unsigned readings of a and b."""
    return _signed(np.maximum(_unsigned(a), _unsigned(b)))
''',
    "_minui": '''
def _minui(a, b):
    """arith.minui: the smaller of the unsigned readings of a and b."""
    return _signed(np.minimum(_unsigned(a), _unsigned(b)))
''',
    "_shrui": '''
def _shrui(a, b):
    """arith.shrui: logical shift right (shifts by the width or more give 0)."""
    return _signed(_unsigned(a) >> _unsigned(b))
''',
    "_popcount": '''
def _popcount(u):
    """The number of 1 bits of each element of the unsigned integer u, in u's dtype."""
    v = np.asarray(u).astype(np.uint64)
    m1 = np.uint64(0x5555555555555555)
    m2 = np.uint64(0x3333333333333333)
    m4 = np.uint64(0x0F0F0F0F0F0F0F0F)
    with np.errstate(all="ignore"):
        v = v - ((v >> np.uint64(1)) & m1)
        v = (v & m2) + ((v >> np.uint64(2)) & m2)
        v = (v + (v >> np.uint64(4))) & m4
        v = (v * np.uint64(0x0101010101010101)) >> np.uint64(56)
    return v.astype(np.asarray(u).dtype)[()]
''',
    "_ctpop": '''
def _ctpop(x):
    """math.ctpop: the number of 1 bits of x."""
    return _signed(_popcount(_unsigned(x)))
''',
    "_ctlz": '''
def _ctlz(x):
    """math.ctlz: the number of leading 0 bits of x (its width for 0)."""
    u = np.asarray(_unsigned(x))
    width, shift = u.dtype.itemsize * 8, 1
    while shift < width:
        u = u | (u >> u.dtype.type(shift))
        shift *= 2
    return _signed(u.dtype.type(width) - _popcount(u))
''',
    "_cttz": '''
def _cttz(x):
    """math.cttz: the number of trailing 0 bits of x (its width for 0)."""
    u = np.asarray(_unsigned(x))
    with np.errstate(all="ignore"):
        return _signed(_popcount(~u & (u - u.dtype.type(1))))
''',
    "_ipowi": '''
def _ipowi(a, b):
    """math.ipowi: a ** b wrapping around; for b < 0, 1 / a ** -b in integers."""
    a, b = np.asarray(a), np.asarray(b)
    shape = np.broadcast(a, b).shape
    result = np.ones(shape, dtype=a.dtype)
    base = np.broadcast_to(a, shape).copy()
    e = np.where(b < 0, 0, b)
    with np.errstate(all="ignore"):
        while np.any(e > 0):
            result = np.where(e & 1, result * base, result)
            base = base * base
            e = e >> 1
        negative = np.where(a == 1, 1, np.where(a == -1, 1 - 2 * (b & 1), 0))
        return np.where(b < 0, negative, result).astype(a.dtype)[()]
''',
    "_powf": '''
def _powf(a, b):
    """math.powf / fpowi in float64 as NumPy computes it for scalars: C's pow, but
    x ** 0.5 = sqrt(x), x ** 2 = x * x and x ** -1 = 1 / x (NumPy's shortcuts)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    shape = np.broadcast(a, b).shape
    with np.errstate(all="ignore"):
        # np.power takes the shortcuts only for an exponent of stride 0: go element
        # by element, then take them wherever the exponent asks for one.
        flat_b = np.broadcast_to(b, shape).ravel()
        r = np.power(np.broadcast_to(a, shape).ravel(), flat_b).reshape(shape)
        for value, shortcut in ((0.5, np.sqrt), (2.0, np.square), (-1.0, np.reciprocal)):
            hit = b == value
            if np.any(hit):
                r = np.where(hit, shortcut(a), r)
    return r[()]
''',
    "_round": '''
def _round(x):
    """math.round: the nearest integer, halfway cases away from zero."""
    with np.errstate(all="ignore"):
        t = np.trunc(x)
        return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)[()]
''',
    "_fma": '''
def _fma(a, b, c):
    """math.fma: a * b + c in np.longdouble, rounded once to the operands' type."""
    with np.errstate(all="ignore"):
        r = np.multiply(a, b, dtype=np.longdouble) + np.asarray(c, dtype=np.longdouble)
        return r.astype(np.result_type(a, b, c))[()]
''',
    "_maximumf": '''
def _maximumf(a, b):
    """arith.maximumf: the larger of a and b; NaN if either is NaN; +0.0 > -0.0."""
    r = np.maximum(a, b)
    tie = a == b
    if np.any(tie):
        r = np.where(tie, np.where(np.signbit(a), b, a), r)
    return r[()]
''',
    "_minimumf": '''
def _minimumf(a, b):
    """arith.minimumf: the smaller of a and b; NaN if either is NaN; -0.0 < +0.0."""
    r = np.minimum(a, b)
    tie = a == b
    if np.any(tie):
        r = np.where(tie, np.where(np.signbit(a), a, b), r)
    return r[()]
''',
    "_maxnumf": '''
def _maxnumf(a, b):
    """arith.maxnumf: the larger of a and b; the other one if one is NaN; +0.0 > -0.0."""
    r = np.fmax(a, b)
    tie = a == b
    if np.any(tie):
        r = np.where(tie, np.where(np.signbit(a), b, a), r)
    return r[()]
''',
    "_minnumf": '''
def _minnumf(a, b):
    """arith.minnumf: the smaller of a and b; the other one if one is NaN; -0.0 < +0.0."""
    r = np.fmin(a, b)
    tie = a == b
    if np.any(tie):
        r = np.where(tie, np.where(np.signbit(a), a, b), r)
    return r[()]
''',
    "_strlen": '''
def _strlen(s):
    """krnl.strlen: the length in bytes of the C string s (up to its first NUL), as int64."""
    n = np.frompyfunc(lambda x: len(x.encode("utf-8").split(b"\\0", 1)[0]), 1, 1)(s)
    return np.asarray(n).astype(np.int64)[()]
''',
    "_strncmp": '''
def _strncmp(s1, s2, n):
    """krnl.strncmp: -1, 0 or 1 comparing the first n bytes of C strings s1 and s2, as int32."""
    def cmp(a, b, k):
        a = a.encode("utf-8").split(b"\\0", 1)[0][: max(int(k), 0)]
        b = b.encode("utf-8").split(b"\\0", 1)[0][: max(int(k), 0)]
        return (a > b) - (a < b)

    return np.asarray(np.frompyfunc(cmp, 3, 1)(s1, s2, n)).astype(np.int32)[()]
''',
    # glibc's erf before 2.41 (sysdeps/ieee754/dbl-64/s_erf.c, from Sun's fdlibm), with
    # the same coefficients and the same order of operations, so that it rounds alike.
    # fdlibm's notice: Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
    # Developed at SunPro, a Sun Microsystems, Inc. business. Permission to use, copy,
    # modify, and distribute this software is freely granted, provided that this
    # notice is preserved.
    "_erf": '''
def _erf(x):
    """math.erf / krnl.erf in float64: glibc's erf (fdlibm's method), evaluated with NumPy."""
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    neg = np.signbit(x)
    with np.errstate(all="ignore"):
        # |x| < 2**-28
        efx = 1.28379167095512586316e-01
        tiny = np.where(ax < 2.0**-1015, 0.0625 * (16.0 * x + (16.0 * efx) * x), x + efx * x)
        # |x| < 0.84375: x + x * P(x * x) / Q(x * x)
        z = x * x
        z2 = z * z
        z4 = z2 * z2
        r = (
            (1.28379167095512558561e-01 + z * -3.25042107247001499370e-01)
            + z2 * (-2.84817495755985104766e-02 + z * -5.77027029648944159157e-03)
            + z4 * -2.37630166566501626084e-05
        )
        s = (
            (1.0 + z * 3.97917223959155352819e-01)
            + z2 * (6.50222499887672944485e-02 + z * 5.08130628187576562776e-03)
            + z4 * (1.32494738004321644526e-04 + z * -3.96022827877536812320e-06)
        )
        small = x + x * (r / s)
        # 0.84375 <= |x| < 1.25: erx + P1(s) / Q1(s) with s = |x| - 1
        erx = 8.45062911510467529297e-01
        s = ax - 1.0
        s2 = s * s
        s4 = s2 * s2
        s6 = s4 * s2
        p = (
            (-2.36211856075265944077e-03 + s * 4.14856118683748331666e-01)
            + s2 * (-3.72207876035701323847e-01 + s * 3.18346619901161753674e-01)
            + s4 * (-1.10894694282396677476e-01 + s * 3.54783043256182359371e-02)
            + s6 * -2.16637559486879084300e-03
        )
        q = (
            (1.0 + s * 1.06420880400844228286e-01)
            + s2 * (5.40397917702171048937e-01 + s * 7.18286544141962662868e-02)
            + s4 * (1.26171219808761642112e-01 + s * 1.36370839120290507362e-02)
            + s6 * 1.19844998467991074170e-02
        )
        middle = np.where(neg, -erx - p / q, erx + p / q)
        # 1.25 <= |x| < 6: 1 - exp(-x * x - 0.5625 + R(1/x**2) / S(1/x**2)) / |x|
        s = 1.0 / (ax * ax)
        s2 = s * s
        s4 = s2 * s2
        s6 = s4 * s2
        s8 = s4 * s4
        ra = (
            (-9.86494403484714822705e-03 + s * -6.93858572707181764372e-01)
            + s2 * (-1.05586262253232909814e01 + s * -6.23753324503260060396e01)
            + s4 * (-1.62396669462573470355e02 + s * -1.84605092906711035994e02)
            + s6 * (-8.12874355063065934246e01 + s * -9.81432934416914548592e00)
        )
        sa = (
            (1.0 + s * 1.96512716674392571292e01)
            + s2 * (1.37657754143519042600e02 + s * 4.34565877475229228821e02)
            + s4 * (6.45387271733267880336e02 + s * 4.29008140027567833386e02)
            + s6 * (1.08635005541779435134e02 + s * 6.57024977031928170135e00)
            + s8 * -6.04244152148580987438e-02
        )
        rb = (
            (-9.86494292470009928597e-03 + s * -7.99283237680523006574e-01)
            + s2 * (-1.77579549177547519889e01 + s * -1.60636384855821916062e02)
            + s4 * (-6.37566443368389627722e02 + s * -1.02509513161107724954e03)
            + s6 * -4.83519191608651397019e02
        )
        sb = (
            (1.0 + s * 3.03380607434824582924e01)
            + s2 * (3.25792512996573918826e02 + s * 1.53672958608443695994e03)
            + s4 * (3.19985821950859553908e03 + s * 2.55305040643316442583e03)
            + s6 * (4.74528541206955367215e02 + s * -2.24409524465858183362e01)
        )
        near = ax < 2.8571434020996094  # high word 0x4006DB6E: about 1 / 0.35
        ratio = np.where(near, ra / sa, rb / sb)
        hi = (ax.view(np.uint64) & np.uint64(0xFFFFFFFF00000000)).view(np.float64)
        e = np.exp(-hi * hi - 0.5625) * np.exp((hi - ax) * (hi + ax) + ratio)
        large = np.where(neg, e / ax - 1.0, 1.0 - e / ax)
        inf = np.where(neg, 1e-300 - 1.0, 1.0 - 1e-300)
        return np.select(
            [np.isnan(x), ax < 2.0**-28, ax < 0.84375, ax < 1.25, ax < 6.0],
            [x, tiny, small, middle, large],
            inf,
        )[()]
''',
}
PRELUDE = {name: src.strip() + "\n" for name, src in PRELUDE.items()}

HELPER_DEPS: dict[str, tuple[str, ...]] = {
    "_divui": ("_signed", "_unsigned"),
    "_remui": ("_signed", "_unsigned"),
    "_ceildivui": ("_signed", "_unsigned"),
    "_maxui": ("_signed", "_unsigned"),
    "_minui": ("_signed", "_unsigned"),
    "_shrui": ("_signed", "_unsigned"),
    "_ctpop": ("_popcount", "_signed", "_unsigned"),
    "_ctlz": ("_popcount", "_signed", "_unsigned"),
    "_cttz": ("_popcount", "_signed", "_unsigned"),
}

# ------------------------------------------------------------------ types


@dataclass(frozen=True)
class _T:
    """How values of one MLIR type are represented in generated code.

    kind: "f" float, "i" fixed-width integer (N >= 8), "b" i1, "x" index, "s" string.
    """

    kind: str
    dtype: np.dtype[Any]

    @property
    def width(self) -> int:
        return 1 if self.kind == "b" else 8 * self.dtype.itemsize

    @property
    def unsigned(self) -> bool:
        return self.dtype.kind == "u"

    @property
    def signed_dtype(self) -> np.dtype[Any]:
        """The signed dtype of the same width (what the integer ops compute in)."""
        return np.dtype(f"i{self.dtype.itemsize}")


_FLOATS: dict[type[Attribute], np.dtype[Any]] = {
    Float16Type: np.dtype(np.float16),
    Float32Type: np.dtype(np.float32),
    Float64Type: np.dtype(np.float64),
}


def _type(t: Attribute) -> _T | None:
    f = _FLOATS.get(type(t))
    if f is not None:
        return _T("f", f)
    if isinstance(t, IndexType):
        return _T("x", np.dtype(np.int64))
    if isinstance(t, IntegerType):
        w = t.width.data
        if w == 1:
            return _T("b", np.dtype(np.bool_))
        if w not in (8, 16, 32, 64):
            return None
        u = "u" if t.signedness.data == Signedness.UNSIGNED else ""
        return _T("i", np.dtype(f"{u}int{w}"))
    if isinstance(t, k.StringType):
        return _T("s", np.dtype(object))
    return None


class _Unsupported(Exception):
    """The op (or its types) has no translation here."""


# ------------------------------------------------------------------ AST building

Expr = ast.expr


def _name(n: str) -> Expr:
    return ast.Name(n, ast.Load())


def _np(attr: str) -> Expr:
    return ast.Attribute(_name("np"), attr, ast.Load())


def _call(f: Expr, *args: Expr, **kwargs: Expr) -> Expr:
    return ast.Call(f, list(args), [ast.keyword(n, v) for n, v in kwargs.items()])


def _npcall(fn: str, *args: Expr, **kwargs: Expr) -> Expr:
    return _call(_np(fn), *args, **kwargs)


def _method(obj: Expr, name: str, *args: Expr) -> Expr:
    return _call(ast.Attribute(obj, name, ast.Load()), *args)


def _dt(dtype: np.dtype[Any]) -> Expr:
    return _np("bool_" if dtype.kind == "b" else dtype.name)


def _astype(e: Expr, dtype: np.dtype[Any]) -> Expr:
    return _method(e, "astype", _dt(dtype))


def _bin(a: Expr, op: ast.operator, b: Expr) -> Expr:
    return ast.BinOp(a, op, b)


def _cmp(a: Expr, op: ast.cmpop, b: Expr) -> Expr:
    return ast.Compare(a, [op], [b])


def _neg(e: Expr) -> Expr:
    return ast.UnaryOp(ast.USub(), e)


def _inv(e: Expr) -> Expr:
    return ast.UnaryOp(ast.Invert(), e)


def _int(v: int) -> Expr:
    """An int literal; negative ones as -(literal), which unparses right in any context."""
    return _neg(ast.Constant(-v)) if v < 0 else ast.Constant(v)


def _int_value(e: Expr) -> int | None:
    """The value of an int literal expression (as `_int` or ast.parse writes it)."""
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        inner = _int_value(e.operand)
        return None if inner is None else -inner
    return None


def _float(v: float, dtype: np.dtype[Any]) -> Expr:
    """A literal that `dtype.type(literal)` turns into exactly `v` (a value of dtype)."""
    if math.isnan(v):
        return _np("nan")
    if math.isinf(v):
        return _np("inf") if v > 0 else _neg(_np("inf"))
    x = abs(v)
    short = float(str(dtype.type(x)))  # NumPy's shortest repr in dtype: 0.1, not 0.100000001
    if len(repr(short)) < len(repr(x)) and dtype.type(short).tobytes() == dtype.type(x).tobytes():
        x = short
    return _neg(ast.Constant(x)) if math.copysign(1.0, v) < 0 else ast.Constant(x)


class _Ctx:
    """One emit: the helpers the expressions call."""

    def __init__(self, helpers: set[str]) -> None:
        self.helpers = helpers

    def helper(self, name: str, *args: Expr) -> Expr:
        assert name in PRELUDE, name
        self.helpers.add(name)
        return _call(_name(name), *args)

    def index(self, e: Expr) -> Expr:
        """A NumPy integer expression as an index value (Python int for scalars)."""
        return self.helper("_index", e)


# ------------------------------------------------------------------ emitters

Emitter = Callable[[Operation, list[Expr], _Ctx], list[Expr]]
_EMITTERS: dict[str, Emitter] = {}


def _emits(*names: str) -> Callable[[Emitter], Emitter]:
    def deco(f: Emitter) -> Emitter:
        for n in names:
            _EMITTERS[n] = f
        return f

    return deco


def op_names() -> tuple[str, ...]:
    """Names of the ops this module translates (for supported types)."""
    return tuple(sorted(_EMITTERS))


def _types(op: Operation) -> tuple[list[_T], list[_T]]:
    """The representations of the operand and result types; _Unsupported if one has none."""
    ins = [_type(v.type) for v in op.operands]
    outs = [_type(r.type) for r in op.results]
    if any(t is None for t in ins) or any(t is None for t in outs):
        raise _Unsupported
    return cast(list[_T], ins), cast(list[_T], outs)


def _require(cond: bool) -> None:
    if not cond:
        raise _Unsupported


def _same_kind(op: Operation, kinds: str, n_in: int, n_out: int = 1) -> _T:
    """Check `op` has n_in operands and n_out results, all of one type of a kind in `kinds`."""
    ins, outs = _types(op)
    _require(len(ins) == n_in and len(outs) == n_out)
    t = (ins + outs)[0]
    _require(t.kind in kinds and all(x == t for x in ins + outs))
    return t


# -- constants


@_emits("arith.constant")
def _constant(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
    _, (t,) = _types(op)
    attr = op.properties.get("value")
    _require(isinstance(attr, IntegerAttr | FloatAttr) and t.kind != "s")
    v = make_value(cast(IntegerAttr[Any] | FloatAttr[Any], attr).value.data, op.results[0].type)
    if t.kind == "f":
        return [_call(_dt(t.dtype), _float(float(v), t.dtype))]
    if t.kind == "x":
        return [_int(v)]
    if t.kind == "b":
        return [_np("True_" if v else "False_")]
    return [_call(_dt(t.dtype), _int(v))]


# -- integer arithmetic

_INT_KINDS = "ibx"


def _int_op(body: Callable[[Operation, list[Expr], _Ctx, _T], Expr]) -> Emitter:
    """An integer op whose operands and result share one type.

    Values of unsigned storage (uiN) are computed as the signed type of the same
    width (the bits are the same) and converted back.
    """

    def emitter(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
        t = _same_kind(op, _INT_KINDS, len(op.operands))
        if t.unsigned:
            st = _T("i", t.signed_dtype)
            e = body(op, [_astype(a, st.dtype) for a in args], cx, st)
            return [_astype(e, t.dtype)]
        return [body(op, args, cx, t)]

    return emitter


def _offset(a: Expr, b: Expr, add: bool) -> Expr:
    """a + b (or a - b) on index values, written `i - 1` rather than `i + -1`."""
    c = _int_value(b)
    if c is not None and c < 0:
        add, b = not add, ast.Constant(-c)
    return _bin(a, ast.Add() if add else ast.Sub(), b)


def _add_sub_mul(name: str) -> Emitter:
    def body(op: Operation, args: list[Expr], cx: _Ctx, t: _T) -> Expr:
        a, b = args
        if t.kind == "b":  # arithmetic modulo 2
            return _bin(a, ast.BitAnd() if name == "mul" else ast.BitXor(), b)
        if t.kind == "x":
            if name == "mul":
                return _bin(a, ast.Mult(), b)
            return _offset(a, b, name == "add")
        return _npcall({"add": "add", "sub": "subtract", "mul": "multiply"}[name], a, b)

    return _int_op(body)


for _n in ("add", "sub", "mul"):
    _EMITTERS[f"arith.{_n}i"] = _add_sub_mul(_n)


def _bitwise(opc: Callable[[], ast.operator]) -> Emitter:
    def body(op: Operation, args: list[Expr], cx: _Ctx, t: _T) -> Expr:
        return _bin(args[0], opc(), args[1])

    return _int_op(body)


_EMITTERS["arith.andi"] = _bitwise(ast.BitAnd)
_EMITTERS["arith.ori"] = _bitwise(ast.BitOr)
_EMITTERS["arith.xori"] = _bitwise(ast.BitXor)

# i1 read signed is 0 / -1: the division-like ops have few defined cases, and
# these expressions give their results (and something for the undefined ones).
_BOOL_DIV: dict[str, Callable[[Expr, Expr], Expr]] = {
    "divsi": lambda a, b: _bin(a, ast.BitAnd(), _inv(b)),  # b must be -1 and a 0: 0
    "remsi": lambda a, b: _bin(a, ast.BitAnd(), _inv(b)),  # likewise: 0
    "divui": lambda a, b: _bin(a, ast.BitAnd(), b),  # b must be 1: a
    "remui": lambda a, b: _bin(a, ast.BitAnd(), _inv(b)),  # b must be 1: 0
    "floordivsi": lambda a, b: _bin(a, ast.BitAnd(), b),  # a // -1 = -a: a
    "ceildivsi": lambda a, b: _bin(a, ast.BitAnd(), b),
    "ceildivui": lambda a, b: _bin(a, ast.BitAnd(), b),
}


def _division(name: str) -> Emitter:
    def body(op: Operation, args: list[Expr], cx: _Ctx, t: _T) -> Expr:
        a, b = args
        if t.kind == "b":
            return _BOOL_DIV[name](a, b)
        # remsi is C's %: truncated, with the sign of the dividend
        e = _npcall("fmod", a, b) if name == "remsi" else cx.helper("_" + name, a, b)
        return cx.index(e) if t.kind == "x" else e

    return _int_op(body)


for _n in _BOOL_DIV:
    _EMITTERS[f"arith.{_n}"] = _division(_n)


def _minmax(name: str) -> Emitter:
    def body(op: Operation, args: list[Expr], cx: _Ctx, t: _T) -> Expr:
        a, b = args
        if t.kind == "b":  # signed: true (-1) < false (0); unsigned: false < true
            both = name in ("maxsi", "minui")
            return _bin(a, ast.BitAnd() if both else ast.BitOr(), b)
        if name.endswith("ui"):
            e = cx.helper("_" + name, a, b)
        else:
            e = _npcall("maximum" if name == "maxsi" else "minimum", a, b)
        return cx.index(e) if t.kind == "x" else e

    return _int_op(body)


for _n in ("maxsi", "minsi", "maxui", "minui"):
    _EMITTERS[f"arith.{_n}"] = _minmax(_n)


def _shift(name: str) -> Emitter:
    def body(op: Operation, args: list[Expr], cx: _Ctx, t: _T) -> Expr:
        a, b = args
        if t.kind == "b":  # only a shift by 0 is defined
            return _bin(a, ast.BitAnd(), _inv(b))
        if name == "shrui":
            e = cx.helper("_shrui", a, b)
        elif name == "shrsi":
            return _bin(a, ast.RShift(), b)  # arithmetic on signed values and Python ints
        elif t.kind == "x":
            e = _npcall("left_shift", a, b)  # 64-bit, never a huge Python int
        else:
            return _bin(a, ast.LShift(), b)
        return cx.index(e) if t.kind == "x" else e

    return _int_op(body)


for _n in ("shli", "shrsi", "shrui"):
    _EMITTERS[f"arith.{_n}"] = _shift(_n)


def _absi(op: Operation, args: list[Expr], cx: _Ctx, t: _T) -> Expr:
    (a,) = args
    if t.kind == "b":  # |-1| = 1: true stays true
        return a
    e = _npcall("abs", a)  # abs(MIN) wraps to MIN
    return cx.index(e) if t.kind == "x" else e


_EMITTERS["math.absi"] = _int_op(_absi)


def _ipowi(op: Operation, args: list[Expr], cx: _Ctx, t: _T) -> Expr:
    a, b = args
    if t.kind == "b":  # x ** 0 = 1; (-1) ** -1 = -1: true unless 0 ** -1 (undefined)
        return _bin(a, ast.BitOr(), _inv(b))
    e = cx.helper("_ipowi", a, b)
    return cx.index(e) if t.kind == "x" else e


_EMITTERS["math.ipowi"] = _int_op(_ipowi)


def _bitcount(name: str) -> Emitter:
    def body(op: Operation, args: list[Expr], cx: _Ctx, t: _T) -> Expr:
        (a,) = args
        if t.kind == "b":
            return a if name == "ctpop" else _inv(a)
        e = cx.helper("_" + name, a)
        return cx.index(e) if t.kind == "x" else e

    return _int_op(body)


for _n in ("ctlz", "cttz", "ctpop"):
    _EMITTERS[f"math.{_n}"] = _bitcount(_n)


# -- comparisons and select

# arith.cmpi predicates: eq ne slt sle sgt sge ult ule ugt uge
_CMP_OPS: tuple[type[ast.cmpop], ...] = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_CMP_UFUNCS = ("less", "less_equal", "greater", "greater_equal")
_SWAPPED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.Gt,
    ast.LtE: ast.GtE,
    ast.Gt: ast.Lt,
    ast.GtE: ast.LtE,
}


@_emits("arith.cmpi")
def _cmpi(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
    (ta, tb), (tr,) = _types(op)
    _require(ta == tb and ta.kind in _INT_KINDS and tr.kind == "b")
    pred = cast(IntegerAttr[Any], op.properties["predicate"]).value.data
    _require(0 <= pred <= 9)
    a, b = args
    if ta.unsigned:
        a, b = _astype(a, ta.signed_dtype), _astype(b, ta.signed_dtype)
    if pred < 2:
        if ta.kind == "x":
            return [_npcall("equal" if pred == 0 else "not_equal", a, b)]
        return [_cmp(a, ast.Eq() if pred == 0 else ast.NotEq(), b)]
    rel = (pred - 2) % 4
    unsigned = pred >= 6
    if ta.kind == "b":  # i1 read signed: true (-1) < false (0), the reverse of bool order
        cmp = _CMP_OPS[rel] if unsigned else _SWAPPED[_CMP_OPS[rel]]
        return [_cmp(a, cmp(), b)]
    if unsigned:
        a, b = cx.helper("_unsigned", a), cx.helper("_unsigned", b)
    elif ta.kind == "x":  # Python ints compare to a Python bool: use the ufunc
        return [_npcall(_CMP_UFUNCS[rel], a, b)]
    return [_cmp(a, _CMP_OPS[rel](), b)]


def _full(value: bool, a: Expr, b: Expr) -> Expr:
    shape = ast.Attribute(_npcall("broadcast", a, b), "shape", ast.Load())
    full = _npcall("full", shape, ast.Constant(value))
    return ast.Subscript(full, ast.Tuple([], ast.Load()), ast.Load())


def _isnan(e: Expr) -> Expr:
    return _npcall("isnan", e)


@_emits("arith.cmpf")
def _cmpf(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
    (ta, tb), (tr,) = _types(op)
    _require(ta == tb and ta.kind == "f" and tr.kind == "b")
    pred = cast(IntegerAttr[Any], op.properties["predicate"]).value.data
    a, b = args

    def rel(p: int) -> Expr:  # the ordered relation of predicates 1..6 (false with NaN)
        if p == 6:  # one: ordered and not equal
            return _bin(_cmp(a, ast.Lt(), b), ast.BitOr(), _cmp(a, ast.Gt(), b))
        ops: list[Callable[[], ast.cmpop]] = [ast.Eq, ast.Gt, ast.GtE, ast.Lt, ast.LtE]
        return _cmp(a, ops[p - 1](), b)

    if pred in (0, 15):  # false, true
        return [_full(pred == 15, a, b)]
    if pred == 7:  # ord
        return [_bin(_inv(_isnan(a)), ast.BitAnd(), _inv(_isnan(b)))]
    if pred == 14:  # uno
        return [_bin(_isnan(a), ast.BitOr(), _isnan(b))]
    if 1 <= pred <= 6:  # oeq ogt oge olt ole one
        return [rel(pred)]
    _require(8 <= pred <= 13)  # ueq ugt uge ult ule une: not the opposite ordered relation
    if pred == 13:  # une: != is true with NaN
        return [_cmp(a, ast.NotEq(), b)]
    opposite = {8: 6, 9: 5, 10: 4, 11: 3, 12: 2}[pred]
    return [_inv(rel(opposite))]


@_emits("arith.select")
def _select(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
    (tc, ta, tb), (tr,) = _types(op)
    _require(tc.kind == "b" and ta == tb == tr and tr.kind != "s")
    e = _npcall("where", *args)
    if tr.kind == "x":
        return [cx.index(e)]
    return [ast.Subscript(e, ast.Tuple([], ast.Load()), ast.Load())]  # a scalar for scalars


# -- integer casts


def _read_int(e: Expr, t: _T, signed: bool, cx: _Ctx) -> tuple[Expr, np.dtype[Any] | None]:
    """Integer `e` of type `t` (not i1) read signed or unsigned, with the dtype of the
    expression (None: an index value, a Python int or an int64 array)."""
    if t.kind == "x":
        return (e, None) if signed else (cx.helper("_unsigned", e), np.dtype(np.uint64))
    want = t.signed_dtype if signed else np.dtype(f"u{t.dtype.itemsize}")
    return (e, t.dtype) if want == t.dtype else (_astype(e, want), want)


def _read_bool(e: Expr, signed: bool, dtype: np.dtype[Any]) -> Expr:
    """i1 `e` as a `dtype` number: true is -1 read signed, 1 read unsigned."""
    e = _astype(e, dtype)
    return _neg(e) if signed else e


def _int_cast(signed: bool) -> Emitter:
    def emitter(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
        (src,), (dst,) = _types(op)
        _require(src.kind in _INT_KINDS and dst.kind in _INT_KINDS)
        if op.name.startswith("arith.index_cast"):
            _require((src.kind == "x") != (dst.kind == "x"))
        else:
            _require(src.kind != "x" and dst.kind != "x")
        (a,) = args
        if src.kind == "b":
            if dst.kind == "b":
                return [a]
            work = dst.signed_dtype if dst.kind == "i" else np.dtype(np.int64)
            e = _read_bool(a, signed, work)
            if dst.kind == "x":
                return [cx.index(e)]
            return [e if work == dst.dtype else _astype(e, dst.dtype)]
        e, dtype = _read_int(a, src, signed, cx)
        if dst.kind == "x":
            return [cx.index(e)]
        if dst.kind == "b":  # the low bit
            return [_npcall("not_equal", _bin(e, ast.BitAnd(), ast.Constant(1)), ast.Constant(0))]
        if dtype is None:  # an index value: to int64 first (a Python int has no astype)
            e, dtype = _npcall("int64", e), np.dtype(np.int64)
        return [e if dtype == dst.dtype else _astype(e, dst.dtype)]

    return emitter


_EMITTERS["arith.extsi"] = _int_cast(signed=True)
_EMITTERS["arith.trunci"] = _int_cast(signed=True)
_EMITTERS["arith.index_cast"] = _int_cast(signed=True)
_EMITTERS["arith.extui"] = _int_cast(signed=False)
_EMITTERS["arith.index_castui"] = _int_cast(signed=False)


@_emits("arith.sitofp", "arith.uitofp")
def _int_to_float(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
    (src,), (dst,) = _types(op)
    _require(src.kind in _INT_KINDS and dst.kind == "f")
    signed = op.name == "arith.sitofp"
    (a,) = args
    if src.kind == "b":
        return [
            _astype(_read_bool(a, True, np.dtype(np.int8)), dst.dtype)
            if signed
            else _astype(a, dst.dtype)
        ]
    e, dtype = _read_int(a, src, signed, cx)
    if dtype is None:
        e = _npcall("float64", e)  # like float(x): one rounding, whatever the size of x
    elif dtype.itemsize == 8:
        # The interpreter converts through a Python float: 64-bit integers round to
        # float64 first, then to the result type (twice).
        e = _astype(e, np.dtype(np.float64))
    else:  # exact in float64: one rounding either way
        return [_astype(e, dst.dtype)]
    return [e if dst.dtype == np.dtype(np.float64) else _astype(e, dst.dtype)]


@_emits("arith.fptosi", "arith.fptoui")
def _float_to_int(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
    (src,), (dst,) = _types(op)
    _require(src.kind == "f" and dst.kind in _INT_KINDS)
    (a,) = args
    signed = op.name == "arith.fptosi"
    if dst.kind == "b":  # defined for truncations to -1 or 0 (fptosi), 0 or 1 (fptoui)
        return [_cmp(_astype(a, np.dtype(np.int64)), ast.NotEq(), ast.Constant(0))]
    width = 8 * dst.dtype.itemsize
    e = _astype(a, np.dtype(f"{'' if signed else 'u'}int{width}"))
    if dst.kind == "x":
        return [cx.index(e)]
    return [e if signed == (not dst.unsigned) else _astype(e, dst.dtype)]


@_emits("arith.extf", "arith.truncf")
def _float_cast(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
    (src,), (dst,) = _types(op)
    _require(src.kind == "f" and dst.kind == "f")
    return [args[0] if src == dst else _astype(args[0], dst.dtype)]


@_emits("arith.bitcast")
def _bitcast(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
    (src,), (dst,) = _types(op)
    _require(src.kind in "fibx" and dst.kind in "fibx" and src.width == dst.width)
    (a,) = args
    if src == dst:
        return [a]
    if dst.kind == "x":
        return [cx.index(a)]
    if src.kind == "x":
        a = _npcall("int64", a)
    return [_method(a, "view", _dt(dst.dtype))]


# -- float arithmetic


def _float_binary(fn: Callable[[Expr, Expr, _Ctx], Expr]) -> Emitter:
    def emitter(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
        _same_kind(op, "f", 2)
        return [fn(args[0], args[1], cx)]

    return emitter


_EMITTERS["arith.addf"] = _float_binary(lambda a, b, cx: _bin(a, ast.Add(), b))
_EMITTERS["arith.subf"] = _float_binary(lambda a, b, cx: _bin(a, ast.Sub(), b))
_EMITTERS["arith.mulf"] = _float_binary(lambda a, b, cx: _bin(a, ast.Mult(), b))
_EMITTERS["arith.divf"] = _float_binary(lambda a, b, cx: _bin(a, ast.Div(), b))
_EMITTERS["arith.remf"] = _float_binary(lambda a, b, cx: _npcall("fmod", a, b))
_EMITTERS["math.copysign"] = _float_binary(lambda a, b, cx: _npcall("copysign", a, b))


def _helper_binary(name: str) -> Emitter:
    return _float_binary(lambda a, b, cx: cx.helper(name, a, b))


for _n in ("maximumf", "minimumf", "maxnumf", "minnumf"):
    _EMITTERS[f"arith.{_n}"] = _helper_binary("_" + _n)


@_emits("arith.negf")
def _negf(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
    _same_kind(op, "f", 1)
    return [_neg(args[0])]


def _in_f64(t: _T, fn: Callable[[Expr | None], Expr]) -> Expr:
    """fn evaluated in float64, rounded once to t (fn(None): the float64 keyword form)."""
    if t.dtype == np.dtype(np.float64):
        return fn(None)
    return _astype(fn(_np("float64")), t.dtype)


def _ufunc64(name: str, *args: Expr) -> Callable[[Expr | None], Expr]:
    def fn(dtype: Expr | None) -> Expr:
        return _npcall(name, *args) if dtype is None else _npcall(name, *args, dtype=dtype)

    return fn


# math functions evaluated in float64 and rounded once (as the interpreter does)
_F64_UNARY = {
    "acos": "arccos",
    "acosh": "arccosh",
    "asin": "arcsin",
    "asinh": "arcsinh",
    "atan": "arctan",
    "atanh": "arctanh",
    "tan": "tan",
    "exp": "exp",
    "exp2": "exp2",
    "expm1": "expm1",
    "log": "log",
    "log2": "log2",
    "log10": "log10",
    "log1p": "log1p",
    "cbrt": "cbrt",
    "tanh": "tanh",
    "sin": "sin",
    "cos": "cos",
    "sinh": "sinh",
    "cosh": "cosh",
}
# exact in the operand's own type (the float64 result rounds back to the same value)
_EXACT_UNARY = {
    "absf": "abs",
    "floor": "floor",
    "ceil": "ceil",
    "trunc": "trunc",
    "roundeven": "rint",
    "sqrt": "sqrt",  # correctly rounded both ways (float64 has more than 2p + 2 bits)
}
_UNARY_NAMES = (*_F64_UNARY, *_EXACT_UNARY, "rsqrt", "round", "erf")


@_emits(*(f"{p}.{n}" for p in ("krnl", "math") for n in _UNARY_NAMES))
def _unary_float(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
    t = _same_kind(op, "f", 1)
    (a,) = args
    n = op.name.split(".", 1)[1]
    if n in _EXACT_UNARY:
        return [_npcall(_EXACT_UNARY[n], a)]
    if n == "round":
        return [cx.helper("_round", a)]
    if n == "erf":
        e = cx.helper("_erf", a)
        return [e if t.dtype == np.dtype(np.float64) else _astype(e, t.dtype)]
    if n == "rsqrt":
        return [_in_f64(t, lambda d: _bin(ast.Constant(1.0), ast.Div(), _ufunc64("sqrt", a)(d)))]
    return [_in_f64(t, _ufunc64(_F64_UNARY[n], a))]


@_emits("krnl.isinf", "krnl.isnan", "math.isinf", "math.isnan", "math.isfinite")
def _float_predicate(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
    (t,), (r,) = _types(op)
    _require(t.kind == "f" and r.kind == "b")
    return [_npcall(op.name.split(".", 1)[1], args[0])]


@_emits("math.atan2")
def _atan2(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
    t = _same_kind(op, "f", 2)
    return [_in_f64(t, _ufunc64("arctan2", *args))]


@_emits("math.powf")
def _powf(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
    t = _same_kind(op, "f", 2)
    e = cx.helper("_powf", *args)
    return [e if t.dtype == np.dtype(np.float64) else _astype(e, t.dtype)]


@_emits("math.fpowi")
def _fpowi(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
    (tx, tn), (tr,) = _types(op)
    _require(tx.kind == "f" and tr == tx and tn.kind in "ix")
    x, n = args
    if tn.unsigned:
        n = _astype(n, tn.signed_dtype)
    e = cx.helper("_powf", x, n)
    return [e if tx.dtype == np.dtype(np.float64) else _astype(e, tx.dtype)]


@_emits("math.fma")
def _fma(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
    _same_kind(op, "f", 3)
    return [cx.helper("_fma", *args)]


# -- affine maps on index values


def _affine(e: AffineExpr, dims: Sequence[Expr], syms: Sequence[Expr]) -> Expr:
    if isinstance(e, AffineConstantExpr):
        return _int(e.value)
    if isinstance(e, AffineDimExpr):
        return dims[e.position]
    if isinstance(e, AffineSymExpr):
        return syms[e.position]
    assert isinstance(e, AffineBinaryOpExpr)
    kind = e.kind
    if kind == AffineBinaryOpKind.Add:
        rhs = e.rhs
        if (  # x + y * -c is written x - y * c
            isinstance(rhs, AffineBinaryOpExpr)
            and rhs.kind == AffineBinaryOpKind.Mul
            and isinstance(rhs.rhs, AffineConstantExpr)
            and rhs.rhs.value < 0
        ):
            lhs = _affine(e.lhs, dims, syms)
            y = _affine(rhs.lhs, dims, syms)
            c = -rhs.rhs.value
            if c != 1:
                return _bin(lhs, ast.Sub(), _bin(y, ast.Mult(), ast.Constant(c)))
            if isinstance(y, ast.UnaryOp) and isinstance(y.op, ast.USub):  # x - -(z): x + z
                return _bin(lhs, ast.Add(), y.operand)
            return _bin(lhs, ast.Sub(), y)
        return _offset(_affine(e.lhs, dims, syms), _affine(rhs, dims, syms), True)
    lhs, rhs_e = _affine(e.lhs, dims, syms), _affine(e.rhs, dims, syms)
    if kind == AffineBinaryOpKind.Mul:
        if isinstance(e.rhs, AffineConstantExpr) and e.rhs.value == -1:
            return _neg(lhs)
        return _bin(lhs, ast.Mult(), rhs_e)
    if kind == AffineBinaryOpKind.Mod:
        return _bin(lhs, ast.Mod(), rhs_e)
    if kind == AffineBinaryOpKind.FloorDiv:
        return _bin(lhs, ast.FloorDiv(), rhs_e)
    assert kind == AffineBinaryOpKind.CeilDiv
    return _neg(_bin(_neg(lhs), ast.FloorDiv(), rhs_e))


@_emits("affine.apply", "affine.min", "affine.max")
def _affine_op(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
    ins, (t,) = _types(op)
    _require(t.kind == "x" and all(x.kind == "x" for x in ins))
    attr = op.properties.get("map")
    _require(isinstance(attr, AffineMapAttr))
    m = cast(AffineMapAttr, attr).data
    _require(m.num_dims + m.num_symbols == len(args) and len(m.results) >= 1)
    dims, syms = args[: m.num_dims], args[m.num_dims :]
    results = [_affine(r, dims, syms) for r in m.results]
    if op.name == "affine.apply" or len(results) == 1:
        return results[:1]
    fn = "minimum" if op.name == "affine.min" else "maximum"
    e = results[0]
    for r in results[1:]:
        e = _npcall(fn, e, r)
    return [cx.index(e)]


# -- strings


@_emits("krnl.strlen")
def _strlen(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
    (s,), (r,) = _types(op)
    _require(s.kind == "s" and r.kind == "i" and not r.unsigned)
    e = cx.helper("_strlen", args[0])
    return [e if r.dtype == np.dtype(np.int64) else _astype(e, r.dtype)]


@_emits("krnl.strncmp")
def _strncmp(op: Operation, args: list[Expr], cx: _Ctx) -> list[Expr]:
    (s1, s2, n), (r,) = _types(op)
    _require(s1.kind == s2.kind == "s" and n.kind in "ix" and r.kind == "i" and not r.unsigned)
    e = cx.helper("_strncmp", *args)
    return [e if r.dtype == np.dtype(np.int32) else _astype(e, r.dtype)]


# ------------------------------------------------------------------ entry points


def _emit(op: Operation, args: list[Expr], helpers: set[str]) -> list[Expr] | None:
    emitter = _EMITTERS.get(op.name)
    if emitter is None or len(args) != len(op.operands) or op.regions:
        return None
    try:
        out = emitter(op, list(args), _Ctx(helpers))
    except _Unsupported:
        return None
    assert len(out) == len(op.results)
    return [_unshared(e) for e in out]


def _unshared(e: Expr) -> Expr:
    """`e` with a copy for every repeated use of an AST node (an operand used twice)."""
    seen: set[int] = set()

    class Copier(ast.NodeTransformer):
        def visit(self, node: ast.AST) -> ast.AST:
            if id(node) in seen:
                return copy.deepcopy(node)
            seen.add(id(node))
            return self.generic_visit(node)

    return cast(Expr, Copier().visit(e))


def supported(op: Operation) -> bool:
    """Whether emit() can translate op (a pure op with scalar operands/results)."""
    dummies: list[Expr] = [_name(f"_{i}") for i in range(len(op.operands))]
    return _emit(op, dummies, set()) is not None


def emit(op: Operation, args: list[ast.expr], helpers: set[str]) -> list[ast.expr]:
    """One Python expression per result of `op`, computing it from the operand expressions.

    Adds to `helpers` the names of PRELUDE helpers the expressions call.
    """
    added: set[str] = set()
    out = _emit(op, args, added)
    if out is None:
        types = ", ".join(str(v.type) for v in (*op.operands, *op.results))
        raise UnsupportedError(
            f"{op.name} ({types}) has no NumPy expression",
            hint="check scalar_ops.supported(op) first; vector types, types without a "
            "NumPy dtype and ops on memory or loops are not pure value ops",
        )
    helpers |= added
    return out
