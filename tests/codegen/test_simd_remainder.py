"""A SIMD run and its scalar remainder as one statement in array code
(codegen/simd_remainder.py): merged only when the remainder computes each lane of the run
and both cover one box, bit for bit the interpreter's; otherwise two statements."""

from __future__ import annotations

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.codegen.simd_remainder import run_remainder
from polykrnl.transforms.dependences import related
from polykrnl.transforms.memory_safety import call_context
from tests.scripts import ROOT, onnx_shapes

RNG = np.random.default_rng(32)
MERGED = "merged: S2 over"

# One row loop, a SIMD run then its remainder per row; {SOP} is the remainder's op and
# {RLO} where it starts (the run ends at {MAIN}): the cases that must not merge change them.
ROWS = """
func.func @rows(%x: memref<{R}x{C}xf32>, %b: memref<{C}xf32>) -> memref<{R}x{C}xf32> {{
  %out = memref.alloc() : memref<{R}x{C}xf32>
  %rows = krnl.define_loops 1
  krnl.iterate(%rows) with (%rows -> %i = 0 to {R}) {{
    %l = krnl.define_loops 1
    %t, %p = krnl.block %l 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    krnl.iterate(%t) with (%l -> %j = 0 to {MAIN}) {{
      %j0 = krnl.get_induction_var_value(%t) : (!krnl.loop) -> index
      %v = vector.load %x[%i, %j0] : memref<{R}x{C}xf32>, vector<8xf32>
      %w = vector.load %b[%j0] : memref<{C}xf32>, vector<8xf32>
      %s = arith.addf %v, %w : vector<8xf32>
      vector.store %s, %out[%i, %j0] : memref<{R}x{C}xf32>, vector<8xf32>
    }}
    %q = krnl.define_loops 1
    krnl.iterate(%q) with (%q -> %k = {RLO} to {C}) {{
      %v = krnl.load %x[%i, %k] : memref<{R}x{C}xf32>
      %w = krnl.load %b[%k] : memref<{C}xf32>
      %s = {SOP} %v, %w : f32
{EXTRA}      krnl.store %s, %out[%i, %k] : memref<{R}x{C}xf32>
    }}
  }}
  return %out : memref<{R}x{C}xf32>
}}
"""

# The same with dynamic sizes: the run up to C - 7, the remainder from C - C mod 8.
DYNAMIC = """
func.func @dyn(%x: memref<?x?xf32>, %b: memref<?xf32>) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = memref.dim %x, %c0 : memref<?x?xf32>
  %c = memref.dim %x, %c1 : memref<?x?xf32>
  %out = memref.alloc(%r, %c) : memref<?x?xf32>
  %rows = krnl.define_loops 1
  krnl.iterate(%rows) with (%rows -> %i = 0 to %r) {
    %l = krnl.define_loops 1
    %t, %p = krnl.block %l 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    krnl.iterate(%t) with (%l -> %j = 0 to affine_map<()[s0] -> (s0 - 7)>()[%c]) {
      %j0 = krnl.get_induction_var_value(%t) : (!krnl.loop) -> index
      %v = vector.load %x[%i, %j0] : memref<?x?xf32>, vector<8xf32>
      %w = vector.load %b[%j0] : memref<?xf32>, vector<8xf32>
      %s = arith.mulf %v, %w : vector<8xf32>
      vector.store %s, %out[%i, %j0] : memref<?x?xf32>, vector<8xf32>
    }
    %q = krnl.define_loops 1
    krnl.iterate(%q) with (%q -> %k = affine_map<()[s0] -> (s0 - s0 mod 8)>()[%c] to %c) {
      %v = krnl.load %x[%i, %k] : memref<?x?xf32>
      %w = krnl.load %b[%k] : memref<?xf32>
      %s = arith.mulf %v, %w : f32
      krnl.store %s, %out[%i, %k] : memref<?x?xf32>
    }
  }
  return %out : memref<?x?xf32>
}
"""


def rows(
    r: int = 3,
    c: int = 21,
    sop: str = "arith.addf",
    rlo: int | None = None,
    extra: str = "",
    stored: str = "%s",
) -> pk.Function:
    """The add-row program; `extra` ops in the remainder's body, `stored` its value."""
    main = c - c % 8
    text = ROWS.format(R=r, C=c, MAIN=c - 7, RLO=main if rlo is None else rlo, SOP=sop, EXTRA=extra)
    text = text.replace("krnl.store %s, %out[%i, %k]", f"krnl.store {stored}, %out[%i, %k]")
    return pk.parse(text)["rows"]


def _exact(fn: pk.Function, **args: np.ndarray) -> pk.NumpyKernel:
    """The exact kernel, checked bit for bit against the interpreter."""
    ref = pk.run_reference(fn, **{k: v.copy() for k, v in args.items()})
    kernel = pk.schedule(fn).to_numpy(reassociate=False)
    got = kernel(**{k: v.copy() for k, v in args.items()})
    np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))
    return kernel


def _floats(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def test_rows_merge_into_one_statement() -> None:
    kernel = _exact(rows(), x=_floats(3, 21), b=_floats(21))
    assert "np.add(v, w, out=out_1[0:3, 0:21])" in kernel.source, kernel.source
    assert "the SIMD run of loop t and its remainder loop k merged" in kernel.source
    assert "n_t" not in kernel.source  # no (tiles, lanes) statement left


@pytest.mark.parametrize(("name", "n"), [("add", 37), ("relu", 45), ("tanh", 29)])
def test_one_dimensional_elementwise_ops_merge(name: str, n: int) -> None:
    shapes = onnx_shapes()
    fn = pk.parse(getattr(shapes, f"{name}_text")(n))[name]
    args = {a.name: _floats(n) for a in fn.arguments}
    args["a"][:4] = [0.0, -0.0, np.nan, -np.inf]  # relu's ties and NaN, bit for bit
    kernel = _exact(fn, **args)
    assert f"[0:{n}]" in kernel.source and MERGED in kernel.source, kernel.source
    # The default kernel (float32 tanh) is only close.
    ref = pk.run_reference(fn, **{k: v.copy() for k, v in args.items()})
    np.testing.assert_allclose(pk.compile(fn)(**args), ref, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(("r", "c"), [(3, 21), (2, 16), (4, 5), (1, 0), (0, 9), (2, 8)])
def test_dynamic_sizes_merge(r: int, c: int) -> None:
    fn = pk.parse(DYNAMIC)["dyn"]
    kernel = _exact(fn, x=_floats(r, c), b=_floats(c))
    assert MERGED in kernel.source and "0:c" in kernel.source.replace("x_d1", "c"), kernel.source


def test_one_dimensional_dynamic_corpus_program_merges() -> None:
    fn = pk.load(ROOT / "tests" / "corpus" / "onnx_simd_add.mlir")["simd_add"]
    for n in (0, 3, 8, 19):
        kernel = _exact(fn, a=_floats(n), b=_floats(n))
    assert "np.add(x, y, out=out_1[0:a_d0])" in kernel.source, kernel.source


@pytest.mark.parametrize(
    ("case", "fn"),
    [
        ("another op", lambda: rows(sop="arith.subf")),
        ("a gap", lambda: rows(rlo=17)),
        ("an overlap", lambda: rows(rlo=15)),
        # the extra op's value is stored: another value than the run's lanes
        ("an extra op", lambda: rows(extra="      %s3 = arith.mulf %s, %w : f32\n", stored="%s3")),
    ],
)
def test_what_must_not_merge_stays_two_statements(case: str, fn: object) -> None:
    kernel = _exact(fn(), x=_floats(3, 21), b=_floats(21))  # type: ignore[operator]
    assert MERGED not in kernel.source, (case, kernel.source)
    assert "(n_i, n_t, 8)" in kernel.source  # the run alone, as (rows, tiles, lanes)


def _statements(fn: pk.Function) -> tuple[pk.PolyProgram, dict[str, object]]:
    program = pk.schedule(fn).program
    return program, {s.name: s for s in program.statements}


def test_analysis_says_why_and_refuses_a_dependence() -> None:
    program, st = _statements(rows())
    ctx = call_context(program)
    found = run_remainder(st["S1"], st["S2"], lambda _a, _b: False, ctx)  # type: ignore[arg-type]
    assert not isinstance(found, str)
    assert str(found.start) == "{ [(0)] }" and str(found.end) == "{ [(21)] }"
    refused = run_remainder(st["S1"], st["S2"], lambda _a, _b: True, ctx)  # type: ignore[arg-type]
    assert refused == "a dependence between S1 and S2"
    program, st = _statements(rows(rlo=17))
    why = run_remainder(st["S1"], st["S2"], lambda _a, _b: False, ctx)  # type: ignore[arg-type]
    assert why == "a gap between the run and the remainder"
    program, st = _statements(rows(rlo=15))
    why = run_remainder(st["S1"], st["S2"], lambda _a, _b: False, ctx)  # type: ignore[arg-type]
    assert why == "the run and the remainder overlap"
    program, st = _statements(rows(sop="arith.subf"))
    why = run_remainder(st["S1"], st["S2"], lambda _a, _b: False, ctx)  # type: ignore[arg-type]
    assert why == "arith.addf in the run, arith.subf in the remainder"


def test_related_finds_a_flow_between_the_run_and_the_remainder() -> None:
    # The remainder reads what the run wrote (out[i, k - 16]): a RAW from S1 to S2.
    text = ROWS.format(R=3, C=21, MAIN=14, RLO=16, SOP="arith.addf", EXTRA="")
    text = text.replace(
        "%v = krnl.load %x[%i, %k]",
        "%k16 = affine.apply affine_map<(d0) -> (d0 - 16)>(%k)\n"
        "      %v = krnl.load %out[%i, %k16]",
    )
    fn = pk.parse(text)["rows"]
    program, _ = _statements(fn)
    assert related(program, "S1", "S2")
    assert not related(_statements(rows())[0], "S1", "S2")
    kernel = _exact(fn, x=_floats(3, 21), b=_floats(21))
    assert MERGED not in kernel.source
