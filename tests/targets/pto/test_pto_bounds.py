"""The PTO simulation and harness refuse sizes for which an access leaves its tensor.

The oracle is the reference interpreter, which refuses the same call; consistent calls
still simulate equal to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import polykrnl as pk

KERNELS = Path(__file__).parent / "krnl" / "pto_kernels.mlir"


def _f32(*shape: int) -> np.ndarray[Any, Any]:
    return np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)


def test_simulation_refuses_a_tensor_smaller_than_its_loops() -> None:
    fn = pk.load(KERNELS)["scale_add_relu"]
    kernel = pk.schedule(fn).to_pto(arch="a2a3")
    bad = {"N": 16, "M": 64, "X": _f32(8, 64), "Z": _f32(16, 64), "Y": _f32(16, 64)}
    with pytest.raises(pk.InterpretError, match="out of bounds"):
        pk.run_reference(
            fn, **{k: v.copy() if isinstance(v, np.ndarray) else v for k, v in bad.items()}
        )
    y_before = bad["Y"].copy()
    with pytest.raises(
        pk.BoundsError, match="leaves X: it needs at least 16 elements along dimension 0"
    ):
        kernel.simulate(**bad)
    np.testing.assert_array_equal(bad["Y"], y_before)
    good = {
        "N": 16,
        "M": 64,
        "X": _f32(16, 64),
        "Z": _f32(16, 64),
        "Y": np.zeros((16, 64), np.float32),
    }
    want = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in good.items()}
    pk.run_reference(fn, **want)
    kernel.simulate(**good)
    np.testing.assert_allclose(good["Y"], want["Y"], rtol=1e-6, atol=1e-6)


def test_simulation_refuses_a_tensor_of_another_shape() -> None:
    kernel = pk.schedule(pk.load(KERNELS)["softmax"]).to_pto(arch="a2a3")
    with pytest.raises(pk.BoundsError, match=r"Y has shape \(19, 39\)"):
        kernel.simulate(N=19, X=_f32(19, 40), Y=_f32(19, 39))


def test_harness_refuses_sizes_that_leave_a_tensor() -> None:
    kernel = pk.schedule(pk.load(KERNELS)["scale_add_relu"]).to_pto(arch="a2a3")
    sizes = {"N": 16, "M": 64, "X.0": 16, "X.1": 64, "Z.0": 16, "Z.1": 64, "Y.0": 16, "Y.1": 64}
    assert "int main" in kernel.harness(**sizes)
    with pytest.raises(pk.BoundsError, match="leaves Y"):
        kernel.harness(**{**sizes, "Y.0": 15})


def test_harness_names_missing_sizes_as_the_cli_takes_them() -> None:
    """`--param X.0=64` is what emit pto takes: the hint must not say isl's `X_d0`."""
    kernel = pk.schedule(pk.load(KERNELS)["scale_add_relu"]).to_pto(arch="a2a3")
    with pytest.raises(pk.PtoError) as e:
        kernel.harness(N=16, M=64)
    assert "X.0" in e.value.message and "X_d0" not in e.value.message
    assert "--param X.0=64" in (e.value.hint or "")
