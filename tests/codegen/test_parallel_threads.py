"""`to_numpy(parallel=True)`: krnl.parallel loops around array code run on threads.

The oracle is ``pk.run_reference``; the thread count is forced to 4 (more than
the machine may have) so that the shares and the pool are exercised anywhere.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.codegen.memory_ops import HELPERS
from polykrnl.inputs import make_inputs

MOD = pk.load(Path(__file__).parent.parent / "corpus" / "parallel_threads.mlir")
SIZES = {
    "tril_exp": lambda n: {"N": n, "x.0": n, "x.1": n + 2, "y.0": n, "y.1": n + 2},
    "band_rows": lambda n: {"N": n, "M": n + 2, "x.0": n, "x.1": n + 2},
}


@pytest.fixture
def four_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 4)


@pytest.mark.usefixtures("four_cpus")
@pytest.mark.parametrize("name", sorted(SIZES))
@pytest.mark.parametrize("n", [0, 1, 3, 13])
def test_threaded_kernel_matches_the_reference(name: str, n: int) -> None:
    fn = MOD[name]
    # exact: the threads must not change a bit (float32 exp computed as the interpreter does)
    kernel = pk.schedule(fn).to_numpy(parallel=True, reassociate=False)
    assert "_pk_parallel(_par_i, range(" in kernel.source
    args = make_inputs(fn, SIZES[name](n), seed=3)
    expected = copy.deepcopy(args)
    pk.run_reference(fn, **expected)
    got = copy.deepcopy(args)
    space = kernel._function.__globals__  # type: ignore[attr-defined]
    # Threads whatever one iteration costs (the default waits for 0.5 ms iterations).
    space["_pk_parallel"].__defaults__ = (0.0,)
    space.pop("_pk_pool", None)
    kernel(**got)
    # Iteration 0 alone, the other n - 1 on min(4, n - 1) threads when there are 2+.
    assert ("_pk_pool" in space) is (n >= 3)
    for key, value in expected.items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(got[key], value, equal_nan=True), key


def test_threads_only_when_asked_and_around_array_code() -> None:
    sched = pk.schedule(MOD["tril_exp"])
    assert "_pk_parallel" not in sched.to_numpy().source
    # Scalar bodies hold the GIL: threads would only add overhead.
    assert "_pk_parallel" not in sched.to_numpy(vectorize=False, parallel=True).source


@pytest.mark.usefixtures("four_cpus")
def test_an_error_in_a_thread_reaches_the_caller() -> None:
    space: dict[str, object] = {}
    exec(HELPERS["_pk_parallel"], space)
    seen: list[int] = []

    def body(share: range) -> None:
        if 5 in share:
            raise ValueError("iteration 5")
        seen.extend(share)

    with pytest.raises(ValueError, match="iteration 5"):
        space["_pk_parallel"](body, range(10), 0.0)  # type: ignore[operator]
    # Iteration 0 alone, then 4 interleaved shares of 1..9: [1, 5, 9] failed.
    assert sorted(seen) == [0, 2, 3, 4, 6, 7, 8]


@pytest.mark.usefixtures("four_cpus")
def test_short_iterations_run_without_threads() -> None:
    import threading

    space: dict[str, object] = {}
    exec(HELPERS["_pk_parallel"], space)
    threads: set[int] = set()

    def body(share: range) -> None:
        threads.add(threading.get_ident())

    space["_pk_parallel"](body, range(10), 10.0)  # type: ignore[operator]
    assert threads == {threading.get_ident()}
    space["_pk_parallel"](body, range(10), 0.0)  # type: ignore[operator]
    assert len(threads) > 1
