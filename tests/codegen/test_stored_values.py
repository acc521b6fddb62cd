"""A value an earlier part of a distributed body stored is read back, not computed
again (codegen/stored_values.py): the exp-and-sum of a softmax computes exp once. Not
when another statement writes the array in between, nor when the store overwrites its
element in a later iteration. Every kernel is checked against the interpreter."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import polykrnl as pk

TEXT = """
func.func @f(%x: memref<6x10xf32>) -> (memref<{out}xf32>, memref<6xf32>) {{
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %out = memref.alloc() : memref<{out}xf32>
  %s = memref.alloc() : memref<6xf32>
  %a = krnl.define_loops 1
  krnl.iterate(%a) with (%a -> %i = 0 to 6) {{
    krnl.store %zero, %s[%i] : memref<6xf32>
  }}
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 6, %l#1 -> %j = 0 to 10) {{
    %v = krnl.load %x[%i, %j] : memref<6x10xf32>
    %e = math.exp %v : f32
    krnl.store %e, %out[{at}] : memref<{out}xf32>
{between}
    %t = krnl.load %s[%i] : memref<6xf32>
    %u = arith.addf %t, %e : f32
    krnl.store %u, %s[%i] : memref<6xf32>
  }}
  return %out, %s : memref<{out}xf32>, memref<6xf32>
}}
"""
OVERWRITE = """    %h = arith.mulf %e, %two : f32
    krnl.store %h, %out[%i, %j] : memref<6x10xf32>"""


def _run(text: str) -> str:
    fn = pk.parse(text).functions[0]
    x = np.random.default_rng(5).standard_normal((6, 10)).astype(np.float32)
    ref = pk.run_reference(fn, x=x.copy())
    kernel = pk.compile(fn)
    got: Any = kernel(x=x.copy())
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)
    return str(kernel.source).split("\ndef kernel", 1)[1]


def test_the_sum_reads_the_stored_exp() -> None:
    body = _run(TEXT.format(out="6x10", at="%i, %j", between=""))
    assert body.count("np.exp(") == 1, body
    assert "np.sum(e_1, axis=-1)" in body, body


@pytest.mark.parametrize(
    ("out", "at", "between"),
    [
        ("6x10", "%i, %j", OVERWRITE),  # another statement writes the element in between
        ("6", "%i", ""),  # each j overwrites out[i]: a later iteration's value
    ],
    ids=["written-between", "not-injective"],
)
def test_no_read_back_when_the_element_may_hold_another_value(
    out: str, at: str, between: str
) -> None:
    body = _run(TEXT.format(out=out, at=at, between=between))
    assert "np.sum(np.exp(" in body, body
