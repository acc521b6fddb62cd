"""Signed subscripts for what a loop in a prange does not change
(targets/numba/subscripts.py): the rewrite on small ASTs, and softmax's fused parallel
form against the reference interpreter, bit for bit."""

from __future__ import annotations

import ast
import textwrap

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.targets.numba.subscripts import sign_invariant_subscripts
from tests.scripts import onnx_shapes

numba = pytest.importorskip("numba")

ROWS = """
def k(x, out):
    for c in prange(4):
        for r in range(c * 8, 32, 32):
            r1 = r + 1
            for j in range(16):
                v = x[np.uint64(r1), np.uint64(j)]
                w = np.uint64(j)
                out[np.uint64(r1), np.uint64(v)] = v
"""


def rewritten(source: str) -> str:
    fn = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    sign_invariant_subscripts(fn)
    return ast.unparse(fn)


def test_a_prange_loops_invariant_subscripts_are_signed() -> None:
    out = rewritten(ROWS)
    assert "x[r1, np.uint64(j)]" in out  # the loop's own variable stays unsigned
    assert "out[r1, np.uint64(v)]" in out  # v is assigned in the loop
    assert "w = np.uint64(j)" in out  # not a subscript


def test_a_name_also_in_an_unsigned_expression_of_the_loop_stays_unsigned() -> None:
    """fdtd-2d's tiles in wavefronts read hz[i, j] and hz[i - 1, j] in one loop: with i
    signed in the one and unsigned in the other LLVM could not relate the two addresses
    and left the loop scalar (1.13 s on one thread, 0.56 with both unsigned)."""
    stencil = ROWS.replace(
        "w = np.uint64(j)",
        "w = x[np.uint64(r1 - 1), np.uint64(j)]\n                y = x[np.uint64(c), np.uint64(j)]",
    )
    out = rewritten(stencil)
    assert "x[np.uint64(r1), np.uint64(j)]" in out and "x[np.uint64(r1 - 1), np.uint64(j)]" in out
    assert "x[c, np.uint64(j)]" in out  # c is in no such expression: signed


def test_loops_outside_a_prange_keep_their_unsigned_subscripts() -> None:
    sequential = ROWS.replace("prange(4)", "range(4)")
    assert rewritten(sequential) == ast.unparse(ast.parse(textwrap.dedent(sequential)).body[0])


def test_softmax_fused_in_tiles_of_rows_in_parallel_equals_the_interpreter() -> None:
    fn = pk.parse(onnx_shapes().softmax_text(24, 19))["softmax"]
    sched = (
        pk.Schedule.from_function(fn, recipe=False)
        .fuse("i", "i_2", 0)
        .fuse("i", "i_3", 0)
        .fuse("i", "i_4", 0)
        .block("i", 8)
        .distribute("i")
        .reorder(["j_2", "i_d_3"])
        .unroll("i_d_3")
        .parallel("i_t")
    )
    x = np.random.default_rng(2).standard_normal((24, 19)).astype(np.float32) * 30
    x[1, :] = -np.inf
    x[4, 3] = np.nan
    kernel = sched.to_numba(cache=False)
    assert "prange(" in kernel.function_source and "_pk_exp32(" in kernel.function_source
    assert "x[i_t, np.uint64(j_2)]" in kernel.function_source
    got = kernel(x=x.copy())
    assert got.tobytes() == pk.run_reference(fn, x=x.copy()).tobytes()
