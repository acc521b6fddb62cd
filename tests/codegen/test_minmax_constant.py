"""Float min/max with a constant operand: NumPy's ufunc alone where no tie of zeros of
different signs can happen, `_maxnumf0`/`_maximumf0` for max(x, +0.0) (relu), the
prelude's tie-testing helper otherwise. Checked bit for bit (NaN for NaN) against MLIR's
definitions written out here on Python floats, on inputs holding both zeros, NaN and
infinities, contiguous and through the destination (`out=`) form."""

from __future__ import annotations

import math

import numpy as np
import pytest

import polykrnl as pk

OPS = ("maximumf", "minimumf", "maxnumf", "minnumf")
CONSTS = ("0.000000e+00", "-0.000000e+00", "2.500000e+00", "-1.000000e+00", "0x7FC00000")


def mlir(op: str, a: float, b: float) -> float:
    """MLIR's arith.{op} on two floats: -0.0 < +0.0; NaN wins (maximumf/minimumf) or loses
    (maxnumf/minnumf) against a number."""
    if math.isnan(a) or math.isnan(b):
        if op in ("maximumf", "minimumf") or (math.isnan(a) and math.isnan(b)):
            return math.nan
        return b if math.isnan(a) else a
    larger = op.startswith("max")
    if a == b == 0.0:
        pos = math.copysign(1.0, a) > 0 or math.copysign(1.0, b) > 0
        neg = math.copysign(1.0, a) < 0 or math.copysign(1.0, b) < 0
        return 0.0 if (pos if larger else not neg) else -0.0
    return max(a, b) if larger else min(a, b)


def program(op: str, const: str, const_first: bool) -> pk.Function:
    args = "%c, %x" if const_first else "%x, %c"
    text = f"""
func.func @f(%a: memref<64xf32>) -> memref<64xf32> {{
  %out = memref.alloc() : memref<64xf32>
  %c = arith.constant {const} : f32
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 64) {{
    %x = krnl.load %a[%i] : memref<64xf32>
    %r = arith.{op} {args} : f32
    krnl.store %r, %out[%i] : memref<64xf32>
  }}
  return %out : memref<64xf32>
}}
"""
    return pk.parse(text).functions[0]


def inputs() -> np.ndarray:
    special = [0.0, -0.0, math.nan, math.inf, -math.inf, 2.5, -2.5, -1.0, 1.0]
    rest = np.random.default_rng(7).standard_normal(64 - len(special))
    return np.array([*special, *rest], dtype=np.float32)


@pytest.mark.parametrize("const_first", [False, True])
@pytest.mark.parametrize("const", CONSTS)
@pytest.mark.parametrize("op", OPS)
def test_min_max_with_a_constant_is_mlir_s(op: str, const: str, const_first: bool) -> None:
    fn = program(op, const, const_first)
    a = inputs()
    c = math.nan if const.startswith("0x") else float(const)
    pairs = [(c, float(x)) if const_first else (float(x), c) for x in a]
    want = np.array([mlir(op, p, q) for p, q in pairs], dtype=np.float32)
    got = pk.compile(fn)(a=a.copy())
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert got[~nan].tobytes() == want[~nan].tobytes()  # signed zeros included


@pytest.mark.parametrize(
    ("op", "const", "form"),
    [
        ("maxnumf", "0.000000e+00", "_maxnumf0("),
        ("maximumf", "0.000000e+00", "_maximumf0("),
        ("maxnumf", "2.500000e+00", "np.fmax("),
        ("minimumf", "-1.000000e+00", "np.minimum("),
        ("minnumf", "0.000000e+00", "_minnumf("),
        ("maxnumf", "-0.000000e+00", "_maxnumf("),
    ],
)
def test_the_form_chosen_for_a_constant(op: str, const: str, form: str) -> None:
    source = pk.compile(program(op, const, False)).source
    body = source[source.index("def kernel_f") :]
    assert form in body
