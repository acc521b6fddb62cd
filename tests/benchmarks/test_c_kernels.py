"""The C kernels of benchmarks/polybench/hand.c (through c_kernels.py) against hand NumPy.

Every kernel, single thread and OpenMP, on PolyBench's SMALL sizes with seeded
random inputs (`sizes.make_inputs`), must give the results of `hand.py`
(rtol 1e-10 for f64: NumPy may sum in another order, gcc may fuse a multiply
and an add; exactly for floyd_warshall), and the arrays it does not write must
stay as they were. The same again with every array larger than the sizes (the
C code must index rows with the array's own row length), and bad arguments
must raise ValueError before C runs. Skipped only when gcc cannot build the
libraries.
"""

from __future__ import annotations

import copy
import importlib.util
import inspect
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

KERNEL_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "polybench"


def _import(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"polybench_{name}", KERNEL_DIR / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hand = _import("hand")
sizes = _import("sizes")
c_kernels = _import("c_kernels")

KERNELS: tuple[str, ...] = sizes.KERNELS
SEED = 4242

_REASON = c_kernels.available()
pytestmark = pytest.mark.skipif(_REASON is not None, reason=f"gcc cannot build hand.c: {_REASON}")

MODES = [pytest.param(False, id="serial"), pytest.param(True, id="openmp")]


def _compare(kernel: str, params: dict[str, int], inputs: dict[str, Any], parallel: bool) -> None:
    expected = copy.deepcopy(inputs)
    hand.KERNELS[kernel](**params, **expected)
    got = copy.deepcopy(inputs)
    # The sizes by position (in hand.py's order), the rest by keyword: both must bind as there.
    order = [n for n in inspect.signature(hand.KERNELS[kernel]).parameters if n in params]
    c_kernels.c_kernel(kernel, parallel)(*(params[n] for n in order), **got)
    arrays = [name for name, v in inputs.items() if isinstance(v, np.ndarray)]
    written = {p.name for p in c_kernels.SIGNATURES[kernel] if getattr(p, "written", False)}
    assert written <= set(arrays)
    for name in arrays:
        if name not in written:
            assert np.array_equal(got[name], inputs[name]), f"{name} must not change"
        elif got[name].dtype.kind == "i":
            assert np.array_equal(got[name], expected[name]), name
            assert not np.array_equal(got[name], inputs[name]), f"{name} did not change"
        else:
            np.testing.assert_allclose(got[name], expected[name], rtol=1e-10, err_msg=name)
            assert not np.array_equal(got[name], inputs[name]), f"{name} did not change"


def test_signatures_are_those_of_hand_py() -> None:
    assert set(c_kernels.KERNELS) == set(KERNELS)
    for kernel in KERNELS:
        c_names = list(inspect.signature(c_kernels.c_kernel(kernel)).parameters)
        assert c_names == list(inspect.signature(hand.KERNELS[kernel]).parameters), kernel


@pytest.mark.parametrize("parallel", MODES)
@pytest.mark.parametrize("kernel", KERNELS)
def test_c_matches_hand_numpy(kernel: str, parallel: bool) -> None:
    params = sizes.sizes(kernel, "SMALL")
    _compare(kernel, params, sizes.make_inputs(kernel, params, seed=SEED), parallel)


@pytest.mark.parametrize("parallel", MODES)
@pytest.mark.parametrize("kernel", KERNELS)
def test_arrays_larger_than_the_sizes(kernel: str, parallel: bool) -> None:
    params = sizes.sizes(kernel, "MINI")
    # Every axis longer than its size, by different amounts per size.
    bigger = {k: v + 3 + i for i, (k, v) in enumerate(params.items())}
    _compare(kernel, params, sizes.make_inputs(kernel, bigger, seed=SEED), parallel)


def test_threads_argument() -> None:
    params = sizes.sizes("gemm", "SMALL")
    inputs = sizes.make_inputs("gemm", params, seed=SEED)
    expected = copy.deepcopy(inputs)
    hand.gemm(**params, **expected)
    c_kernels.c_kernel("gemm", True, threads=3)(**params, **inputs)
    np.testing.assert_allclose(inputs["C"], expected["C"], rtol=1e-10)
    with pytest.raises(ValueError, match="threads"):
        c_kernels.c_kernel("gemm", False, threads=2)


def _gemm_args() -> dict[str, Any]:
    params = {"NI": 4, "NJ": 5, "NK": 6}
    inputs: dict[str, Any] = sizes.make_inputs("gemm", params, seed=SEED)
    return params | inputs


BAD: dict[str, tuple[dict[str, Any], str]] = {
    "float32": ({"A": np.zeros((4, 6), dtype=np.float32)}, "dtype float64"),
    "int32 for floats": ({"B": np.zeros((6, 5), dtype=np.int32)}, "dtype float64"),
    "not contiguous": ({"A": np.zeros((4, 12))[:, ::2]}, "C-contiguous"),
    "Fortran order": ({"A": np.asfortranarray(np.zeros((4, 6)))}, "C-contiguous"),
    "too small": ({"B": np.zeros((6, 4))}, "too small"),
    "axes": ({"C": np.zeros(20)}, "2 axes"),
    "not an array": ({"C": [[0.0] * 5] * 4}, "NumPy array"),
    "read-only output": ({"C": np.broadcast_to(np.zeros(5), (4, 5))}, "C-contiguous|read-only"),
    "float index": ({"NI": 4.0}, "integer"),
    "string scalar": ({"alpha": "1.5"}, "real number"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_arguments_raise_value_error(case: str) -> None:
    change, message = BAD[case]
    args = _gemm_args() | change
    before = copy.deepcopy(args)
    with pytest.raises(ValueError, match=message):
        c_kernels.c_kernel("gemm")(**args)
    for name, v in before.items():
        if isinstance(v, np.ndarray):
            assert np.array_equal(args[name], v), "nothing may run before the checks"


def test_wrong_dtype_for_floyd_warshall_and_overlap() -> None:
    path = np.zeros((5, 5))
    with pytest.raises(ValueError, match="dtype int32"):
        c_kernels.c_kernel("floyd_warshall")(N=5, path=path)
    A = np.zeros((8, 8))
    with pytest.raises(ValueError, match="overlap"):
        c_kernels.c_kernel("jacobi_2d")(TSTEPS=1, N=8, A=A, B=A)
    readonly = np.zeros((4, 5))
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        c_kernels.c_kernel("gemm")(**(_gemm_args() | {"C": readonly}))
