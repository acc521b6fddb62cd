"""Sizes of the tmp tiles of PTO instructions, as sympy expressions.

Each instruction that takes a tmp tile has one :class:`TmpRule` in :data:`TMP_RULES`. A rule
gives the tmp tile to declare, ``(rows, cols)`` of a Vec tile of some element type, as
expressions of the valid shape of the operands (sympy symbols or ints) and of
instruction-specific sizes; :func:`tmp_bytes` is ``rows * cols * sizeof(tmp element)``.
Where an architecture ignores the tmp argument the shape is ``(0, 0)`` (the C++ call still
needs some tmp tile: :func:`tmp_tile` declares a one-block tile then).

The facts are taken from the pto-isa doc pages (docs/isa/<NAME>.md) and, where a page is
unclear, from the A2/A3 implementation headers (include/pto/npu/a2a3/*.hpp); each rule's
docstring says which and restates the fact in our words. Notation: ``s`` element size in
bytes, ``B = 32 / s`` elements per 32-byte block, ``E = 256 / s`` elements per vector repeat,
``R``/``C`` the valid rows/columns of the source, ``RS`` the TTRANS row stride (32 for 1-byte
types, 16 otherwise).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import sympy  # type: ignore[import-untyped]
from sympy import Eq, Max, Piecewise, ceiling, floor

from polykrnl.errors import TileConstraintError
from polykrnl.targets.pto.dtypes import F32, U32, DType, dtype
from polykrnl.targets.pto.types import Arch, Loc, TileType, arch

__all__ = [
    "TMP_RULES",
    "VALID_COL",
    "VALID_ROW",
    "TmpRule",
    "TmpShape",
    "check",
    "tmp_bytes",
    "tmp_shape",
    "tmp_tile",
    "ttrans_row_stride",
    "ttrans_tmp_always_enough",
    "ttrans_tmp_documented",
]

Num: TypeAlias = int | sympy.Expr

#: Default symbols for the valid rows and columns of an instruction's source tile.
VALID_ROW = sympy.Symbol("valid_row", integer=True, positive=True)
VALID_COL = sympy.Symbol("valid_col", integer=True, positive=True)

_ZERO = sympy.Integer(0)


def _s(x: Num) -> sympy.Expr:
    return sympy.sympify(x)


def _cdiv(a: Num, b: Num) -> sympy.Expr:
    return ceiling(_s(a) / _s(b))


def _rup(a: Num, b: Num) -> sympy.Expr:
    """``a`` rounded up to a multiple of ``b``."""
    return _cdiv(a, b) * _s(b)


@dataclass(frozen=True)
class TmpShape:
    """The tmp tile to declare: ``rows x cols`` elements of ``dtype``, row-major Vec.

    ``valid_row``/``valid_col`` are the valid dims the tile must carry (the storage shape
    unless the instruction checks them, as TPOW does).
    """

    rows: sympy.Expr
    cols: sympy.Expr
    dtype: DType
    valid_row: sympy.Expr | None = None
    valid_col: sympy.Expr | None = None

    @property
    def bytes(self) -> sympy.Expr:
        return self.rows * self.cols * self.dtype.size

    @property
    def unused(self) -> bool:
        return bool(self.rows == 0 and self.cols == 0)


_NONE_USED = (_ZERO, _ZERO)

ShapeFn = Callable[[DType, Arch, Mapping[str, Any]], tuple[sympy.Expr, sympy.Expr]]


@dataclass(frozen=True)
class TmpRule:
    """How big the tmp tile of one instruction must be.

    ``params`` are the keyword sizes :func:`tmp_shape` needs besides ``dtype`` (``defaults``
    holds the optional ones); ``dtypes`` the element types each architecture accepts;
    ``shape`` computes ``(rows, cols)`` for an architecture that uses the tmp;
    ``tmp_dtype`` the tmp's element type given the operands' one.
    """

    name: str
    doc: str
    params: tuple[str, ...]
    dtypes: Mapping[str, frozenset[str]]
    shape: ShapeFn
    tmp_dtype: Callable[[DType], DType] = field(default=lambda t: t)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    valid_equals_dst: bool = False  # the instruction checks tmp's valid shape == dst's
    summary: str = ""


# --------------------------------------------------------------------------- TTRANS


def ttrans_row_stride(elem_size: Num) -> sympy.Expr:
    """TTRANS row stride RS: 32 elements for 1-byte types, 16 for 2- and 4-byte types."""
    s = _s(elem_size)
    if s.is_number:
        return sympy.Integer(32 if int(s) == 1 else 16)
    return Piecewise((32, Eq(s, 1)), (16, True))


def ttrans_tmp_documented(valid_row: Num, valid_col: Num, elem_size: Num) -> sympy.Expr:
    """The 2-D TTRANS tmp bytes of the doc page TTRANS: ``W * ceil(H / RS) * RS * s`` with
    H = valid rows, W = valid columns. Kept for comparison only: it can be too small."""
    rs = ttrans_row_stride(elem_size)
    return _s(valid_col) * _rup(valid_row, rs) * _s(elem_size)


def ttrans_tmp_always_enough(valid_row: Num, valid_col: Num, elem_size: Num) -> sympy.Expr:
    """The 2-D TTRANS tmp bytes that always suffice: ``roundup(W, B) * roundup(H, RS) * s``.

    The A2/A3 implementation transposes whole 32-byte blocks, so it writes ``roundup(W, B)``
    rows of ``roundup(H, RS)`` elements into tmp; the documented formula counts only W rows
    and is short when W is not a multiple of B.
    """
    s = _s(elem_size)
    rs = ttrans_row_stride(s)
    return _rup(valid_col, 32 / s) * _rup(valid_row, rs) * s


def _bytes_as_row(nbytes: sympy.Expr, t: DType) -> tuple[sympy.Expr, sympy.Expr]:
    """A one-row tile of ``nbytes`` (a multiple of 32 in every use here)."""
    return (sympy.Integer(1), sympy.simplify(nbytes / t.size))


def _ttrans_2d(t: DType, a: Arch, p: Mapping[str, Any]) -> tuple[sympy.Expr, sympy.Expr]:
    return _bytes_as_row(ttrans_tmp_always_enough(p["valid_row"], p["valid_col"], t.size), t)


def _nchw_to_nc1hwc0(t: DType, a: Arch, p: Mapping[str, Any]) -> tuple[sympy.Expr, sympy.Expr]:
    rs = ttrans_row_stride(t.size)
    return _bytes_as_row(_s(p["H"]) * _s(p["W"]) * _rup(p["C0"], rs) * t.size, t)


def _nc1hwc0_to_nchw(t: DType, a: Arch, p: Mapping[str, Any]) -> tuple[sympy.Expr, sympy.Expr]:
    rs = ttrans_row_stride(t.size)
    return _bytes_as_row(_s(p["C0"]) * _rup(_s(p["H"]) * _s(p["W"]), rs) * t.size, t)


def _to_fractal_z(t: DType, a: Arch, p: Mapping[str, Any]) -> tuple[sympy.Expr, sympy.Expr]:
    return _NONE_USED


def _ncdhw_to_fz3d(t: DType, a: Arch, p: Mapping[str, Any]) -> tuple[sympy.Expr, sympy.Expr]:
    rs = ttrans_row_stride(t.size)
    n, c, h, w, c0 = (_s(p[k]) for k in ("N", "C", "H", "W", "C0"))
    plane = n * _cdiv(c, c0) * c0 * h * w
    return _bytes_as_row((plane + Max(plane, h * w * _rup(c0, rs))) * t.size, t)


# --------------------------------------------------------------------------- reductions


def _e(t: DType) -> int:
    return 256 // t.size


def _b(t: DType) -> int:
    return 32 // t.size


def _row_reduce(kind: str) -> ShapeFn:
    def shape(t: DType, a: Arch, p: Mapping[str, Any]) -> tuple[sympy.Expr, sympy.Expr]:
        if t.is_int:
            return (sympy.Integer(1), sympy.Integer(_b(t)))
        r, c, e = _s(p["valid_row"]), _s(p["valid_col"]), _e(t)
        cols: sympy.Expr = sympy.Integer(e)
        if kind == "sum":
            cols = Max(e, floor(floor(c / e) / 2) * e)
        elif p["dst_dn"] and t == F32:
            # the [8, 1024] float path with a one-column DN dst reduces through a
            # contiguous [8, 128] intermediate in tmp
            cols = Piecewise((128, Eq(r, 8) & Eq(c, 1024)), (e, True))
        return (Piecewise((0, c <= e), (r, True)), Piecewise((0, c <= e), (cols, True)))

    return shape


def _row_prod(t: DType, a: Arch, p: Mapping[str, Any]) -> tuple[sympy.Expr, sympy.Expr]:
    return (sympy.Integer(1), sympy.Integer(_b(t)))


def _col_sum(t: DType, a: Arch, p: Mapping[str, Any]) -> tuple[sympy.Expr, sympy.Expr]:
    if not p["binary"]:
        return _NONE_USED
    return (_cdiv(p["valid_row"], 2), _rup(p["valid_col"], _b(t)))


def _row_arg(t: DType, a: Arch, p: Mapping[str, Any]) -> tuple[sympy.Expr, sympy.Expr]:
    r, c, e, b = _s(p["valid_row"]), _s(p["valid_col"]), _e(t), _b(t)
    r1 = _cdiv(c, e)
    r2 = _cdiv(r1, e)
    stage1 = (_cdiv(2 * r1, b) + _cdiv(r1, b)) * b
    stage2 = Max(_cdiv(2 * r1, b) * b, _cdiv(r1, b) * b + _cdiv(2 * r2, b) * b) + 2
    if p["with_value"]:
        # C <= E: one value and one index per row, in a block-wide row
        return (r, Piecewise((b, c <= e), (stage1, c <= e * e), (_rup(stage2, b), True)))
    return (
        Piecewise((0, c <= e), (r, True)),
        Piecewise((0, c <= e), (stage1, c <= e * e), (_rup(stage2, b), True)),
    )


def _col_arg(t: DType, a: Arch, p: Mapping[str, Any]) -> tuple[sympy.Expr, sympy.Expr]:
    c, e, b = _s(p["valid_col"]), _e(t), _b(t)
    gap = Piecewise((e, c >= e), (_rup(c, b), True))
    regions = 3 if t.size == 2 and not p["with_value"] else 2
    return (sympy.Integer(1), regions * gap)


def _row_expand(t: DType, a: Arch, p: Mapping[str, Any]) -> tuple[sympy.Expr, sympy.Expr]:
    r = _s(p["valid_row"])
    nbytes = Piecewise((_cdiv(r, 8) * 256, r < 256), (7680, True))
    return (sympy.Integer(1), nbytes / t.size)


def _sort32(t: DType, a: Arch, p: Mapping[str, Any]) -> tuple[sympy.Expr, sympy.Expr]:
    c = _s(p["valid_col"])
    whole_row = c <= 8160 if a.name == "a2a3" else c * t.size <= 8160
    return (sympy.Integer(1), Piecewise((_rup(c, 32), whole_row), (32, True)))


def _mrgsort(t: DType, a: Arch, p: Mapping[str, Any]) -> tuple[sympy.Expr, sympy.Expr]:
    return (sympy.Integer(1), sympy.Add(*(_s(x) for x in p["list_cols"])))


def _tci(t: DType, a: Arch, p: Mapping[str, Any]) -> tuple[sympy.Expr, sympy.Expr]:
    # bytes 768 (b32) or 1792 (b16), as float elements
    return (sympy.Integer(1), sympy.Integer(192 if t.size == 4 else 448))


def _tsel(t: DType, a: Arch, p: Mapping[str, Any]) -> tuple[sympy.Expr, sympy.Expr]:
    return (sympy.Integer(1), sympy.Integer(8))  # one block of uint32 holds the 2 or 4 words


def _tsels(t: DType, a: Arch, p: Mapping[str, Any]) -> tuple[sympy.Expr, sympy.Expr]:
    return (sympy.Integer(1), sympy.Integer(_b(t)))


def _trem(t: DType, a: Arch, p: Mapping[str, Any]) -> tuple[sympy.Expr, sympy.Expr]:
    cols = _s(p["cols"])
    return (sympy.Integer(1), _rup(cols + 2 * _cdiv(cols, 64), _b(t)))


def _tpow(t: DType, a: Arch, p: Mapping[str, Any]) -> tuple[sympy.Expr, sympy.Expr]:
    if t.is_int:
        return _NONE_USED
    return (_s(p["valid_row"]), _rup(p["valid_col"], _b(t)))


# --------------------------------------------------------------------------- the table


def _types(*names: str) -> frozenset[str]:
    return frozenset(names)


_B124 = _types("i8", "u8", "i16", "u16", "f16", "bf16", "i32", "u32", "f32")
_B24 = _types("i16", "u16", "f16", "bf16", "i32", "u32", "f32")
_RED = _types("f16", "f32", "i32", "i16")
_EXP_A2 = _types("f16", "f32", "i16", "i32")
_EXP_A5 = _EXP_A2 | _types("u16", "u32", "bf16", "i8", "u8")
_POW_A2 = _types("i32", "i16", "i8", "u32", "u16", "u8", "f32")

_RR = ("valid_row", "valid_col")


def _rule(
    name: str,
    doc: str,
    params: tuple[str, ...],
    a2a3: frozenset[str],
    a5: frozenset[str],
    shape: ShapeFn,
    summary: str,
    **kw: Any,
) -> TmpRule:
    return TmpRule(name, doc, params, {"a2a3": a2a3, "a5": a5}, shape, summary=summary, **kw)


_CONV = ("H", "W", "C0")

_RULES: list[TmpRule] = [
    _rule(
        "TTRANS",
        "TTRANS",
        _RR,
        _B124,
        _B124,
        _ttrans_2d,
        "2-D transpose [H, W] -> [W, H]: roundup(W, B) * roundup(H, RS) * s bytes on A2/A3 "
        "(the always-enough size; see ttrans_tmp_documented for the doc's); none on A5",
    ),
    _rule(
        "TTRANS_NCHW_NC1HWC0",
        "TTRANS",
        _CONV,
        _B124,
        _B124,
        _nchw_to_nc1hwc0,
        "NCHW -> NC1HWC0: H * W * roundup(C0, RS) * s bytes",
    ),
    _rule(
        "TTRANS_NC1HWC0_NCHW",
        "TTRANS",
        _CONV,
        _B124,
        _B124,
        _nc1hwc0_to_nchw,
        "NC1HWC0 -> NCHW: C0 * roundup(H * W, RS) * s bytes",
    ),
    _rule(
        "TTRANS_GNCHW_GNC1HWC0",
        "TTRANS",
        _CONV,
        _B124,
        _B124,
        _nchw_to_nc1hwc0,
        "GNCHW -> GNC1HWC0: as NCHW -> NC1HWC0",
    ),
    _rule(
        "TTRANS_GNC1HWC0_GNCHW",
        "TTRANS",
        _CONV,
        _B124,
        _B124,
        _nc1hwc0_to_nchw,
        "GNC1HWC0 -> GNCHW: as NC1HWC0 -> NCHW",
    ),
    _rule(
        "TTRANS_NC1HWC0_FRACTAL_Z",
        "TTRANS",
        (),
        _B124,
        _B124,
        _to_fractal_z,
        "NC1HWC0 -> FRACTAL_Z: a direct rearrangement, no tmp",
    ),
    _rule(
        "TTRANS_GNC1HWC0_FRACTAL_Z",
        "TTRANS",
        (),
        _B124,
        _B124,
        _to_fractal_z,
        "GNC1HWC0 -> FRACTAL_Z: a direct rearrangement, no tmp",
    ),
    _rule(
        "TTRANS_NCDHW_FRACTAL_Z_3D",
        "TTRANS",
        ("N", "C", "H", "W", "C0"),
        _B124,
        _B124,
        _ncdhw_to_fz3d,
        "NCDHW -> FRACTAL_Z_3D: (P + max(P, H * W * roundup(C0, RS))) * s bytes with "
        "P = N * ceil(C / C0) * C0 * H * W (a plane buffer, then either a second plane or "
        "the transpose tmp, chosen at run time)",
    ),
    _rule(
        "TROWSUM",
        "TROWSUM",
        _RR,
        _RED,
        _types("f16", "f32", "i32", "i64", "u64", "i16"),
        _row_reduce("sum"),
        "integers: one 32-byte block (a per-row accumulator); floats: unused when C <= E, "
        "else R rows of max(E, floor(floor(C / E) / 2) * E) columns (the first level of the "
        "pairwise tree writes floor(C / E) / 2 repeats per row; the tmp's Cols is its row "
        "pitch); none on A5",
    ),
    _rule(
        "TROWMAX",
        "TROWMAX",
        (*_RR, "dst_dn"),
        _RED,
        _RED | _types("i64", "u64", "i8", "u8"),
        _row_reduce("max"),
        "integers: one block; floats: unused when C <= E, else R rows of E columns (one "
        "repeat per row; with fewer than E columns the implementation silently does "
        "nothing); f32 [8, 1024] into a one-column DN dst: 8 x 128; none on A5",
        defaults={"dst_dn": False},
    ),
    _rule(
        "TROWMIN",
        "TROWMIN",
        (*_RR, "dst_dn"),
        _RED,
        _RED | _types("i64", "u64", "i8", "u8"),
        _row_reduce("min"),
        "as TROWMAX",
        defaults={"dst_dn": False},
    ),
    _rule(
        "TROWPROD",
        "TROWPROD",
        _RR,
        _RED,
        _RED,
        _row_prod,
        "one 32-byte block (a per-row accumulator), every type; none on A5",
    ),
    _rule(
        "TCOLSUM",
        "TCOLSUM",
        (*_RR, "binary"),
        _RED,
        _types("f16", "f32", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "bf16"),
        _col_sum,
        "binary-tree form: ceil(R / 2) rows, a row pitch of at least C elements (both "
        "architectures); the sequential form uses none",
        defaults={"binary": True},
    ),
    _rule(
        "TROWARGMAX",
        "TROWARGMAX",
        (*_RR, "with_value"),
        _RED,
        _B24,
        _row_arg,
        "C <= E: none (index only) or R x B (value + index); E < C <= E^2: R rows of "
        "(ceil(2 R1 / B) + ceil(R1 / B)) * B with R1 = ceil(C / E); larger: R rows of "
        "max(ceil(2 R1 / B) B, ceil(R1 / B) B + ceil(2 R2 / B) B) + 2 (rounded up to B) "
        "with R2 = ceil(R1 / E); none on A5",
        defaults={"with_value": False},
    ),
    _rule(
        "TROWARGMIN",
        "TROWARGMIN",
        (*_RR, "with_value"),
        _RED,
        _B24,
        _row_arg,
        "as TROWARGMAX",
        defaults={"with_value": False},
    ),
    _rule(
        "TCOLARGMAX",
        "TCOLARGMAX",
        (*_RR, "with_value"),
        _types("f16", "f32", "u16", "u32"),
        _types("i8", "u8", "i16", "u16", "i32", "u32", "f16", "f32"),
        _col_arg,
        "one row of regions of G = E (C >= E) or roundup(C, B) elements: the row counter and "
        "the running values always (the A2/A3 header keeps both in tmp), plus the index "
        "region for 2-byte sources in index-only mode (3 G); none on A5",
        defaults={"with_value": False},
    ),
    _rule(
        "TCOLARGMIN",
        "TCOLARGMIN",
        (*_RR, "with_value"),
        _types("f16", "f32", "u16", "u32"),
        _types("i8", "u8", "i16", "u16", "i32", "u32", "f16", "f32"),
        _col_arg,
        "as TCOLARGMAX",
        defaults={"with_value": False},
    ),
    *(
        _rule(
            f"TROWEXPAND{op}",
            f"TROWEXPAND{op}",
            ("valid_row",),
            _types("f16", "f32") if op in ("DIV", "EXPDIF") else _EXP_A2,
            _types("f16", "f32") if op == "EXPDIF" else _EXP_A5,
            _row_expand,
            "one scalar per row broadcast to a 32-byte block, 8 rows per 256-byte repeat: "
            "ceil(R / 8) * 256 bytes for R < 256, else 7680 (30 repeats reused per loop); "
            "none on A5",
        )
        for op in ("ADD", "SUB", "MUL", "DIV", "MAX", "MIN", "EXPDIF")
    ),
    _rule(
        "TSORT32",
        "TSORT32",
        ("valid_col",),
        _types("f16", "f32"),
        _types("f16", "f32"),
        _sort32,
        "4-argument form: the whole row padded to roundup(C, 32) elements when it fits "
        "(A2/A3: C <= 8160 elements; A5: C * s <= 8160 bytes), else one 32-element tail block",
    ),
    _rule(
        "TMRGSORT",
        "TMRGSORT",
        ("list_cols",),
        _types("f16", "f32"),
        _types("f16", "f32"),
        _mrgsort,
        "multi-list forms: one row of at least the sum of the source lists' Cols",
    ),
    _rule(
        "TCI",
        "TCI",
        (),
        _B24,
        _types("i16", "u16", "i32", "u32"),
        _tci,
        "vectorized path: 768 bytes for 4-byte types, 1792 for 2-byte types, held as float; "
        "none on A5",
        tmp_dtype=lambda t: F32,
    ),
    _rule(
        "TSEL",
        "TSEL",
        (),
        _B24,
        _B24 | _types("i8", "u8", "i64", "u64"),
        _tsel,
        "uint32 compare-mask words: 4 (2-byte data) or 2 (4-byte data), one block declared; "
        "none on A5",
        tmp_dtype=lambda t: U32,
    ),
    _rule(
        "TSELS",
        "TSELS",
        (),
        _B24,
        _types("i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "f32"),
        _tsels,
        "one element holding the scalar (one block declared), same type as src; none on A5",
    ),
    _rule(
        "TREM",
        "TREM",
        ("cols",),
        _types("f32", "i32"),
        _types("f16", "f32", "i16", "u16", "i32", "u32", "i64", "u64"),
        _trem,
        "one row of dst.Cols + 2 * ceil(dst.Cols / 64) elements (rounded up to B); none on A5",
    ),
    *(
        _rule(
            name,
            name,
            _RR,
            _POW_A2,
            _POW_A2 | _types("f16", "bf16"),
            _tpow,
            "floats: a tile with the same valid shape as dst; integers: none; none on A5",
            valid_equals_dst=True,
        )
        for name in ("TPOW", "TPOWS")
    ),
]

#: One rule per instruction (key: instruction name, upper case).
TMP_RULES: dict[str, TmpRule] = {r.name: r for r in _RULES}


# --------------------------------------------------------------------------- API


def _rule_of(instr: str) -> TmpRule:
    key = instr.strip().upper()
    if key not in TMP_RULES:
        raise TileConstraintError(
            f"no tmp-size rule for instruction {instr!r}",
            hint=f"instructions with a tmp tile: {', '.join(sorted(TMP_RULES))}",
        )
    return TMP_RULES[key]


def _params(rule: TmpRule, given: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(given) - set(rule.params))
    if unknown:
        raise TileConstraintError(
            f"{rule.name}: unknown size parameter(s) {', '.join(unknown)}",
            hint=f"{rule.name} takes {', '.join(rule.params) or 'no sizes'}",
        )
    p = {**rule.defaults, **given}
    missing = [k for k in rule.params if k not in p]
    if missing:
        raise TileConstraintError(
            f"{rule.name}: size parameter(s) {', '.join(missing)} missing",
            hint=f"{rule.name} takes {', '.join(rule.params)}",
        )
    for k, v in p.items():
        if isinstance(v, bool) or k == "list_cols":
            continue
        e = _s(v)
        if e.is_number and (not e.is_integer or e < 1):
            raise TileConstraintError(
                f"{rule.name}: {k} = {v} is not a positive integer",
                hint="sizes are element counts of at least 1",
            )
    if "list_cols" in p:
        n = len(p["list_cols"])
        if not 2 <= n <= 4:
            raise TileConstraintError(
                f"TMRGSORT: {n} source lists given, the tmp form merges 2, 3 or 4",
                hint="use the single-list TMRGSORT (no tmp) for one list",
            )
    return p


def _check_dtype(rule: TmpRule, a: Arch, t: DType) -> None:
    allowed = rule.dtypes[a.name]
    if t.name not in allowed:
        raise TileConstraintError(
            f"{rule.name} on {a.name}: element type {t} is not supported "
            f"(supported: {', '.join(sorted(allowed))})",
            hint=f"convert the operands to one of these types (doc page {rule.doc})",
        )


def tmp_shape(instr: str, arch_name: str | Arch, *, dtype: DType | str, **sizes: Any) -> TmpShape:
    """The tmp tile ``instr`` needs on ``arch_name`` for operands of element type ``dtype``.

    ``sizes`` are the rule's parameters (``TMP_RULES[instr].params``), ints or sympy
    expressions. Raises TileConstraintError for an unknown instruction, a missing or unknown
    parameter, or an element type the instruction does not take on that architecture.
    """
    rule, a, t = _rule_of(instr), arch(arch_name), _dtype(dtype)
    p = _params(rule, sizes)
    _check_dtype(rule, a, t)
    tt = rule.tmp_dtype(t)
    if not a.uses_tmp(rule.name):
        return TmpShape(_ZERO, _ZERO, tt)
    rows, cols = rule.shape(t, a, p)
    vr = vc = None
    if rule.valid_equals_dst and not t.is_int:
        vr, vc = _s(p["valid_row"]), _s(p["valid_col"])
    return TmpShape(_s(rows), _s(cols), tt, vr, vc)


def tmp_bytes(instr: str, arch_name: str | Arch, *, dtype: DType | str, **sizes: Any) -> sympy.Expr:
    """Bytes of the tmp tile of ``instr`` (0 where the architecture ignores the tmp)."""
    return tmp_shape(instr, arch_name, dtype=dtype, **sizes).bytes


def _dtype(x: DType | str) -> DType:
    return dtype(x)


def tmp_tile(instr: str, arch_name: str | Arch, *, dtype: DType | str, **sizes: int) -> TileType:
    """The Vec tile to declare as tmp, for concrete sizes: the rule's shape, or one 32-byte
    block when the tmp is unused (the C++ call still takes a tmp)."""
    shape = tmp_shape(instr, arch_name, dtype=dtype, **sizes)
    t = shape.dtype
    rows, cols = int(shape.rows), int(shape.cols)
    if rows == 0 or cols == 0:
        return TileType(Loc.Vec, t, 1, t.elems_per_block)
    vr = int(shape.valid_row) if shape.valid_row is not None else rows
    vc = int(shape.valid_col) if shape.valid_col is not None else cols
    return TileType(Loc.Vec, t, rows, cols, valid_row=vr, valid_col=vc)


def check(
    instr: str,
    arch_name: str | Arch,
    *,
    dtype: DType | str,
    tmp: TileType | None = None,
    **sizes: Any,
) -> TmpShape:
    """Check an instruction's operands against its doc page's rules and, when ``tmp`` is
    given, that the tmp tile is big enough; return the needed shape.

    Besides what :func:`tmp_shape` checks: the tmp must be a row-major, unboxed Vec tile of
    the rule's element type, with at least the needed rows and row pitch (its Cols);
    TMRGSORT's sources and tmp must fit the UB. Sizes must be concrete ints for the tmp check.
    """
    shape = tmp_shape(instr, arch_name, dtype=dtype, **sizes)
    rule, a = _rule_of(instr), arch(arch_name)
    if rule.name == "TMRGSORT":
        t = _dtype(dtype)
        total = sum(int(c) for c in sizes["list_cols"]) + int(shape.cols)
        cap = a.capacity_of(Loc.Vec)
        if total * t.size >= cap:
            raise TileConstraintError(
                f"TMRGSORT on {a.name}: sources and tmp hold {total} elements of {t} = "
                f"{total * t.size} bytes, not below the UB size {cap}",
                hint="merge shorter lists",
            )
    if tmp is None or shape.unused:
        return shape
    where = f"{rule.name} on {a.name}: tmp {tmp.cpp}"
    if tmp.loc is not Loc.Vec or not tmp.is_row_major or tmp.boxed:
        raise TileConstraintError(
            f"{where} is not a row-major unboxed Vec tile",
            hint="declare the tmp as Tile<TileType::Vec, T, rows, cols>",
        )
    if tmp.dtype != shape.dtype:
        raise TileConstraintError(
            f"{where} holds {tmp.dtype}, the instruction needs {shape.dtype}",
            hint=f"declare the tmp with element type {shape.dtype.cpp}",
        )
    need_r, need_c = int(shape.rows), int(shape.cols)
    if tmp.rows < need_r or tmp.cols < need_c:
        raise TileConstraintError(
            f"{where} is {tmp.rows} x {tmp.cols}, the instruction needs at least "
            f"{need_r} x {need_c} ({need_r * need_c * shape.dtype.size} bytes)",
            hint=f"declare the tmp with {max(need_r, tmp.rows)} rows and "
            f"{max(need_c, tmp.cols)} columns",
        )
    if shape.valid_row is not None and (tmp.valid_row, tmp.valid_col) != (
        int(shape.valid_row),
        int(shape.valid_col) if shape.valid_col is not None else None,
    ):
        raise TileConstraintError(
            f"{where} has valid shape {tmp.valid_row} x {tmp.valid_col}, the instruction "
            f"checks it equals dst's {shape.valid_row} x {shape.valid_col}",
            hint="give the tmp the same valid rows and columns as dst",
        )
    return shape


def rule_table() -> list[tuple[str, str, str]]:
    """(instruction, doc page, summary) for every rule, for documentation and display."""
    return [(r.name, r.doc, r.summary) for r in _RULES]
