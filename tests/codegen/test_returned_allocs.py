"""Functions that allocate their results and return them, as onnx-mlir writes them.

The corpus programs returned_exp.mlir, softmax_pool_view.mlir and
dynamic_add.mlir run through the reference interpreter (checked against NumPy
computed here from the inputs), through the NumPy kernel of the Python API
(`pk.compile`, `Schedule.to_numpy()`: equal to the interpreter) and through
`polykrnl run --verify`. Results keep what the function says of their storage:
a buffer returned twice is one array, a view of a result or of an argument
shares its memory.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.cli import main
from polykrnl.poly import poly_program
from polykrnl.transforms.dependences import dependences
from tests.parsed import load

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
RNG = np.random.default_rng(15)


def _fn(file: str, name: str) -> pk.Function:
    return load(CORPUS / file)[name]


def _runs(fn: pk.Function) -> list[Callable[..., Any]]:
    """The interpreter, the kernel of pk.compile, and that of the schedule's to_numpy(),
    exact (float32 exp in float64 rounded once, as the interpreter computes it)."""
    return [
        lambda **kw: pk.run_reference(fn, **kw),
        pk.compile(fn, reassociate=False),
        pk.schedule(fn).to_numpy(reassociate=False),
    ]


def _same(a: Any, b: Any) -> None:
    """Equal results, bit for bit (NaN where NaN)."""
    a, b = (a if isinstance(a, tuple) else (a,)), (b if isinstance(b, tuple) else (b,))
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x, y)


def test_an_allocated_result_is_a_new_array_of_each_call() -> None:
    fn = _fn("returned_exp.mlir", "f")
    x = RNG.standard_normal((10, 10)).astype(np.float32)
    ref = pk.run_reference(fn, arg0=x)
    np.testing.assert_allclose(ref, np.exp(x), rtol=1e-6)
    for run in _runs(fn):
        first = run(arg0=x)
        _same(first, ref)
        assert first.dtype == np.float32 and not np.shares_memory(first, x)
        again = run(arg0=-x)
        assert again is not first and not np.shares_memory(first, again)
        _same(first, ref)  # the second call left the first result alone


def test_several_results_one_buffer_twice_and_views_of_results() -> None:
    fn = _fn("returned_exp.mlir", "several_results")
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    ref = pk.run_reference(fn, arg0=x)
    for run in _runs(fn):
        e, e_again, flat, sq = run(arg0=x)
        np.testing.assert_allclose(e, np.exp(x), rtol=1e-6)
        assert e_again is e
        assert flat.shape == (12,) and np.shares_memory(flat, e)
        np.testing.assert_array_equal(flat, e.reshape(12))
        np.testing.assert_array_equal(sq, x * x)
        _same((e, e_again, flat, sq), ref)


def test_a_result_that_is_a_view_of_an_argument_computed_without_loops() -> None:
    fn = _fn("returned_exp.mlir", "transpose_as_view")
    for n in (1, 5):
        x = RNG.standard_normal((n, 1, 1, 8)).astype(np.float32)
        ref = pk.run_reference(fn, arg0=x)
        np.testing.assert_array_equal(ref, x.reshape(n, 8, 1, 1))
        for run in _runs(fn):
            out = run(arg0=x)
            _same(out, ref)
            assert np.shares_memory(out, x)


@pytest.mark.parametrize("shape", [(3, 5), (1, 7), (0, 4), (6, 1)])
def test_dynamic_shapes_come_from_the_arguments(shape: tuple[int, int]) -> None:
    fn = _fn("dynamic_add.mlir", "dynamic_add")
    a = RNG.standard_normal(shape).astype(np.float32)
    b = RNG.standard_normal(shape).astype(np.float32)
    ref = pk.run_reference(fn, a=a, b=b)
    assert ref.shape == shape
    np.testing.assert_array_equal(ref, a + b)
    for run in _runs(fn):
        _same(run(a=a, b=b), ref)


@pytest.mark.parametrize("rows", [0, 1, 4])
def test_a_dynamic_reshape_with_its_shape_in_an_alloca(rows: int) -> None:
    fn = _fn("dynamic_add.mlir", "dynamic_add_flat")
    a = RNG.standard_normal((rows, 10)).astype(np.float32)
    b = RNG.standard_normal((rows, 10)).astype(np.float32)
    ref = pk.run_reference(fn, a=a, b=b)
    np.testing.assert_array_equal(ref, a + b)
    for run in _runs(fn):
        _same(run(a=a, b=b), ref)
    # The flat loop reads and writes through the reshapes exactly: it is parallel.
    assert [lv.status for lv in pk.check(fn).loops] == ["parallel"]


def test_softmax_with_its_temporaries_in_views_of_one_pool() -> None:
    fn = _fn("softmax_pool_view.mlir", "softmax")
    x = (4 * RNG.standard_normal((6, 16))).astype(np.float32)
    ref = pk.run_reference(fn, x=x)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(ref, e / e.sum(axis=1, keepdims=True), rtol=1e-5)
    for run in _runs(fn):
        if getattr(run, "exact", True):
            _same(run(x=x), ref)
        else:
            # The row sums as np.sum (reassociated: kernel.exact is False); the order-
            # keeping kernel stays bit for bit the interpreter.
            np.testing.assert_allclose(run(x=x), ref, rtol=1e-6)
    _same(pk.schedule(fn).to_numpy(reassociate=False)(x=x), ref)


def test_a_view_reusing_dead_bytes_is_ordered_after_their_last_read() -> None:
    # %inv takes the bytes of %mx: writing it must wait for the reads of the row max.
    fn = _fn("softmax_pool_view.mlir", "softmax")
    program = poly_program(fn)
    lines = (CORPUS / "softmax_pool_view.mlir").read_text().splitlines()
    inv_store = 1 + next(n for n, t in enumerate(lines) if "krnl.store %q, %inv" in t)
    reads_max = {1 + n for n, t in enumerate(lines) if "krnl.store %e, %out" in t}
    line = {s.name: s.location.line for s in program.statements if s.location}
    war = [
        d
        for d in dependences(program).deps
        if d.kind == "WAR" and line.get(d.sink) == inv_store and line.get(d.source) in reads_max
    ]
    assert war and all(d.array == "pool" for d in war)


CASES = [
    ("returned_exp.mlir", "f"),
    ("returned_exp.mlir", "transpose_as_view"),
    ("returned_exp.mlir", "several_results"),
    ("softmax_pool_view.mlir", "softmax"),
    ("dynamic_add.mlir", "dynamic_add"),
    ("dynamic_add.mlir", "dynamic_add_flat"),
]


@pytest.mark.parametrize(("file", "func"), CASES)
def test_run_verify_accepts_the_kernel(file: str, func: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", "--verify", "--func", func, str(CORPUS / file)], out=out, err=err)
    assert code == 0, err.getvalue()
    assert "verify: ok" in out.getvalue()
