"""The Numba target (`sched.to_numba()`, `emit numba`, `run --target numba`).

The oracle is ``pk.run_reference``: a Numba kernel runs the schedule's loops in
its order with every value of its MLIR type, so its results must equal the
interpreter's bit for bit (NaN where NaN), on every program of the corpus, the
recipe tests and the PolyBench kernels. A program the target refuses must be
listed in UNSUPPORTED with its reason, and must be refused at its op.

The kernels that take long to compile (the corpus, the parallel loops) are built with
the on-disk cache (``to_numba()``'s default): a second run of the tests loads what Numba
compiled, as a user's second call does; the cheap ones keep ``cache=False``, the module in
memory, and the on-disk cache itself is tested across processes below.
"""

from __future__ import annotations

import ast
import copy
import io
import subprocess
import sys
import textwrap
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.cli import main
from polykrnl.inputs import make_inputs
from polykrnl.targets.numba import kernel as numba_kernel
from tests.parsed import load
from tests.property_tiers import FEW, SIZED

pytest.importorskip("numba", reason="the Numba target needs the extra polykrnl[numba]")

ROOT = Path(__file__).resolve().parent.parent.parent
BENCH = ROOT.parent / "benchmarks" / "polybench"
FILES = sorted(
    p
    for p in [
        *ROOT.glob("corpus/*.mlir"),
        *ROOT.glob("transforms/recipes/*.mlir"),
        *BENCH.glob("*.mlir"),
    ]
    if "syntax-only" not in p.read_text().splitlines()[0]
)
PROGRAMS = [(p, fn.name) for p in FILES for fn in load(p).functions]

# file stem:function -> what the Numba target refuses in it (checked: it must refuse).
UNSUPPORTED: dict[str, str] = {
    "dynamic_add:dynamic_add_flat": "memref.reshape to a shape held in memory",
    "generic_form_recipe:generic_panels": "krnl.copy_to_tile_buffer",
    "matmul_panel:matmul_panel": "krnl.copy_to_tile_buffer",
    "matmul_panel:tile_buffer_attrs": "krnl.copy_to_tile_buffer",
    "memory_ops:memset_memcpy": "krnl.memcpy",
    "tiled_layouts:memcpy_tiled": "krnl.memcpy",
    "onnx_gather:gather_constant_indices": "krnl.global",
    "scalar_math:hyperbolic_erf": "krnl.erf",
    "vector_transfers:scale_add": "vector.create_mask",
    "vector_transfers:masked_copy_and_column": "vector.create_mask",
}

# Representative programs for the fast tier (each Numba compilation takes about half a
# second): tiles and parallel loops, reductions through iter_args, min/max helpers,
# integer arithmetic, returned allocations, views, a PolyBench stencil. (softmax, several
# seconds to compile, waits for the whole suite.) A key names the first file that has it.
FAST = {
    "gemm:gemm_tiled",
    "parallel_forms:scale_tiled",
    "parallel_forms:relu",
    "reduction_iter_args:count_positive",
    "reduction_iter_args:min_max",
    "onnx_returned_alloc:exp_result",
    "block_strided:partial_tile",
    "seidel_2d:seidel_2d",
    "memory_ops:memset_memcpy",
}


def _same(x: Any, y: Any) -> bool:
    a, b = np.asarray(x), np.asarray(y)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


def _params(fn: pk.Function) -> dict[str, int]:
    return {a.name: 7 for a in fn.arguments if a.name in ("N", "n")}


def _check(fn: pk.Function, kernel: numba_kernel.NumbaKernel) -> None:
    args = make_inputs(fn, _params(fn), seed=5, size=8)
    expected = copy.deepcopy(args)
    r1 = pk.run_reference(fn, **expected)
    got = copy.deepcopy(args)
    r2 = kernel(**got)
    for key, value in expected.items():
        if isinstance(value, np.ndarray):
            assert _same(value, got[key]), f"{key} differs\n{kernel.source}"
    rs1, rs2 = (r if isinstance(r, tuple) else (r,) for r in (r1, r2))
    assert (r1 is None and r2 is None) or (
        len(rs1) == len(rs2) and all(_same(a, b) for a, b in zip(rs1, rs2, strict=True))
    ), f"{r1!r} != {r2!r}\n{kernel.source}"


def _cases() -> list[Any]:
    out, seen = [], set()
    for path, name in PROGRAMS:
        key = f"{path.stem}:{name}"
        fast = key in FAST and key not in seen
        seen.add(key)
        out.append(pytest.param(path, name, id=key, marks=[] if fast else [pytest.mark.slow]))
    return out


@pytest.mark.parametrize(("path", "name"), _cases())
def test_numba_kernel_equals_the_reference(path: Path, name: str) -> None:
    fn = load(path)[name]
    key = f"{path.stem}:{name}"
    sched = pk.schedule(fn, force=True)
    if key in UNSUPPORTED:
        with pytest.raises(pk.UnsupportedError) as info:
            sched.to_numba(cache=False).compile(**make_inputs(fn, _params(fn), seed=5, size=8))
        assert info.value.location is not None
        return
    _check(fn, sched.to_numba())


def test_unsupported_list_names_real_programs() -> None:
    keys = {f"{p.stem}:{n}" for p, n in PROGRAMS}
    assert set(UNSUPPORTED) <= keys
    assert set(FAST) <= keys


def test_refused_op_is_located_and_named() -> None:
    fn = load(ROOT / "corpus" / "memory_ops.mlir")["memset_memcpy"]
    with pytest.raises(pk.UnsupportedError) as info:
        pk.schedule(fn).to_numba(cache=False)
    assert "krnl.memcpy has no Numba translation" in info.value.message
    assert info.value.location is not None
    assert "krnl.memcpy" in (info.value.location.line_text or "")


INT_EDGES = """
func.func @edges(%a: memref<8xi32>, %b: memref<8xi32>, %o: memref<6x8xi32>, %x: memref<8xf32>,
                 %y: memref<2x8xf32>) {
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 8) {
    %p = krnl.load %a[%i] : memref<8xi32>
    %q = krnl.load %b[%i] : memref<8xi32>
    %s = arith.addi %p, %q : i32
    %m = arith.muli %p, %q : i32
    %d = arith.divsi %p, %q : i32
    %r = arith.remsi %p, %q : i32
    %f = arith.floordivsi %p, %q : i32
    %c = arith.ceildivsi %p, %q : i32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    krnl.store %s, %o[%c0, %i] : memref<6x8xi32>
    krnl.store %m, %o[%c1, %i] : memref<6x8xi32>
    krnl.store %d, %o[%c2, %i] : memref<6x8xi32>
    krnl.store %r, %o[%c3, %i] : memref<6x8xi32>
    krnl.store %f, %o[%c4, %i] : memref<6x8xi32>
    krnl.store %c, %o[%c5, %i] : memref<6x8xi32>
    %v = krnl.load %x[%i] : memref<8xf32>
    %k = arith.constant 0.1 : f32
    %gt = arith.cmpf ogt, %v, %k : f32
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %sel = arith.select %gt, %one, %zero : f32
    %w = arith.mulf %v, %k : f32
    krnl.store %sel, %y[%c0, %i] : memref<2x8xf32>
    krnl.store %w, %y[%c1, %i] : memref<2x8xf32>
  }
  return
}
"""


def test_integer_wraparound_division_and_float32_constants_match_the_reference() -> None:
    """Numba computes int32 + int32 in int64 and float32 * 0.1 in float64: the kernel
    must still wrap, divide (negative operands: toward zero, down, up) and compare as
    MLIR (the interpreter refuses a division by zero or of MIN by -1: undefined)."""
    fn = pk.parse(INT_EDGES)["edges"]
    imin, imax = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    a = np.array([imax, imin, -7, 7, -7, 5, imin, 0], np.int32)
    b = np.array([1, 3, 2, -2, 4, 3, 1, 9], np.int32)
    x = np.array([0.1, np.float32(0.1), 0.10000001, -0.0, np.nan, 1e38, -3.5, 0.3], np.float32)
    args = {
        "a": a,
        "b": b,
        "o": np.zeros((6, 8), np.int32),
        "x": x,
        "y": np.zeros((2, 8), np.float32),
    }
    expected = copy.deepcopy(args)
    pk.run_reference(fn, **expected)
    got = copy.deepcopy(args)
    pk.schedule(fn).to_numba()(**got)
    np.testing.assert_array_equal(got["o"], expected["o"])
    np.testing.assert_array_equal(got["y"], expected["y"])
    # The cases the test exists for, checked against NumPy itself as well.
    with np.errstate(all="ignore"):
        assert got["o"][0, 0] == np.int32(imax) + np.int32(1)  # wraps to MIN
    assert got["o"][1, 6] == imin  # MIN * 1
    assert got["o"][4, 2] == -4 and got["o"][5, 2] == -3  # floor and ceiling of -3.5
    assert got["o"][3, 2] == -1  # remsi has the sign of the dividend (C's %)


PARALLEL_TILES = """
func.func @scale(%x: memref<70x9xf64>, %s: f64) {
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 16 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.parallel(%ib) : !krnl.loop
  krnl.iterate(%ib, %il, %jj) with (%ii -> %i = 0 to 70, %jj -> %j = 0 to 9) {
    %v = krnl.load %x[%i, %j] : memref<70x9xf64>
    %w = arith.mulf %v, %s : f64
    krnl.store %w, %x[%i, %j] : memref<70x9xf64>
  }
  return
}
"""


def test_parallel_tile_loop_is_a_prange_over_its_trip_count() -> None:
    """A blocked krnl.parallel loop steps by 16: Numba's prange takes no step, so it
    runs over ceil(70 / 16) = 5 tiles, the last one partial; every element is scaled once."""
    fn = pk.parse(PARALLEL_TILES)["scale"]
    sched = pk.schedule(fn)
    kernel = sched.to_numba()
    assert "prange(" in kernel.source
    assert kernel.parallel_loops == {"ib": "prange"}
    x = np.random.default_rng(0).uniform(-1, 1, (70, 9))
    got = x.copy()
    kernel(x=got, s=3.0)
    expected = x.copy()
    pk.run_reference(fn, x=expected, s=3.0)
    np.testing.assert_array_equal(got, expected)
    sequential = sched.to_numba(parallel=False, cache=False)
    assert "prange" not in sequential.source.split("from numba import")[1].split("\n", 1)[1]
    assert sequential.parallel_loops == {}


# Row i scales x[i, 0:i+1]: row i's work grows with i.
PARALLEL_TRIANGLE = """
func.func @lower(%x: memref<?x?xf64>, %n: index) {
  %two = arith.constant 2.0 : f64
  %ii, %jj = krnl.define_loops 2
  krnl.parallel(%ii) : !krnl.loop
  krnl.iterate(%ii) with (%ii -> %i = 0 to %n) {
    krnl.iterate(%jj) with (%jj -> %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i)) {
      %v = krnl.load %x[%i, %j] : memref<?x?xf64>
      %w = arith.mulf %v, %two : f64
      krnl.store %w, %x[%i, %j] : memref<?x?xf64>
    }
  }
  return
}
"""


@cache
def _triangle_kernel() -> tuple[pk.Function, numba_kernel.NumbaKernel]:
    """Compiled once for every case below: each case runs it with its own n and threads."""
    fn = pk.parse(PARALLEL_TRIANGLE)["lower"]
    return fn, pk.schedule(fn).to_numba()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 8])
def test_parallel_triangle_rows_go_to_threads_cyclically(n: int, threads: int) -> None:
    """Iterations of unequal work are dealt out cyclically (schedule(static, 1)), not in
    blocks of consecutive rows; a rectangle keeps the plain prange (test above)."""
    import numba

    fn, kernel = _triangle_kernel()
    assert kernel.parallel_loops == {"i": "prange"}
    assert "i_shares = min(256, max(0, n))" in kernel.source, kernel.source
    assert "for i_c in prange(i_shares):" in kernel.source
    assert "for i in range(i_c, n, i_shares):" in kernel.source
    x = np.random.default_rng(n).uniform(-1, 1, (n, n))
    got, expected = x.copy(), x.copy()
    before = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        kernel(x=got, n=n)
    finally:
        numba.set_num_threads(before)
    pk.run_reference(fn, x=expected, n=n)
    np.testing.assert_array_equal(got, expected)


def _dealt(source: str, loop: str, threads: int, **sizes: int) -> list[list[int]]:
    """The iterations of cyclic prange `loop` each thread runs, read from the kernel's
    own lines (the share count, the prange, the loop over a share's iterations) and
    dealt as Numba deals a prange: each thread one block of consecutive iterations."""
    lines = [ln.strip() for ln in source.splitlines()]
    count = next(ln for ln in lines if ln.startswith(f"{loop}_shares = "))
    inner = next(ln for ln in lines if ln.startswith(f"for {loop} in range({loop}_c"))
    env: dict[str, object] = dict(sizes)
    exec(count, env)
    shares = int(env[f"{loop}_shares"])  # type: ignore[call-overload]
    assert f"for {loop}_c in prange({loop}_shares):" in lines
    per_share = []
    for c in range(shares):
        env[f"{loop}_c"] = c
        exec(f"{inner[:-1]}: found.append({loop})", {**env, "found": (found := [])})
        per_share.append(found)
    block = -(-shares // threads)
    return [
        [i for share in per_share[t * block : (t + 1) * block] for i in share]
        for t in range(threads)
    ]


@pytest.mark.parametrize("threads", [2, 3, 4])
def test_cyclic_prange_over_few_iterations_gives_every_thread_its_share(threads: int) -> None:
    """A tile loop of few tiles (5 here, a triangle's rows below 256) gets one share per
    iteration: with a fixed 256 shares, the 5 tiles all fell in the first thread's block
    of shares and the other threads ran none (gemm's parallel tile loop ran 1.0x on two
    threads). Every iteration runs once; no thread gets more than its ceil(n / T)."""
    kernel = pk.schedule(pk.parse(PARALLEL_TILES)["scale"]).to_numba()
    dealt = _dealt(kernel.source, "ib", threads)
    assert sorted(i for d in dealt for i in d) == list(range(0, 70, 16))
    assert max(len(d) for d in dealt) == -(-5 // threads), dealt
    _, triangle = _triangle_kernel()
    for n in (7, 300, 2000):
        rows = _dealt(triangle.source, "i", threads, n=n)
        assert sorted(i for r in rows for i in r) == list(range(n))
        assert all(rows), rows  # every thread has rows
        work = [sum(i + 1 for i in r) for r in rows]
        if n >= 2000:  # each share takes every 256th row: the triangle's work is shared
            assert max(work) <= 1.1 * sum(work) / threads, work


def test_compile_for_numba_runs_krnl_parallel_loops_as_prange_unless_told_not_to() -> None:
    """pk.compile(target="numba") has to_numba()'s default (prange)."""
    fn = pk.parse(PARALLEL_TILES)["scale"]
    assert pk.compile(fn, target="numba").parallel_loops == {"ib": "prange"}
    assert pk.compile(fn, target="numba", parallel=False).parallel_loops == {}


ROW_SUMS = """
func.func @row_sums(%m: memref<9x5xf64>, %out: memref<9xf64>) {
  %zero = arith.constant 0.0 : f64
  %ii, %jj = krnl.define_loops 2
  krnl.parallel(%ii) : !krnl.loop
  krnl.iterate(%ii) with (%ii -> %i = 0 to 9) {
    %r = krnl.iterate(%jj) with (%jj -> %j = 0 to 5) iter_args(%acc = %zero) -> (f64) {
      %v = krnl.load %m[%i, %j] : memref<9x5xf64>
      %n = arith.addf %acc, %v : f64
      krnl.yield %n : f64
    }
    krnl.store %r, %out[%i] : memref<9xf64>
  }
  return
}
"""


def test_parallel_loop_passing_values_through_dicts_stays_sequential() -> None:
    """Values kept across statements (iter_args here) live in typed dicts, which threads
    would race on: such a krnl.parallel loop runs sequentially, and the kernel says why."""
    fn = pk.parse(ROW_SUMS)["row_sums"]
    kernel = pk.schedule(fn).to_numba()
    assert list(kernel.parallel_loops) == ["i"]
    assert "dictionary" in kernel.parallel_loops["i"]
    assert "prange" not in kernel.function_source
    assert "#   i: sequential: its statements pass values through a dictionary" in kernel.source
    _check(fn, kernel)


def test_scalar_results_have_their_mlir_type() -> None:
    fn = load(ROOT / "corpus" / "reduction_iter_args.mlir")["sum"]
    kernel = pk.schedule(fn).to_numba(cache=False)
    x = np.random.default_rng(1).uniform(-1, 1, 100).astype(np.float32)
    got = kernel(x=x)
    assert type(got) is np.float32
    assert got == pk.run_reference(fn, x=x.copy())


def test_compile_time_is_recorded_per_signature() -> None:
    fn = load(ROOT / "corpus" / "parallel_forms.mlir")["relu"]
    kernel = pk.schedule(fn).to_numba(cache=False)
    args = make_inputs(fn, {}, seed=0)
    first = kernel.compile(**args)
    assert first > 0 and len(kernel.compile_seconds) == 1
    assert kernel.compile(**args) == 0.0  # compiled already
    kernel(**args)
    assert len(kernel.compile_seconds) == 1


def test_an_array_of_another_layout_is_compiled_for_and_computed_right() -> None:
    # The call remembers the arrays it compiled for by dtype, rank and flags: an
    # F-ordered or read-only input is a new Numba signature, not the C one's code.
    fn = load(ROOT / "corpus" / "parallel_forms.mlir")["relu"]
    kernel = pk.schedule(fn).to_numba(cache=False)
    args = make_inputs(fn, {}, seed=0)
    kernel(**{k: v.copy() for k, v in args.items()})
    x_f = np.asfortranarray(args["x"])
    x_ro = args["x"].copy()
    x_ro.flags.writeable = False
    for n, x in enumerate((x_f, x_ro), start=2):
        y = np.zeros_like(args["y"])
        kernel(x=x, y=y)
        assert len(kernel.compile_seconds) == n
        want = np.zeros_like(y)
        pk.run_reference(fn, x=x.copy(), y=want)
        assert y.tobytes() == want.tobytes()


def test_missing_numba_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(numba_kernel, "numba_missing", lambda: "numba does not import here")
    fn = load(ROOT / "corpus" / "parallel_forms.mlir")["relu"]
    with pytest.raises(pk.UnsupportedError) as info:
        numba_kernel.to_numba(pk.schedule(fn))
    assert "polykrnl[numba]" in (info.value.hint or "")


# A second interpreter importing Numba and compiling: seconds. Fast tier: the cached
# module's safe import (test_hostile_text.py) and the kernel tests of this file.
@pytest.mark.slow
@SIZED
def test_on_disk_cache_serves_a_second_process(
    tmp_path: Path, tier: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With cache=True the module is a file in POLYKRNL_CACHE_DIR and Numba's cache
    next to it: a second process loads the compiled kernel instead of compiling. A tiled
    gemm, and with all tiers the triangle too, whose prange is cyclic (two per process).
    The first run is this process (a fresh kernel file compiles), the second a child."""
    import contextlib
    import warnings

    triangle = tmp_path / "triangle.mlir"
    triangle.write_text(PARALLEL_TRIANGLE)
    kernels = [(ROOT / "corpus" / "gemm.mlir", "gemm_tiled"), (triangle, "lower")]
    if tier == FEW:
        kernels = kernels[:1]
    names = [f for _, f in kernels]
    script = textwrap.dedent(
        f"""
        import warnings
        warnings.simplefilter("error")  # Numba warns when it cannot cache
        import numpy as np, polykrnl as pk
        from polykrnl.inputs import make_inputs
        for path, func in {[(str(p), f) for p, f in kernels]!r}:
            fn = pk.load(path)[func]
            k = pk.schedule(fn).to_numba()
            args = make_inputs(fn, {{}}, seed=0, size=8)
            k(**args)
            stats = k.dispatcher.stats
            print(func, sum(stats.cache_hits.values()), sum(stats.cache_misses.values()))
        """
    )
    monkeypatch.setenv("POLYKRNL_CACHE_DIR", str(tmp_path))
    first = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(first):
        exec(compile(script, "<first run>", "exec"), {})
    env = {**__import__("os").environ, "POLYKRNL_CACHE_DIR": str(tmp_path)}
    second = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert first.getvalue().splitlines() == [f"{f} 0 1" for f in names]  # compiled, saved
    assert second.splitlines() == [f"{f} 1 0" for f in names]  # loaded from the cache
    assert len(list((tmp_path / "numba").glob("_polykrnl_numba_*.py"))) == len(kernels)


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_cli_run_target_numba_verifies() -> None:
    code, out, err = _cli(
        "run", str(ROOT / "corpus" / "gemm.mlir"), "--func", "gemm_tiled", "--target", "numba",
        "--verify",
    )  # fmt: skip
    assert code == 0, err
    assert "Numba kernel vs reference interpreter" in out
    assert "Numba compilation" in out
    assert "verify: ok, exactly equal" in out


def test_cli_run_target_numba_refusal_is_located() -> None:
    code, _out, err = _cli(
        "run", str(ROOT / "corpus" / "memory_ops.mlir"), "--func", "memset_memcpy",
        "--target", "numba",
    )  # fmt: skip
    assert code == 2
    assert "memory_ops.mlir:" in err and "krnl.memcpy" in err and "Traceback" not in err


# A child process importing Numba. Fast tier: the NumPy module run standalone
# (test_cli_numpy.py) and the Numba module's text (test_hostile_text.py).
@pytest.mark.slow
def test_cli_emit_numba_module_runs_standalone(tmp_path: Path) -> None:
    """The emitted module imports only numpy and numba, and computes what the reference
    computes (two functions in one module)."""
    path = ROOT / "corpus" / "parallel_forms.mlir"
    out_file = tmp_path / "kernels.py"
    code, _out, err = _cli("emit", "numba", str(path), "-o", str(out_file))
    assert code == 0, err
    text = out_file.read_text()
    assert "import polykrnl" not in text
    assert "from numba import njit, prange" in text
    script = textwrap.dedent(
        f"""
        import sys, numpy as np
        sys.modules["polykrnl"] = None  # the module must not need polykrnl
        sys.path.insert(0, {str(tmp_path)!r})
        import kernels
        x = np.random.default_rng(3).uniform(-1, 1, (64, 32)).astype(np.float32)
        y = np.zeros_like(x)
        kernels.kernel_relu(x, y)
        t = np.zeros((4, 6, 8), np.int32)
        kernels.kernel_fill_3d(t)
        np.save({str(tmp_path / "y.npy")!r}, y)
        np.save({str(tmp_path / "t.npy")!r}, t)
        """
    )
    subprocess.run(
        [sys.executable, "-c", script],
        check=True,
        env={**__import__("os").environ, "NUMBA_CACHE_DIR": str(tmp_path / "nc")},
    )
    fn_relu, fn_fill = load(path)["relu"], load(path)["fill_3d"]
    x = np.random.default_rng(3).uniform(-1, 1, (64, 32)).astype(np.float32)
    y = np.zeros_like(x)
    pk.run_reference(fn_relu, x=x, y=y)
    t = np.zeros((4, 6, 8), np.int32)
    pk.run_reference(fn_fill, t=t)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), y)
    np.testing.assert_array_equal(np.load(tmp_path / "t.npy"), t)


SHIFT_LEFT = """
func.func @shift(%a: memref<8xf64>, %b: memref<8xf64>) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 8) {
    %m = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %v = krnl.load %a[%m] : memref<8xf64>
    krnl.store %v, %b[%i] : memref<8xf64>
  }
  return
}
"""


def test_a_negative_index_is_out_of_bounds_not_read_from_the_end() -> None:
    """MLIR has no negative indexing: a[-1] is outside a, as in the interpreter. Numba's
    signed indexing would read a[7] (NumPy's rule); indices are unsigned, so the
    bounds check sees it."""
    fn = pk.parse(SHIFT_LEFT)["shift"]
    a, b = np.arange(8.0), np.zeros(8)
    with pytest.raises(pk.PolykrnlError):
        pk.run_reference(fn, a=a.copy(), b=b.copy())
    kernel = pk.schedule(fn).to_numba(cache=False)
    assert "np.uint64(" in kernel.source
    with pytest.raises(IndexError):
        kernel(a=a, b=b)
    assert b[0] == 0.0  # a[7] was not copied


def test_the_point_loops_of_a_tiled_nest_index_unsigned() -> None:
    """The innermost loop's variable is subscripted through np.uint64 (what lets LLVM
    vectorize a point loop that starts at its tile's origin); in a prange, a subscript the
    innermost loop does not change is signed once the guard proves the accesses in
    bounds (targets/numba/subscripts.py), unsigned otherwise."""
    fn = pk.parse(PARALLEL_TILES)["scale"]
    proven = pk.schedule(fn).to_numba(cache=False)
    body = proven.source.split("def kernel_scale")[1]
    assert "prange(" in body and not proven.boundscheck
    assert "x[il, np.uint64(j)]" in body
    unproven = pk.schedule(fn).to_numba(cache=False, check_bounds=False)
    assert "x[np.uint64(il), np.uint64(j)]" in unproven.source.split("def kernel_scale")[1]


# A parallel loop inside a sequential one, with a body of no loop (jacobi-1d's shape).
SWEEPS = """
func.func @sweeps(%a: memref<?xf64>, %b: memref<?xf64>, %n: index, %steps: index) {
  %half = arith.constant 0.5 : f64
  %tt, %ii = krnl.define_loops 2
  krnl.parallel(%ii) : !krnl.loop
  krnl.iterate(%tt) with (%tt -> %t = 0 to %steps) {
    krnl.iterate(%ii) with (%ii -> %i = 1 to %n) {
      %im = arith.subi %i, %c1 : index
      %l = krnl.load %a[%im] : memref<?xf64>
      %m = krnl.load %a[%i] : memref<?xf64>
      %s = arith.addf %l, %m : f64
      %v = arith.mulf %s, %half : f64
      krnl.store %v, %b[%i] : memref<?xf64>
    }
  }
  return
}
"""


@pytest.mark.parametrize("threshold", [None, 1])
def test_a_short_parallel_loop_inside_a_loop_runs_sequentially(
    threshold: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each iteration of the outer loop launches the prange again: below PRANGE_MIN_TRIPS
    iterations the loop runs sequentially (a launch costs more than it saves), from there
    on threads; both give the reference's results."""
    from polykrnl.codegen import isl_ast

    if threshold is not None:
        monkeypatch.setattr(isl_ast, "PRANGE_MIN_TRIPS", threshold)
    text = SWEEPS.replace("%half = ", "%c1 = arith.constant 1 : index\n  %half = ")
    fn = pk.parse(text)["sweeps"]
    kernel = pk.schedule(fn).to_numba()
    limit = threshold or isl_ast.PRANGE_MIN_TRIPS
    assert kernel.parallel_loops == {"i": "prange"}
    assert f">= {limit}:" in kernel.source and "prange(1, n)" in kernel.source
    assert "else:\n            for i_1 in range(1, n):" in kernel.source, kernel.source
    a = np.random.default_rng(1).uniform(-1, 1, 40)
    got, expected = np.zeros(40), np.zeros(40)
    kernel(a=a, b=got, n=40, steps=3)
    pk.run_reference(fn, a=a, b=expected, n=40, steps=3)
    np.testing.assert_array_equal(got, expected)


# A parallel loop over a dynamic batch of rows, at the top of the kernel.
SCALE_ROWS = """
func.func @scale_rows(%x: memref<?x64xf32>, %y: memref<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %two = arith.constant 2.0 : f32
  %n = memref.dim %x, %c0 : memref<?x64xf32>
  %bb, %ii = krnl.define_loops 2
  krnl.parallel %bb : !krnl.loop
  krnl.iterate(%bb, %ii) with (%bb -> %b = 0 to %n, %ii -> %i = 0 to 64) {
    %v = krnl.load %x[%b, %i] : memref<?x64xf32>
    %w = arith.mulf %v, %two : f32
    krnl.store %w, %y[%b, %i] : memref<?x64xf32>
  }
  return
}
"""


def test_a_top_level_prange_with_little_work_runs_sequentially() -> None:
    """A kernel called on a batch of one row launched the thread pool for one iteration
    (tens of times slower than the plain loop): the prange now runs only when its trips
    times the work of an iteration (64 elements here) reach PRANGE_MIN_TRIPS, else the
    same loop runs sequentially. Both sides give the reference's results."""
    from polykrnl.codegen import prange_work

    fn = pk.parse(SCALE_ROWS)["scale_rows"]
    kernel = pk.schedule(fn).to_numba()
    assert kernel.parallel_loops == {"b": "prange"}
    guard = f"if x_d0 * 64 >= {prange_work.PRANGE_MIN_TRIPS}:"
    assert guard in kernel.source, kernel.source
    after = kernel.source.split(guard)[1]
    assert "for b in prange(x_d0):" in after.split("else:")[0]
    assert "for b_1 in range(x_d0):" in after.split("else:")[1]  # its own names
    rows_at_threshold = prange_work.PRANGE_MIN_TRIPS // 64
    for batch in (1, rows_at_threshold - 1, rows_at_threshold):
        threads = batch * 64 >= prange_work.PRANGE_MIN_TRIPS  # which branch the guard takes
        assert threads == (batch == rows_at_threshold)
        x = np.random.default_rng(batch).uniform(-1, 1, (batch, 64)).astype(np.float32)
        got, expected = np.zeros_like(x), np.zeros_like(x)
        kernel(x=x, y=got)
        pk.run_reference(fn, x=x, y=expected)
        np.testing.assert_array_equal(got, expected)


def test_a_prange_whose_inner_bounds_it_computes_keeps_no_guard() -> None:
    """The work of an iteration is estimated before the loop: an inner loop bounded by
    the parallel loop's own value (a triangle) has no such estimate, and the prange
    stays unguarded (as a cyclic prange)."""
    from polykrnl.codegen.prange_work import iteration_work, stored_names

    body = ast.parse("for j in range(i + 1):\n    y[j] = 0\n").body
    assert iteration_work(body, stored_names(body) | {"i"}) is None
    body = ast.parse("for j in range(n):\n    for k in range(2, 6):\n        y[j] = k\n").body
    work = iteration_work(body, stored_names(body) | {"i"})
    assert work is not None and ast.unparse(work) == "max(0, n) * 4"


LANE_FOLD = """
func.func @f(%x: memref<5x8x{T}>, %a: memref<5x{T}>) -> memref<5x{T}> {{
  %out = memref.alloc() : memref<5x{T}>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 5) {{
    %c0 = arith.constant 0 : index
    %v = vector.load %x[%i, %c0] : memref<5x8x{T}>, vector<8x{T}>
    %acc = krnl.load %a[%i] : memref<5x{T}>
    %r = vector.reduction <{kind}>, %v{acc} : vector<8x{T}> into {T}
    krnl.store %r, %out[%i] : memref<5x{T}>
  }}
  return %out : memref<5x{T}>
}}
"""


@pytest.mark.parametrize(
    ("kind", "element"),
    [
        ("add", "f32"),
        ("mul", "f32"),
        ("maxnumf", "f32"),
        ("minimumf", "f32"),
        ("add", "i32"),
        ("xor", "i32"),
        ("maxsi", "i32"),
    ],
)
@pytest.mark.parametrize("with_acc", [False, True])
def test_vector_reduction_is_a_lane_loop(kind: str, element: str, with_acc: bool) -> None:
    """vector.reduction in compiled code: a loop over the lanes on scalars, combined first
    to last in the lanes' type, bit for bit the interpreter's (magnitudes apart by 2^24
    make any other order of the float sum differ; integers wrap)."""
    text = LANE_FOLD.format(T=element, kind=kind, acc=", %acc" if with_acc else "")
    fn = pk.parse(text)["f"]
    rng = np.random.default_rng(4)
    if element == "f32":
        x = (rng.standard_normal((5, 8)) * 2.0 ** rng.integers(-12, 12, (5, 8))).astype(np.float32)
        x[0, 3], x[1, 5] = np.nan, -0.0
        a = rng.standard_normal(5).astype(np.float32)
    else:
        x = rng.integers(-(2**31), 2**31, (5, 8), dtype=np.int32)
        a = rng.integers(-(2**31), 2**31, 5, dtype=np.int32)
    ref = pk.run_reference(fn, x=x, a=a)
    kernel = pk.compile(fn, target="numba")
    assert "for lane in range(1, 8):" in kernel.source, kernel.source
    assert _same(kernel(x=x, a=a), ref)
