"""The programs of benchmarks/onnx_shapes.py: every kernel agrees with the interpreter.

At each program's small size, through the benchmark's own check
(`bench_onnx_shapes.check_small`): the generated NumPy kernel with
``reassociate=False`` equals the reference interpreter bit for bit, so does the default
kernel unless the program sums floats (then allclose), and the C version
(onnx_shapes.c, gcc -O3) and the hand NumPy are allclose to it. The Numba kernels
(seconds of compilation each, so slow) equal the interpreter bit for bit, except the
programs listed in NUMBA_FAILS, whose Numba kernel fails today: those are findings of
the benchmark, and the test fails (strict xfail) once one of them works, so that the
list and benchmarks/RESULTS.md are updated. No time is measured.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from tests.scripts import load_script

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _import(name: str) -> ModuleType:
    """A benchmark script by path (benchmarks/ is not a package; the script imports its
    neighbours onnx_shapes and onnx_shapes_c itself)."""
    return load_script(BENCH / f"{name}.py", name)


bench = _import("bench_onnx_shapes")
shapes = bench.shapes

_REASON = bench.onnx_shapes_c.available()
pytestmark = pytest.mark.skipif(_REASON is not None, reason=f"gcc cannot build: {_REASON}")

NAMES = [p.name for p in shapes.PROGRAMS]

# Program -> what the Numba target does with it today (the start of the error text).
NUMBA_FAILS: dict[str, str] = {}


@pytest.mark.parametrize("name", NAMES)
def test_numpy_c_and_hand_agree_with_the_interpreter(name: str) -> None:
    status = bench.check_small(shapes.BY_NAME[name], np.random.default_rng(7), numba=False)
    # check_small raised already if a kernel that ran disagreed; none may be refused.
    assert set(status) == {"exact", "generated", "hand", "c"}
    assert status["exact"] == "exact", status
    assert all(s in ("exact", "close") for s in status.values()), status


def _numba_params() -> list[object]:
    params: list[object] = []
    for name in NAMES:
        marks = [pytest.mark.slow]
        if name in NUMBA_FAILS:
            # Only pytest.fail below is the expected failure: another error still fails.
            xfail = pytest.mark.xfail(
                reason=NUMBA_FAILS[name], strict=True, raises=pytest.fail.Exception
            )
            marks.append(xfail)
        params.append(pytest.param(name, marks=marks))
    return params


@pytest.mark.parametrize("name", _numba_params())
def test_numba_equals_the_interpreter(name: str) -> None:
    status = bench.check_small(shapes.BY_NAME[name], np.random.default_rng(7))
    if name in NUMBA_FAILS:
        # The known failure, not another one: a new failure must not hide behind it.
        assert status["numba"].startswith(NUMBA_FAILS[name]), status["numba"]
        pytest.fail(status["numba"])
    assert status["numba"] == "exact", status


@pytest.mark.parametrize("name", ["softmax", "layernorm", "conv", "matmul"])
def test_the_openmp_build_equals_the_single_thread_build(name: str) -> None:
    """Its parallel loops (rows, output channels, row tiles) compute each element as the
    single-thread build does: equal bit for bit on two threads, at the timed size (the
    small one has too few rows to share)."""
    import polykrnl as pk

    reason = bench.onnx_shapes_c.available(parallel=True)
    assert reason is None, reason
    program = shapes.BY_NAME[name]
    fn = pk.parse(program.text(*program.big)).functions[0]
    inputs = shapes.inputs_of(fn, np.random.default_rng(3))
    args = [inputs[a.name] for a in fn.arguments]
    shape = program.hand(*args).shape
    one = bench.onnx_shapes_c.c_function(name, program.big, shape)(*args)
    two = bench.onnx_shapes_c.c_function(name, program.big, shape, threads=2)(*args)
    np.testing.assert_array_equal(two, one)
