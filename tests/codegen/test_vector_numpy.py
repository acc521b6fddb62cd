"""NumPy kernels of programs with vector ops, against the interpreter and NumPy.

A vector value is an array of its lanes in a scalar loop: vector.load/store become
slices of the run they move, vector-typed arith/math ops compute on the lanes. The
kernel must equal the reference interpreter bit for bit; expected values come from
NumPy computed independently. Ops without a translation are one located error.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk
from tests.model.test_vector_ops import LANE_CASTS, MASKED, TRANSFERS

ROOT = Path(__file__).resolve().parents[2]
SIMD = ROOT / "tests" / "corpus" / "simd_add_remainder.mlir"
RNG = np.random.default_rng(3)


@pytest.mark.parametrize(("name", "n"), [("simd_add_1000", 1000), ("simd_add_1003", 1003)])
def test_simd_main_loop_and_remainder(name: str, n: int) -> None:
    fn = pk.load(SIMD)[name]
    a, b = (RNG.standard_normal(n).astype(np.float32) for _ in range(2))
    ref = pk.run_reference(fn, a=a, b=b)
    np.testing.assert_array_equal(ref, a + b)  # every element, the remainder's included
    kernel = pk.compile(fn)
    # The SIMD loop stays a loop whose vector.load/store are slices of 8 elements; the
    # scalar remainder loop becomes one slice.
    assert "for tile in range(0, " in kernel.source
    assert "a[tile:tile + 8]" in kernel.source and "[tile:tile + 8] = x + y" in kernel.source
    assert (f"a[1000:{n}]" in kernel.source) == (n > 1000)
    np.testing.assert_array_equal(kernel(a=a, b=b), ref)


def test_cli_run_verify_on_the_simd_program() -> None:
    for name in ("simd_add_1000", "simd_add_1003"):
        done = subprocess.run(
            [sys.executable, "-m", "polykrnl.cli", "run", str(SIMD), "--func", name, "--verify"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert "verify: ok, exactly equal to the reference" in done.stdout


def test_lane_casts_and_integer_ops_kernel_equals_interpreter() -> None:
    fn = pk.parse(LANE_CASTS)["casts"]
    k = np.array([1, -2, 300, -129, 2**31 - 1, -(2**31), 255, 0], np.int32)
    x = np.array([1.5, -2.5, 1e3, -0.0, 7.99, -7.99, 65504, 1e-8], np.float32)
    f, i = np.zeros((4, 8), np.float32), np.zeros((6, 8), np.int32)
    pk.run_reference(fn, k=k, x=x, f=f, i=i)
    fk, ik = np.zeros_like(f), np.zeros_like(i)
    pk.compile(fn)(k=k, x=x, f=fk, i=ik)
    assert fk.tobytes() == f.tobytes()  # bit for bit, signed zeros included
    np.testing.assert_array_equal(ik, i)
    np.testing.assert_array_equal(f[0], k.astype(np.float32))


def test_masks_and_bitcasts_in_kernels() -> None:
    # create_mask and vector.bitcast are value ops with a translation; the masked
    # memory ops around them are not translated yet (below).
    src = """
func.func @mask_bits(%x: memref<2x4xf32>, %m: memref<2x4xi32>, %bits: memref<2x8xi16>, %n: index) {
  %c0 = arith.constant 0 : index
  %one = arith.constant dense<1> : vector<4xi32>
  %zero = arith.constant dense<0> : vector<4xi32>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 2) {
    %mask = vector.create_mask %n : vector<4xi1>
    %v = arith.select %mask, %one, %zero : vector<4xi1>, vector<4xi32>
    vector.store %v, %m[%i, %c0] : memref<2x4xi32>, vector<4xi32>
    %f = vector.load %x[%i, %c0] : memref<2x4xf32>, vector<4xf32>
    %h = vector.bitcast %f : vector<4xf32> to vector<8xi16>
    vector.store %h, %bits[%i, %c0] : memref<2x8xi16>, vector<8xi16>
  }
  return
}
"""
    fn = pk.parse(src)["mask_bits"]
    x = RNG.standard_normal((2, 4)).astype(np.float32)
    for n in (-1, 0, 3, 9):
        results = []
        for run in (pk.run_reference, lambda f, **kw: pk.compile(f)(**kw)):
            m, bits = np.zeros((2, 4), np.int32), np.zeros((2, 8), np.int16)
            run(fn, x=x, m=m, bits=bits, n=n)
            np.testing.assert_array_equal(m, np.broadcast_to(np.arange(4) < n, (2, 4)))
            np.testing.assert_array_equal(bits, x.view(np.int16))
            results.append((m, bits))
        assert all(np.array_equal(a, b) for a, b in zip(*results, strict=True))


@pytest.mark.parametrize(
    ("src", "name", "op", "statement"),
    [
        (TRANSFERS, "transfers", "vector.transfer_read", "vector.transfer_write %s"),
        (MASKED, "masked", "vector.maskedload", "vector.maskedstore"),
    ],
)
def test_untranslated_vector_memory_ops_are_located_errors(
    src: str, name: str, op: str, statement: str
) -> None:
    # The message names the op; the location is the statement that uses its value.
    fn = pk.parse(src)[name]
    with pytest.raises(pk.UnsupportedError) as e:
        pk.compile(fn)
    assert f"{op} has no NumPy translation yet" in e.value.message
    loc = e.value.location
    assert loc is not None and statement in loc.line_text
