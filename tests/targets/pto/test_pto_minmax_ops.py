"""The four float max/min ops of arith (maximumf, minimumf, maxnumf, minnumf) as PTO's max and
min: onnx-mlir writes a softmax's row max with arith.maxnumf. Simulated against
pk.run_reference on NaN-free data, where the four agree with the instructions."""

from __future__ import annotations

import copy
import re
from typing import Any

import numpy as np
import pytest

import polykrnl as pk

# A row softmax as pto_kernels.mlir's, its max reduction written with OP; rows blocked by 8
# (N = 13: a partial last tile).
SOFTMAX = """
func.func @softmax(%N: index, %X: memref<?x40xf32>, %Y: memref<?x40xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %rows = krnl.define_loops 1
  %rb, %rl = krnl.block %rows 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%rb, %rl) with (%rows -> %i = 0 to %N) {
    %l0, %l1, %l2 = krnl.define_loops 3
    %mx = krnl.iterate(%l0) with (%l0 -> %j = 0 to 40) iter_args(%m = %ninf) -> (f32) {
      %v = krnl.load %X[%i, %j] : memref<?x40xf32>
      %nm = arith.OP %m, %v : f32
      krnl.yield %nm : f32
    }
    %sum = krnl.iterate(%l1) with (%l1 -> %j = 0 to 40) iter_args(%s = %zero) -> (f32) {
      %v = krnl.load %X[%i, %j] : memref<?x40xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      %ns = arith.addf %s, %e : f32
      krnl.yield %ns : f32
    }
    krnl.iterate(%l2) with (%l2 -> %j = 0 to 40) {
      %v = krnl.load %X[%i, %j] : memref<?x40xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      %r = arith.divf %e, %sum : f32
      krnl.store %r, %Y[%i, %j] : memref<?x40xf32>
    }
  }
  return
}
"""

# The row's min or max (INIT is the identity) kept through a temporary, as onnx-mlir's
# multi-nest reductions do, then subtracted from the row, then the elementwise max or min of
# the row with Z.
THROUGH_MEMORY = """
func.func @shifted(%N: index, %X: memref<?x24xf32>, %Z: memref<?x24xf32>, %Y: memref<?x24xf32>) {
  %init = arith.constant INIT : f32
  %t = memref.alloc(%N) : memref<?xf32>
  %a = krnl.define_loops 1
  %ab, %al = krnl.block %a 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ab, %al) with (%a -> %i = 0 to %N) {
    krnl.store %init, %t[%i] : memref<?xf32>
  }
  %b0, %b1 = krnl.define_loops 2
  %bb, %bl = krnl.block %b0 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%bb, %bl, %b1) with (%b0 -> %i = 0 to %N, %b1 -> %j = 0 to 24) {
    %x = krnl.load %X[%i, %j] : memref<?x24xf32>
    %m = krnl.load %t[%i] : memref<?xf32>
    %n = arith.OP %m, %x : f32
    krnl.store %n, %t[%i] : memref<?xf32>
  }
  %c0, %c1 = krnl.define_loops 2
  %cb, %cl = krnl.block %c0 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%cb, %cl, %c1) with (%c0 -> %i = 0 to %N, %c1 -> %j = 0 to 24) {
    %x = krnl.load %X[%i, %j] : memref<?x24xf32>
    %m = krnl.load %t[%i] : memref<?xf32>
    %d = arith.subf %x, %m : f32
    %z = krnl.load %Z[%i, %j] : memref<?x24xf32>
    %r = arith.OP %d, %z : f32
    krnl.store %r, %Y[%i, %j] : memref<?x24xf32>
  }
  memref.dealloc %t : memref<?xf32>
  return
}
"""

MAX_OPS = ["maxnumf", "maximumf"]
MIN_OPS = ["minnumf", "minimumf"]


def _simulated_and_reference(
    fn: pk.Function, arch: str, args: dict[str, Any]
) -> tuple[pk.PtoKernel, dict[str, Any], dict[str, Any]]:
    kernel = pk.schedule(fn).to_pto(arch=arch)
    expected = copy.deepcopy(args)
    pk.run_reference(fn, **expected)
    kernel.simulate(**args)
    return kernel, args, expected


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
@pytest.mark.parametrize("op", MAX_OPS)
def test_softmax_max_reduction_accepts_maxnumf_as_trowmax(op: str, arch: str) -> None:
    fn = pk.parse(SOFTMAX.replace("OP", op))["softmax"]
    rng = np.random.default_rng(3)
    n = 13
    args = {
        "N": n,
        "X": rng.uniform(-4, 4, (n, 40)).astype(np.float32),
        "Y": np.zeros((n, 40), np.float32),
    }
    kernel, got, want = _simulated_and_reference(fn, arch, args)
    assert len(re.findall(r"\bTROWMAX\(", kernel.source)) == 1
    # exp and the row sum run in another order than the interpreter's loop
    np.testing.assert_allclose(got["Y"], want["Y"], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got["Y"].sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
@pytest.mark.parametrize(
    ("op", "init", "instrs"),
    [
        *((op, "0xFF800000", ("TROWMAX", "TMAX")) for op in MAX_OPS),
        *((op, "0x7F800000", ("TROWMIN", "TMIN")) for op in MIN_OPS),
    ],
)
def test_reduction_through_memory_accepts_every_float_max_and_min(
    op: str, init: str, instrs: tuple[str, str], arch: str
) -> None:
    fn = pk.parse(THROUGH_MEMORY.replace("OP", op).replace("INIT", init))["shifted"]
    rng = np.random.default_rng(5)
    n = 11
    args = {
        "N": n,
        "X": rng.uniform(-2, 2, (n, 24)).astype(np.float32),
        "Z": rng.uniform(-2, 2, (n, 24)).astype(np.float32),
        "Y": np.zeros((n, 24), np.float32),
    }
    kernel, got, want = _simulated_and_reference(fn, arch, args)
    reduce_instr, binary_instr = instrs
    assert len(re.findall(rf"\b{reduce_instr}\(", kernel.source)) == 1
    assert len(re.findall(rf"\b{binary_instr}\(", kernel.source)) == 1
    # max, min and one subtraction round the same way in both: bit for bit
    assert np.array_equal(got["Y"], want["Y"])
