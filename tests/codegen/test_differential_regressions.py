"""Kernels the differential campaign (tools/differential.py) found wrong, now right.

Each program is the campaign's reproducer, kept as it was generated; the schedule
is its recipe plus the forced primitives the campaign applied. The NumPy kernel
that keeps every reduction in order must give the reference interpreter's arrays
bit for bit, for every N where the interpreter runs the program in bounds.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk

HERE = Path(__file__).parent / "regressions"

CASES: dict[str, tuple[str, Callable[[pk.Schedule], pk.Schedule]]] = {
    # isl dropped loop u (w = u) and let the AST loop of w_p run u's values: vectorizing
    # it moved v outside u, and an exact kernel gave another C (max |diff| 6.09 at N=6).
    "absorbed_loop": (
        "the vectorizer refuses an AST loop that runs the values of a loop not parallel",
        lambda s: s.block("w_t", 3, names=("w_t_t", "w_t"), force=True).block(
            "u", 3, names=("u_t", "u"), force=True
        ),
    ),
    # No instance runs for N < 3: the AST was built assuming N >= 3 (the domain's
    # parameters) and indexed a 1x1 array at 3 (IndexError) for N = 2.
    "empty_for_small_n": ("the AST is built for every parameter value", lambda s: s),
    # isl dropped loop k (one iteration) but kept its mark before the statement; the
    # mark reached the next loop, j in the `else` branch of an `if` isl split j into,
    # which was then vectorized as k: one term of the sum per j_t instead of two.
    "mark_after_dropped_loop": (
        "a mark names only the loop under it, and a mark above an `if` both branches",
        lambda s: s.block("j", 2, names=("j_t", "j"), force=True).block(
            "v", 3, names=("v_t", "v"), force=True
        ),
    ),
    # A vectorized range shaped like a tile's point loop, `range(p, min(N, p + 2))`, was
    # taken as never empty, so its statement ran unguarded where it was: other subscripts
    # out of bounds (IndexError) or a slice of length 0 stored into 4 (ValueError).
    "point_range_without_tile": ("only constant ranges count as non-empty", lambda s: s),
    "point_range_without_tile_2": (
        "only constant ranges count as non-empty",
        lambda s: s.block("j_t", 2, names=("j_t_t", "j_t"), force=True),
    ),
    # After unroll('p_t') and a forced permute, copies of one statement were vectorized
    # differently and kept an iter_args value under keys the other copy could not read
    # (KeyError); copies of an unrolled statement that keep values are not vectorized.
    "keys_across_unrolled_copies": (
        "copies of an unrolled statement that keep values stay scalar",
        lambda s: s.unroll("p_t").permute(["v", "u"], [1, 0], force=True),
    ),
    # A loop value by pieces whose conditions test the vectorized loop was written as
    # Python's `a if c else b` on an array (ValueError: truth value ambiguous).
    "piecewise_loop_value": (
        "a piecewise loop value over the vector is not vectorized",
        lambda s: s.block("q_p", 2, names=("q_p_t", "q_p"), force=True),
    ),
}


def _arguments(text: str, rng: np.random.Generator) -> dict[str, np.ndarray]:
    header = text.split("\n", 1)[0]
    out: dict[str, np.ndarray] = {}
    for name, shape, elem in re.findall(r"%(\w+): memref<([\dx]+)x(f32|i64)>", header):
        dims = tuple(int(x) for x in shape.split("x"))
        if elem == "f32":
            out[name] = rng.standard_normal(dims).astype(np.float32)
        else:
            out[name] = rng.integers(-5, 6, dims)
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_campaign_reproducer(case: str) -> None:
    text = (HERE / f"{case}.mlir").read_text()
    fn = pk.parse(text)["f"]
    _fix, steps = CASES[case]
    sched = steps(pk.schedule(fn, force=True))
    kernel = sched.to_numpy(reassociate=False)
    rng = np.random.default_rng(0)
    compared = 0
    for n in range(0, 13):
        args = _arguments(text, rng)
        want = {k: v.copy() for k, v in args.items()}
        got = {k: v.copy() for k, v in args.items()}
        try:
            pk.run_reference(fn, schedule=pk.Schedule.from_function(fn, recipe=False), N=n, **want)
        except pk.InterpretError:
            continue  # out of bounds for this N: the program is undefined there
        kernel(N=n, **got)
        for k in args:
            assert np.array_equal(want[k], got[k]), f"{k} differs at N={n}\n{kernel.source}"
        compared += 1
    assert compared >= 3
