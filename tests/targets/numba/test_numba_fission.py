"""A sum carried by a loop of exps moved to a loop of its own (targets/numba/fission.py):
the rewrite on small ASTs, and softmax against the reference interpreter, bit for bit."""

from __future__ import annotations

import ast
import textwrap
from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.targets.numba.aliases import array_roots
from polykrnl.targets.numba.fission import split_sums
from tests.scripts import onnx_shapes

numba = pytest.importorskip("numba")


def parsed(source: str) -> ast.FunctionDef:
    fn = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    return fn


def loops_after_split(source: str) -> list[str]:
    fn = parsed(source)
    split_sums(fn, array_roots(fn, {"x": "float32", "y": "float32"}))
    ast.fix_missing_locations(fn)
    return [ast.unparse(n) for n in fn.body if isinstance(n, ast.For)]


# The shape of softmax's exp nest after forward_loads: the exp stored, then added to
# the row's sum through copies of the loaded values.
EXP_AND_SUM = """
def k(x, y):
    out = np.empty((4, 8), dtype=np.float32)
    s0 = np.float32(0.0)
    m0 = np.float32(1.0)
    for j in range(8):
        v = x[np.uint64(2), np.uint64(j)]
        m = m0
        out[np.uint64(2), np.uint64(j)] = np.float32(np.exp(np.float64(np.float32(v - m))))
        v2 = v
        s = s0
        s0 = np.float32(s + np.float32(np.exp(np.float64(np.float32(v2 - m)))))
    y[0] = s0
"""


def test_the_sum_of_stored_exps_moves_to_a_loop_that_reads_them_back() -> None:
    first, second = loops_after_split(EXP_AND_SUM)
    assert "np.exp" in first and "s0" not in first
    assert "np.exp" not in second
    assert "s0 = np.float32(s + out[np.uint64(2), np.uint64(j)])" in second


# Two rows of an unrolled loop: stores to one array, always at different rows.
TWO_ROWS = """
def k(x, y):
    out = np.empty((4, 8), dtype=np.float32)
    s0 = np.float32(0.0)
    s1 = np.float32(0.0)
    r = 1
    r1 = r + 1
    for j in range(8):
        out[np.uint64(r), np.uint64(j)] = np.float32(np.exp(np.float64(np.float32(x[r, j]))))
        s0 = np.float32(s0 + np.float32(np.exp(np.float64(np.float32(x[r, j])))))
        out[np.uint64(r1), np.uint64(j)] = np.float32(np.exp(np.float64(np.float32(x[r1, j]))))
        s1 = np.float32(s1 + np.float32(np.exp(np.float64(np.float32(x[r1, j])))))
    y[0] = s0 + s1
"""


def test_the_sums_of_unrolled_rows_split_off_together() -> None:
    first, second = loops_after_split(TWO_ROWS)
    assert first.count("out[") == 2 and "s0" not in first and "s1" not in first
    assert second.count("out[") == 2 and "np.exp" not in second


def test_a_name_assigned_twice_in_the_loop_keeps_it_whole() -> None:
    """The chain reads v2 = m (exp(m - m), not the stored value); v2 = v comes after it,
    so a table of each name's one definition would take the two for the same."""
    source = EXP_AND_SUM.replace("        v2 = v\n", "        v2 = m\n")
    source = source.replace(
        "(np.float32(v2 - m)))))\n", "(np.float32(v2 - m)))))\n        v2 = v\n"
    )
    assert source.count("v2 = ") == 2
    assert len(loops_after_split(source)) == 1


def test_stores_to_neighbouring_elements_of_the_loop_keep_it_whole() -> None:
    """out[r, j] and out[r, j + 1]: the next iteration overwrites what this one stored,
    so the second loop would read other values."""
    source = TWO_ROWS.replace(
        "out[np.uint64(r1), np.uint64(j)]", "out[np.uint64(r), np.uint64(j + 1)]"
    )
    assert source != TWO_ROWS
    assert len(loops_after_split(source)) == 1


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        ("out[np.uint64(2), np.uint64(j)] =", "out[np.uint64(2), np.uint64(0)] =", "one element"),
        ("out[np.uint64(2), np.uint64(j)] =", "out[np.uint64(2), np.sign(j)] =", "not one per j"),
        (
            "    v2 = v\n",
            "    v2 = v\n        out[np.uint64(2), np.uint64(0)] = v\n",
            "overwritten",
        ),
        ("s + np.float32(np.exp(", "s + np.float32(np.log(", "not the stored value"),
        ("    v2 = v\n", "    v2 = v\n        x[np.uint64(2), np.uint64(j)] = m\n", "x stored"),
        ("(s + np.float32(", "(s + v2 * np.float32(", "reads another value too"),
        ("    s = s0\n", "    s = s0\n        y[j] = s\n", "the chain stores"),
        ("np.float32(np.exp(", "np.float32(np.abs(", "no exp"),
    ],
)
def test_a_loop_stays_whole_unless_the_sum_surely_reads_back_the_same(
    old: str, new: str, why: str
) -> None:
    source = EXP_AND_SUM.replace(old, new)
    assert source != EXP_AND_SUM, why
    assert len(loops_after_split(source)) == 1, why


SOFTMAX = onnx_shapes().softmax_text(5, 11)


def interpreted_and_compiled(fn: pk.Function, x: np.ndarray) -> tuple[Any, Any, str]:
    kernel = pk.schedule(fn).to_numba(cache=False)
    return pk.run_reference(fn, x=x.copy()), kernel(x=x.copy()), kernel.function_source


def test_softmax_computes_its_exps_vectorizable_and_sums_them_as_written() -> None:
    fn = pk.parse(SOFTMAX)["softmax"]
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 11)).astype(np.float32) * 40
    x[0, :] = -np.inf
    x[1, 3] = np.inf
    x[2, 4] = np.nan
    want, got, body = interpreted_and_compiled(fn, x)
    assert body.count("_pk_exp32(") == 1 and "np.exp(" not in body
    assert got.tobytes() == want.tobytes()
