"""A sum carried by a loop of exps moved to a loop of its own (targets/numba/fission.py),
and the float32 exp LLVM vectorizes (targets/numba/vector_exp.py): the rewrites on small
ASTs, the helper against NumPy's exp, and kernels against the reference interpreter, bit
for bit."""

from __future__ import annotations

import ast
import textwrap
from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.targets.numba import bits, vector_exp
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


def exp32() -> Any:
    """The helper as kernels carry it, and a loop of it over an array."""
    space: dict[str, Any] = {"np": np, "njit": numba.njit}
    exec(bits.SOURCE + vector_exp.source(cache=False), space)
    helper = space[vector_exp.NAME]

    @numba.njit
    def each(xs: np.ndarray) -> np.ndarray:
        out = np.empty(xs.shape, np.float32)
        for i in range(xs.shape[0]):
            out[i] = np.float32(helper(xs[i]))
        return out

    return each


def test_the_vector_exp_rounds_as_numpys_exp() -> None:
    """A sample of the exhaustive check (tools/check_vector_exp.py): the special values,
    every float32 near where the result overflows and where it becomes subnormal or 0,
    and random bit patterns."""
    f32 = np.float32
    special = np.array(
        [
            np.nan,
            np.inf,
            -np.inf,
            0.0,
            -0.0,
            1e-45,
            -1e-45,
            88.72284,
            89.0,
            89.5,
            -103.97208,
            -104.0,
            -110.0,
            -110.5,
            -87.33655,
            1.0,
            -1.0,
            0.5,
        ],
        f32,
    )
    near = [
        np.arange(-(1 << 16), 1 << 16, dtype=np.int64) + f32(c).view(np.int32)
        for c in (88.72284, -87.33655, -103.27893, -103.97208)
    ]
    rng = np.random.default_rng(0)
    random_bits = rng.integers(-(2**31), 2**31, 1 << 20, dtype=np.int64)
    xs = np.concatenate([special, *(b.astype(np.int32).view(f32) for b in (*near, random_bits))])
    with np.errstate(all="ignore"):
        want = np.exp(xs.astype(np.float64)).astype(f32)
    got = exp32()(xs)
    differ = (got.view(np.int32) != want.view(np.int32)) & ~(np.isnan(got) & np.isnan(want))
    assert not differ.any(), xs[differ][:10]


SOFTMAX = onnx_shapes().softmax_text(5, 11)

EXP = """
func.func @exps(%x: memref<6x7xf32>) -> memref<6x7xf32> {
  %out = memref.alloc() : memref<6x7xf32>
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 6, %l#1 -> %j = 0 to 7) {
    %v = krnl.load %x[%i, %j] : memref<6x7xf32>
    %e = math.exp %v : f32
    krnl.store %e, %out[%i, %j] : memref<6x7xf32>
  }
  return %out : memref<6x7xf32>
}
"""


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


def test_an_elementwise_exp_of_a_float32_load_is_the_vector_exp() -> None:
    """`math.exp` of a loaded float32 is `np.exp(np.float64(v))` in the kernel's text: the
    load from a float32 array (its root, aliases.py) says v is float32."""
    fn = pk.parse(EXP)["exps"]
    x = np.array([[np.nan, np.inf, -np.inf, 0.0, -0.0, 88.8, -104.0]] * 6, np.float32)
    x[1:] = np.random.default_rng(4).standard_normal((5, 7)).astype(np.float32) * 50
    want, got, body = interpreted_and_compiled(fn, x)
    assert got.tobytes() == want.tobytes()
    assert "_pk_exp32(v)" in body and "np.exp(" not in body


def test_an_exp_of_a_float64_load_keeps_the_c_librarys_exp() -> None:
    """Within one unit in the last place: NumPy's float64 exp is its own on x86-64 with
    AVX-512 (numpy_ops' notes), the kernel's the C library's."""
    fn = pk.parse(EXP.replace("f32", "f64"))["exps"]
    x = np.random.default_rng(6).standard_normal((6, 7)) * 50
    want, got, body = interpreted_and_compiled(fn, x)
    np.testing.assert_allclose(got, want, rtol=2.0**-52, atol=0)
    assert "_pk_exp32" not in body and "np.exp(" in body


def test_without_a_native_fma_the_exps_keep_the_c_librarys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`_pk_fma` would be a call of the C library's fma per step there (bits.py)."""
    monkeypatch.setattr(bits, "fma_native", lambda: False)
    fn = pk.parse(EXP)["exps"]
    x = np.random.default_rng(7).standard_normal((6, 7)).astype(np.float32)
    want, got, body = interpreted_and_compiled(fn, x)
    assert "_pk_exp32" not in body and "np.exp(" in body
    assert got.tobytes() == want.tobytes()
