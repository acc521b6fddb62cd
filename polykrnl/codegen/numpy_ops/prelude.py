"""The helper functions generated NumPy code calls, as source text.

An emitter that needs more than one NumPy call asks for a helper by name
(:meth:`polykrnl.codegen.numpy_ops.core.Ctx.helper`); the kernel generator
writes the source of each helper a kernel calls once, before its functions,
with the helpers each one calls (:data:`HELPER_DEPS`) ahead of it. Helpers use
nothing but ``np``.
"""

from __future__ import annotations

__all__ = ["HELPER_DEPS", "PRELUDE"]

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
def _maximumf(a, b, out=None):
    """arith.maximumf: the larger of a and b; NaN if either is NaN; +0.0 > -0.0."""
    # `out`: the memory to write into (a view), as a ufunc's: no temporary to copy.
    tie = a == b
    signed = np.where(np.signbit(a), b, a) if np.any(tie) else None
    r = np.maximum(a, b, out=out)
    if signed is not None:
        if out is None:
            r = np.where(tie, signed, r)
        else:
            np.copyto(out, signed, where=tie)
    return r[()]
''',
    "_minimumf": '''
def _minimumf(a, b, out=None):
    """arith.minimumf: the smaller of a and b; NaN if either is NaN; -0.0 < +0.0."""
    # `out`: the memory to write into (a view), as a ufunc's: no temporary to copy.
    tie = a == b
    signed = np.where(np.signbit(a), a, b) if np.any(tie) else None
    r = np.minimum(a, b, out=out)
    if signed is not None:
        if out is None:
            r = np.where(tie, signed, r)
        else:
            np.copyto(out, signed, where=tie)
    return r[()]
''',
    "_maximumf0": '''
def _maximumf0(a, out=None):
    """arith.maximumf of a and +0.0: NumPy's maximum, then + 0.0 turns the -0.0 it may
    keep for a tie into +0.0 (nothing else changes: max(a, +0.0) is never -0.0)."""
    r = np.maximum(a, 0.0, out=out)
    return r + 0.0 if out is None else np.add(r, 0.0, out=r)
''',
    "_maxnumf0": '''
def _maxnumf0(a, out=None):
    """arith.maxnumf of a and +0.0: NumPy's fmax, then + 0.0 turns the -0.0 it may keep
    for a tie into +0.0 (nothing else changes: maxnum(a, +0.0) is never -0.0)."""
    r = np.fmax(a, 0.0, out=out)
    return r + 0.0 if out is None else np.add(r, 0.0, out=r)
''',
    "_maxnumf": '''
def _maxnumf(a, b, out=None):
    """arith.maxnumf: the larger of a and b; the other one if one is NaN; +0.0 > -0.0."""
    # `out`: the memory to write into (a view), as a ufunc's: no temporary to copy.
    tie = a == b
    signed = np.where(np.signbit(a), b, a) if np.any(tie) else None
    r = np.fmax(a, b, out=out)
    if signed is not None:
        if out is None:
            r = np.where(tie, signed, r)
        else:
            np.copyto(out, signed, where=tie)
    return r[()]
''',
    "_minnumf": '''
def _minnumf(a, b, out=None):
    """arith.minnumf: the smaller of a and b; the other one if one is NaN; -0.0 < +0.0."""
    # `out`: the memory to write into (a view), as a ufunc's: no temporary to copy.
    tie = a == b
    signed = np.where(np.signbit(a), a, b) if np.any(tie) else None
    r = np.fmin(a, b, out=out)
    if signed is not None:
        if out is None:
            r = np.where(tie, signed, r)
        else:
            np.copyto(out, signed, where=tie)
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
    "_vreduce": '''
def _vreduce(combine, v, acc=None, unsigned=False):
    """vector.reduction: the lanes combined first to last, each step in the lanes' type."""
    lanes = np.asarray(v).reshape(-1)
    if unsigned:
        lanes = lanes.view(np.dtype(f"u{lanes.dtype.itemsize}"))
        acc = None if acc is None else np.asarray(acc).view(lanes.dtype)[()]
    r = lanes[0] if acc is None else combine(acc, lanes[0])
    for x in lanes[1:]:
        r = combine(r, x)
    return np.asarray(r).view(np.asarray(v).dtype)[()] if unsigned else r
''',
    "_vmask": '''
def _vmask(shape, sizes):
    """vector.create_mask: lane (i, j, ...) is on when i < sizes[0], j < sizes[1], ..."""
    mask = np.ones(shape, dtype=np.bool_)
    for d, n in enumerate(sizes):
        cut = [slice(None)] * len(shape)
        cut[d] = slice(max(0, n), None)
        mask[tuple(cut)] = False
    return mask
''',
    "_vinsert": '''
def _vinsert(v, position, x):
    """vector.insert: a copy of v with x at position."""
    out = np.array(v)
    out[position] = x
    return out
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
