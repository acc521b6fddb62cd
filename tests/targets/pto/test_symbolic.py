"""targets/pto/symbolic.py: isl -> sympy, parametric maxima, tile extents over tiled schedules.

Oracles: isl's own evaluation (PwAff.eval) for the conversions, and brute force for
everything about tiles: the Krnl loops of each schedule written out by hand as plain
Python loops (tile loop from the lower bound stepping by T, point loop from the tile
value to min(tile + T, upper bound)), every instance grouped by its tile, each tile's
bounding box measured, and the maximum taken.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import islpy as isl
import pytest
import sympy

import polykrnl as pk
from polykrnl.errors import PtoError
from polykrnl.targets.pto.symbolic import (
    SymbolicSize,
    array_tile_extents,
    default_tile_loops,
    isl_symbol,
    max_extent,
    max_over,
    max_over_tiles,
    max_over_tiles_at,
    min_over,
    pw_aff_to_sympy,
    set_to_sympy,
    tile_extents,
    tile_map,
)

VALID_ROW = sympy.Symbol("valid_row", integer=True, positive=True)
VALID_COL = sympy.Symbol("valid_col", integer=True, positive=True)


def ttrans_always_enough(h: Any, w: Any) -> Any:
    """TTRANS f32 tmp bytes that are always enough: roundup(W, B) * roundup(H, RS) * 4.

    From the PTO notes: RS = 16 and B = 32 / 4 = 8 for a 4-byte type, H = valid rows,
    W = valid columns of the source. Written with ceiling so it works on sympy symbols.
    """
    return (
        8
        * sympy.ceiling(sympy.Rational(1, 8) * w)
        * 16
        * sympy.ceiling(sympy.Rational(1, 16) * h)
        * 4
    )


def ttrans_int(h: int, w: int) -> int:
    """The same size in plain integers (the oracle)."""
    return -(-w // 8) * 8 * (-(-h // 16) * 16) * 4


def sympy_eval(expr: Any, names: Sequence[str]) -> Callable[..., Any]:
    """expr as a function of the named symbols, evaluated exactly with sympy functions."""
    syms = [isl_symbol(n) for n in names]
    # xreplace with sympy Integers is exact (lambdify would turn 1/3 into a float).
    return lambda *xs: expr.xreplace({s: sympy.Integer(x) for s, x in zip(syms, xs, strict=True)})


def isl_eval(pa: isl.PwAff, values: dict[str, int]) -> isl.Val:
    """isl's value of `pa` at a point given by dim/param names (NaN outside the domain)."""
    space = pa.get_domain_space()
    pt = isl.Point.zero(space)
    for tp in (isl.dim_type.param, isl.dim_type.set):
        for k in range(space.dim(tp)):
            name = space.get_dim_name(tp, k)
            pt = pt.set_coordinate_val(tp, k, isl.Val.int_from_si(space.get_ctx(), values[name]))
    return pa.eval(pt)


def names_of(pa: isl.PwAff) -> list[str]:
    space = pa.get_domain_space()
    return [
        space.get_dim_name(tp, k)
        for tp in (isl.dim_type.param, isl.dim_type.set)
        for k in range(space.dim(tp))
    ]


def same(sym_value: Any, isl_value: isl.Val) -> bool:
    if isl_value.is_nan():
        return sym_value is sympy.nan
    return bool(sym_value == sympy.Integer(isl_value.to_python()))


# ------------------------------------------------------------------ isl -> sympy

HAND_MADE = [
    # min of a constant and an expression, on a strided domain (a tile's rows)
    "[N] -> { [i] -> [min(32, N - i)] : i mod 32 = 0 and 0 <= i < N }",
    # several pieces with different expressions
    "[N, M] -> { [i, j] -> [max(i, j - N)] : i + j < M; [i, j] -> [3] : i + j >= M + 2 }",
    # floor division and mod in the expression
    "[N] -> { [i] -> [floor((i + N)/3) + (i mod 2)] : i >= -2 }",
    # universe domain, negative coefficients
    "[N] -> { [i, j] -> [floor((2i - j)/4) - N] }",
    # an existentially quantified domain (a mod condition) and a mod in the value
    "{ [i] -> [(i mod 5) - 2 * floor(i / 7)] : exists e: i = 3e + 1 }",
    # a clamp: max inside min
    "[N] -> { [i] -> [min(max(i, 0), N)] }",
    # ceiling division on a parametric domain
    "[N] -> { [i] -> [ceil((N - i)/4)] : 0 <= i <= N }",
    # the min of three expressions over a triangle
    "[N] -> { [i, j] -> [min(4, N - i, i - j + 3)] : 0 <= j <= i < N }",
]


@pytest.mark.parametrize("text", HAND_MADE)
# outside=None (what is left unspecified) is also checked by test_readable_forms in the fast tier
@pytest.mark.parametrize("outside", [sympy.nan, pytest.param(None, marks=pytest.mark.slow)])
def test_pw_aff_to_sympy_equals_isl_eval(text: str, outside: Any) -> None:
    pa = isl.PwAff(text)
    expr = pw_aff_to_sympy(pa, outside=outside)
    names = names_of(pa)
    f = sympy_eval(expr, names)
    checked_outside = 0
    span = {1: range(-9, 12), 2: range(-6, 10), 3: range(-3, 6)}.get(len(names), range(-2, 4))
    for xs in itertools.product(span, repeat=len(names)):
        want = isl_eval(pa, dict(zip(names, xs, strict=True)))
        got = f(*xs)
        if want.is_nan():
            # Outside the domain: nan by default; unspecified with outside=None.
            checked_outside += 1
            if outside is None:
                continue
        assert same(got, want), f"{text} at {dict(zip(names, xs, strict=True))}: {got} != {want}"
    assert checked_outside > 0 or "exists" not in text


def test_outside_value_is_configurable() -> None:
    pa = isl.PwAff("[N] -> { [i] -> [N - i] : 0 <= i < N }")
    f = sympy_eval(pw_aff_to_sympy(pa, outside=0), ["N", "i"])
    assert f(5, 2) == 3
    assert f(5, 5) == 0  # outside: i = N
    assert f(5, -1) == 0


def test_readable_forms() -> None:
    """Min/Max/Mod are recognized; the strings were checked by hand."""
    n, i = isl_symbol("N"), isl_symbol("i")
    pa = isl.PwAff("[N] -> { [i] -> [min(32, N - i)] : i mod 32 = 0 and 0 <= i < N }")
    assert pw_aff_to_sympy(pa, outside=None) == sympy.Min(32, n - i)
    cond = pw_aff_to_sympy(pa).args[0].cond
    assert sympy.Eq(sympy.Mod(i, 32), 0) in cond.args
    clamp = isl.PwAff("[N] -> { [i] -> [min(max(i, 0), N)] }")
    # isl's pieces for this clamp are equal to one of the two nestings; both mean the same.
    got = pw_aff_to_sympy(clamp)
    assert got in (sympy.Min(n, sympy.Max(0, i)), sympy.Max(0, sympy.Min(n, i))) or (
        isinstance(got, (sympy.Min, sympy.Max))
    )
    assert pw_aff_to_sympy(isl.PwAff("{ [i] -> [i mod 4] }")) == sympy.Mod(i, 4)


def test_symbols_and_symbolic_size_of_a_pw_aff() -> None:
    pa = isl.PwAff("[N] -> { [i] -> [min(4, N - i)] : i mod 4 = 0 and 0 <= i < N }")
    n = sympy.Symbol("n", integer=True, nonnegative=True)
    assert pw_aff_to_sympy(pa, {"N": n}, outside=None) == sympy.Min(4, n - isl_symbol("i"))
    size = SymbolicSize.from_pw_aff(pa)
    assert size.params == ("N", "i")
    assert size.evaluate(N=10, i=8) == 2  # the last tile of 10 by 4: rows 8 and 9
    assert size.evaluate(N=10, i=4) == 4
    with pytest.raises(PtoError, match="not defined"):
        size.evaluate(N=10, i=5)  # not the start of a tile
    with pytest.raises(PtoError, match="needs a value for parameter 'i'"):
        size.evaluate(N=10)


def test_set_to_sympy_equals_isl_membership() -> None:
    s = isl.Set("[N] -> { [i, j] : 0 <= i < N and exists e: j = 4e + 1 and j <= i }")
    cond = set_to_sympy(s)
    syms = [isl_symbol(x) for x in ("N", "i", "j")]
    for n, i, j in itertools.product(range(-2, 7), repeat=3):
        inside = not s.intersect(
            isl.Set(f"[N] -> {{ [i, j] : N = {n} and i = {i} and j = {j} }}")
        ).is_empty()
        value = cond.xreplace(dict(zip(syms, map(sympy.Integer, (n, i, j)), strict=True)))
        assert bool(value) == inside


def test_max_over_and_min_over_against_enumeration() -> None:
    pa = isl.PwAff(
        "[N] -> { [i, j] -> [min(4, N - i) + j] : i mod 4 = 0 and 0 <= i < N and 0 <= j < 3 }"
    )
    mx_all, mn_all = max_over(pa), min_over(pa)
    mx_j = max_over(pa, ["j"])  # a function of i and N
    fa = sympy_eval(pw_aff_to_sympy(mx_all), ["N"])
    fn = sympy_eval(pw_aff_to_sympy(mn_all), ["N"])
    fj = sympy_eval(pw_aff_to_sympy(mx_j), ["N", "i"])
    for n in range(-1, 14):
        vals = {(i, j): min(4, n - i) + j for i in range(0, max(n, 0), 4) for j in range(3)}
        if not vals:
            assert fa(n) is sympy.nan and fn(n) is sympy.nan
            continue
        assert fa(n) == max(vals.values())
        assert fn(n) == min(vals.values())
        for i in range(-2, n + 2):
            row = [v for (ii, _), v in vals.items() if ii == i]
            assert fj(n, i) == (max(row) if row else sympy.nan)


# ------------------------------------------------------------------ brute force over tiles


def tile_boxes(
    instances: Iterator[tuple[tuple[int, ...], tuple[int, ...]]],
) -> dict[tuple[int, ...], tuple[int, ...]]:
    """(tile key, point) pairs -> per tile, max - min + 1 of each point coordinate."""
    lo: dict[tuple[int, ...], list[int]] = {}
    hi: dict[tuple[int, ...], list[int]] = {}
    for key, point in instances:
        if key not in lo:
            lo[key], hi[key] = list(point), list(point)
        else:
            lo[key] = [min(a, b) for a, b in zip(lo[key], point, strict=True)]
            hi[key] = [max(a, b) for a, b in zip(hi[key], point, strict=True)]
    return {k: tuple(h - low + 1 for h, low in zip(hi[k], lo[k], strict=True)) for k in lo}


def check_extents(
    extents: Sequence[isl.PwAff],
    boxes: dict[tuple[int, ...], tuple[int, ...]],
    params: dict[str, int],
    tile_names: Sequence[str],
    probe: Sequence[tuple[int, ...]] = (),
) -> None:
    """Each extent (sympy and isl) equals the brute-force box tile by tile; nan off tiles."""
    for k, pa in enumerate(extents):
        names, f, biggest = prepared(pa)
        # Sizes of memref dimensions the loops do not use: any value will do.
        unused = {n: 0 for n in names}
        for key, box in boxes.items():
            values = {**unused, **params, **dict(zip(tile_names, key, strict=True))}
            xs = [values[n] for n in names]
            assert f(*xs) == box[k], f"extent {k} at {values}: {f(*xs)} != {box[k]}"
            assert isl_eval(pa, values).to_python() == box[k]
        for key in probe:
            if key in boxes:
                continue
            values = {**unused, **params, **dict(zip(tile_names, key, strict=True))}
            assert f(*[values[n] for n in names]) is sympy.nan, f"no tile at {values}"
        # The maximum over all tiles, as a function of the sizes.
        want = max((b[k] for b in boxes.values()), default=0)
        assert biggest.evaluate(**params) == want, f"max extent {k} at {params}"


# The symbolic work is done once per expression; the loops over sizes only evaluate.
_PREPARED: dict[str, tuple[list[str], Callable[..., Any], SymbolicSize]] = {}
_SIZES: dict[tuple[str, ...], SymbolicSize] = {}


def prepared(pa: isl.PwAff) -> tuple[list[str], Callable[..., Any], SymbolicSize]:
    key = pa.to_str()
    if key not in _PREPARED:
        names = names_of(pa)
        _PREPARED[key] = (names, sympy_eval(pw_aff_to_sympy(pa), names), max_extent(pa))
    return _PREPARED[key]


def size_of(expr: Any, extents: dict[str, isl.PwAff]) -> SymbolicSize:
    key = (str(expr), *(f"{n}={pa.to_str()}" for n, pa in extents.items()))
    if key not in _SIZES:
        _SIZES[key] = max_over_tiles(expr, extents)
    return _SIZES[key]


def check_max_size(
    expr: Any,
    extents: dict[str, isl.PwAff],
    boxes: dict[tuple[int, ...], tuple[int, ...]],
    order: Sequence[str],
    params: dict[str, int],
    oracle: Callable[..., int],
    *,
    exact: bool = True,
) -> None:
    size = size_of(expr, extents)
    assert size.exact is exact
    want = max((oracle(*(b[order.index(n)] for n in extents)) for b in boxes.values()), default=0)
    assert set(size.params) <= set(params)
    got = size.evaluate(**params)
    if exact:
        assert got == want, f"{size.expr} at {params}: {got} != {want}"
    else:
        assert got >= want
    assert max_over_tiles_at(expr, extents, **params) == want


# ------------------------------------------------------------------ the test: transpose

TRANSPOSE = """
func.func @transpose(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %N: index, %M: index) {
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii {TI} : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj {TJ} : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %il, %jl) with (%ii -> %i = 0 to %N, %jj -> %j = 0 to %M) {
    %v = krnl.load %A[%i, %j] : memref<?x?xf32>
    krnl.store %v, %B[%j, %i] : memref<?x?xf32>
  }
  return
}
"""


def transpose_boxes(n: int, m: int, ti: int, tj: int) -> dict[tuple[int, ...], tuple[int, ...]]:
    def instances() -> Iterator[tuple[tuple[int, ...], tuple[int, ...]]]:
        for ib in range(0, n, ti):
            for jb in range(0, m, tj):
                for i in range(ib, min(ib + ti, n)):
                    for j in range(jb, min(jb + tj, m)):
                        yield (ib, jb), (i, j)

    return tile_boxes(instances())


def sizes_around(t: int) -> list[int]:
    return sorted({0, 1, 2, t - 1, t, t + 1, 2 * t, 2 * t + 1, 3 * t - 1})


# 32 x 16 enumerates 81 problem sizes up to 95 x 47 element by element (seconds); the same
# checks run on 10 x 6 tiles in the fast tier.
@pytest.mark.parametrize(("ti", "tj"), [pytest.param(32, 16, marks=pytest.mark.slow), (10, 6)])
def test_tiled_transpose_extents_and_tmp_size(ti: int, tj: int) -> None:
    fn = pk.parse(TRANSPOSE.replace("{TI}", str(ti)).replace("{TJ}", str(tj)))["transpose"]
    sched = pk.schedule(fn)
    assert default_tile_loops(sched, "S0") == ("ib", "jb")
    ext = tile_extents(sched, "S0")
    rows, cols = ext["i"], ext["j"]
    a_rows, a_cols = array_tile_extents(sched, "S0", "A")
    b_rows, b_cols = array_tile_extents(sched, "S0", "B")
    # Per tile, inside the tiles: min(T, N - tile), checked by hand.
    n, m = isl_symbol("N"), isl_symbol("M")
    ib, jb = isl_symbol("ib"), isl_symbol("jb")
    assert pw_aff_to_sympy(rows, outside=None) == sympy.Min(ti, n - ib)
    assert pw_aff_to_sympy(cols, outside=None) == sympy.Min(tj, m - jb)
    assert pw_aff_to_sympy(max_over(rows), outside=None) == sympy.Min(ti, n)
    extents = {"valid_row": rows, "valid_col": cols}
    expr = ttrans_always_enough(VALID_ROW, VALID_COL)
    for nv, mv in itertools.product(sizes_around(ti), sizes_around(tj)):
        params = {"N": nv, "M": mv}
        boxes = transpose_boxes(nv, mv, ti, tj)
        probe = [(x, y) for x in (-ti, 1, nv, nv + ti) for y in (0, mv)]
        check_extents([rows, cols], boxes, params, ("ib", "jb"), probe)
        check_extents([a_rows, a_cols], boxes, params, ("ib", "jb"))
        swapped = {k: (b[1], b[0]) for k, b in boxes.items()}
        check_extents([b_rows, b_cols], swapped, params, ("ib", "jb"))
        check_max_size(expr, extents, boxes, ["valid_row", "valid_col"], params, ttrans_int)


def test_transpose_built_with_primitives_and_whole_nest_tile() -> None:
    text = TRANSPOSE.replace("{TI}", "4").replace("{TJ}", "4")
    fn = pk.parse(text)["transpose"]
    plain = pk.Schedule.from_function(fn, recipe=False)
    # No block: one tile is the whole domain, extent N by M (0 tiles when N or M is 0).
    assert default_tile_loops(plain, "S0") == ()
    whole = tile_extents(plain, "S0")
    size = max_over_tiles(VALID_ROW * VALID_COL, {"valid_row": whole["i"], "valid_col": whole["j"]})
    for nv, mv in itertools.product(range(0, 5), repeat=2):
        assert size.evaluate(N=nv, M=mv) == nv * mv
        assert max_extent(whole["i"]).evaluate(N=nv, M=mv) == (nv if mv > 0 else 0)
    blocked = plain.block("i", 10).block("j", 6).reorder(["i_t", "j_t", "i", "j"])
    ext = tile_extents(blocked, "S0")
    for nv, mv in [(0, 3), (9, 5), (10, 6), (11, 7), (25, 13)]:
        boxes = transpose_boxes(nv, mv, 10, 6)
        check_extents([ext["i"], ext["j"]], boxes, {"N": nv, "M": mv}, ("i_t", "j_t"))


# ------------------------------------------------------------------ triangular, shifted, 3-D

TRIANGULAR = """
func.func @tri(%A: memref<?x?xf32>, %N: index) {
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 3 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to %N) {
    krnl.iterate(%jb, %jl) with (%jj -> %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i)) {
      %v = krnl.load %A[%i, %j] : memref<?x?xf32>
      krnl.store %v, %A[%i, %j] : memref<?x?xf32>
    }
  }
  return
}
"""


# The fast tier checks each nest below for one choice of tile loops, the full run for all.
TILE_LOOPS = [
    ("ib", "jb"),
    pytest.param(("ib",), marks=pytest.mark.slow),
    pytest.param(("ib", "il", "jb"), marks=pytest.mark.slow),
]


def triangular_instances(n: int) -> Iterator[tuple[int, int, int, int]]:
    """(ib, jb, i, j) in the order of the loops above (j runs 0..i)."""
    for ib in range(0, n, 4):
        for i in range(ib, min(ib + 4, n)):
            for jb in range(0, i + 1, 3):
                for j in range(jb, min(jb + 3, i + 1)):
                    yield ib, jb, i, j


@pytest.mark.parametrize("tile_loops", TILE_LOOPS)
def test_triangular_nest(tile_loops: tuple[str, ...]) -> None:
    sched = pk.schedule(pk.parse(TRIANGULAR)["tri"])
    ext = tile_extents(sched, "S0", tile_loops)
    extents = {"valid_row": ext["i"], "valid_col": ext["j"]}
    expr = ttrans_always_enough(VALID_ROW, VALID_COL)
    for nv in range(0, 15):
        env = {"ib": 0, "jb": 1, "il": 2}  # positions in the instance tuples
        boxes = tile_boxes(
            (tuple(x[env[t]] for t in tile_loops), (x[2], x[3])) for x in triangular_instances(nv)
        )
        params = {"N": nv, "A_d0": 0, "A_d1": 0}
        check_extents([ext["i"], ext["j"]], boxes, params, tile_loops)
        check_max_size(expr, extents, boxes, ["valid_row", "valid_col"], params, ttrans_int)
        # The area tells tiles apart where TTRANS's rounding does not: with strips
        # (tile_loops ("ib",)) the widest strip is not the tallest, so the maximum is
        # not area(max rows, max cols) (N = 5: 16, not 20) and needs the cells.
        check_max_size(
            VALID_ROW * VALID_COL,
            extents,
            boxes,
            ["valid_row", "valid_col"],
            params,
            lambda r, c: r * c,
        )


def test_strips_of_a_triangle_need_the_cells() -> None:
    sched = pk.schedule(pk.parse(TRIANGULAR)["tri"])
    ext = tile_extents(sched, "S0", ("ib",))
    extents = {"valid_row": ext["i"], "valid_col": ext["j"]}
    size = max_over_tiles(VALID_ROW * VALID_COL, extents)
    assert size.exact
    assert isinstance(size.expr, sympy.Max)  # one term per cell
    # By hand: strips [0, 4) and [4, 5) of a 5-row triangle: 4 x 4 and 1 x 5.
    assert size.evaluate(N=5) == 16


SHIFTED = """
func.func @shift(%A: memref<?x?xf32>, %N: index) {
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 3 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %il) with (%ii -> %i = 2 to %N) {
    krnl.iterate(%jb, %jl) with (%jj -> %j = %i to affine_map<(d0) -> (d0 + 5)>(%i)) {
      %v = krnl.load %A[%i, %j] : memref<?x?xf32>
      krnl.store %v, %A[%j, %i] : memref<?x?xf32>
    }
  }
  return
}
"""


@pytest.mark.parametrize("tile_loops", TILE_LOOPS)
def test_lower_bound_shifted_nest(tile_loops: tuple[str, ...]) -> None:
    sched = pk.schedule(pk.parse(SHIFTED)["shift"])
    ext = tile_extents(sched, "S0", tile_loops)
    arr = array_tile_extents(sched, "S0", "A", tile_loops)
    extents = {"valid_row": ext["i"], "valid_col": ext["j"]}
    expr = VALID_ROW * VALID_COL + 3 * sympy.Max(VALID_ROW, VALID_COL)
    for nv in range(0, 14):
        # Tiles start at the lower bound: i from 2 by 3, j from i by 4 (Krnl's block).
        inst = [
            ((ib, il, jb), (il, j))
            for ib in range(2, nv, 3)
            for il in range(ib, min(ib + 3, nv))
            for jb in range(il, il + 5, 4)
            for j in range(jb, min(jb + 4, il + 5))
        ]
        pos = {"ib": 0, "il": 1, "jb": 2}
        boxes = tile_boxes((tuple(k[pos[t]] for t in tile_loops), p) for k, p in inst)
        params = {"N": nv, "A_d0": 0, "A_d1": 0}
        check_extents([ext["i"], ext["j"]], boxes, params, tile_loops)
        # A is read at [i, j] and written at [j, i]: the box covers both.
        arr_boxes = tile_boxes(
            (tuple(k[pos[t]] for t in tile_loops), q) for k, p in inst for q in (p, p[::-1])
        )
        check_extents(list(arr), arr_boxes, params, tile_loops)
        check_max_size(
            expr,
            extents,
            boxes,
            ["valid_row", "valid_col"],
            params,
            lambda r, c: r * c + 3 * max(r, c),
        )


NEST_3D = """
func.func @batched(%A: memref<?x?x?xf32>, %B: memref<?x?x?xf32>, %P: index, %N: index, %M: index) {
  %bb, %ii, %jj = krnl.define_loops 3
  %ib, %il = krnl.block %ii 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 5 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%bb, %ib, %il, %jb, %jl) [0, 1, 3, 2, 4]
      : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%bb, %ib, %jb, %il, %jl)
      with (%bb -> %b = 0 to %P, %ii -> %i = 1 to %N, %jj -> %j = 0 to %M) {
    %v = krnl.load %A[%b, %i, %j] : memref<?x?x?xf32>
    krnl.store %v, %B[%b, %j, %i] : memref<?x?x?xf32>
  }
  return
}
"""


@pytest.mark.parametrize("tile_loops", [pytest.param(None, marks=pytest.mark.slow), ("ib", "jb")])
def test_3d_nest_blocked_on_two_loops(tile_loops: tuple[str, ...] | None) -> None:
    sched = pk.schedule(pk.parse(NEST_3D)["batched"])
    assert default_tile_loops(sched, "S0") == ("b", "ib", "jb")
    names = ("b", "ib", "jb") if tile_loops is None else tile_loops
    ext = tile_extents(sched, "S0", tile_loops)
    b_ext = array_tile_extents(sched, "S0", "B", tile_loops)
    extents = {"depth": ext["b"], "valid_row": ext["i"], "valid_col": ext["j"]}
    depth = sympy.Symbol("depth", integer=True)
    expr = depth * ttrans_always_enough(VALID_ROW, VALID_COL)
    for pv, nv, mv in itertools.product([0, 1, 3], [1, 8, 9, 10, 17], [0, 5, 6, 11]):
        inst = [
            ((b, ib, jb), (b, i, j))
            for b in range(pv)
            for ib in range(1, nv, 8)
            for jb in range(0, mv, 5)
            for i in range(ib, min(ib + 8, nv))
            for j in range(jb, min(jb + 5, mv))
        ]
        pos = {"b": 0, "ib": 1, "jb": 2}
        boxes = tile_boxes((tuple(k[pos[t]] for t in names), p) for k, p in inst)
        params = {"P": pv, "N": nv, "M": mv}
        check_extents([ext["b"], ext["i"], ext["j"]], boxes, params, names)
        b_boxes = {k: (v[0], v[2], v[1]) for k, v in boxes.items()}
        check_extents(list(b_ext), b_boxes, params, names)
        order = ["depth", "valid_row", "valid_col"]
        check_max_size(expr, extents, boxes, order, params, lambda d, r, c: d * ttrans_int(r, c))


# ------------------------------------------------------------------ guarantees and errors


def test_upper_bound_when_no_tile_reaches_both_maxima() -> None:
    """Extents (t, 10 - t) over t = 0..10: no tile has both maxima, so the result is a bound.

    max of r*c over the tiles is 5*5 = 25 (by hand); expr(max extents) = 10*10 = 100.
    """
    rows = isl.PwAff("{ [t] -> [t] : 0 <= t <= 10 }")
    cols = isl.PwAff("{ [t] -> [10 - t] : 0 <= t <= 10 }")
    extents = {"valid_row": rows, "valid_col": cols}
    size = max_over_tiles(VALID_ROW * VALID_COL, extents)
    assert not size.exact
    assert size.evaluate() == 100
    assert max_over_tiles_at(VALID_ROW * VALID_COL, extents) == 25


def test_errors() -> None:
    sched = pk.schedule(pk.parse(TRIANGULAR)["tri"])
    with pytest.raises(PtoError, match="no statement 'S9'"):
        tile_extents(sched, "S9")
    with pytest.raises(PtoError, match="does not access array 'B'"):
        array_tile_extents(sched, "S0", "B")
    ext = tile_extents(sched, "S0")
    extents = {"valid_row": ext["i"], "valid_col": ext["j"]}
    with pytest.raises(PtoError, match="not shown non-decreasing"):
        max_over_tiles(VALID_ROW - VALID_COL, extents)
    with pytest.raises(PtoError, match="which is not a tile extent"):
        max_over_tiles(VALID_ROW * sympy.Symbol("depth"), extents)
    size = max_over_tiles(VALID_ROW * VALID_COL, extents)
    with pytest.raises(PtoError, match="needs a value for parameter 'N'"):
        size.evaluate()
    with pytest.raises(PtoError, match="needs a value for parameter"):
        max_over_tiles_at(VALID_ROW, extents)


def test_tile_loop_must_enclose_the_statement() -> None:
    text = """
func.func @two(%A: memref<?xf32>, %N: index) {
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to %N) {
    %v = krnl.load %A[%i] : memref<?xf32>
    krnl.store %v, %A[%i] : memref<?xf32>
  }
  krnl.iterate(%jj) with (%jj -> %j = 0 to %N) {
    %v = krnl.load %A[%j] : memref<?xf32>
    krnl.store %v, %A[%j] : memref<?xf32>
  }
  return
}
"""
    sched = pk.schedule(pk.parse(text)["two"])
    second = next(s for s in sched.statements if s != "S0")
    with pytest.raises(PtoError, match="does not enclose statement"):
        tile_map(sched, second, ("ib",))
