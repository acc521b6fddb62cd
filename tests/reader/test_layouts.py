"""Tiled layout maps, normalized by the reader as onnx-mlir's --normalize-memrefs does.

The oracle is independent of the normalization: NumPy places each logical element where
the layout map sends it, by hand, and the tests compare what the normalized program
reads or writes with the logical meaning of the program as written.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.errors import PolykrnlError

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "tiled_layouts.mlir"


def _rows(i: int, j: int) -> tuple[int, ...]:
    # #rows = (d0, d1) -> (d0 floordiv 4, d1 floordiv 8, d0 mod 4, d1 mod 8)
    return (i // 4, j // 8, i % 4, j % 8)


def _blocked(b: int, i: int, j: int) -> tuple[int, ...]:
    # #blocked = (d0, d1, d2) -> (d0, d1 floordiv 16, d2 floordiv 8, d2 mod 8, d1 mod 16)
    return (b, i // 16, j // 8, j % 8, i % 16)


def _kernels(fn: pk.Function) -> list[object]:
    return [pk.compile(fn, reassociate=False), pk.compile(fn)]


def test_signatures_take_the_normalized_types_and_say_so() -> None:
    mod = pk.load(CORPUS)
    assert str(mod["untile"].arguments[0].type) == "memref<2x2x4x8xf32>"
    assert str(mod["tile"].result_types[0]) == "memref<?x2x3x8x16xf32>"
    # A remainder keeps its whole tile, as in MLIR: 4 rows of a 32-row tile still take 32.
    assert str(mod["memcpy_tiled"].result_types[0]) == "memref<1x16x1x1x32x32xf32>"
    notes = [str(n) for n in mod.layout_notes]
    assert any("@untile: argument %T memref<8x16xf32" in n for n in notes)
    assert mod.layouts_kept is None


def test_loads_through_the_layout_read_the_logical_elements() -> None:
    fn = pk.load(CORPUS)["untile"]
    logical = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    tiled = np.full((2, 2, 4, 8), np.nan, np.float32)
    for i, j in itertools.product(range(8), range(16)):
        tiled[_rows(i, j)] = logical[i, j]
    out = np.zeros((8, 16), np.float32)
    pk.run_reference(fn, T=tiled, out=out)
    np.testing.assert_array_equal(out, logical * logical)
    for kernel in _kernels(fn):
        got = np.zeros((8, 16), np.float32)
        kernel(T=tiled, out=got)  # type: ignore[operator]
        np.testing.assert_array_equal(got, out)  # elementwise: bit for bit either way


def test_stores_through_the_layout_place_each_element_by_the_map() -> None:
    fn = pk.load(CORPUS)["tile"]
    x = np.random.default_rng(1).standard_normal((3, 32, 24)).astype(np.float32)
    result = pk.run_reference(fn, X=x.copy(), n=3)
    assert result.shape == (3, 2, 3, 8, 16)
    for b, i, j in itertools.product(range(3), range(32), range(24)):
        assert result[_blocked(b, i, j)] == x[b, i, j]
    for kernel in _kernels(fn):
        np.testing.assert_array_equal(kernel(X=x.copy(), n=3), result)  # type: ignore[operator]


def test_memcpy_fills_the_padded_tiles_in_their_order() -> None:
    fn = pk.load(CORPUS)["memcpy_tiled"]
    src = np.arange(16384, dtype=np.float32).reshape(1, 16384)
    result = pk.run_reference(fn, src=src)
    np.testing.assert_array_equal(result.reshape(-1), src.reshape(-1))
    for kernel in _kernels(fn):
        np.testing.assert_array_equal(kernel(src=src), result)  # type: ignore[operator]


def test_linear_offset_is_the_row_major_offset_in_the_normalized_memref() -> None:
    fn = pk.load(CORPUS)["linear_offset"]
    a = np.zeros((5, 2, 3, 8, 16), np.float32)
    # [b, 17, 3] -> [b, 1, 0, 3, 1] in a ?x2x3x8x16 buffer
    expected = 4 * (2 * 3 * 8 * 16) + 1 * (3 * 8 * 16) + 0 * (8 * 16) + 3 * 16 + 1
    assert pk.run_reference(fn, A=a, n=2, b=4) == expected
    for kernel in _kernels(fn):
        assert kernel(A=a, n=2, b=4) == expected  # type: ignore[operator]


def test_dynamic_sizes_are_computed_at_the_allocation() -> None:
    text = """
#t = affine_map<(d0, d1) -> (d0, d1 floordiv 64, 0, 31, d1 mod 64)>
func.func @alloc(%m: index, %n: index) -> memref<?x?xf16, #t> {
  %z = arith.constant 0.0 : f16
  %r = memref.alloc(%m, %n) : memref<?x?xf16, #t>
  krnl.memset %r, %z : memref<?x?xf16, #t>
  return %r : memref<?x?xf16, #t>
}
"""
    fn = pk.parse(text)["alloc"]
    assert str(fn.result_types[0]) == "memref<?x?x1x32x?xf16>"
    # ceildiv(100, 64) tiles of 64: the remainder dimension is the tile's size
    assert pk.run_reference(fn, m=3, n=100).shape == (3, 2, 1, 32, 64)
    assert pk.compile(fn)(m=3, n=100).shape == (3, 2, 1, 32, 64)


@pytest.mark.parametrize(
    ("layout", "why"),
    [
        ("affine_map<(d0, d1)[s0] -> (d0 * s0 + d1)>", "takes symbols"),
        ("affine_map<(d0, d1) -> (d0 - 4, d1)>", "negative positions"),
    ],
)
def test_a_layout_it_cannot_normalize_keeps_the_refusal(layout: str, why: str) -> None:
    text = f"""
#m = {layout}
func.func @t(%a: memref<4x3xf32, #m>) -> index {{
  %c1 = arith.constant 1 : index
  %off = krnl.get_linear_offset_index %a at [%c1, %c1] : memref<4x3xf32, #m>
  return %off : index
}}
"""
    mod = pk.parse(text)
    assert mod.layouts_kept is not None and why in mod.layouts_kept
    assert not mod.layout_notes
    with pytest.raises(PolykrnlError) as info:
        pk.run_reference(mod["t"], a=np.zeros((4, 3), np.float32))
    assert "layout is not the identity" in info.value.message
    assert why in (info.value.hint or "")
    assert info.value.location is not None and info.value.location.line == 5
    # The NumPy kernel names the op it cannot compute, where it stands.
    with pytest.raises(PolykrnlError) as info:
        pk.compile(mod["t"])
    assert "`krnl.get_linear_offset_index`" in info.value.message
    assert info.value.location is not None and info.value.location.line == 5


def test_an_access_out_of_bounds_is_located_at_the_users_line() -> None:
    text = """
#rows = affine_map<(d0, d1) -> (d0 floordiv 4, d1 floordiv 8, d0 mod 4, d1 mod 8)>
func.func @over(%T: memref<8x16xf32, #rows>, %i: index) -> f32 {
  %c0 = arith.constant 0 : index
  %v = krnl.load %T[%i, %c0] : memref<8x16xf32, #rows>
  return %v : f32
}
"""
    fn = pk.parse(text)["over"]
    with pytest.raises(PolykrnlError) as info:
        pk.run_reference(fn, T=np.zeros((2, 2, 4, 8), np.float32), i=8)
    assert info.value.location is not None and info.value.location.line == 5
    assert "%T" in info.value.message


def test_cli_run_says_the_argument_was_normalized(tmp_path: Path) -> None:
    import io

    from polykrnl.runner import run_cli

    out = io.StringIO()
    module = pk.load(CORPUS)
    status = run_cli(
        module, func="untile", params={}, reference=False, verify=True, seed=0, out=out
    )
    assert status == 0
    assert "note: @untile: argument %T memref<8x16xf32" in out.getvalue()
    assert "is read as memref<2x2x4x8xf32>" in out.getvalue()


VECTOR_COPY = """
#m = {layout}
func.func @runs(%A: memref<4x16xf32, #m>, %out: memref<4x16xf32>) {{
  %ii:2 = krnl.define_loops 2
  krnl.iterate(%ii#0, %ii#1) with (%ii#0 -> %i = 0 to 4, %ii#1 -> %t = 0 to 2) {{
    %j = affine.apply affine_map<(d0) -> (d0 * 8)>(%t)
    %v = vector.load %A[%i, %j] : memref<4x16xf32, #m>, vector<8xf32>
    vector.store %v, %out[%i, %j] : memref<4x16xf32>, vector<8xf32>
  }}
  return
}}
"""


def test_a_vector_access_along_a_kept_last_dimension_is_normalized() -> None:
    fn = pk.parse(
        VECTOR_COPY.format(layout="affine_map<(d0, d1) -> (d0 mod 2, d0 floordiv 2, d1)>")
    )["runs"]
    assert str(fn.arguments[0].type) == "memref<2x2x16xf32>"
    logical = np.arange(64, dtype=np.float32).reshape(4, 16)
    normalized = np.zeros((2, 2, 16), np.float32)
    for i in range(4):
        normalized[i % 2, i // 2, :] = logical[i]
    out = np.zeros((4, 16), np.float32)
    pk.run_reference(fn, A=normalized, out=out)
    np.testing.assert_array_equal(out, logical)
    got = np.zeros((4, 16), np.float32)
    pk.compile(fn)(A=normalized, out=got)
    np.testing.assert_array_equal(got, logical)


def test_a_vector_access_across_tiles_keeps_the_layout() -> None:
    rows = "affine_map<(d0, d1) -> (d0, d1 floordiv 4, d1 mod 4)>"
    mod = pk.parse(VECTOR_COPY.format(layout=rows))
    assert mod.layouts_kept is not None and "consecutive" in mod.layouts_kept
    assert str(mod["runs"].arguments[0].type).startswith("memref<4x16xf32, affine_map")


def test_a_built_module_is_normalized_as_a_read_one() -> None:
    tiled = "memref<4x3xf32, affine_map<(d0, d1) -> (d0 floordiv 2, d1, d0 mod 2)>>"
    mb = pk.ModuleBuilder()
    with mb.function("copy", [("a", tiled), ("out", "memref<4x3xf32>")]) as f:
        a, out = f.args
        ii, jj = f.define_loops(2, names=("ii", "jj"))
        with f.iterate([ii, jj], [(ii, "i", 0, 4), (jj, "j", 0, 3)]) as (i, j):
            f.store(f.load(a, [i, j], name="x"), out, [i, j])
    fn = mb.module()["copy"]
    assert str(fn.arguments[0].type) == "memref<2x3x2xf32>"
    logical = np.arange(12, dtype=np.float32).reshape(4, 3)
    normalized = np.zeros((2, 3, 2), np.float32)
    for i, j in itertools.product(range(4), range(3)):
        normalized[i // 2, j, i % 2] = logical[i, j]
    result = np.zeros((4, 3), np.float32)
    pk.run_reference(fn, a=normalized, out=result)
    np.testing.assert_array_equal(result, logical)
    assert pk.parse(str(mb.module()))["copy"].print() == fn.print()
