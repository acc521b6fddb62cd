"""NumPy kernels of programs with vector ops, against the interpreter and NumPy.

A vector value is an array of its lanes in a scalar loop: vector.load/store become
slices of the run they move, vector-typed arith/math ops compute on the lanes. The
kernel must equal the reference interpreter bit for bit; expected values come from
NumPy computed independently. Transfers and masked accesses call helpers that move
the lanes the interpreter moves (padding, masks, permutation maps).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.cli import main
from tests.interpreter.test_vector_ops import LANE_CASTS, MASKED, TRANSFERS

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
    # The SIMD loop runs as array code over all its tiles (tiles x lanes,
    # codegen/vector_lanes.py); the scalar remainder loop becomes one slice.
    assert "for tile in range(0, " not in kernel.source
    if n == 1000:
        assert "x = np.reshape(a[0:n_tile * 8], (n_tile, 8))" in kernel.source
        # Computed into the output's run, seen as (tiles, lanes): no temporary, no copy.
        assert "np.add(x, y, out=np.reshape(out_1[0:n_tile * 8], (n_tile, 8), copy=False))" in (
            kernel.source
        )
    else:
        # The run and its remainder as one slice (codegen/simd_remainder.py).
        assert f"np.add(x, y, out=out_1[0:{n}])" in kernel.source
    np.testing.assert_array_equal(kernel(a=a, b=b), ref)


def test_cli_run_verify_on_the_simd_program() -> None:
    # In-process (a new process is tests/test_cli_numpy.py's console-script test).
    for name in ("simd_add_1000", "simd_add_1003"):
        out, err = io.StringIO(), io.StringIO()
        code = main(["run", str(SIMD), "--func", name, "--verify"], out=out, err=err)
        assert code == 0, out.getvalue() + err.getvalue()
        assert "verify: ok, exactly equal to the reference" in out.getvalue()


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
    # create_mask and vector.bitcast are value ops with a translation.
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


@pytest.mark.parametrize("n", [-1, 0, 3, 5, 8, 12])
def test_transfers_with_padding_masks_and_permutations(n: int) -> None:
    # Reads past the end (padded), masked reads and writes, a column read down a
    # permutation map: the kernel equals the interpreter; the interpreter equals NumPy
    # (tests/interpreter/test_vector_ops.py).
    fn = pk.parse(TRANSFERS)["transfers"]
    a = RNG.standard_normal((3, 10)).astype(np.float32)
    outs = []
    for run in (pk.run_reference, lambda f, **kw: pk.compile(f)(**kw)):
        out, col = np.zeros((3, 10), np.float32), np.zeros((4, 3), np.float32)
        run(fn, a=a, out=out, col=col, n=n)
        outs.append((out, col))
    (o1, c1), (o2, c2) = outs
    assert o1.tobytes() == o2.tobytes() and c1.tobytes() == c2.tobytes()
    np.testing.assert_array_equal(c1, np.concatenate([a[:, :3], np.full((1, 3), -1.0)]))


@pytest.mark.parametrize("n", [0, 2, 4])
def test_masked_loads_and_stores(n: int) -> None:
    fn = pk.parse(MASKED)["masked"]
    a = RNG.integers(-1000, 1000, (2, 6)).astype(np.int32)
    got = []
    for run in (pk.run_reference, lambda f, **kw: pk.compile(f)(**kw)):
        out = np.full((2, 6), 5, np.int32)
        run(fn, a=a, out=out, n=n)
        got.append(out)
    expected = np.full((2, 6), 5, np.int32)
    expected[:, :n] = a[:, 2 : 2 + n]  # lanes on only; the pass-through is never stored
    np.testing.assert_array_equal(got[0], expected)
    np.testing.assert_array_equal(got[1], expected)
    # Lanes off past the end are never read, in the kernel as in the interpreter.
    late = pk.parse(MASKED.replace("%c2 = arith.constant 2", "%c2 = arith.constant 3"))["masked"]
    out = np.zeros((2, 6), np.int32)
    pk.compile(late)(a=a, out=out, n=3)
    np.testing.assert_array_equal(out[:, :3], a[:, 3:6])


@pytest.mark.parametrize("n", [5, 8, 13])
def test_masked_tail_instead_of_a_remainder_loop(n: int) -> None:
    module = pk.load(ROOT / "tests" / "corpus" / "vector_transfers.mlir")
    a, b = (RNG.standard_normal(n).astype(np.float32) for _ in range(2))
    for run in (pk.run_reference, lambda f, **kw: pk.compile(f)(**kw)):
        y = np.full(n, np.nan, np.float32)
        run(module["scale_add"], a=a, b=b, y=y)
        np.testing.assert_array_equal(y, a * np.float32(2) + b)
        x = RNG.integers(-9, 9, (6, 4)).astype(np.int32)
        out, col = np.full((6, 4), -1, np.int32), np.zeros(4, np.int32)
        run(module["masked_copy_and_column"], a=x, y=out, col=col)
        expected = np.where(np.arange(4)[None, :] < np.arange(6)[:, None], x, -1)
        np.testing.assert_array_equal(out, expected)
        np.testing.assert_array_equal(col, x[:4, 1])
