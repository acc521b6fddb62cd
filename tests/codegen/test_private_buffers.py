"""Scratch buffers private to the iterations of a loop nest: one copy per iteration.

An alloca inside a loop body is a new buffer per iteration of the loops around it
(MLIR: its lifetime is one execution of the region). onnx-mlir writes the scalar
accumulator of a reduction it does not vectorize (Gemm without krnl.matmul, pooling) as
one alloca before the loops, reset first thing in the body: no value flows through it
between iterations, so it is private too (poly/privatize.py decides it with isl's
dataflow). The polyhedral model indexes each access by the iteration (ArrayInfo.site),
so legality sees no dependence between iterations through the buffer: the loops are
parallel, a recipe may permute or tile them, and array code runs them as axes of one
array of copies. A cell that does carry a value between iterations (a running sum, a read
before the reset, a read of another iteration's element) keeps its dependences. The
reference interpreter is the oracle throughout.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType

import polykrnl as pk

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import onnx_shapes as shapes

Array = np.ndarray[Any, Any]

ALLOCA = "%acc = memref.alloca() : memref<f32>"

# As onnx-mlir writes them: the accumulator allocated before the loops.
PROGRAMS = {
    "gemm_loops": shapes.gemm_loops_text(6, 10, 9),
    "maxpool2": shapes.maxpool2_text(2, 3, 6, 8),
    "maxpool3": shapes.maxpool3_text(2, 3, 7, 9),
}
RESET = "krnl.store %zero, %acc[] : memref<f32>"


def _function(text: str) -> pk.Function:
    return pk.parse(text).functions[0]


def _inside(text: str) -> str:
    """The same program with its accumulator allocated in the body, just before its reset
    (the first op that uses it)."""
    lines = text.splitlines()
    at = next(n for n, line in enumerate(lines) if ALLOCA in line)
    del lines[at]
    reset = next(n for n, line in enumerate(lines) if "%acc[]" in line)
    lines.insert(reset, "    " + ALLOCA)
    return "\n".join(lines)


def _reset_once(text: str) -> str:
    """gemm_loops with its accumulator reset once, before the loops: a running sum through
    the (i, j) nest, which carries a value from each iteration to the next."""
    assert ALLOCA in text and RESET in text
    text = text.replace("    " + RESET + "\n", "", 1)
    return text.replace("  " + ALLOCA + "\n", f"  {ALLOCA}\n  {RESET}\n", 1)


def _inputs(fn: pk.Function, seed: int) -> list[Array]:
    """Random arrays, with NaNs and zeros of both signs among them (maxnumf ignores a NaN
    and must pick between +0.0 and -0.0 as the interpreter does)."""
    rng = np.random.default_rng(seed)
    out = []
    for arg in fn.arguments:
        assert isinstance(arg.type, MemRefType)
        x = rng.standard_normal(tuple(arg.type.get_shape())).astype(np.float32)
        flat = x.reshape(-1)
        picks = rng.choice(flat.size, size=(3, max(1, flat.size // 8)), replace=False)
        flat[picks[0]] = np.nan
        flat[picks[1]] = 0.0
        flat[picks[2]] = -0.0
        out.append(x)
    return out


def _reference(fn: pk.Function, args: list[Array], schedule: Any = None) -> Array:
    named = {a.name: x.copy() for a, x in zip(fn.arguments, args, strict=True)}
    return np.asarray(pk.run_reference(fn, schedule, **named))


def _run(kernel: Any, args: list[Array]) -> Array:
    names = [a.name for a in kernel.schedule.program.function.arguments]
    return np.asarray(kernel(**{n: x.copy() for n, x in zip(names, args, strict=True)}))


def _bits(x: Array) -> Array:
    return np.asarray(x).view(np.uint32)


def _same_but_zero_signs(got: Array, want: Array) -> None:
    """Bit for bit (NaNs included), except that a zero may have the other sign: max of
    +0.0 and -0.0 is the documented exception of codegen/numpy_ops (the interpreter's
    scalar np.fmax and NumPy's array loops pick differently)."""
    zeros = (got == 0) & (want == 0)
    np.testing.assert_array_equal(np.where(zeros, 0, _bits(got)), np.where(zeros, 0, _bits(want)))


def _python_loops(source: str) -> list[str]:
    return [line.strip() for line in source.splitlines() if line.strip().startswith("for ")]


@pytest.mark.parametrize("reassociate", [False, True])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_private_accumulator_vectorizes_and_equals_the_interpreter(
    name: str, reassociate: bool
) -> None:
    fn = _function(PROGRAMS[name])
    kernel = pk.schedule(fn).to_numpy(reassociate=reassociate)
    src = kernel.source
    assert "stays a loop" not in src, src
    # The output loops are array axes: what stays a Python loop is the reduction's
    # (gemm's k with reassociate=False, the pooling window), moved outside.
    loops = _python_loops(src)
    allowed = {"gemm_loops": set() if reassociate else {"k"}}.get(name, {"r", "s"})
    assert {line.split()[1] for line in loops} == allowed, src
    for seed in (0, 1):
        args = _inputs(fn, seed)
        if name == "gemm_loops":
            args = [np.nan_to_num(a, nan=0.5) for a in args]
        want = _reference(fn, args)
        got = _run(kernel, args)
        if name == "gemm_loops" and reassociate:
            assert " @ " in src
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        elif name == "gemm_loops":
            np.testing.assert_array_equal(_bits(got), _bits(want))
        else:
            # Exact: the window loops keep their order (maxnumf as np.fmax, the
            # interpreter's function: a NaN is ignored the same way).
            _same_but_zero_signs(got, want)


def test_pooling_of_signed_zeros_differs_at_most_in_the_sign() -> None:
    fn = _function(PROGRAMS["maxpool3"])
    rng = np.random.default_rng(8)
    x = np.where(rng.random((2, 3, 7, 9)) < 0.5, np.float32(0.0), np.float32(-0.0))
    x[0, 0, 0, 0] = np.nan
    want = _reference(fn, [x])
    got = _run(pk.schedule(fn).to_numpy(), [x])
    _same_but_zero_signs(got, want)


def test_gemm_reassociate_false_keeps_k_outside_in_order() -> None:
    src = pk.schedule(_function(PROGRAMS["gemm_loops"])).to_numpy(reassociate=False).source
    assert " @ " not in src and "einsum" not in src
    assert "k sequential, moved outside (reassociate=False keeps the order" in src


def test_pooling_window_reads_strided_slices() -> None:
    src = pk.schedule(_function(PROGRAMS["maxpool3"])).to_numpy().source
    assert "np.arange" not in src, src  # no integer-array gather of the window
    assert ":2]" in src and "np.fmax(" in src, src
    # The reason names the reduction this is (a max), not np.sum.
    assert "a window read (x) would be gathered whole for np.fmax.reduce)" in src, src


def test_inside_allocation_leaves_the_output_loops_parallel() -> None:
    report = pk.schedule(_function(PROGRAMS["gemm_loops"])).check()
    status = {lv.loop: lv.status for lv in report.loops}
    assert status["i"] == "parallel" and status["j"] == "parallel"
    assert status["k"] == "reduction"


def test_recipe_may_permute_tile_and_parallelize_loops_around_the_scratch_cell() -> None:
    fn = _function(PROGRAMS["gemm_loops"])
    args = [np.nan_to_num(a, nan=0.5) for a in _inputs(fn, 3)]
    want = _reference(fn, args)
    sched = pk.schedule(fn).block("i", 4).block("j", 4).reorder(["i_t", "j_t", "i", "j"])
    sched = sched.parallel("i_t").permute(["i_t", "j_t"], [1, 0])
    assert sched.check().verdict == "legal"
    for reassociate in (False, True):
        got = _run(sched.to_numpy(reassociate=reassociate), args)
        if reassociate:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(_bits(got), _bits(want))
    # The interpreter in the schedule's order agrees too.
    ordered = _reference(fn, args, sched)
    np.testing.assert_array_equal(_bits(ordered), _bits(want))


def _tiled_recipe(text: str) -> str:
    """gemm_loops with a Krnl recipe: i and j blocked by 4, the tile loops permuted
    outside (jb first) and jb marked parallel."""
    recipe = (
        "  %ib, %il = krnl.block %l#0 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)\n"
        "  %jb, %jl = krnl.block %l#1 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)\n"
        "  krnl.permute(%ib, %il, %jb, %jl) [1, 2, 0, 3] : "
        "!krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop\n"
        "  krnl.parallel(%jb) : !krnl.loop\n"
        "  krnl.iterate(%ib, %il, %jb, %jl) with"
    )
    text = text.replace("  krnl.iterate(%l#0, %l#1) with", recipe, 1)
    return text.replace(
        "krnl.get_induction_var_value(%l#0, %l#1)", "krnl.get_induction_var_value(%il, %jl)"
    )


def test_krnl_recipe_tiling_permuting_and_parallel_is_accepted() -> None:
    fn = _function(_tiled_recipe(PROGRAMS["gemm_loops"]))
    sched = pk.schedule(fn)  # refused if the scratch cell carried a dependence
    assert [st.op for st in sched.steps][-2:] == ["permute", "parallel"]
    assert sched.check().verdict == "legal"
    args = [np.nan_to_num(a, nan=0.5) for a in _inputs(fn, 4)]
    want = _reference(fn, args)
    got = _run(sched.to_numpy(reassociate=False), args)
    np.testing.assert_array_equal(_bits(got), _bits(want))
    # The same recipe over a cell that carries a running sum is refused.
    with pytest.raises(pk.IllegalTransformError):
        pk.schedule(_function(_tiled_recipe(_reset_once(PROGRAMS["gemm_loops"]))))


def test_a_running_sum_through_the_cell_keeps_its_dependences() -> None:
    fn = _function(_reset_once(PROGRAMS["gemm_loops"]))
    assert pk.poly_program(fn).arrays["acc"].site == ()
    report = pk.schedule(fn).check()
    status = {lv.loop: lv.status for lv in report.loops}
    assert status["i"] != "parallel" and status["j"] != "parallel", report
    with pytest.raises(pk.IllegalTransformError):
        pk.schedule(fn).parallel("j")
    kernel = pk.schedule(fn).to_numpy(reassociate=False)
    # It stays a loop, and says why.
    assert "# loop i stays a loop:" in kernel.source
    args = [np.nan_to_num(a, nan=0.5) for a in _inputs(fn, 5)]
    want = _reference(fn, args)
    got = _run(kernel, args)
    np.testing.assert_array_equal(_bits(got), _bits(want))


# A cell reused across iterations on purpose: a running sum over the (i, j) nest.
RUNNING_SUM = """
func.func @running(%x: memref<4x5xf32>) -> memref<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %out = memref.alloc() : memref<4x5xf32>
  %acc = memref.alloca() : memref<f32>
  krnl.store %zero, %acc[] : memref<f32>
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 4, %l#1 -> %j = 0 to 5) {
    %w:2 = krnl.get_induction_var_value(%l#0, %l#1) : (!krnl.loop, !krnl.loop) -> (index, index)
    %v = krnl.load %x[%w#0, %w#1] : memref<4x5xf32>
    %s = krnl.load %acc[] : memref<f32>
    %t = arith.addf %s, %v : f32
    krnl.store %t, %acc[] : memref<f32>
    krnl.store %t, %out[%w#0, %w#1] : memref<4x5xf32>
  }
  return %out : memref<4x5xf32>
}
"""


def test_a_cell_reused_across_iterations_refuses_reordering() -> None:
    fn = _function(RUNNING_SUM)
    with pytest.raises(pk.IllegalTransformError):
        pk.schedule(fn).permute(["i", "j"], [1, 0])
    x = np.random.default_rng(6).standard_normal((4, 5)).astype(np.float32)
    want = _reference(fn, [x])
    kernel = pk.schedule(fn).to_numpy()
    got = _run(kernel, [x])
    np.testing.assert_array_equal(_bits(got), _bits(want))
    for line in _python_loops(kernel.source):
        assert line.split()[1] in ("i", "j")
    assert "stays a loop" in kernel.source or "stays scalar" in kernel.source


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_numba_keeps_the_private_copy_in_a_local(name: str) -> None:
    pytest.importorskip("numba")
    fn = _function(PROGRAMS[name])
    kernel = pk.schedule(fn).to_numba()
    assert "_acc_at" not in kernel.source, kernel.source
    # A rank-0 accumulator only loaded and stored is a scalar: no allocation per iteration.
    code = "\n".join(x for x in kernel.source.splitlines() if not x.lstrip().startswith("#"))
    assert "acc[" not in code and "np.full((), " not in code, kernel.source
    # No zeros: compiled maxnumf orders -0.0 < +0.0 on a tie, where the interpreter takes
    # NumPy's pick (a documented difference, tests/codegen/test_scalar_ops.py); NaNs stay.
    args = [np.where(a == 0, np.float32(0.25), a) for a in _inputs(fn, 7)]
    if name == "gemm_loops":
        args = [np.nan_to_num(a, nan=0.5) for a in args]
    want = _reference(fn, args)
    got = _run(kernel, args)
    np.testing.assert_array_equal(_bits(got), _bits(want))


def test_local_buffer_check_sees_the_schedule() -> None:
    """The isl check behind Numba's locals: as written, and tiled and permuted, every
    iteration's allocation and uses run together; a cell that carries a value between
    iterations (one cell, no copies) is never a local of this kind."""
    from polykrnl.codegen.private_buffers import local_buffers

    fn = _function(PROGRAMS["gemm_loops"])
    sched = pk.schedule(fn)
    assert len(local_buffers(sched)) == 1
    tiled = sched.block("i", 2).block("j", 4).reorder(["i_t", "j_t", "i", "j"])
    assert len(local_buffers(tiled.permute(["i_t", "j_t"], [1, 0]))) == 1
    assert local_buffers(pk.schedule(_function(_reset_once(PROGRAMS["gemm_loops"])))) == ()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_allocation_before_the_loops_is_the_allocation_in_the_body(name: str) -> None:
    """onnx-mlir's form (alloca before the loops, reset first in the body) and the alloca
    in the body are one program: the same model of the cell, the same kernels."""
    outside, inside = _function(PROGRAMS[name]), _function(_inside(PROGRAMS[name]))
    assert ALLOCA not in PROGRAMS[name].split("krnl.define_loops")[1]
    sites = [pk.poly_program(fn).arrays["acc"].site for fn in (outside, inside)]
    assert sites[0] == sites[1] and len(sites[0]) == (2 if name == "gemm_loops" else 4)
    for reassociate in (False, True):
        a = pk.schedule(outside).to_numpy(reassociate=reassociate).source
        assert a == pk.schedule(inside).to_numpy(reassociate=reassociate).source


# The cell read before the body resets it: each iteration reads the previous one's value
# (the first reads what the cell held before the loops). Every use is in the body and
# the first op that touches it is directly there, so only the dataflow tells.
READ_FIRST = """
func.func @previous(%x: memref<4x5xf32>) -> memref<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %out = memref.alloc() : memref<4x5xf32>
  %acc = memref.alloca() : memref<f32>
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 4, %l#1 -> %j = 0 to 5) {
    %w:2 = krnl.get_induction_var_value(%l#0, %l#1) : (!krnl.loop, !krnl.loop) -> (index, index)
    %p = krnl.load %acc[] : memref<f32>
    krnl.store %p, %out[%w#0, %w#1] : memref<4x5xf32>
    %v = krnl.load %x[%w#0, %w#1] : memref<4x5xf32>
    krnl.store %v, %acc[] : memref<f32>
  }
  return %out : memref<4x5xf32>
}
"""

# Every read has a write before it, but iteration (i, j > 0) reads the element (i, 0)
# wrote: a value flows between iterations of j.
ROW_START = """
func.func @row_start(%x: memref<4x5xf32>) -> memref<4x5xf32> {
  %c0 = arith.constant 0 : index
  %out = memref.alloc() : memref<4x5xf32>
  %acc = memref.alloca() : memref<5xf32>
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 4, %l#1 -> %j = 0 to 5) {
    %w:2 = krnl.get_induction_var_value(%l#0, %l#1) : (!krnl.loop, !krnl.loop) -> (index, index)
    %v = krnl.load %x[%w#0, %w#1] : memref<4x5xf32>
    krnl.store %v, %acc[%w#1] : memref<5xf32>
    %f = krnl.load %acc[%c0] : memref<5xf32>
    %s = arith.addf %f, %v : f32
    krnl.store %s, %out[%w#0, %w#1] : memref<4x5xf32>
  }
  return %out : memref<4x5xf32>
}
"""

# Two elements written one store at a time, then read: private, though no single first
# store covers the buffer (a syntactic rule would miss it; the dataflow does not).
PAIR = """
func.func @pair(%x: memref<4x5xf32>) -> memref<4x5xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %out = memref.alloc() : memref<4x5xf32>
  %t = memref.alloca() : memref<2xf32>
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 4, %l#1 -> %j = 0 to 5) {
    %w:2 = krnl.get_induction_var_value(%l#0, %l#1) : (!krnl.loop, !krnl.loop) -> (index, index)
    %v = krnl.load %x[%w#0, %w#1] : memref<4x5xf32>
    krnl.store %v, %t[%c0] : memref<2xf32>
    %d = arith.mulf %v, %v : f32
    krnl.store %d, %t[%c1] : memref<2xf32>
    %a = krnl.load %t[%c0] : memref<2xf32>
    %b = krnl.load %t[%c1] : memref<2xf32>
    %s = arith.subf %b, %a : f32
    krnl.store %s, %out[%w#0, %w#1] : memref<4x5xf32>
  }
  return %out : memref<4x5xf32>
}
"""

# Reset first in the body, but read after the loops: the last iteration's value escapes.
READ_AFTER = """
func.func @last(%x: memref<4x5xf32>) -> memref<4x5xf32> {
  %c0 = arith.constant 0 : index
  %out = memref.alloc() : memref<4x5xf32>
  %acc = memref.alloca() : memref<f32>
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 4, %l#1 -> %j = 0 to 5) {
    %w:2 = krnl.get_induction_var_value(%l#0, %l#1) : (!krnl.loop, !krnl.loop) -> (index, index)
    %v = krnl.load %x[%w#0, %w#1] : memref<4x5xf32>
    krnl.store %v, %acc[] : memref<f32>
    %a = krnl.load %acc[] : memref<f32>
    %d = arith.addf %a, %a : f32
    krnl.store %d, %out[%w#0, %w#1] : memref<4x5xf32>
  }
  %e = krnl.load %acc[] : memref<f32>
  krnl.store %e, %out[%c0, %c0] : memref<4x5xf32>
  return %out : memref<4x5xf32>
}
"""

CARRIED = {
    "last": READ_AFTER,
    "previous": READ_FIRST,
    "row_start": ROW_START,
    "running": RUNNING_SUM,
}


@pytest.mark.parametrize("name", sorted(CARRIED))
def test_a_cell_whose_value_flows_between_iterations_stays_shared(name: str) -> None:
    fn = _function(CARRIED[name])
    program = pk.poly_program(fn)
    cell = next(a for a in program.arrays.values() if a.shape in ((), (5,)))
    assert cell.site == ()
    report = pk.schedule(fn).check()
    assert {lv.loop: lv.status for lv in report.loops}["j"] != "parallel", report
    with pytest.raises(pk.IllegalTransformError):
        pk.schedule(fn).parallel("j")
    x = np.random.default_rng(9).standard_normal((4, 5)).astype(np.float32)
    want = _reference(fn, [x])
    for reassociate in (False, True):
        kernel = pk.schedule(fn).to_numpy(reassociate=reassociate)
        np.testing.assert_array_equal(_bits(_run(kernel, [x])), _bits(want))
        # row_start's j splits at 0 (the flow starts there); the others keep j in
        # Python, and say why.
        loops = _python_loops(kernel.source)
        assert any(line.startswith("for j ") for line in loops) == (name != "row_start")
        if name == "row_start":
            assert "# loops j split at j = 0" in kernel.source, kernel.source
        else:
            assert "# loop j stays" in kernel.source, kernel.source


def test_row_start_refuses_the_interchange() -> None:
    # (i + 1, 0) overwrites the element that (i, j > 0) reads: j outside would break it.
    with pytest.raises(pk.IllegalTransformError):
        pk.schedule(_function(ROW_START)).permute(["i", "j"], [1, 0])


def test_cells_written_element_by_element_are_private() -> None:
    fn = _function(PAIR)
    assert pk.poly_program(fn).arrays["t"].site == ("i", "j")
    sched = pk.schedule(fn).permute(["i", "j"], [1, 0]).parallel("j")
    assert sched.check().verdict == "legal"
    x = np.random.default_rng(10).standard_normal((4, 5)).astype(np.float32)
    want = _reference(fn, [x])
    for s in (pk.schedule(fn), sched):
        kernel = s.to_numpy(reassociate=False)
        assert "stays" not in kernel.source and _python_loops(kernel.source) == []
        np.testing.assert_array_equal(_bits(_run(kernel, [x])), _bits(want))


@pytest.mark.slow
@pytest.mark.parametrize("name", [*sorted(CARRIED), "pair"])
def test_numba_of_shared_and_private_cells_equals_the_interpreter(name: str) -> None:
    pytest.importorskip("numba")
    fn = _function(CARRIED.get(name, PAIR))
    x = np.random.default_rng(11).standard_normal((4, 5)).astype(np.float32)
    want = _reference(fn, [x])
    got = _run(pk.schedule(fn).to_numba(), [x])
    np.testing.assert_array_equal(_bits(got), _bits(want))
