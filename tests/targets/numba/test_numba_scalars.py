"""Scalar work moved out of Numba loops (targets/numba/scalars.py, aliases.py, promote.py):
the rewrites on small ASTs, and the onnx-mlir-shaped kernels they change against the
reference interpreter, bit for bit."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.targets.numba.aliases import Root, array_roots, may_alias
from polykrnl.targets.numba.promote import merge_views, promote_invariants
from polykrnl.targets.numba.scalars import forward_loads, hoist_scalars
from tests.scripts import onnx_shapes

pytest.importorskip("numba")

PURE = frozenset({"_index"})


def parsed(source: str) -> ast.FunctionDef:
    fn = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    return fn


def text(fn: ast.FunctionDef) -> str:
    return ast.unparse(ast.fix_missing_locations(fn))


def test_views_of_one_pool_alias_only_where_their_ranges_meet() -> None:
    fn = parsed(
        """
        def k(x):
            pool = np.full((48,), 0, dtype=np.int8)
            p = pool
            t0 = p[0:0 + 6 * 4].view(np.float32).reshape((6,))
            t1 = p[24:48].view(np.float32)
            t2 = pool[20:28].view(np.float32)
            acc = np.full((), np.nan, dtype=np.float32)
            y = x
        """
    )
    roots = array_roots(fn, {"x": "float32"})
    assert roots["t0"] == Root("pool", (0, 24), plain=False, dtype="float32")
    assert not may_alias(roots["t0"], roots["t1"])
    assert may_alias(roots["t2"], roots["t0"]) and may_alias(roots["t2"], roots["t1"])
    assert not may_alias(roots["y"], roots["t0"]) and roots["y"].base == "x"
    assert "acc" not in roots  # a scalar accumulator: another rewrite's


SUM_ROW = """
def k(x, n, i):
    pool = np.full((48,), 0, dtype=np.int8)
    out = np.full((6, 10), np.nan, dtype=np.float32)
    t0 = pool[0:24].view(np.float32).reshape((6,))
    t1 = pool[{lo}:{hi}].view(np.float32).reshape((6,))
    for j in range(n):
        m = t0[np.uint64(i)]
        v = x[np.uint64(i), np.uint64(j)]
        out[np.uint64(i), np.uint64(j)] = np.float32(v - m)
        s = t1[np.uint64(i)]
        t1[np.uint64(i)] = np.float32(s + v)
"""


def test_a_row_sum_in_a_pool_view_lives_in_a_local_when_no_other_view_meets_it() -> None:
    fn = parsed(SUM_ROW.format(lo=24, hi=48))
    promote_invariants(fn, {"x": "float32"}, PURE)
    out = text(fn)
    assert "_e0 = t0[np.uint64(i)]" in out and "_e1 = t1[np.uint64(i)]" in out
    assert "t1[np.uint64(i)] = _e1" in out and "_e1 = np.float32(np.float32(s + v))" in out


ROW_SUMS = """
def k(x, t, n, i):
    i_1 = i + 1
    i_2 = {second}
    for j in range(n):
        s = t[np.uint64(i)]
        t[np.uint64(i)] = np.float32(s + x[np.uint64(i), np.uint64(j)])
        s_1 = t[np.uint64(i_2)]
        t[np.uint64(i_2)] = np.float32(s_1 + x[np.uint64(i_1), np.uint64(j)])
"""


def test_sums_of_distinct_rows_of_one_buffer_each_live_in_a_local() -> None:
    """Rows i and i + 1 (an unrolled loop of rows) are different elements of t: both sums
    stay in locals. A row the rewrite cannot tell apart (i_2 read from n) stays in t."""
    fn = parsed(ROW_SUMS.format(second="i_1 + 0"))
    promote_invariants(fn, {"x": "float32", "t": "float32"}, PURE)
    out = text(fn)
    assert "_e0 = t[np.uint64(i)]" in out and "_e1 = t[np.uint64(i_2)]" in out, out
    assert "t[np.uint64(i)] = _e0" in out and "t[np.uint64(i_2)] = _e1" in out
    unknown = parsed(ROW_SUMS.format(second="n"))
    promote_invariants(unknown, {"x": "float32", "t": "float32"}, PURE)
    assert "_e" not in text(unknown)


def test_a_row_sum_stays_in_memory_when_another_view_may_overlap_it() -> None:
    fn = parsed(SUM_ROW.format(lo=20, hi=44))  # t1 overlaps t0
    promote_invariants(fn, {"x": "float32"}, PURE)
    assert "_e" not in text(fn)


GATHER_LOOP = """
def k(x, idx, i, j, n):
    _pk_oob = np.zeros(3, np.int64)
    res = np.full((2, 8, 16), np.nan, dtype=np.float32)
    for k in range(n):
        a = idx[np.uint64(i), np.uint64(j)]
        neg = np.less(_index(a), 0)
        _ix = _index(a) + 100 if neg else _index(a)
        if _ix < 0 or _ix >= x.shape[0]:
            _pk_oob[0] = 1
            _pk_oob[1] = _ix
            _ix = 0
        v = x[np.uint64(_ix), np.uint64(k)]
        res[np.uint64(i), np.uint64(j), np.uint64(k)] = v{extra}
"""


def hoisted(source: str) -> str:
    fn = parsed(source)
    hoist_scalars(fn, array_roots(fn, {"x": "float32", "idx": "int64"}), PURE)
    return text(fn)


def test_the_row_index_chain_and_its_check_run_once_per_row() -> None:
    out = hoisted(GATHER_LOOP.format(extra=""))
    loop = out.index("for k in range(n):")
    assert out.index("if n > 0:") < out.index("a = idx[") < out.index("_pk_oob[1] = _ix") < loop
    assert out[loop:].count("\n") == 2  # the load and the store stay


@pytest.mark.parametrize(
    "extra",
    [
        "\n        idx[np.uint64(i), np.uint64(k)] = 0",  # the loop writes the index array
        "\n        _ix = k",  # the index is set again by what stays
        "\n        _pk_oob[2] = k",  # the flag is touched by what stays
        "\n        if k > 2:\n            break",  # an iteration may end before the check
    ],
)
def test_the_chain_stays_where_the_loop_changes_what_it_reads(extra: str) -> None:
    out = hoisted(GATHER_LOOP.format(extra=extra))
    loop = out.index("for k in range(n):")
    assert loop < out.index("_pk_oob[1] = _ix")


def test_nothing_moves_from_under_a_branch_or_out_of_a_read_before_it_is_set() -> None:
    source = """
    def k(x, n, i):
        b = 0
        for j in range(n):
            if j > 2:
                a = x[np.uint64(i)]
            c = b + 1
            b = x[np.uint64(i)]
    """
    assert hoisted(source) == text(parsed(source))


def test_a_load_the_block_already_made_is_forwarded_unless_a_store_may_reach_it() -> None:
    fn = parsed(
        """
        def k(x, y, n, i):
            out = np.full((4,), np.nan, dtype=np.float32)
            for j in range(n):
                v = x[np.uint64(j)]
                out[np.uint64(j)] = v
                w = x[np.uint64(j)]
                y[np.uint64(i)] = w
                u = y[np.uint64(i)]
                x[np.uint64(j)] = u
                z = x[np.uint64(j)]
        """
    )
    forward_loads(fn, array_roots(fn, {"x": "float32", "y": "float32"}), PURE)
    out = text(fn)
    assert "w = v" in out  # only `out`, a new buffer, was written in between
    assert "u = y[np.uint64(i)]" in out  # the first load of y[i]
    assert "z = x[np.uint64(j)]" in out  # x[j] was written in between


# ------------------------------------------------- the kernels, against the interpreter

GATHER = """
func.func @gather(%x: memref<7x5xf32>, %idx: memref<3x4xi64>) -> memref<3x4x5xf32> {
  %c0 = arith.constant 0 : index
  %cV = arith.constant 7 : index
  %cL = arith.constant 6 : index
  %res = memref.alloc() {alignment = 16 : i64} : memref<3x4x5xf32>
  %l:3 = krnl.define_loops 3
  krnl.iterate(%l#0, %l#1, %l#2) with (%l#0 -> %i = 0 to 3, %l#1 -> %j = 0 to 4,
      %l#2 -> %k = 0 to 5) {
    %iv:3 = krnl.get_induction_var_value(%l#0, %l#1, %l#2)
      : (!krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index)
    %a = krnl.load %idx[%iv#0, %iv#1] : memref<3x4xi64>
    %b = arith.index_cast %a : i64 to index
    %neg = arith.cmpi slt, %b, %c0 : index
    %up = arith.addi %b, %cV : index
    %n = arith.select %neg, %up, %b : index
    %low = arith.cmpi slt, %n, %c0 : index
    %n1 = arith.select %low, %c0, %n : index
    %high = arith.cmpi sge, %n1, %cV : index
    %row = arith.select %high, %cL, %n1 : index
    %v = krnl.load %x[%row, %iv#2] : memref<7x5xf32>
    krnl.store %v, %res[%iv#0, %iv#1, %iv#2] : memref<3x4x5xf32>
  }
  return %res : memref<3x4x5xf32>
}
"""

# Without the clamp: an index outside [-7, 7) addresses a row that does not exist.
UNCLAMPED = GATHER.replace("%row = arith.select %high, %cL, %n1 : index", "%row = %n").replace(
    "%low = arith.cmpi slt, %n, %c0 : index\n", ""
)
UNCLAMPED = (
    UNCLAMPED.replace("    %n1 = arith.select %low, %c0, %n : index\n", "")
    .replace("    %high = arith.cmpi sge, %n1, %cV : index\n", "")
    .replace("    %row = %n\n", "")
    .replace("%x[%row, %iv#2]", "%x[%n, %iv#2]")
)

EDGE_INDICES = np.array([[-7, -1, 0, 6], [7, 8, 100, -8], [-100, 3, -4, 2]], dtype=np.int64)


def same(fn: Any, kernel: Any, **args: np.ndarray) -> None:
    got = kernel(**{k: v.copy() for k, v in args.items()})
    want = pk.run_reference(fn, **{k: v.copy() for k, v in args.items()})
    np.testing.assert_array_equal(got, want)
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("boundscheck", [None, False])
def test_gather_kernel_clamps_every_index_as_the_program_does(boundscheck: bool | None) -> None:
    fn = pk.parse(GATHER)["gather"]
    kernel = pk.schedule(fn).to_numba(cache=False, boundscheck=boundscheck)
    body = kernel.function_source
    assert body.index("_pk_oob[1] = _ix") < body.index("for k in range(5):")
    x = np.arange(35, dtype=np.float32).reshape(7, 5)
    same(fn, kernel, x=x, idx=EDGE_INDICES)
    rng = np.random.default_rng(0)
    same(fn, kernel, x=x, idx=rng.integers(-20, 20, size=(3, 4), dtype=np.int64))


def test_gather_kernel_without_the_clamp_refuses_a_row_outside_the_table() -> None:
    fn = pk.parse(UNCLAMPED)["gather"]
    assert "arith.select %low" not in UNCLAMPED and "%x[%n, %iv#2]" in UNCLAMPED
    kernel = pk.schedule(fn).to_numba(cache=False)
    x = np.arange(35, dtype=np.float32).reshape(7, 5)
    good = np.array([[-7, -1, 0, 6]] * 3, dtype=np.int64)
    same(fn, kernel, x=x, idx=good)
    for bad in (7, -8):
        idx = good.copy()
        idx[1, 2] = bad
        with pytest.raises(pk.BoundsError):
            kernel(x=x, idx=idx)
        with pytest.raises(pk.PolykrnlError):
            pk.run_reference(fn, x=x, idx=idx)


SOFTMAX = onnx_shapes().softmax_text(5, 11)


def test_softmax_kernel_sums_each_row_in_a_local() -> None:
    fn = pk.parse(SOFTMAX)["softmax"]
    kernel = pk.schedule(fn).to_numba(cache=False)
    body = kernel.function_source
    exp_loop = body[body.index("_pk_exp32") - 400 :]
    assert "= t1_" in exp_loop and "_e" in exp_loop  # the row sum read before the loop
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 11)).astype(np.float32) * 30
    x[0, :] = -np.inf
    x[1, 3] = np.inf
    x[2, 4] = np.nan
    x[3, :] = 0.0
    same(fn, kernel, x=x)


def test_a_prange_and_its_sequential_twin_both_build_their_views_before_their_loops() -> None:
    """A parallel loop is written twice (a prange, and the plain loop run when the work
    is too small for threads): the twin has names of its own, so the rewrites that move
    a view assigned once out of a loop apply to both (the twin rebuilt softmax's pool
    views in every iteration: 16x slower)."""
    fn, sched = _parallel_softmax()
    kernel = sched.to_numba(cache=False)
    assert kernel.parallel_loops == dict.fromkeys(("i", "i_2", "i_3", "i_4"), "prange")
    tree = ast.parse(kernel.function_source)
    ranges = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.For) and ast.unparse(n.iter).startswith("range(")
    ]
    innermost = [
        n for n in ranges if not any(isinstance(m, ast.For) for b in n.body for m in ast.walk(b))
    ]
    # the initializing row loop's twin, the column loops of the three pranges and twins,
    # the exp nest's column loop two loops in each (fission.py)
    assert len(innermost) == 9
    for loop in innermost:
        assert ".view(" not in ast.unparse(ast.Module(loop.body, [])), ast.unparse(loop)
    x = np.random.default_rng(2).standard_normal((5, 11)).astype(np.float32)
    same(fn, kernel, x=x)  # 5 rows: the twins run


def _parallel_softmax() -> tuple[Any, Any]:
    fn = pk.parse(SOFTMAX)["softmax"]
    sched = pk.Schedule.from_function(fn, recipe=False)
    for loop in ("i", "i_2", "i_3", "i_4"):
        sched = sched.parallel(loop)
    return fn, sched


@pytest.mark.slow  # a child process compiling with Numba: about 10 s
def test_an_emitted_parallel_kernel_keeps_its_stores_through_views(tmp_path: Path) -> None:
    """Numba's parallel passes dropped the stores through a pool's views (they did not
    know that `.view` aliases): the module carries the rule that says so, standalone."""
    from polykrnl.codegen.module_source import standalone_module

    fn, sched = _parallel_softmax()
    kernel = sched.to_numba(cache=False)
    assert "_pk_view_alias()" in kernel.source
    (tmp_path / "softmax_kernels.py").write_text(standalone_module([kernel], "softmax.mlir"))
    script = textwrap.dedent(
        f"""
        import sys, numpy as np
        sys.modules["polykrnl"] = None  # the module must not need polykrnl
        sys.path.insert(0, {str(tmp_path)!r})
        import softmax_kernels
        x = np.random.default_rng(4).standard_normal((5, 11)).astype(np.float32)
        np.save({str(tmp_path / "out.npy")!r}, softmax_kernels.kernel_softmax(x))
        """
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "nc")}
    subprocess.run([sys.executable, "-c", script], check=True, env=env)
    x = np.random.default_rng(4).standard_normal((5, 11)).astype(np.float32)
    want = pk.run_reference(fn, x=x)
    assert np.load(tmp_path / "out.npy").tobytes() == want.tobytes()


STRIDED_FILL = """
func.func @fill(%arg0: memref<12xf32>) -> memref<12xf32> {
  %out = memref.alloc() {alignment = 16 : i64} : memref<12xf32>
  %t = memref.reinterpret_cast %arg0 to offset: [0], sizes: [3, 4], strides: [1, 3]
    : memref<12xf32> to memref<3x4xf32, strided<[1, 3]>>
  %o = memref.reinterpret_cast %out to offset: [0], sizes: [3, 4], strides: [4, 1]
    : memref<12xf32> to memref<3x4xf32>
  %l:2 = krnl.define_loops 2
  krnl.parallel %l#0 : !krnl.loop
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 3, %l#1 -> %j = 0 to 4) {
    %v = krnl.load %t[%i, %j] : memref<3x4xf32, strided<[1, 3]>>
    krnl.store %v, %o[%i, %j] : memref<3x4xf32>
  }
  return %out : memref<12xf32>
}
"""


def test_a_parallel_kernel_keeps_its_stores_through_a_strided_view() -> None:
    """The result is the buffer, written only through its reinterpret_cast (NumPy's
    as_strided): Numba's parallel passes must see that the view aliases it."""
    fn = pk.parse(STRIDED_FILL)["fill"]
    kernel = pk.schedule(fn).to_numba(cache=False)
    assert kernel.parallel_loops == {"i": "prange"} and "_pk_view_alias()" in kernel.source
    x = np.arange(12, dtype=np.float32)
    same(fn, kernel, arg0=x)


def test_a_view_made_again_in_the_same_block_is_the_first_one() -> None:
    fn = parsed(
        """
        def k(x, n, i):
            pool = np.full((48,), 0, dtype=np.int8)
            for j in range(n):
                p1 = pool
                p2 = pool
                t0 = p1[0:24].view(np.float32).reshape((6,))
                t0b = p2[0:24].view(np.float32).reshape((6,))
                t1 = p2[24:48].view(np.float32).reshape((6,))
                a = t0[np.uint64(i)]
                b = t0b[np.uint64(i)]
                t1[np.uint64(i)] = a + b
        """
    )
    merge_views(fn)
    out = text(fn)
    assert "p2" not in out and "t0b" not in out and "b = t0[np.uint64(i)]" in out
    forward_loads(fn, array_roots(fn, {"x": "float32"}), PURE)
    assert "b = a" in text(fn)
