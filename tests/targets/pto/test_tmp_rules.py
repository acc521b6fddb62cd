"""tmp-size rules: every sympy rule against a plain-integer oracle written from the doc text.

The oracles below use only ints, loops and ifs (no sympy); each restates the rule of the
instruction's pto-isa doc page (or, where noted, of the A2/A3 header) independently of
polykrnl/targets/pto/tmp_rules.py.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
import sympy

from polykrnl.targets.pto.dtypes import DTYPES
from polykrnl.targets.pto.tmp_rules import (
    TMP_RULES,
    VALID_COL,
    VALID_ROW,
    check,
    tmp_bytes,
    tmp_shape,
    tmp_tile,
    ttrans_tmp_always_enough,
    ttrans_tmp_documented,
)
from polykrnl.targets.pto.types import arch

SIZE = {name: t.size for name, t in DTYPES.items()}
ROWS = [1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 255, 256, 300]
COLS = [1, 5, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 200, 256, 300, 1000, 1024]


def cdiv(a: int, b: int) -> int:
    q = a // b
    if q * b < a:
        q += 1
    return q


def roundup(a: int, b: int) -> int:
    return cdiv(a, b) * b


def row_stride(s: int) -> int:
    return 32 if s == 1 else 16


# ------------------------------------------------------------------ oracles (bytes, A2/A3)


def o_ttrans(s: int, valid_row: int, valid_col: int) -> int:
    # blocks of 32 bytes are transposed: roundup(W, 32/s) rows of roundup(H, RS) elements
    return roundup(valid_col, 32 // s) * roundup(valid_row, row_stride(s)) * s


def o_ttrans_doc(s: int, valid_row: int, valid_col: int) -> int:
    return valid_col * cdiv(valid_row, row_stride(s)) * row_stride(s) * s


def o_row_reduce(kind: str, t: str, valid_row: int, valid_col: int, dst_dn: bool = False) -> int:
    s = SIZE[t]
    if t.startswith("i"):
        return 32  # one block per row, reused
    e = 256 // s
    if valid_col <= e:
        return 0
    if kind == "sum":
        repeats = valid_col // e
        cols = (repeats // 2) * e
        if cols < e:
            cols = e
    else:
        cols = e
        if dst_dn and t == "f32" and valid_row == 8 and valid_col == 1024:
            cols = 128
    return valid_row * cols * s


def o_colsum(t: str, valid_row: int, valid_col: int, binary: bool = True) -> int:
    s = SIZE[t]
    if not binary:
        return 0
    rows = (valid_row + 1) // 2
    return rows * roundup(valid_col, 32 // s) * s


def o_row_arg(t: str, valid_row: int, valid_col: int, with_value: bool = False) -> int:
    s = SIZE[t]
    e, b = 256 // s, 32 // s
    if valid_col <= e:
        return valid_row * b * s if with_value else 0
    r1 = cdiv(valid_col, e)
    if valid_col <= e * e:
        stride = (cdiv(r1 * 2, b) + cdiv(r1, b)) * b
    else:
        r2 = cdiv(r1, e)
        stage1 = cdiv(r1 * 2, b) * b
        stage2_end = cdiv(r1, b) * b + cdiv(r2 * 2, b) * b
        stride = roundup(max(stage1, stage2_end) + 2, b)
    return valid_row * stride * s


def o_col_arg(t: str, valid_row: int, valid_col: int, with_value: bool = False) -> int:
    s = SIZE[t]
    e, b = 256 // s, 32 // s
    gap = e if valid_col >= e else roundup(valid_col, b)
    regions = 3 if (s == 2 and not with_value) else 2
    return regions * gap * s


def o_row_expand(t: str, valid_row: int) -> int:
    if valid_row < 256:
        return cdiv(valid_row, 8) * 256
    return 30 * 256


def o_sort32(arch_name: str, t: str, valid_col: int) -> int:
    s = SIZE[t]
    fits = valid_col <= 8160 if arch_name == "a2a3" else valid_col * s <= 8160
    return (roundup(valid_col, 32) if fits else 32) * s


def o_trem(t: str, cols: int) -> int:
    s = SIZE[t]
    return roundup(cols + cdiv(cols, 64) * 2, 32 // s) * s


def o_tpow(t: str, valid_row: int, valid_col: int) -> int:
    s = SIZE[t]
    if not t.startswith("f"):
        return 0
    return valid_row * roundup(valid_col, 32 // s) * s


def o_tci(t: str) -> int:
    return 768 if SIZE[t] == 4 else 1792


# ------------------------------------------------------------------ grid comparisons


def _grid_rc() -> list[tuple[int, int]]:
    return list(itertools.product(ROWS, COLS))


def _cmp(
    instr: str, t: str, oracle: Callable[..., int], arch_name: str = "a2a3", **kw: Any
) -> None:
    """The rule evaluated on the symbols then substituted equals the rule on ints equals
    the oracle, for every (valid_row, valid_col) of the grid."""
    rule = TMP_RULES[instr]
    sym_kw = {k: v for k, v in kw.items() if k not in ("valid_row", "valid_col")}
    if "valid_row" in rule.params:
        sym_kw["valid_row"] = VALID_ROW
    if "valid_col" in rule.params:
        sym_kw["valid_col"] = VALID_COL
    expr = tmp_bytes(instr, arch_name, dtype=t, **sym_kw)
    f = sympy.lambdify((VALID_ROW, VALID_COL), expr, modules=[{"ceiling": _ceil}, "sympy"])
    for r, c in _grid_rc():
        args = {"valid_row": r, "valid_col": c}
        direct_kw = {**kw, **{k: v for k, v in args.items() if k in rule.params}}
        direct = tmp_bytes(instr, arch_name, dtype=t, **direct_kw)
        want = oracle(**{k: v for k, v in direct_kw.items() if k in _oracle_params(oracle)})
        assert direct == want, (instr, t, r, c, direct, want)
        assert int(f(r, c)) == want, (instr, t, r, c, "symbolic")


def _ceil(x: Any) -> Any:
    return sympy.ceiling(x)


def _oracle_params(f: Callable[..., int]) -> set[str]:
    return set(f.__code__.co_varnames[: f.__code__.co_argcount])


@pytest.mark.parametrize("t", ["i8", "u8", "i16", "f16", "bf16", "i32", "f32"])
def test_ttrans_2d(t: str) -> None:
    _cmp("TTRANS", t, lambda valid_row, valid_col: o_ttrans(SIZE[t], valid_row, valid_col))


@pytest.mark.parametrize("kind", ["TROWSUM", "TROWMAX", "TROWMIN"])
@pytest.mark.parametrize("t", ["f32", "f16", "i32", "i16"])
def test_row_reductions(kind: str, t: str) -> None:
    k = "sum" if kind == "TROWSUM" else "max"
    _cmp(kind, t, lambda valid_row, valid_col: o_row_reduce(k, t, valid_row, valid_col))


@pytest.mark.parametrize("kind", ["TROWMAX", "TROWMIN"])
def test_row_max_dn_special_shape(kind: str) -> None:
    _cmp(
        kind,
        "f32",
        lambda valid_row, valid_col: o_row_reduce("max", "f32", valid_row, valid_col, True),
        dst_dn=True,
    )
    # checked by hand: [8, 1024] f32 reduces through [8, 128] floats = 4096 bytes
    assert tmp_bytes(kind, "a2a3", dtype="f32", valid_row=8, valid_col=1024, dst_dn=True) == 4096


@pytest.mark.parametrize("t", ["f32", "f16", "i32", "i16"])
def test_rowprod(t: str) -> None:
    _cmp("TROWPROD", t, lambda valid_row, valid_col: 32)


@pytest.mark.parametrize("t", ["f32", "f16", "i32", "i16"])
@pytest.mark.parametrize("binary", [True, False])
def test_colsum(t: str, binary: bool) -> None:
    _cmp(
        "TCOLSUM",
        t,
        lambda valid_row, valid_col: o_colsum(t, valid_row, valid_col, binary),
        binary=binary,
    )


@pytest.mark.parametrize("kind", ["TROWARGMAX", "TROWARGMIN"])
@pytest.mark.parametrize("t", ["f32", "f16", "i32", "i16"])
@pytest.mark.parametrize("with_value", [False, True])
def test_row_arg(kind: str, t: str, with_value: bool) -> None:
    _cmp(
        kind,
        t,
        lambda valid_row, valid_col: o_row_arg(t, valid_row, valid_col, with_value),
        with_value=with_value,
    )


def test_row_arg_stage2_by_hand() -> None:
    # f32, C = 5000 > 64^2: R1 = 79, R2 = 2; stage1 = ceil(158/8)*8 = 160,
    # stage2_end = 80 + 8 = 88; stride = 160 + 2 -> 168 (rounded to 8) -> 3 rows * 168 * 4
    assert tmp_bytes("TROWARGMAX", "a2a3", dtype="f32", valid_row=3, valid_col=5000) == 3 * 168 * 4


@pytest.mark.parametrize("kind", ["TCOLARGMAX", "TCOLARGMIN"])
@pytest.mark.parametrize("t", ["f32", "f16", "u32", "u16"])
@pytest.mark.parametrize("with_value", [False, True])
def test_col_arg(kind: str, t: str, with_value: bool) -> None:
    _cmp(
        kind,
        t,
        lambda valid_row, valid_col: o_col_arg(t, valid_row, valid_col, with_value),
        with_value=with_value,
    )


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL", "DIV", "MAX", "MIN", "EXPDIF"])
@pytest.mark.parametrize("t", ["f32", "f16"])
def test_row_expand(op: str, t: str) -> None:
    _cmp(f"TROWEXPAND{op}", t, lambda valid_row: o_row_expand(t, valid_row))
    # the documented shape-independent bound
    for r in range(1, 600):
        assert tmp_bytes(f"TROWEXPAND{op}", "a2a3", dtype=t, valid_row=r) <= 8192


@pytest.mark.parametrize("t", ["f32", "f16"])
@pytest.mark.parametrize("arch_name", ["a2a3", "a5"])
def test_sort32(t: str, arch_name: str) -> None:
    for c in [*COLS, 2040, 2041, 4080, 4081, 8160, 8161, 9000]:
        want = o_sort32(arch_name, t, c)
        assert tmp_bytes("TSORT32", arch_name, dtype=t, valid_col=c) == want
        expr = tmp_bytes("TSORT32", arch_name, dtype=t, valid_col=VALID_COL)
        assert expr.subs(VALID_COL, c) == want


@pytest.mark.parametrize("t", ["f32", "f16"])
@pytest.mark.parametrize("arch_name", ["a2a3", "a5"])
def test_mrgsort(t: str, arch_name: str) -> None:
    for lists in [(64, 64), (128, 256, 64), (256, 256, 256, 256), (1024, 32)]:
        want = sum(lists) * SIZE[t]
        assert tmp_bytes("TMRGSORT", arch_name, dtype=t, list_cols=lists) == want
    a, b = sympy.symbols("a b", integer=True, positive=True)
    e = tmp_bytes("TMRGSORT", "a2a3", dtype=t, list_cols=(a, b))
    assert e.subs({a: 96, b: 160}) == 256 * SIZE[t]


@pytest.mark.parametrize("t", ["i16", "u16", "i32", "u32", "f16", "bf16", "f32"])
def test_tci(t: str) -> None:
    assert tmp_bytes("TCI", "a2a3", dtype=t) == o_tci(t)
    assert tmp_shape("TCI", "a2a3", dtype=t).dtype.name == "f32"


@pytest.mark.parametrize("t", ["i16", "u16", "i32", "u32", "f16", "bf16", "f32"])
def test_tsel_tsels(t: str) -> None:
    # one 32-byte block: TSEL holds 2 or 4 uint32 mask words, TSELS one scalar
    assert tmp_bytes("TSEL", "a2a3", dtype=t) == 32
    assert tmp_shape("TSEL", "a2a3", dtype=t).dtype.name == "u32"
    assert tmp_bytes("TSELS", "a2a3", dtype=t) == 32
    assert tmp_shape("TSELS", "a2a3", dtype=t).dtype.name == t


@pytest.mark.parametrize("t", ["f32", "i32"])
def test_trem(t: str) -> None:
    for cols in [8, 16, 56, 64, 72, 128, 200, 256, 1000]:
        assert tmp_bytes("TREM", "a2a3", dtype=t, cols=cols) == o_trem(t, cols)
    n = sympy.Symbol("n", integer=True, positive=True)
    e = tmp_bytes("TREM", "a2a3", dtype=t, cols=n)
    assert all(e.subs(n, k) == o_trem(t, k) for k in range(1, 300))


@pytest.mark.parametrize("kind", ["TPOW", "TPOWS"])
@pytest.mark.parametrize("t", ["f32", "i32", "i16", "u8"])
def test_tpow(kind: str, t: str) -> None:
    _cmp(kind, t, lambda valid_row, valid_col: o_tpow(t, valid_row, valid_col))


def test_tpow_tmp_valid_shape_equals_dst() -> None:
    tile = tmp_tile("TPOW", "a2a3", dtype="f32", valid_row=5, valid_col=30)
    assert (tile.rows, tile.cols, tile.valid_row, tile.valid_col) == (5, 32, 5, 30)


CONV = [(h, w, c0) for h in (1, 3, 4, 7) for w in (1, 2, 5, 16) for c0 in (4, 8, 16, 32)]


@pytest.mark.parametrize("t", ["i8", "f16", "f32"])
@pytest.mark.parametrize("arch_name", ["a2a3", "a5"])
def test_ttrans_conversions(t: str, arch_name: str) -> None:
    s = SIZE[t]
    rs = row_stride(s)
    for h, w, c0 in CONV:
        fwd = h * w * cdiv(c0, rs) * rs * s
        back = c0 * cdiv(h * w, rs) * rs * s
        for name, want in [
            ("TTRANS_NCHW_NC1HWC0", fwd),
            ("TTRANS_GNCHW_GNC1HWC0", fwd),
            ("TTRANS_NC1HWC0_NCHW", back),
            ("TTRANS_GNC1HWC0_GNCHW", back),
        ]:
            assert tmp_bytes(name, arch_name, dtype=t, H=h, W=w, C0=c0) == want, name
        for n in (1, 3, 16, 17):
            for c in (1, 5, 16, 33):
                c1 = cdiv(c, c0)
                plane = n * c1 * c0 * h * w
                second = max(plane, h * w * cdiv(c0, rs) * rs)
                got = tmp_bytes(
                    "TTRANS_NCDHW_FRACTAL_Z_3D", arch_name, dtype=t, N=n, C=c, H=h, W=w, C0=c0
                )
                assert got == (plane + second) * s
    assert tmp_bytes("TTRANS_NC1HWC0_FRACTAL_Z", arch_name, dtype=t) == 0
    assert tmp_bytes("TTRANS_GNC1HWC0_FRACTAL_Z", arch_name, dtype=t) == 0


# ------------------------------------------------------------------ TTRANS: documented vs enough


@pytest.mark.parametrize("t", ["i8", "u8", "i16", "f16", "bf16", "i32", "u32", "f32"])
def test_ttrans_always_enough_vs_documented(t: str) -> None:
    s = SIZE[t]
    b = 32 // s
    strictly_smaller = 0
    for h, w in _grid_rc():
        doc = ttrans_tmp_documented(h, w, s)
        enough = ttrans_tmp_always_enough(h, w, s)
        assert doc == o_ttrans_doc(s, h, w)
        assert enough == o_ttrans(s, h, w)
        assert enough >= doc
        if w % b == 0:
            assert enough == doc
        else:
            assert enough > doc
            strictly_smaller += 1
    assert strictly_smaller > 0


def test_ttrans_documented_too_small_by_hand() -> None:
    # f32 [16, 15] -> [15, 16]: the doc gives 15 * 16 * 4 = 960 bytes, but whole blocks of
    # 8 floats are transposed, so 16 rows of 16 floats = 1024 bytes are written
    assert ttrans_tmp_documented(16, 15, 4) == 960
    assert ttrans_tmp_always_enough(16, 15, 4) == 1024
    assert tmp_bytes("TTRANS", "a2a3", dtype="f32", valid_row=16, valid_col=15) == 1024


def test_ttrans_symbolic_element_size() -> None:
    h, w, s = sympy.symbols("h w s", integer=True, positive=True)
    doc = ttrans_tmp_documented(h, w, s)
    enough = ttrans_tmp_always_enough(h, w, s)
    for size in (1, 2, 4):
        for hh, ww in [(1, 1), (15, 17), (33, 64), (100, 3)]:
            vals = {h: hh, w: ww, s: size}
            assert doc.subs(vals) == o_ttrans_doc(size, hh, ww)
            assert enough.subs(vals) == o_ttrans(size, hh, ww)


# ------------------------------------------------------------------ architectures


A5_UNUSED = [
    "TTRANS",
    "TROWSUM",
    "TROWMAX",
    "TROWMIN",
    "TROWPROD",
    "TROWARGMAX",
    "TROWARGMIN",
    "TCOLARGMAX",
    "TCOLARGMIN",
    "TROWEXPANDADD",
    "TROWEXPANDEXPDIF",
    "TCI",
    "TSEL",
    "TSELS",
    "TREM",
    "TPOW",
    "TPOWS",
]


@pytest.mark.parametrize("instr", A5_UNUSED)
def test_a5_ignores_tmp(instr: str) -> None:
    rule = TMP_RULES[instr]
    t = "f32" if "f32" in rule.dtypes["a5"] else "i32"
    kw: dict[str, Any] = {k: 300 for k in rule.params if k not in rule.defaults}
    assert tmp_bytes(instr, "a5", dtype=t, **kw) == 0
    assert not arch("a5").uses_tmp(instr)
    tile = tmp_tile(instr, "a5", dtype=t, **kw)
    assert tile.bytes == 32  # a one-block placeholder for the C++ argument


@pytest.mark.parametrize("instr", ["TCOLSUM", "TSORT32", "TMRGSORT", "TTRANS_NCHW_NC1HWC0"])
def test_a5_still_uses_tmp(instr: str) -> None:
    assert arch("a5").uses_tmp(instr)
    kw = {
        "TCOLSUM": {"valid_row": 9, "valid_col": 40},
        "TSORT32": {"valid_col": 40},
        "TMRGSORT": {"list_cols": (64, 64)},
        "TTRANS_NCHW_NC1HWC0": {"H": 2, "W": 3, "C0": 16},
    }[instr]
    assert tmp_bytes(instr, "a5", dtype="f32", **kw) > 0


def test_every_rule_covered() -> None:
    tested = {
        "TTRANS",
        "TROWSUM",
        "TROWMAX",
        "TROWMIN",
        "TROWPROD",
        "TCOLSUM",
        "TROWARGMAX",
        "TROWARGMIN",
        "TCOLARGMAX",
        "TCOLARGMIN",
        *(f"TROWEXPAND{op}" for op in ("ADD", "SUB", "MUL", "DIV", "MAX", "MIN", "EXPDIF")),
        "TSORT32",
        "TMRGSORT",
        "TCI",
        "TSEL",
        "TSELS",
        "TREM",
        "TPOW",
        "TPOWS",
        "TTRANS_NCHW_NC1HWC0",
        "TTRANS_NC1HWC0_NCHW",
        "TTRANS_GNCHW_GNC1HWC0",
        "TTRANS_GNC1HWC0_GNCHW",
        "TTRANS_NC1HWC0_FRACTAL_Z",
        "TTRANS_GNC1HWC0_FRACTAL_Z",
        "TTRANS_NCDHW_FRACTAL_Z_3D",
    }
    assert tested == set(TMP_RULES)


# ------------------------------------------------------------------ tmp tiles and check()


def test_tmp_tile_shapes_and_check_accepts_them() -> None:
    cases: list[tuple[str, str, dict[str, Any]]] = [
        ("TROWSUM", "f32", {"valid_row": 16, "valid_col": 300}),
        ("TROWMAX", "f16", {"valid_row": 7, "valid_col": 200}),
        ("TCOLSUM", "f32", {"valid_row": 9, "valid_col": 40}),
        ("TTRANS", "f16", {"valid_row": 15, "valid_col": 30}),
        ("TROWARGMAX", "f32", {"valid_row": 4, "valid_col": 100}),
        ("TREM", "f32", {"cols": 64}),
        ("TPOW", "f32", {"valid_row": 5, "valid_col": 30}),
    ]
    for instr, t, kw in cases:
        tile = tmp_tile(instr, "a2a3", dtype=t, **kw)
        assert tile.bytes == tmp_bytes(instr, "a2a3", dtype=t, **kw)
        check(instr, "a2a3", dtype=t, tmp=tile, **kw)
    # checked by hand: TROWSUM f32 C = 300: floor(floor(300/64)/2)*64 = 128 columns
    t = tmp_tile("TROWSUM", "a2a3", dtype="f32", valid_row=16, valid_col=300)
    assert (t.rows, t.cols) == (16, 128)


def test_symbols_then_numbers_equal_direct_ints() -> None:
    for instr, rule in TMP_RULES.items():
        if not {"valid_row", "valid_col"} >= set(rule.params) - set(rule.defaults):
            continue
        t = "f32" if "f32" in rule.dtypes["a2a3"] else sorted(rule.dtypes["a2a3"])[0]
        sym = {
            k: {"valid_row": VALID_ROW, "valid_col": VALID_COL}[k]
            for k in rule.params
            if k not in rule.defaults
        }
        e = tmp_bytes(instr, "a2a3", dtype=t, **sym)
        for r, c in [(1, 1), (8, 1024), (33, 129), (300, 70)]:
            nums = {k: {"valid_row": r, "valid_col": c}[k] for k in sym}
            assert e.subs({VALID_ROW: r, VALID_COL: c}) == tmp_bytes(instr, "a2a3", dtype=t, **nums)
