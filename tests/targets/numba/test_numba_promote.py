"""Fixed array elements kept in locals in Numba kernels (targets/numba/promote.py)."""

from __future__ import annotations

import ast
import textwrap
from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.targets.numba.promote import hoist_views, promote_invariants, unbox_set_once

pytest.importorskip("numba")


def promoted(source: str, arrays: dict[str, str]) -> str:
    fn = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    promote_invariants(fn, arrays, frozenset({"_index"}))
    return ast.unparse(ast.fix_missing_locations(fn))


def test_a_reduction_into_a_fixed_element_lives_in_a_local() -> None:
    out = promoted(
        """
        def k(n, q, p, r, i):
            for j in range(n):
                a = q[np.uint64(i)]
                b = p[np.uint64(j)] * r[np.uint64(i)]
                q[np.uint64(i)] = a + b
        """,
        {"q": "float32", "p": "float32", "r": "float32"},
    )
    assert out == textwrap.dedent(
        """\
        def k(n, q, p, r, i):
            if n > 0:
                _e0 = q[np.uint64(i)]
                _e1 = r[np.uint64(i)]
                for j in range(n):
                    a = _e0
                    b = p[np.uint64(j)] * _e1
                    _e0 = np.float32(a + b)
                q[np.uint64(i)] = _e0"""
    )


@pytest.mark.parametrize(
    "body",
    [
        "x = q[np.uint64(i)]\n    other(q)",  # a call that may write memory
        "x = q[np.uint64(i)]\n    v[np.uint64(j)] = x",  # a store to a view of who knows what
        "x = q[np.uint64(i)]\n    q[np.uint64(j)] = x",  # two elements of q
        "if j > 2:\n        x = q[np.uint64(i)]",  # read only on some iterations
        "i = j\n    x = q[np.uint64(i)]",  # the subscript changes in the loop
    ],
)
def test_nothing_moves_where_it_could_change_what_is_read(body: str) -> None:
    source = f"def k(n, q, v, i):\n  for j in range(n):\n    {body}\n"
    before = ast.unparse(ast.parse(source).body[0])
    assert promoted(source, {"q": "float64"}) == before


def test_a_loop_of_a_variable_step_or_a_parallel_one_is_left_alone() -> None:
    """A positive constant step runs when hi > lo (a vector loop's tiles); any other
    step, and a prange, keep their loads."""
    for header in ("range(0, n, s)", "range(n, 0, -1)", "prange(n)"):
        source = f"def k(n, q, i, s):\n  for j in {header}:\n    x = q[np.uint64(i)]\n"
        assert "_e0" not in promoted(source, {"q": "float64"})
    source = "def k(n, q, i):\n  for j in range(1, n, 8):\n    x = q[np.uint64(i)]\n"
    assert "if n > 1:\n        _e0 = q[np.uint64(i)]" in promoted(source, {"q": "float64"})


TRIANGLE = """
func.func @tri(%a: memref<6xf64>, %b: memref<6x6xf64>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii) with (%ii -> %i = 0 to 6) {
    krnl.iterate(%jj) with (%jj -> %j = 0 to %i) {
      %m = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
      %x = krnl.load %a[%m] : memref<6xf64>
      %y = krnl.load %b[%i, %j] : memref<6x6xf64>
      %s = arith.addf %x, %y : f64
      krnl.store %s, %b[%i, %j] : memref<6x6xf64>
    }
  }
  return
}
"""


def test_a_hoisted_read_happens_only_when_the_loop_runs() -> None:
    """a[i - 1] is fixed in the j loop, and outside `a` at i = 0, where j runs no
    iteration: hoisted without its guard it would be an IndexError (bounds checked)."""
    fn = pk.parse(TRIANGLE)["tri"]
    kernel = pk.schedule(fn).to_numba(cache=False)
    assert "if i > 0:" in kernel.source and "_e0 = a[np.uint64(i - 1)]" in kernel.source
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(6), rng.standard_normal((6, 6))
    got, want = b.copy(), b.copy()
    kernel(a=a, b=got)
    pk.run_reference(fn, a=a, b=want)
    np.testing.assert_array_equal(got, want)


def rewritten(source: str, rewrite: Callable[[ast.FunctionDef], None]) -> str:
    fn = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    rewrite(fn)
    return ast.unparse(ast.fix_missing_locations(fn))


def test_a_dictionary_set_once_before_the_loops_becomes_a_local() -> None:
    out = rewritten(
        """
        def k(n):
            _out_at = {}
            _out_at[0] = np.zeros((n,))
            for i in range(n):
                o = _out_at[0]
                o[np.uint64(i)] = 1.0
            return _out_at[0]
        """,
        unbox_set_once,
    )
    assert "_out_at" not in out and "out = np.zeros((n,))" in out and "o = out" in out


def test_a_dictionary_set_in_a_loop_or_under_another_key_stays() -> None:
    for body in ("for i in range(n):\n    d[0] = i", "d[0] = 1\nd[1] = 2", "d[0] = 1\nd[0] = 2"):
        source = "def k(n):\n  d = {}\n  " + body.replace("\n", "\n  ") + "\n  return d[0]\n"
        assert rewritten(source, unbox_set_once) == ast.unparse(ast.parse(source).body[0])


def test_views_move_out_of_the_loop_and_element_reads_stay() -> None:
    out = rewritten(
        """
        def k(n, pool, s):
            for i in range(n):
                p = pool
                t = p[0:24].view(np.float32).reshape((6,))
                total = s[()]
                t[np.uint64(i)] = total
        """,
        hoist_views,
    )
    assert out == textwrap.dedent(
        """\
        def k(n, pool, s):
            if n > 0:
                p = pool
                t = p[0:24].view(np.float32).reshape((6,))
                for i in range(n):
                    total = s[()]
                    t[np.uint64(i)] = total"""
    )


ROW_SUMS = """
func.func @rows(%N: index, %x: memref<?xf64>, %A: memref<?x?xf64>, %y: memref<?xf64>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to %N, %jj -> %j = 0 to %N) {
    %s = krnl.load %x[%i] : memref<?xf64>
    %a = krnl.load %A[%i, %j] : memref<?x?xf64>
    %b = krnl.load %y[%j] : memref<?xf64>
    %p = arith.mulf %a, %b : f64
    %t = arith.addf %s, %p : f64
    krnl.store %t, %x[%i] : memref<?xf64>
  }
  return
}
"""


@pytest.mark.parametrize("n", [5, 301])  # too little work for threads; enough
def test_a_parallel_tile_of_unrolled_rows_sums_each_row_in_a_local(n: int) -> None:
    """The prange and its sequential twin (run when there is too little work for
    threads) each assign their names in one place, the iterator too: a tile's rows
    (`i_1 = i_t + 1`) are then known apart and each row's sum lives in a local in both
    (the prange kept them in memory: mvt's x1 = A y1 on two threads 1.4x, now 1.9x)."""
    fn = pk.parse(ROW_SUMS)["rows"]
    sched = pk.Schedule.from_function(fn, recipe=False)
    sched = sched.block("i", 4).reorder(["i_t", "j", "i"]).unroll("i").parallel("i_t")
    kernel = sched.to_numba(parallel=True, cache=False)
    assert kernel.parallel_loops == {"i_t": "prange"}
    tree = ast.parse(kernel.function_source)
    stores = Counter(
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    )
    # the sums' locals (`_e0`) are set before the loop and in it: promote.py's own
    twice = [name for name, k in stores.items() if k > 1 and not name.startswith("_e")]
    assert not twice, f"assigned in two places: {twice}"
    assert any(name.startswith("_e") for name in stores)
    # the full tiles' column loops, in the prange and its twin (the last, partial tile
    # reads its rows under conditions: nothing moves out of those)
    column_loops = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.For)
        and ast.unparse(n.iter) == "range(N)"
        and not any(isinstance(m, ast.If) for m in n.body)
    ]
    assert len(column_loops) == 2
    for loop in column_loops:
        assert "x[" not in ast.unparse(ast.Module(loop.body, [])), ast.unparse(loop)
    rng = np.random.default_rng(n)
    args = {
        "x": rng.standard_normal(n),
        "A": rng.standard_normal((n, n)),
        "y": rng.standard_normal(n),
    }
    got = {k: v.copy() for k, v in args.items()}
    want = {k: v.copy() for k, v in args.items()}
    kernel(N=n, **got)
    pk.run_reference(fn, N=n, **want)
    assert got["x"].tobytes() == want["x"].tobytes()
    assert not np.array_equal(got["x"], args["x"])
