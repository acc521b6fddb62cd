"""Valid MLIR that onnx-mlir writes and xDSL alone does not read, and the errors for what
is not Krnl at all.

- syntax: spaces around a shape's `x`, `loc(...)` (with `#loc` aliases defined after
  their uses), `symbol(%n)` and `%l#0` in affine index lists, module attributes,
  private declarations, `#map` aliases, alloc alignment, krnl.entry_point: each parses,
  prints to a fixpoint, re-parses from its generic form, and verifies; errors on such
  lines keep their exact column;
- the Krnl ops krnl.get_linear_offset_index, krnl.prefetch and krnl.round_even: syntax,
  checks, and the interpreter and the NumPy kernel against NumPy;
- affine.min / affine.max in the polyhedral model: exact as subscripts and loop bounds;
- ONNX ops, ops of unknown dialects and tensor signatures: one located CLI error each.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.cli import main
from polykrnl.errors import ParseError, PolykrnlError
from polykrnl.reader.parser import parse
from polykrnl.reader.source_text import for_xdsl
from polykrnl.verifier import verify

RNG = np.random.default_rng(15)


def _round_trip(text: str) -> str:
    module = parse(text)
    verify(module)
    printed = module.print()
    assert parse(printed).print() == printed
    assert parse(module.print(generic=True)).print() == printed
    return printed


# ------------------------------------------------------------------ syntax

SPACED = """
func.func @f(%a: memref<10 x f32>, %b: memref<?x10 x f32>, %c: memref<2 x 3 x 4 x i8>) -> f32 {
  %c0 = arith.constant 0 : index
  %x = memref.load %b[%c0, %c0] : memref<?x10 x f32>
  %v = vector.load %a[%c0] : memref<10 x f32>, vector<4 x f32>
  %t = builtin.unrealized_conversion_cast %a : memref<10 x f32> to tensor<10 x f32>
  return %x : f32
}
"""


def test_spaces_around_the_x_of_shapes() -> None:
    printed = _round_trip(SPACED)
    assert "memref<10xf32>" in printed and "memref<?x10xf32>" in printed
    assert "memref<2x3x4xi8>" in printed and "vector<4xf32>" in printed
    assert "tensor<10xf32>" in printed and " x " not in printed


def test_rewriting_for_xdsl_keeps_every_offset() -> None:
    text = SPACED + '#loc = loc("m.onnx":1:2)\n// memref<10 x f32> in a comment\n'
    out = for_xdsl(text)
    assert len(out) == len(text)
    assert [i for i, c in enumerate(out) if c == "\n"] == [
        i for i, c in enumerate(text) if c == "\n"
    ]
    kept = [i for i, c in enumerate(out) if not c.isspace() and c != "x"]
    assert all(out[i] == text[i] for i in kept)
    assert out.endswith("// memref<10 x f32> in a comment\n")  # comments untouched


def test_an_error_after_a_spaced_shape_keeps_its_column() -> None:
    text = (
        "func.func @f(%a: memref<10 x f32>) {\n"
        "  %v = memref.load %a[%nope] : memref<10 x f32>\n  return\n}\n"
    )
    with pytest.raises(ParseError) as info:
        parse(text)
    loc = info.value.location
    assert loc is not None
    assert (loc.line, loc.column) == (2, 23)  # at `%nope`, counted in the original line
    assert loc.line_text == "  %v = memref.load %a[%nope] : memref<10 x f32>"


LOCATED = """#map = affine_map<(d0) -> (d0 + 1)>
module attributes {llvm.data_layout = "e-m:e", "onnx-mlir.symbol-postfix" = "m"} {
  func.func private @external(memref<4xf32>) -> ()
  func.func @g(%a: memref<4xf32> loc("x"), %n: index loc(#loc1)) -> memref<4xf32>
      attributes {input_names = ["x"]} {
    %out = memref.alloc() {alignment = 16 : i64} : memref<4xf32> loc(fused["a", "b"])
    %l = krnl.define_loops 1
    krnl.iterate(%l) with (%l -> %i = 0 to 3) {
      %j = affine.apply #map(%i) loc(callsite("f"("m.onnx":1:1) at "g"("m.onnx":2:2)))
      %v = krnl.load %a[%j] : memref<4xf32>
      krnl.store %v, %out[%i] : memref<4xf32> loc(unknown)
    } loc(#loc2)
    return %out : memref<4xf32> loc(#loc1)
  } loc(#loc)
  "krnl.entry_point"() {func = @g, numInputs = 1 : i32, numOutputs = 1 : i32,
                        signature = "loc(x)"} : () -> ()
} loc(#loc)
#loc = loc("m.onnx":0:0)
#loc1 = loc("n"("m.onnx":3:4))
#loc2 = loc(unknown)
"""


def test_locations_aliases_declarations_and_module_attributes() -> None:
    printed = _round_trip(LOCATED)
    assert not re.search(r"\bloc\(", printed.replace('"loc(x)"', ""))
    assert 'signature = "loc(x)"' in printed  # strings are never rewritten
    assert "func.func private @external(memref<4xf32>) -> ()" in printed
    assert 'builtin.module attributes {llvm.data_layout = "e-m:e"' in printed
    assert "{alignment = 16 : i64}" in printed
    fn = pk.parse(LOCATED)["g"]
    a = RNG.standard_normal(4).astype(np.float32)
    out = pk.run_reference(fn, a=a, n=0)
    np.testing.assert_array_equal(out[:3], a[1:])
    np.testing.assert_array_equal(pk.compile(fn)(a=a, n=0)[:3], a[1:])


def test_ops_are_located_where_they_stand_not_at_their_loc() -> None:
    text = LOCATED.replace("%v = krnl.load %a[%j]", "%v = krnl.load %a[%j, %j]")
    with pytest.raises(PolykrnlError) as info:
        verify(parse(text, "f.mlir"))
    loc = info.value.location
    assert loc is not None and loc.file == "f.mlir" and loc.line == 10


AFFINE_IDS = """
func.func @h(%a: memref<4x8xf32>, %n: index) -> f32 {
  %l:2 = krnl.define_loops 2
  %r = memref.alloca() : memref<f32>
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 4, %l#1 -> %j = 0 to 4) {
    %ij:2 = krnl.get_induction_var_value(%l#0, %l#1) : (!krnl.loop, !krnl.loop) -> (index, index)
    %x = affine.load %a[%ij#0, %ij#1 + symbol(%n)] : memref<4x8xf32>
    affine.store %x, %r[] : memref<f32>
  }
  %y = affine.load %r[] : memref<f32>
  return %y : f32
}
"""


def test_tuple_results_and_symbol_markers_in_affine_index_lists() -> None:
    printed = _round_trip(AFFINE_IDS)
    assert "affine.load %a[%ij, %ij_1 + %n]" in printed
    a = RNG.standard_normal((4, 8)).astype(np.float32)
    assert pk.run_reference(pk.parse(AFFINE_IDS)["h"], a=a, n=2) == a[3, 5]


# ------------------------------------------------------------------ the new krnl ops

OFFSETS = """
#m = affine_map<(d0, d1) -> (d0, d1 floordiv 4)>
func.func @o(%a: memref<?x5x7xf32>, %out: memref<?x5xi64>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %a, %c0 : memref<?x5x7xf32>
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to %n, %l#1 -> %j = 0 to 5) {
    %off = krnl.get_linear_offset_index %a at [%i, %j, 6 - %j] : memref<?x5x7xf32>
    krnl.prefetch %a[%i, %j + 1, 0], write, locality<1>, instr : memref<?x5x7xf32>
    %o = arith.index_cast %off : index to i64
    krnl.store %o, %out[%i, %j] : memref<?x5xi64>
  }
  return
}
"""


def test_linear_offset_and_prefetch_syntax() -> None:
    printed = _round_trip(OFFSETS)
    # xDSL keeps `6 - %j` as %j * -1 + 6, written as MLIR prints it
    assert "krnl.get_linear_offset_index %a at [%i, %j, -%j + 6] : memref<?x5x7xf32>" in printed
    assert "krnl.prefetch %a[%i, %j + 1, 0], write, locality<1>, instr : memref<?x5x7xf32>" in (
        printed
    )
    generic = parse(OFFSETS).print(generic=True)
    assert '"krnl.prefetch"' in generic and "localityHint = 1 : i32" in generic
    assert "isWrite = true" in generic and "isDataCache = false" in generic


@pytest.mark.parametrize("n", [1, 3])
def test_linear_offset_is_the_row_major_offset(n: int) -> None:
    fn = pk.parse(OFFSETS)["o"]
    a = np.zeros((n, 5, 7), np.float32)
    i, j = np.meshgrid(np.arange(n), np.arange(5), indexing="ij")
    expected = np.ravel_multi_index((i, j, 6 - j), a.shape)
    out = np.zeros((n, 5), np.int64)
    pk.run_reference(fn, a=a, out=out)
    np.testing.assert_array_equal(out, expected)
    kernel_out = np.zeros((n, 5), np.int64)
    pk.compile(fn)(a=a, out=kernel_out)
    np.testing.assert_array_equal(kernel_out, expected)


def test_linear_offset_is_an_exact_index_in_the_polyhedral_model() -> None:
    report = pk.check(pk.parse(OFFSETS)["o"])
    assert report.legal and not report.approximations


def test_linear_offset_of_a_memref_with_a_layout_map_is_normalized() -> None:
    # The reader normalizes the layout as onnx-mlir's --normalize-memrefs does: 4x3
    # becomes 2x3x2, and [1, 1] is [0, 1, 1] there (tests/reader/test_layouts.py).
    text = """
#tiled = affine_map<(d0, d1) -> (d0 floordiv 2, d1, d0 mod 2)>
func.func @t(%a: memref<4x3xf32, #tiled>) -> index {
  %c1 = arith.constant 1 : index
  %off = krnl.get_linear_offset_index %a at [%c1, %c1] : memref<4x3xf32, #tiled>
  return %off : index
}
"""
    fn = pk.parse(text)["t"]
    assert pk.run_reference(fn, a=np.zeros((2, 3, 2), np.float32)) == 0 * 6 + 1 * 2 + 1


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("%o = krnl.get_linear_offset_index %a at [%i] : memref<4x4xf32>", "1 indices for %a"),
        ("krnl.prefetch %a[%i, %i], read, locality<7>, data : memref<4x4xf32>", "locality<7>"),
    ],
)
def test_access_ops_check_themselves(body: str, message: str) -> None:
    text = f"func.func @c(%a: memref<4x4xf32>, %i: index) {{\n  {body}\n  return\n}}\n"
    with pytest.raises(PolykrnlError) as info:
        verify(parse(text))
    assert message in str(info.value)


def test_prefetch_names_its_bad_specifier() -> None:
    text = (
        "func.func @c(%a: memref<4xf32>, %i: index) {\n"
        "  krnl.prefetch %a[%i], maybe, locality<3>, data : memref<4xf32>\n  return\n}\n"
    )
    with pytest.raises(ParseError) as info:
        parse(text)
    assert "`read` or `write`" in info.value.message
    loc = info.value.location
    assert loc is not None and (loc.line, loc.column) == (2, 25)


def test_prefetch_changes_nothing() -> None:
    text = """
func.func @p(%a: memref<8xf32>, %b: memref<8xf32>) {
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 8) {
    krnl.prefetch %a[%i + 4], read, locality<3>, data : memref<8xf32>
    %v = krnl.load %a[%i] : memref<8xf32>
    krnl.store %v, %b[%i] : memref<8xf32>
  }
  return
}
"""
    fn = pk.parse(text)["p"]
    a = RNG.standard_normal(8).astype(np.float32)
    for run in (pk.run_reference, lambda f, **kw: pk.compile(f)(**kw)):
        b = np.zeros(8, np.float32)
        run(fn, a=a, b=b)
        np.testing.assert_array_equal(b, a)
    assert not pk.check(fn).approximations


def test_round_even_on_scalars_and_vectors() -> None:
    text = """
func.func @r(%a: memref<8xf32>, %b: memref<8xf32>) {
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 4) {
    %v = krnl.load %a[%i] : memref<8xf32>
    %r = "krnl.round_even"(%v) : (f32) -> f32
    krnl.store %r, %b[%i] : memref<8xf32>
  }
  %c4 = arith.constant 4 : index
  %w = vector.load %a[%c4] : memref<8xf32>, vector<4xf32>
  %rw = "krnl.round_even"(%w) : (vector<4xf32>) -> vector<4xf32>
  vector.store %rw, %b[%c4] : memref<8xf32>, vector<4xf32>
  return
}
"""
    _round_trip(text)
    fn = pk.parse(text)["r"]
    a = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 3.49, -7.51, 1e7 + 0.5], np.float32)
    for run in (pk.run_reference, lambda f, **kw: pk.compile(f)(**kw)):
        b = np.zeros(8, np.float32)
        run(fn, a=a, b=b)
        np.testing.assert_array_equal(b, np.rint(a))


# ------------------------------------------------------------------ affine.min / max

CLAMPED = """
#lo = affine_map<(d0) -> (0, d0 - 1)>
#hi = affine_map<(d0)[s0] -> (d0 + 1, s0 - 1)>
#top = affine_map<()[s0] -> (s0, 6)>
func.func @blur(%a: memref<?xf32>, %b: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %m = affine.min #top()[%n]
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to %m) {
    %p = affine.max #lo(%i)
    %q = affine.min #hi(%i)[%n]
    %x = krnl.load %a[%p] : memref<?xf32>
    %y = krnl.load %a[%q] : memref<?xf32>
    %s = arith.addf %x, %y : f32
    krnl.store %s, %b[%i] : memref<?xf32>
  }
  return
}
"""


def test_min_and_max_are_exact_in_the_polyhedral_model() -> None:
    fn = pk.parse(CLAMPED)["blur"]
    report = pk.check(fn)
    assert report.legal and not report.approximations
    assert "min(" in str(pk.schedule(fn).loops())  # the loop's bound: min(n, 6)


@pytest.mark.parametrize("n", [1, 2, 4, 9])
def test_min_and_max_kernel_against_numpy(n: int) -> None:
    fn = pk.parse(CLAMPED)["blur"]
    a = RNG.standard_normal(n).astype(np.float32)
    m = min(n, 6)
    idx = np.arange(m)
    expected = a[np.maximum(idx - 1, 0)] + a[np.minimum(idx + 1, n - 1)]
    for run in (pk.run_reference, lambda f, **kw: pk.compile(f)(**kw)):
        b = np.zeros(n, np.float32)
        run(fn, a=a, b=b)
        np.testing.assert_array_equal(b[:m], expected)
        np.testing.assert_array_equal(b[m:], 0)


# ------------------------------------------------------------------ not Krnl: CLI errors


def _cli(tmp_path: Path, text: str, *verb: str) -> tuple[int, str, str]:
    path = tmp_path / "in.mlir"
    path.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    code = main([*(verb or ("verify",)), str(path)], out=out, err=err)
    assert "Traceback" not in err.getvalue()
    return code, out.getvalue(), err.getvalue().replace(str(path), "FILE")


@pytest.mark.parametrize(
    "line",
    [
        '  %0 = "onnx.Add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>',
        "  %0 = onnx.Add %a, %b : tensor<4xf32>",
        "  %0:2 = onnx.Add %a, %b : tensor<4xf32>",
    ],
)
@pytest.mark.parametrize("verb", ["print", "verify", "run", "check"])
def test_onnx_ops_are_located_errors(tmp_path: Path, line: str, verb: str) -> None:
    text = f"func.func @f(%a: memref<4xf32>, %b: memref<4xf32>) {{\n{line}\n  return\n}}\n"
    code, _, err = _cli(tmp_path, text, verb)
    column = line.index("onnx.Add") + 1
    assert code == 2
    assert err.startswith(
        f"error: FILE:2:{column}: not Krnl: `onnx.Add` is an ONNX op, left by a partial lowering"
    )
    assert "lower this function with onnx-mlir first (onnx-mlir-opt --convert-onnx-to-krnl)" in err


@pytest.mark.parametrize(
    ("line", "op"),
    [
        ('  "linalg.fill"(%a) : (memref<4xf32>) -> ()', "linalg.fill"),
        ("  %0 = tosa.abs %a : memref<4xf32>", "tosa.abs"),
        ("  %0 = arith.frobnicate %a : memref<4xf32>", "arith.frobnicate"),
        ('  %0 = "krnl.no_such_op"(%a) : (memref<4xf32>) -> f32', "krnl.no_such_op"),
    ],
)
def test_unknown_ops_are_located_errors(tmp_path: Path, line: str, op: str) -> None:
    text = f"func.func @f(%a: memref<4xf32>) {{\n{line}\n  return\n}}\n"
    code, _, err = _cli(tmp_path, text, "print")
    assert code == 2
    assert err.startswith(f"error: FILE:2:{line.index(op) + 1}: `{op}` is not an op polykrnl reads")
    assert "`polykrnl ops` lists every op" in err


@pytest.mark.parametrize(
    ("signature", "column", "what"),
    [
        ("(%a: tensor<4xf32>) -> memref<4xf32>", 18, "takes tensor<4xf32>"),
        ("(%a: memref<4xf32>) -> tensor<*xf32>", 36, "returns tensor<*xf32>"),
    ],
)
def test_tensor_signatures_are_located_errors(
    tmp_path: Path, signature: str, column: int, what: str
) -> None:
    body = "  %m = memref.alloc() : memref<4xf32>\n  return %m : memref<4xf32>\n"
    text = f"func.func @f{signature} {{\n{body}}}\n"
    code, _, err = _cli(tmp_path, text, "verify")
    assert code == 2
    assert err.startswith(f"error: FILE:1:{column}: not Krnl: @f {what}, a tensor")
    assert "onnx-mlir-opt --convert-onnx-to-krnl" in err
