"""A vector accumulator's lane loop written out (targets/numba/lane_accumulators.py): the
rewrite on small ASTs, run by Python against the loops as written; the kernels of
onnx-mlir's -O3 reductions against the interpreter are tests/targets/numba/
test_vector_accumulators.py's."""

from __future__ import annotations

import ast
import textwrap
from typing import Any

import numpy as np
import pytest

from polykrnl.targets.numba.lane_accumulators import unroll_accumulator_lanes

# onnx-mlir's ReduceSum over the last axis, as the kernel writer gives it.
ACCUMULATOR = """
def k(x, out):
    for i in range(3):
        m = np.zeros((4,), dtype=np.float32)
        for ct in range(0, 12, 4):
            for lane in range(4):
                v = x[i, ct + lane]
                m_1 = m[lane]
                m[lane] = np.float32(m_1 + v)
        out[i] = m[0] + m[1] + m[2] + m[3]
"""


def rewritten(source: str) -> tuple[str, int]:
    fn = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    count = unroll_accumulator_lanes(fn)
    ast.fix_missing_locations(fn)
    return ast.unparse(fn), count


def run(source: str) -> Any:
    scope: dict[str, Any] = {"np": np}
    exec(compile(source, "<test>", "exec"), scope)
    x = np.arange(36, dtype=np.float32).reshape(3, 12) / 7
    out = np.zeros(3, np.float32)
    scope["k"](x, out)
    return out


def test_each_lane_is_a_copy_of_the_body_with_the_lane_a_constant() -> None:
    after, count = rewritten(ACCUMULATOR)
    assert count == 1 and "for lane" not in after
    assert [f"m[{k}] = np.float32(m_1 + v)" in after for k in range(4)] == [True] * 4
    assert "v = x[i, ct + 3]" in after
    assert run(after).tobytes() == run(ACCUMULATOR).tobytes()


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (("range(4):", "range(17):"), "wider than MAX_LANES"),
        (("range(4):", "range(0, 4, 2):"), "a step"),
        (("range(4):", "range(n):"), "no constant trip count"),
        (("        out[i] = m[0]", "        out[i] = lane + m[0]"), "the lane read after"),
        (("m_1 = m[lane]", "m_1 = m[0]"), "no lane loaded"),
        (("m[lane] = np.float32(m_1 + v)", "m[0] = np.float32(m_1 + v)"), "no lane stored"),
        (("m_1 = m[lane]", "lane = 0\n                m_1 = m[lane]"), "the lane assigned"),
        (("v = x[i, ct + lane]", "v = x[i, ct + lane]\n" + "                w = v\n" * 7), "long"),
    ],
)
def test_a_loop_that_is_no_vector_accumulators_lanes_stays(
    change: tuple[str, str], why: str
) -> None:
    source = ACCUMULATOR.replace(*change)
    assert source != ACCUMULATOR, why
    after, count = rewritten(source)
    assert count == 0 and "for lane in range(" in after, why


def test_a_lane_loop_outside_any_loop_stays() -> None:
    """Nothing carries its accumulator (and a function's loop of four elements, the
    same kernel as a callee elsewhere, is left as written)."""
    after, count = rewritten(
        """
        def k(x, out):
            for lane in range(4):
                m_1 = out[lane]
                out[lane] = np.float32(m_1 + x[0, lane])
        """
    )
    assert count == 0 and "for lane in range(4)" in after
