"""The float32 exp and tanh LLVM vectorizes (targets/numba/vector_math.py): each helper
against NumPy's function on a sample of the exhaustive check (tools/check_vector_math.py),
and kernels against the reference interpreter, bit for bit."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.targets.numba import bits, vector_math
from tests.scripts import onnx_shapes

numba = pytest.importorskip("numba")

f32 = np.float32


def helper_over_arrays(function: str) -> Any:
    """The helper as kernels carry it, and a loop of it over an array."""
    name = vector_math.HELPERS[function]
    space: dict[str, Any] = {"np": np, "njit": numba.njit}
    exec(bits.SOURCE + vector_math.source(name, cache=False), space)
    helper = space[name]

    @numba.njit
    def each(xs: np.ndarray) -> np.ndarray:
        out = np.empty(xs.shape, np.float32)
        for i in range(xs.shape[0]):
            out[i] = np.float32(helper(xs[i]))
        return out

    return each


SPECIAL = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1.0, -1.0, 0.5]

# Where each function's branches and thresholds are: every float32 within 2**16 of them.
EDGES = {
    # overflow to inf, subnormal results, 0
    "exp": [88.72284, -87.33655, -103.27893, -103.97208, 89.0, -110.0],
    # polynomial / exp formula; the result becomes 1; x**3 / 3 below half an ulp of x
    "tanh": [0.875, -0.875, 9.010913, -9.010913, 9.5, 2.0**-11, -(2.0**-11)],
}

# Where the results are neither 0, 1 nor inf, nor x itself: uniformly.
RANGES = {"exp": (-104.0, 89.0), "tanh": (-9.5, 9.5)}


@pytest.mark.parametrize("function", sorted(vector_math.HELPERS))
def test_the_helper_rounds_as_numpys_function(function: str) -> None:
    """A sample of the exhaustive check: the special values, every float32 near each
    function's thresholds, random bit patterns and random values where results vary."""
    near = [
        np.arange(-(1 << 16), 1 << 16, dtype=np.int64) + f32(c).view(np.int32)
        for c in EDGES[function]
    ]
    rng = np.random.default_rng(0)
    random_bits = rng.integers(-(2**31), 2**31, 1 << 20, dtype=np.int64)
    uniform = rng.uniform(*RANGES[function], 1 << 20).astype(f32)
    bit_patterns = [b.astype(np.int32).view(f32) for b in (*near, random_bits)]
    xs = np.concatenate([np.array(SPECIAL, f32), *bit_patterns, uniform])
    with np.errstate(all="ignore"):
        want = getattr(np, function)(xs.astype(np.float64)).astype(f32)
    got = helper_over_arrays(function)(xs)
    differ = (got.view(np.int32) != want.view(np.int32)) & ~(np.isnan(got) & np.isnan(want))
    assert not differ.any(), xs[differ][:10]


ELEMENTWISE = """
func.func @each(%x: memref<6x7xf32>) -> memref<6x7xf32> {
  %out = memref.alloc() : memref<6x7xf32>
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 6, %l#1 -> %j = 0 to 7) {
    %v = krnl.load %x[%i, %j] : memref<6x7xf32>
    %e = math.FUNCTION %v : f32
    krnl.store %e, %out[%i, %j] : memref<6x7xf32>
  }
  return %out : memref<6x7xf32>
}
"""


def program(function: str, dtype: str = "f32") -> pk.Function:
    return pk.parse(ELEMENTWISE.replace("FUNCTION", function).replace("f32", dtype))["each"]


def interpreted_and_compiled(
    fn: pk.Function, x: np.ndarray, name: str = "x"
) -> tuple[Any, Any, str]:
    kernel = pk.schedule(fn).to_numba(cache=False)
    want = pk.run_reference(fn, **{name: x.copy()})
    return want, kernel(**{name: x.copy()}), kernel.function_source


@pytest.mark.parametrize("function", sorted(vector_math.HELPERS))
def test_a_function_of_a_float32_load_is_its_helper(function: str) -> None:
    """`math.exp` of a loaded float32 is `np.exp(np.float64(v))` in the kernel's text: the
    load from a float32 array (its root, aliases.py) says v is float32."""
    x = np.array([[np.nan, np.inf, -np.inf, 0.0, -0.0, 88.8, -104.0]] * 6, np.float32)
    x[1:] = np.random.default_rng(4).standard_normal((5, 7)).astype(np.float32) * 50
    x[2] /= 40
    want, got, body = interpreted_and_compiled(program(function), x)
    assert got.tobytes() == want.tobytes()
    helper = vector_math.HELPERS[function]
    assert f"{helper}(v)" in body and f"np.{function}(" not in body


@pytest.mark.parametrize("function", sorted(vector_math.HELPERS))
def test_a_function_of_a_float64_load_keeps_the_c_librarys(function: str) -> None:
    """Within one unit in the last place: NumPy's float64 functions are its own on x86-64
    with AVX-512 (numpy_ops' notes), the kernel's the C library's."""
    x = np.random.default_rng(6).standard_normal((6, 7)) * 5
    want, got, body = interpreted_and_compiled(program(function, "f64"), x)
    np.testing.assert_allclose(got, want, rtol=2.0**-52, atol=0)
    assert vector_math.HELPERS[function] not in body and f"np.{function}(" in body


def test_without_a_native_fma_the_functions_keep_the_c_librarys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`_pk_fma` would be a call of the C library's fma per step there (bits.py)."""
    monkeypatch.setattr(bits, "fma_native", lambda: False)
    x = np.random.default_rng(7).standard_normal((6, 7)).astype(np.float32)
    for function in vector_math.HELPERS:
        want, got, body = interpreted_and_compiled(program(function), x)
        assert "_pk_" not in body and f"np.{function}(" in body
        assert got.tobytes() == want.tobytes()


def test_onnx_mlirs_simd_tanh_is_the_vector_tanh() -> None:
    """onnx-mlir's -O3 form: vector<8xf32> tanh in the tile loop, a scalar remainder."""
    fn = pk.parse(onnx_shapes().tanh_text(29))["tanh"]
    x = np.random.default_rng(9).standard_normal(29).astype(np.float32) * 4
    x[:6] = [np.nan, np.inf, -np.inf, -0.0, 9.5, -1e-40]
    want, got, body = interpreted_and_compiled(fn, x, "a")
    assert got.tobytes() == want.tobytes()
    assert "_pk_tanh32(" in body and "np.tanh(" not in body
