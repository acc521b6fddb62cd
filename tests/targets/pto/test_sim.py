"""NumPy model of the PTO instructions: each against a plain NumPy oracle written here from the
doc pages (valid regions, padding, partial tiles, accumulation, dtype rules), and the
hand-built programs simulated == NumPy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from polykrnl.errors import PtoError, TileConstraintError
from polykrnl.targets.pto import tmp_rules
from polykrnl.targets.pto.interpret import run_instr, simulate
from polykrnl.targets.pto.program import (
    GlobalView,
    Instr,
    Loop,
    Pipe,
    Program,
    Scalar,
    SetFlag,
    SetValid,
    TensorParam,
    WaitFlag,
    eval_expr,
    expr,
    plan_offsets,
)
from polykrnl.targets.pto.sim import SimTile
from polykrnl.targets.pto.types import (
    BLayout,
    Loc,
    PadValue,
    TileType,
    acc_tile,
    left_tile,
    right_tile,
    vec_tile,
)
from tests.targets.pto.hand_programs import cases

Array = np.ndarray[Any, Any]
RNG = np.random.default_rng(7)


def _prog(tiles: dict[str, TileType]) -> Program:
    decls = plan_offsets(list(tiles.items()))
    return Program("k", (), (), decls, ())


def _tile(name: str, tt: TileType, vr: int | None = None, vc: int | None = None) -> SimTile:
    t = SimTile.new(name, tt)
    t.valid_row = vr if vr is not None else t.valid_row
    t.valid_col = vc if vc is not None else t.valid_col
    return t


def _fill(t: SimTile) -> Array:
    t.data[...] = RNG.standard_normal(t.data.shape).astype(t.data.dtype)
    return t.data.copy()


def _run(tiles: dict[str, SimTile], ins: Instr) -> None:
    prog = _prog({n: t.type for n, t in tiles.items()})
    run_instr(prog, ins, tiles, {})


DYN = vec_tile("f32", 8, 16, None, None)


# --------------------------------------------------------------------------- expressions


def test_expressions_floor_min_max_and_names_like_N() -> None:
    e = expr("Min(16, N - i) + floor(M / 8) * Max(i, 3) + Mod(N, 5)")
    for n, m, i in [(40, 21, 32), (7, 8, 0), (100, 3, 96)]:
        want = min(16, n - i) + (m // 8) * max(i, 3) + n % 5
        assert eval_expr(e, {"N": n, "M": m, "i": i}) == want


# --------------------------------------------------------------------------- elementwise


@pytest.mark.parametrize(
    ("op", "fn"),
    [
        ("TADD", np.add),
        ("TSUB", np.subtract),
        ("TMUL", np.multiply),
        ("TDIV", np.divide),
        ("TMAX", np.maximum),
        ("TMIN", np.minimum),
    ],
)
def test_binary_writes_only_the_valid_region(op: str, fn: Any) -> None:
    a, b, c = (_tile(n, DYN, 5, 11) for n in "abc")
    av, bv, cv = _fill(a), _fill(b), _fill(c)
    _run({"a": a, "b": b, "c": c}, Instr(op, "c", ("a", "b")))
    want = cv.copy()
    want[:5, :11] = fn(av[:5, :11], bv[:5, :11])
    np.testing.assert_array_equal(c.data, want)


@pytest.mark.parametrize(
    ("op", "fn"),
    [
        ("TEXP", np.exp),
        ("TSQRT", lambda x: np.sqrt(np.abs(x))),
        ("TABS", np.abs),
        ("TRELU", lambda x: np.where(x > 0, x, 0)),
        ("TNEG", np.negative),
    ],
)
def test_unary(op: str, fn: Any) -> None:
    a, c = _tile("a", DYN, 8, 3), _tile("c", DYN, 8, 3)
    av, cv = _fill(a), _fill(c)
    if op == "TSQRT":
        a.data[...] = av = np.abs(av)
    _run({"a": a, "c": c}, Instr(op, "c", ("a",)))
    want = cv.copy()
    want[:8, :3] = fn(av[:8, :3])
    np.testing.assert_allclose(c.data, want, rtol=1e-6)


@pytest.mark.parametrize(
    ("op", "first", "fn"),
    [
        ("TADDS", False, lambda x, s: x + s),
        ("TSUBS", False, lambda x, s: x - s),
        ("TMULS", False, lambda x, s: x * s),
        ("TDIVS", False, lambda x, s: x / s),
        ("TDIVS", True, lambda x, s: s / x),
        ("TMAXS", False, np.maximum),
        ("TMINS", False, np.minimum),
    ],
)
def test_scalar_variants(op: str, first: bool, fn: Any) -> None:
    a, c = _tile("a", DYN, 3, 16), _tile("c", DYN, 3, 16)
    av, cv = _fill(a), _fill(c)
    srcs = (Scalar(0.75), "a") if first else ("a", Scalar(0.75))
    _run({"a": a, "c": c}, Instr(op, "c", srcs))
    want = cv.copy()
    want[:3, :16] = fn(av[:3, :16], np.float32(0.75))
    np.testing.assert_allclose(c.data, want, rtol=1e-6)


def test_f16_rounds_each_operation_and_int_division_truncates() -> None:
    h = vec_tile("f16", 1, 16)
    a, b, c = (_tile(n, h) for n in "abc")
    a.data[...] = np.float16(2048)
    b.data[...] = np.float16(1)
    _run({"a": a, "b": b, "c": c}, Instr("TADD", "c", ("a", "b")))
    assert c.data[0, 0] == np.float16(2048)  # 2049 is not a half: rounds to even (by hand)
    i = vec_tile("i32", 1, 8)
    x, y, z = (_tile(n, i) for n in "xyz")
    x.data[...] = -7
    y.data[...] = 2
    _run({"x": x, "y": y, "z": z}, Instr("TDIV", "z", ("x", "y")))
    assert z.data[0, 0] == -3  # C++ truncates -3.5 toward zero


def test_elementwise_errors_name_the_numbers() -> None:
    a, b, c = _tile("a", DYN, 5, 11), _tile("b", DYN, 5, 10), _tile("c", DYN, 5, 11)
    with pytest.raises(TileConstraintError, match="valid 5x10"):
        _run({"a": a, "b": b, "c": c}, Instr("TADD", "c", ("a", "b")))
    h = _tile("h", vec_tile("f16", 8, 16, None, None), 5, 11)
    with pytest.raises(TileConstraintError, match="element type f16"):
        _run({"a": a, "h": h, "c": c}, Instr("TADD", "c", ("a", "h")))


# --------------------------------------------------------------------------- load / store / pad


def _load_store_prog(tt: TileType) -> Program:
    A = TensorParam("A", "f32", ("N", "M"))
    B = TensorParam("B", "f32", ("N", "M"))
    decls = plan_offsets([("t", tt)])
    body = (
        SetValid("t", 3, 5),
        Instr("TLOAD", "t", (GlobalView.of(A, 2, 4, 3, 5),)),
        SetFlag(Pipe.MTE2, Pipe.MTE3),
        WaitFlag(Pipe.MTE2, Pipe.MTE3),
        Instr("TSTORE", GlobalView.of(B, 1, 0, 3, 5), ("t",)),
    )
    return Program("ls", (A, B), ("N", "M"), decls, body)


def test_tload_fills_the_valid_region_and_leaves_the_rest_unspecified() -> None:
    prog = _load_store_prog(DYN)
    a = RNG.standard_normal((6, 9)).astype(np.float32)
    b = np.zeros((6, 9), np.float32)
    tiles = simulate(prog, {"A": a, "B": b}, {"N": 6, "M": 9})
    t = tiles["t"].data
    np.testing.assert_array_equal(t[:3, :5], a[2:5, 4:9])
    assert np.isnan(t[3:, :]).all() and np.isnan(t[:, 5:]).all()
    want = np.zeros((6, 9), np.float32)
    want[1:4, 0:5] = a[2:5, 4:9]
    np.testing.assert_array_equal(b, want)


def test_tload_window_must_match_valid_shape_and_stay_in_bounds() -> None:
    A = TensorParam("A", "f32", ("N", "M"))
    decls = plan_offsets([("t", DYN)])
    bad = Program(
        "k", (A,), ("N", "M"), decls, (Instr("TLOAD", "t", (GlobalView.of(A, 0, 0, 3, 5),)),)
    )
    with pytest.raises(TileConstraintError, match="3 x 5 does not match the valid shape"):
        simulate(bad, {"A": np.zeros((6, 9), np.float32)}, {"N": 6, "M": 9})
    oob = Program(
        "k",
        (A,),
        ("N", "M"),
        decls,
        (SetValid("t", 3, 5), Instr("TLOAD", "t", (GlobalView.of(A, 4, 0, 3, 5),))),
    )
    with pytest.raises(TileConstraintError, match="outside"):
        simulate(oob, {"A": np.zeros((6, 9), np.float32)}, {"N": 6, "M": 9})


@pytest.mark.parametrize(
    ("pad", "value"), [(PadValue.Zero, 0.0), (PadValue.Max, np.inf), (PadValue.Min, -np.inf)]
)
def test_tfillpad(pad: PadValue, value: float) -> None:
    src = _tile("s", DYN, 3, 7)
    sv = _fill(src)
    dst = _tile("d", vec_tile("f32", 8, 16, None, None, pad=pad))
    _run({"s": src, "d": dst}, Instr("TFILLPAD", "d", ("s",)))
    want = np.full((8, 16), value, np.float32)
    want[:3, :7] = sv[:3, :7]
    np.testing.assert_array_equal(dst.data, want)


def test_tfillpad_needs_a_pad_value() -> None:
    s, d = _tile("s", DYN), _tile("d", DYN)
    with pytest.raises(TileConstraintError, match="PadValue::Null"):
        _run({"s": s, "d": d}, Instr("TFILLPAD", "d", ("s",)))


# --------------------------------------------------------------------------- rows


COL = TileType(Loc.Vec, "f32", 8, 1, BLayout.ColMajor, None, 1)


@pytest.mark.parametrize(
    ("op", "fn"), [("TROWSUM", np.sum), ("TROWMAX", np.max), ("TROWMIN", np.min)]
)
def test_row_reductions_over_the_valid_columns(op: str, fn: Any) -> None:
    src, dst = _tile("s", DYN, 6, 13), _tile("d", COL, 6, 1)
    tmp = _tile("tmp", vec_tile("f32", 8, 64))
    sv = _fill(src)
    _run({"s": src, "d": dst, "tmp": tmp}, Instr(op, "d", ("s",), tmp="tmp"))
    np.testing.assert_allclose(dst.data[:6, 0], fn(sv[:6, :13], axis=1), rtol=1e-6)
    assert np.isnan(dst.data[6:, 0]).all()
    bad = _tile("d", COL, 5, 1)
    with pytest.raises(TileConstraintError, match="differ in valid rows"):
        _run({"s": src, "d": bad, "tmp": tmp}, Instr(op, "d", ("s",), tmp="tmp"))


@pytest.mark.parametrize(
    ("op", "fn"),
    [
        ("TROWEXPANDADD", np.add),
        ("TROWEXPANDSUB", np.subtract),
        ("TROWEXPANDMUL", np.multiply),
        ("TROWEXPANDDIV", np.divide),
        ("TROWEXPANDMAX", np.maximum),
        ("TROWEXPANDMIN", np.minimum),
        ("TROWEXPANDEXPDIF", lambda a, b: np.exp(a - b)),
    ],
)
def test_row_expand_binary_column_operand(op: str, fn: Any) -> None:
    full, col, dst = _tile("f", DYN, 6, 13), _tile("c", COL, 6, 1), _tile("d", DYN, 6, 13)
    fv, cv = _fill(full), _fill(col)
    _run({"f": full, "c": col, "d": dst}, Instr(op, "d", ("f", "c")))
    np.testing.assert_allclose(dst.data[:6, :13], fn(fv[:6, :13], cv[:6, :1]), rtol=1e-6)


def test_row_expand_binary_block_operand_and_scalar_first_order() -> None:
    # row-major per-row operand: one 32-byte block (8 f32) per row, column j uses j mod 8
    full, blk, dst = _tile("f", DYN, 4, 13), _tile("b", DYN, 4, 8), _tile("d", DYN, 4, 13)
    fv, bv = _fill(full), _fill(blk)
    _run({"f": full, "b": blk, "d": dst}, Instr("TROWEXPANDSUB", "d", ("b", "f")))
    want = bv[:4, [j % 8 for j in range(13)]] - fv[:4, :13]
    np.testing.assert_allclose(dst.data[:4, :13], want, rtol=1e-6)
    wrong = _tile("b", DYN, 4, 5)
    with pytest.raises(TileConstraintError, match="per-row operand"):
        _run({"f": full, "b": wrong, "d": dst}, Instr("TROWEXPANDSUB", "d", ("f", "b")))


@pytest.mark.parametrize(
    ("op", "fn"),
    [
        ("TCOLEXPANDADD", np.add),
        ("TCOLEXPANDSUB", np.subtract),
        ("TCOLEXPANDMUL", np.multiply),
        ("TCOLEXPANDDIV", np.divide),
        ("TCOLEXPANDMAX", np.maximum),
        ("TCOLEXPANDMIN", np.minimum),
    ],
)
def test_col_expand_binary_row_operand(op: str, fn: Any) -> None:
    # dst[i, j] = f[i, j] op r[0, j] over the valid region (6 x 13 of 8 x 16)
    row = vec_tile("f32", 1, 16, 1, None)
    full, r, dst = _tile("f", DYN, 6, 13), _tile("r", row, 1, 13), _tile("d", DYN, 6, 13)
    fv, rv = _fill(full), _fill(r)
    _run({"f": full, "r": r, "d": dst}, Instr(op, "d", ("f", "r")))
    np.testing.assert_allclose(dst.data[:6, :13], fn(fv[:6, :13], rv[:1, :13]), rtol=1e-6)
    narrow = _tile("r", row, 1, 12)
    with pytest.raises(TileConstraintError, match="per-column operand"):
        _run({"f": full, "r": narrow, "d": dst}, Instr(op, "d", ("f", "r")))


def test_rowexpand_broadcasts_column_zero() -> None:
    src, dst = _tile("s", DYN, 5, 3), _tile("d", DYN, 5, 12)
    sv = _fill(src)
    _run({"s": src, "d": dst}, Instr("TROWEXPAND", "d", ("s",)))
    np.testing.assert_array_equal(dst.data[:5, :12], np.repeat(sv[:5, :1], 12, axis=1))


# --------------------------------------------------------------------------- transpose


def test_ttrans_partial_tile_and_tmp_size_check() -> None:
    src = _tile("s", vec_tile("f32", 16, 16, None, None), 10, 7)
    dst = _tile("d", vec_tile("f32", 16, 16, None, None), 7, 10)
    # the tmp tile_rules asks for with the full tile (always enough for partial tiles)
    big = _tile(
        "tmp", tmp_rules.tmp_tile("TTRANS", "a2a3", dtype="f32", valid_row=16, valid_col=16)
    )
    sv = _fill(src)
    _run({"s": src, "d": dst, "tmp": big}, Instr("TTRANS", "d", ("s",), tmp="tmp"))
    np.testing.assert_array_equal(dst.data[:7, :10], sv[:10, :7].T)
    small = _tile("tmp", vec_tile("f32", 1, 8))
    with pytest.raises(TileConstraintError, match="tmp"):
        _run({"s": src, "d": dst, "tmp": small}, Instr("TTRANS", "d", ("s",), tmp="tmp"))
    wrong = _tile("d", vec_tile("f32", 16, 16, None, None), 10, 7)
    with pytest.raises(TileConstraintError, match="transposed valid shape"):
        _run({"s": src, "d": wrong, "tmp": big}, Instr("TTRANS", "d", ("s",), tmp="tmp"))


# --------------------------------------------------------------------------- matmul


def _mm_tiles(m: int, k: int, n: int, dt: str = "f16", out: str = "f32") -> dict[str, SimTile]:
    return {
        "l": _tile("l", left_tile(dt, 32, 32, "a2a3", None, None), m, k),
        "r": _tile("r", right_tile(dt, 32, 32, None, None), k, n),
        "c": _tile("c", acc_tile(out, 32, 32, None, None), m, n),
    }


def test_matmul_and_accumulate_over_the_valid_mkn() -> None:
    t = _mm_tiles(9, 20, 30)
    lv, rv = _fill(t["l"]), _fill(t["r"])
    _run(t, Instr("TMATMUL", "c", ("l", "r")))
    first = lv[:9, :20].astype(np.float64) @ rv[:20, :30].astype(np.float64)
    np.testing.assert_allclose(t["c"].data[:9, :30], first, rtol=1e-5, atol=1e-5)
    _run(t, Instr("TMATMUL_ACC", "c", ("l", "r")))
    np.testing.assert_allclose(t["c"].data[:9, :30], 2 * first, rtol=1e-5, atol=1e-5)


def test_matmul_int8_to_int32_is_exact() -> None:
    t = _mm_tiles(4, 32, 5, "i8", "i32")
    t["l"].data[...] = RNG.integers(-128, 128, (32, 32))
    t["r"].data[...] = RNG.integers(-128, 128, (32, 32))
    _run(t, Instr("TMATMUL", "c", ("l", "r")))
    want = t["l"].data[:4, :32].astype(np.int64) @ t["r"].data[:32, :5].astype(np.int64)
    np.testing.assert_array_equal(t["c"].data[:4, :5], want)


def test_matmul_rules() -> None:
    t = _mm_tiles(9, 20, 30, "f16", "f16")
    with pytest.raises(TileConstraintError, match="f16 <- f16 \\* f16"):
        _run(t, Instr("TMATMUL", "c", ("l", "r")))
    t = _mm_tiles(9, 20, 30)
    t["r"].valid_row = 19
    with pytest.raises(TileConstraintError, match="need m x k, k x n, m x n"):
        _run(t, Instr("TMATMUL", "c", ("l", "r")))


def test_tmov_copies_the_valid_region() -> None:
    mat = TileType(Loc.Mat, "f16", 32, 32, BLayout.ColMajor, None, None, slayout=_row())
    src = _tile("m", mat, 9, 20)
    dst = _tile("l", left_tile("f16", 32, 32, "a2a3", None, None), 9, 20)
    sv = _fill(src)
    _run({"m": src, "l": dst}, Instr("TMOV", "l", ("m",)))
    np.testing.assert_array_equal(dst.data[:9, :20], sv[:9, :20])


def _row() -> Any:
    from polykrnl.targets.pto.types import SLayout

    return SLayout.RowMajor


# --------------------------------------------------------------------------- programs


def test_set_valid_out_of_range_and_on_static_tile() -> None:
    A = TensorParam("A", "f32", ("N",))
    decls = plan_offsets([("t", DYN), ("s", vec_tile("f32", 8, 16))])
    prog = Program("k", (A,), ("N",), decls, (Loop("i", 0, "N", 8, [SetValid("t", "N - i", 16)]),))
    with pytest.raises(TileConstraintError, match="valid row count 9 is outside"):
        simulate(prog, {"A": np.zeros(9, np.float32)}, {"N": 9})  # i = 0: 9 rows in an 8-row tile
    with pytest.raises(TileConstraintError, match="static"):
        Program("k", (), (), decls, (SetValid("s", 4, None),))


def test_simulate_argument_errors() -> None:
    c = cases()[0]
    with pytest.raises(PtoError, match="no value for problem size"):
        simulate(c.program, {}, {})
    with pytest.raises(PtoError, match="has dtype float64"):
        simulate(c.program, {"A": np.zeros((40, 21)), "B": np.zeros((21, 40))}, c.params)


@pytest.mark.parametrize("case", cases(), ids=lambda c: c.name)
def test_hand_built_programs_simulated_equal_numpy(case: Any) -> None:
    rng = np.random.default_rng(1)
    arrays = case.make_inputs(rng)
    want = case.oracle({k: v.copy() for k, v in arrays.items()})
    simulate(case.program, arrays, case.params)
    for name, w in want.items():
        np.testing.assert_allclose(arrays[name], w, rtol=case.rtol, atol=case.atol)
