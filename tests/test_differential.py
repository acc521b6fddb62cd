"""A bounded differential campaign (tools/differential.py) over random Krnl programs.

60 programs with 2 recipes each (seed 0): legal schedules give the reference's
arrays in their own order and from both NumPy kernels, every witness of an
illegal one is real, and nothing raises outside polykrnl's error hierarchy.
The campaign must meet both legal and illegal schedules, so that it can fail.

Bugs the campaigns found in polykrnl are not fixed here; each has its minimal
reproducer below as a strict xfail. In this bounded run only KNOWN_BUG (an
IndexError in a generated kernel) occurs, so tracebacks of that one kind are
allowed; any other finding fails.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from differential import Finding, campaign

# A vectorized inner loop that is empty for some iterations of an outer loop that
# stays a Python loop (statements sit at its level) still indexes its other
# subscripts with the outer value: A[p:4, p] at p = 4, 5 raises IndexError.
KNOWN_BUG = """
func.func @f(%A: memref<4x4xf32>, %B: memref<6xf32>) {
  %hp, %hq = krnl.define_loops 2
  krnl.iterate(%hp) with (%hp -> %p = 0 to 6) {
    %b = krnl.load %B[%p] : memref<6xf32>
    krnl.store %b, %B[%p] : memref<6xf32>
    krnl.iterate(%hq) with (%hq -> %q = affine_map<(d0) -> (d0)>(%p) to 4) {
      %v = krnl.load %A[%q, %p] : memref<4x4xf32>
      %w = arith.addf %v, %v : f32
      krnl.store %w, %A[%q, %p] : memref<4x4xf32>
    }
  }
  return
}
"""


def _is_known_bug(f: Finding) -> bool:
    return f.kind == "IndexError at a generated NumPy kernel"


def test_bounded_campaign_finds_no_disagreement() -> None:
    res = campaign(seed=0, programs=60, recipes=2)
    assert res.programs == 60
    assert res.legal > 0 and res.illegal > 0 and res.witnesses > 0, res.to_json()
    assert not res.findings, "\n\n".join(
        f"{f.kind}: {f.detail}\n{f.text}\n{f.script}" for f in res.findings
    )
    unknown = [f for f in res.tracebacks if not _is_known_bug(f)]
    assert not unknown, "\n\n".join(f"{f.detail}\n{f.text}\n{f.script}" for f in unknown)


@pytest.mark.xfail(strict=True, raises=IndexError, reason="KNOWN_BUG: an empty vectorized loop")
def test_known_bug_empty_vectorized_loop_under_a_python_loop() -> None:
    fn = pk.parse(KNOWN_BUG)["f"]
    a, b = np.ones((4, 4), np.float32), np.arange(6, dtype=np.float32)
    want_a, want_b = a.copy(), b.copy()
    pk.run_reference(fn, A=want_a, B=want_b)
    pk.schedule(fn).to_numpy(reassociate=False)(A=a, B=b)
    assert np.array_equal(a, want_a) and np.array_equal(b, want_b)


# An iter_args reduction under a one-iteration loop: the accumulator starts as a read-only
# np.broadcast_to view, and the `+=` of the reduction raises ValueError.
KNOWN_BUG_READ_ONLY = """
func.func @f(%A: memref<4x4xf32>, %C: memref<1xf32>) {
  %zero = arith.constant 0.0 : f32
  %hi, %hj = krnl.define_loops 2
  krnl.iterate(%hi) with (%hi -> %i = 0 to 1) {
    %r = krnl.iterate(%hj) with (%hj -> %j = 0 to 2) iter_args(%acc = %zero) -> (f32) {
      %c3 = arith.constant 3 : index
      %v = krnl.load %A[%c3, %j] : memref<4x4xf32>
      %s = arith.addf %acc, %v : f32
      krnl.yield %s : f32
    }
    %w = krnl.load %C[%i] : memref<1xf32>
    %d = arith.subf %w, %r : f32
    krnl.store %d, %C[%i] : memref<1xf32>
  }
  return
}
"""


@pytest.mark.xfail(strict=True, raises=ValueError, reason="KNOWN_BUG_READ_ONLY")
def test_known_bug_reduction_into_a_read_only_accumulator() -> None:
    fn = pk.parse(KNOWN_BUG_READ_ONLY)["f"]
    a, c = np.arange(16, dtype=np.float32).reshape(4, 4), np.ones(1, np.float32)
    want = c.copy()
    pk.run_reference(fn, A=a, C=want)
    pk.schedule(fn).to_numpy()(A=a, C=c)
    assert np.array_equal(c, want)


# After unroll('j'), the exact kernel runs each unrolled copy of j as its own loop over i:
# A[k] sums C[i, j] in the order (j, i) instead of (i, j), so the f32 bits differ.
KNOWN_BUG_UNROLL_ORDER = """
func.func @f(%A: memref<4xf32>, %C: memref<3x3xf32>) {
  %hi, %hj, %hk = krnl.define_loops 3
  krnl.iterate(%hi, %hj, %hk) with (%hi -> %i = 0 to 3, %hj -> %j = 0 to 3, %hk -> %k = 0 to 4) {
    %a = krnl.load %A[%k] : memref<4xf32>
    %c = krnl.load %C[%i, %j] : memref<3x3xf32>
    %s = arith.addf %a, %c : f32
    krnl.store %s, %A[%k] : memref<4xf32>
  }
  return
}
"""


@pytest.mark.xfail(strict=True, reason="KNOWN_BUG_UNROLL_ORDER")
def test_known_bug_unrolled_copies_reorder_an_exact_sum() -> None:
    fn = pk.parse(KNOWN_BUG_UNROLL_ORDER)["f"]
    rng = np.random.default_rng(0)
    sched = pk.Schedule.from_function(fn, recipe=False).unroll("j")
    for _ in range(5):
        a = rng.uniform(-1, 1, 4).astype(np.float32)
        c = (rng.uniform(-1, 1, (3, 3)) * 1000).astype(np.float32)
        want, got = a.copy(), a.copy()
        pk.run_reference(fn, A=want, C=c)
        sched.to_numpy(reassociate=False)(A=got, C=c)
        assert np.array_equal(got, want)
