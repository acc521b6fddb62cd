"""Float min/max reductions as integer ones (targets/numba/minmax_keys.py): the keys'
order against NumPy's sort, the rewrite on small ASTs, and reductions of every kind
against the reference interpreter, bit for bit (any NaN for a NaN)."""

from __future__ import annotations

import ast
import textwrap
from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.targets.numba import bits, minmax_keys
from tests.scripts import onnx_shapes

numba = pytest.importorskip("numba")

OPS = ["maxnumf", "minnumf", "maximumf", "minimumf"]


def keys(dtype: str) -> tuple[Any, Any]:
    """The key and its inverse as kernels carry them, over arrays."""
    space: dict[str, Any] = {"np": np, "njit": numba.njit}
    exec(bits.SOURCE + minmax_keys.source(cache=False), space)
    width = np.dtype(dtype).itemsize * 8
    key, back = space[f"_pk_key{width}"], space[f"_pk_{dtype}"]
    ints = getattr(np, f"int{width}")
    low = np.iinfo(ints).min

    @numba.njit
    def to_keys(xs: np.ndarray) -> np.ndarray:
        out = np.empty(xs.shape, ints)
        for i in range(xs.shape[0]):
            out[i] = key(xs[i], ints(low))
        return out

    @numba.njit
    def from_keys(ks: np.ndarray) -> np.ndarray:
        out = np.empty(ks.shape, xs_dtype)
        for i in range(ks.shape[0]):
            out[i] = back(ks[i])
        return out

    xs_dtype = getattr(np, dtype)
    return to_keys, from_keys


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_keys_order_floats_totally_and_give_them_back(dtype: str) -> None:
    ints = np.int32 if dtype == "float32" else np.int64
    rng = np.random.default_rng(11)
    info = np.finfo(dtype)
    special = [0.0, -0.0, np.inf, -np.inf, info.max, -info.max, info.tiny, -info.tiny]
    special += [info.smallest_subnormal, -info.smallest_subnormal, 1.0, -1.0]
    random = rng.integers(np.iinfo(ints).min, np.iinfo(ints).max, 5000, dtype=ints)
    xs = np.concatenate([np.array(special, dtype), random.view(dtype)])
    xs = xs[~np.isnan(xs)]
    to_keys, from_keys = keys(dtype)
    k = to_keys(xs)
    # NumPy sorts -0.0 and +0.0 as equal: order by value, then sign bit first.
    order = np.lexsort((~np.signbit(xs), xs))
    assert (np.diff(k[order]) > 0).all()
    assert from_keys(k).tobytes() == xs.tobytes()
    nan = to_keys(np.array([np.nan, -np.nan], dtype))
    assert (nan == np.iinfo(ints).min).all() and np.isnan(from_keys(nan)).all()


def parsed(source: str) -> ast.FunctionDef:
    fn = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    return fn


def rewritten(source: str) -> str | None:
    fn = parsed(source)
    if not minmax_keys.use_minmax_keys(fn):
        return None
    ast.fix_missing_locations(fn)
    return ast.unparse(fn)


# The shape of softmax's max nest after hoist_scalars: the row's value carried by name,
# read through a copy.
ROW_MAX = """
def k(x, t):
    e = t[0]
    for j in range(8):
        v = x[np.uint64(0), np.uint64(j)]
        m = e
        e = np.float32(np.float32(_maxnumf(m, v)))
    t[0] = e
"""


def test_a_max_chain_becomes_a_max_of_keys() -> None:
    out = rewritten(ROW_MAX)
    assert out is not None
    assert "e_key = _pk_key32(e, np.int32(-2147483648))" in out
    assert "e_key = max(e_key, _pk_key32(np.float32(v), np.int32(-2147483648)))" in out
    assert "m = e" not in out and "_maxnumf" not in out
    assert out.index("e = _pk_float32(e_key)") < out.index("t[0] = e")


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (("m = e\n", "m = e\n        y = m\n"), "another statement reads the copy"),
        (("    t[0] = e\n", "    t[0] = m\n"), "the copy is read after the loop"),
        (("_maxnumf(m, v)", "_maxnumf(m, m)"), "both operands are the chain's"),
        (("_maxnumf(m, v)", "_maxnumf(m, v + m)"), "the other operand reads the chain"),
        (("np.float32(np.float32(_max", "np.float32(np.float64(_max"), "two widths"),
        (("_maxnumf(m, v)", "_fmax(m, v)"), "not a min/max of MLIR"),
        (("e = np.float32(", "s = s + v\n        e = np.float32("), "a sum is carried too"),
        (("        m = e\n", "        m = e\n        e = v\n"), "two assignments of the chain"),
    ],
)
def test_a_loop_keeps_its_helper_calls_unless_sure(change: tuple[str, str], why: str) -> None:
    source = ROW_MAX.replace(*change)
    assert source != ROW_MAX
    assert rewritten(source) is None, why


REDUCE = """
func.func @red(%x: memref<5x9x{T}>, %acc: memref<5x{T}>) -> memref<5x{T}> {{
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 5, %l#1 -> %j = 0 to 9) {{
    %v = krnl.load %x[%i, %j] : memref<5x9x{T}>
    %m = krnl.load %acc[%i] : memref<5x{T}>
    %n = arith.{op} {a}, {b} : {T}
    krnl.store %n, %acc[%i] : memref<5x{T}>
  }}
  return %acc : memref<5x{T}>
}}
"""


def same(got: np.ndarray, want: np.ndarray) -> bool:
    """Bit for bit, any NaN for a NaN (the keys give the canonical NaN back)."""
    both_nan = np.isnan(got) & np.isnan(want)
    ints = np.int32 if got.dtype == np.float32 else np.int64
    return bool(((got.view(ints) == want.view(ints)) | both_nan).all())


def helper_chains(fn: pk.Function, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The kernel as written before keys: the scalar helpers (`_maxnumf`, ...) in order,
    MLIR's meaning of the ops including +0.0 > -0.0 (the interpreter returns whichever
    zero NumPy picks: numpy_ops' notes)."""
    with monkeypatch.context() as m:
        m.setattr(minmax_keys, "use_minmax_keys", lambda fn: False)
        kernel = pk.schedule(fn).to_numba(cache=False)
    assert "_pk_key" not in kernel.function_source
    return kernel


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("swapped", [False, True])
def test_reductions_equal_the_helpers_and_the_interpreter(
    op: str, dtype: str, swapped: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    ty = {"float32": "f32", "float64": "f64"}[dtype]
    a, b = ("%v", "%m") if swapped else ("%m", "%v")
    fn = pk.parse(REDUCE.format(T=ty, op=op, a=a, b=b))["red"]
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5, 9)).astype(dtype)
    x[0, :] = np.nan  # a row of NaNs
    x[1, ::2] = np.nan
    x[2, :] = np.array([0.0, -0.0] * 4 + [-0.0], dtype)
    x[3, 4] = -np.inf
    x[4, 1] = np.inf
    kernel = pk.schedule(fn).to_numba(cache=False)
    assert f"_pk_key{np.dtype(dtype).itemsize * 8}(" in kernel.function_source
    chains = helper_chains(fn, monkeypatch)
    for acc in ([-np.inf] * 5, [np.inf] * 5, [np.nan, 0.0, -0.0, np.nan, 1.0]):
        init = np.array(acc, dtype)
        got = kernel(x=x.copy(), acc=init.copy())
        assert same(got, chains(x=x.copy(), acc=init.copy())), (acc, got)
        want = pk.run_reference(fn, x=x.copy(), acc=init.copy())
        np.testing.assert_array_equal(got, want)  # -0.0 == +0.0, NaN == NaN


def test_softmax_rows_unrolled_reduce_keys_and_equal_the_interpreter() -> None:
    fn = pk.parse(onnx_shapes().softmax_text(16, 21))["softmax"]
    sched = (
        pk.Schedule.from_function(fn, recipe=False)
        .fuse("i", "i_2", 0)
        .block("i", 8)
        .distribute("i")
        .reorder(["j", "i_d_2"])
        .unroll("i_d_2")
    )
    rng = np.random.default_rng(8)
    x = rng.standard_normal((16, 21)).astype(np.float32) * 30
    x[0, :] = -np.inf
    x[3, :] = np.nan
    x[5, 7] = np.nan
    x[9, :] = -0.0
    kernel = sched.to_numba(cache=False)
    assert kernel.function_source.count("_pk_key32(np.float32(") == 8
    assert same(kernel(x=x.copy()), pk.run_reference(fn, x=x.copy()))
