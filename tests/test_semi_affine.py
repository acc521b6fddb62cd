"""Semi-affine maps: a product, floordiv, ceildiv or mod by a symbol, as onnx-mlir writes
them for pooling windows (`(d0)[s0] -> (d0 ceildiv s0)`) and flattened shapes
(`d0 * (s1 * s2)`).

They parse, print back to text that reads the same, and mean what MLIR says (division
and modulo by a positive divisor, rounding down or up, the modulo never negative) in the
reference interpreter and the NumPy and Numba kernels. The polyhedral model has no
division by a parameter: a subscript that needs one is a may-access over its dimension,
a loop bound that needs one is refused with the reason, and either is exact again where
the symbol is bound to a constant.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineExpr

import polykrnl as pk
from polykrnl.dialect.semi_affine import (
    DivisorError,
    SemiAffineError,
    combine,
    evaluate,
    fold_operands,
)
from polykrnl.inputs import make_inputs

# Each output element gets the floordiv, ceildiv and mod of a signed value by `s`, and
# `B[i * s]` reads through a product by a symbol: a subscript the model cannot bound.
DIVISIONS = """
#div = affine_map<(d0)[s0] -> (d0 floordiv s0, d0 ceildiv s0, d0 mod s0)>
func.func @divs(%s: index) -> memref<3x9xindex> {
  %out = memref.alloc() : memref<3x9xindex>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 9) {
    %x = arith.subi %i, %c4 : index
    %f = affine.apply affine_map<(d0)[s0] -> (d0 floordiv s0)>(%x)[%s]
    %c = affine.apply affine_map<(d0)[s0] -> (d0 ceildiv s0)>(%x)[%s]
    %m = affine.apply affine_map<(d0)[s0] -> (d0 mod s0)>(%x)[%s]
    krnl.store %f, %out[%c0, %i] : memref<3x9xindex>
    krnl.store %c, %out[%c1, %i] : memref<3x9xindex>
    krnl.store %m, %out[%c2, %i] : memref<3x9xindex>
  }
  return %out : memref<3x9xindex>
}

func.func @strided(%A: memref<?xf32>, %s: index) -> memref<4xf32> {
  %out = memref.alloc() : memref<4xf32>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 4) {
    %v = affine.load %A[%i * symbol(%s)] : memref<?xf32>
    krnl.store %v, %out[%i] : memref<4xf32>
  }
  return %out : memref<4xf32>
}
"""

# A pooling-like window: the bound divides by the stride %s (a parameter: refused by
# the model) or by a constant stride (exact).
WINDOW = """
#win = affine_map<(d0)[s0, s1] -> (d0 * s1 + s1, s0 ceildiv s1)>
func.func @window(%A: memref<?xf32>, %B: memref<?xf32>, %s: index) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %A, %c0 : memref<?xf32>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to min #win(%c0)[%n, %s]) {
    %v = krnl.load %A[%i] : memref<?xf32>
    krnl.store %v, %B[%i] : memref<?xf32>
  }
  return
}

func.func @window2(%A: memref<?xf32>, %B: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = memref.dim %A, %c0 : memref<?xf32>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to min #win(%c0)[%n, %c2]) {
    %j = affine.apply affine_map<(d0)[s0] -> (d0 * s0)>(%i)[%c2]
    %v = krnl.load %A[%j] : memref<?xf32>
    krnl.store %v, %B[%i] : memref<?xf32>
  }
  return
}
"""


@pytest.fixture(scope="module")
def module() -> pk.Module:
    return pk.parse(DIVISIONS)


def _expected_divisions(s: int) -> np.ndarray:
    x = np.arange(9) - 4
    return np.stack([x // s, -(-x // s), x % s])


def test_semi_affine_maps_parse_and_print_back(module: pk.Module) -> None:
    text = module.print()
    assert "floordiv s0" in text and "ceildiv s0" in text and "mod s0" in text
    again = pk.parse(text)
    assert again.print() == text
    window = pk.parse(WINDOW).print()
    assert pk.parse(window).print() == window


def test_mlir_rules_for_semi_affine_expressions() -> None:
    # A product of two dimensions, a division by a dimension: not even semi-affine.
    with pytest.raises(pk.ParseError, match="multiplies two expressions of dimensions"):
        pk.parse("#m = affine_map<(d0, d1) -> (d0 * d1)>\n")
    with pytest.raises(pk.ParseError, match="right operand of floordiv"):
        pk.parse("#m = affine_map<(d0, d1) -> (d0 floordiv d1)>\n")


def test_the_interpreter_divides_as_mlir_does(module: pk.Module) -> None:
    for s in (1, 2, 3, 5):
        assert np.array_equal(pk.run_reference(module["divs"], s=s), _expected_divisions(s))
    with pytest.raises(pk.InterpretError, match="only for a positive divisor"):
        pk.run_reference(module["divs"], s=0)


@pytest.mark.parametrize("target", ["numpy", "numba"])
def test_kernels_divide_as_the_interpreter(module: pk.Module, target: str) -> None:
    if target == "numba":
        pytest.importorskip("numba", reason="the Numba target needs polykrnl[numba]")
    for name in ("divs", "strided"):
        sched = pk.schedule(module[name])
        kernel = sched.to_numpy() if target == "numpy" else sched.to_numba(cache=False)
        for s in (1, 2, 3):
            inputs = make_inputs(module[name], {"s": s}, seed=s, size=12)
            expected = pk.run_reference(module[name], **inputs)
            assert np.array_equal(kernel(**inputs), expected)


def test_a_subscript_through_a_symbol_is_a_may_access(module: pk.Module) -> None:
    report = pk.check(module["strided"])
    assert report.approximations, "the read of A[i * s] covers its whole dimension"
    reads = [str(a) for s in pk.poly_program(module["strided"]).statements for a in s.accesses]
    assert any(r.startswith("may-read") and "A[" in r for r in reads), reads


def test_a_loop_bound_divided_by_a_parameter_is_refused_with_the_reason() -> None:
    fn = pk.parse(WINDOW)["window"]
    with pytest.raises(pk.UnsupportedError, match="semi-affine") as e:
        pk.schedule(fn)
    assert "affine.apply before the loops" in (e.value.hint or "")
    # The interpreter runs it all the same.
    A = np.arange(10, dtype=np.float32)
    B = np.zeros(10, dtype=np.float32)
    pk.run_reference(fn, A=A, B=B, s=3)
    assert np.array_equal(B[:3], A[:3]) and not B[3:].any()  # min(0 * 3 + 3, 10 ceildiv 3)


def test_a_constant_symbol_makes_the_map_affine_again() -> None:
    fn = pk.parse(WINDOW)["window2"]
    report = pk.check(fn)
    assert not report.approximations  # i * 2 is exact
    A = np.arange(11, dtype=np.float32)
    B = np.zeros(11, dtype=np.float32)
    pk.schedule(fn).to_numpy()(A=A, B=B)
    # i < min(0 * 2 + 2, 11 ceildiv 2) = 2: B[i] = A[2 i]
    assert B[:2].tolist() == [0.0, 2.0] and not B[2:].any()


def test_the_expression_helpers() -> None:
    d0, s0 = AffineExpr.dimension(0), AffineExpr.symbol(0)
    e = combine(AffineBinaryOpKind.CeilDiv, d0, s0)
    assert isinstance(e, AffineBinaryOpExpr)
    assert [evaluate(e, [x], [3]) for x in (-4, -3, -1, 0, 1, 3, 4)] == [-1, -1, 0, 0, 1, 1, 2]
    with pytest.raises(DivisorError):
        evaluate(e, [1], [-2])
    with pytest.raises(SemiAffineError):
        combine(AffineBinaryOpKind.Mod, s0, d0)
    folded = fold_operands(combine(AffineBinaryOpKind.Mul, d0, s0), [None, 4], 1)
    assert str(folded) == "(d0 * 4)"
