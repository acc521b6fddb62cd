"""The MLIR target: standard MLIR that mlir-opt-19 accepts, run natively, equal to the
reference interpreter (the oracle) on random inputs, or refused naming what it lacks."""

from __future__ import annotations

import copy
import io
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.cli import main
from polykrnl.inputs import make_inputs
from polykrnl.targets.mlir import MLIR, MlirKernel, missing_tools, native, to_mlir

pytestmark = pytest.mark.skipif(
    bool(missing_tools()),
    reason=f"the MLIR target needs {', '.join(missing_tools())} ({native.INSTALL_HINT})",
)

ROOT = Path(__file__).resolve().parent.parent.parent.parent
FILES = sorted([*ROOT.glob("tests/corpus/*.mlir"), *ROOT.glob("benchmarks/polybench/*.mlir")])
# One of each kind: plain nests, tiles (min bounds), a triangle, scf.parallel on OpenMP,
# a returned allocation through memref.reshape, a memref.alloca freed with memref.dealloc,
# krnl's scalar functions through math, a stencil with a skewed order of statements.
SUBSET = [
    ("benchmarks/polybench/gemm.mlir", "gemm_tiled"),
    ("benchmarks/polybench/syrk.mlir", "syrk"),
    ("benchmarks/polybench/jacobi_1d.mlir", "jacobi_1d"),
    ("tests/corpus/parallel_forms.mlir", "scale_tiled"),
    ("tests/corpus/parallel_threads.mlir", "tril_exp"),
    ("tests/corpus/dynamic_add.mlir", "dynamic_add_flat"),
    ("tests/corpus/scalar_math.mlir", "inverse_trig"),
    ("tests/corpus/tile_3d_permute.mlir", None),
]
# How a refusal names what is missing: the op, in backquotes.
REFUSAL = re.compile(r"`[a-z_]+\.[a-z_.]+`")


def _functions(path: Path) -> list[pk.Function]:
    try:
        return list(pk.load(str(path)).functions)
    except pk.PolykrnlError:
        return []


def _same(want: Any, got: Any, exact: bool) -> bool:
    want, got = np.asarray(want), np.asarray(got)
    if want.shape != got.shape or want.dtype != got.dtype:
        return False
    if exact or want.dtype.kind not in "fc":
        return bool(np.array_equal(want, got, equal_nan=want.dtype.kind in "fc"))
    return bool(np.allclose(want, got, rtol=1e-6, atol=1e-9, equal_nan=True))


def _mlir_opt_accepts(source: str) -> None:
    done = subprocess.run(
        ["mlir-opt-19", "--verify-diagnostics=false", "-"],
        input=source,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _differential(fn: pk.Function) -> str:
    """ "ok" when the MLIR kernel gives the reference's outputs, "refused" when it names the
    op it lacks, "skipped" when the NumPy target refuses the function too."""
    try:
        sched = pk.schedule(fn)
        sched.to_numpy()
    except pk.PolykrnlError:
        return "skipped"
    try:
        kernel = to_mlir(sched)
    except pk.UnsupportedError as e:
        assert e.location is not None and REFUSAL.search(e.message), e
        return "refused"
    _mlir_opt_accepts(kernel.source)
    inputs = make_inputs(fn, {}, seed=1, size=6)
    want_args, got_args = copy.deepcopy(inputs), copy.deepcopy(inputs)
    want = pk.run_reference(fn, **want_args)
    got = kernel(**got_args)
    for name, value in want_args.items():
        assert _same(value, got_args[name], kernel.exact), (fn.name, name)
    if want is not None:
        want_t = want if isinstance(want, tuple) else (want,)
        got_t = got if isinstance(got, tuple) else (got,)
        assert len(want_t) == len(got_t)
        for w, g in zip(want_t, got_t, strict=True):
            assert _same(w, g, kernel.exact), fn.name
    return "ok"


@pytest.mark.parametrize(("path", "name"), SUBSET, ids=[f"{Path(p).stem}:{n}" for p, n in SUBSET])
def test_representative_functions_run_as_the_reference(path: str, name: str | None) -> None:
    fns = [f for f in _functions(ROOT / path) if name is None or f.name == name]
    assert fns
    for fn in fns:
        assert _differential(fn) == "ok", fn.name


@pytest.mark.slow
def test_every_function_runs_as_the_reference_or_is_refused_by_name() -> None:
    counts = {"ok": 0, "refused": 0, "skipped": 0}
    for path in FILES:
        for fn in _functions(path):
            counts[_differential(fn)] += 1
    # At the time of writing: 94 run, 40 refused (iter_args, vector ops, krnl.global...).
    assert counts["ok"] >= 90, counts


def test_loops_follow_the_schedule_and_parallel_loops_are_scf_parallel() -> None:
    fn = pk.load(str(ROOT / "tests/corpus/parallel_forms.mlir"))["scale_tiled"]
    sched = pk.schedule(fn)
    kernel = sched.to_mlir()
    loops = re.findall(r"scf\.(for|parallel) \(?(%\w+)", kernel.source)
    marked = [x for x in sched.loop_names() if sched.loop(x).parallel]
    assert marked and kernel.parallel_loops == tuple(marked[:1])
    assert [f"%{x}" for x in sched.loop_names()] == [n for _k, n in loops]
    assert [k for k, n in loops if n == f"%{marked[0]}"] == ["parallel"]
    sequential = sched.to_mlir(parallel=False)
    assert "scf.parallel" not in sequential.source and not sequential.parallel_loops
    assert "llvm.emit_c_interface" in kernel.source


def test_an_op_without_translation_is_refused_at_the_op() -> None:
    fn = pk.load(str(ROOT / "tests/corpus/simd_add_remainder.mlir"))["simd_add_1000"]
    with pytest.raises(pk.UnsupportedError, match=r"`vector\.load` has no MLIR-target translation"):
        pk.schedule(fn).to_mlir()
    with pytest.raises(pk.UnsupportedError) as e:
        pk.schedule(fn).to_mlir()
    assert e.value.location is not None and "vector.load" in e.value.location.line_text
    assert not any(op.name.startswith("vector.") for op in MLIR)


GEMM = ROOT / "benchmarks/polybench/gemm.mlir"


def _gemm_inputs(n: int, c_shape: tuple[int, int]) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    return {
        "NI": n,
        "NJ": n,
        "NK": n,
        "alpha": 1.5,
        "beta": 0.5,
        "C": rng.random(c_shape),
        "A": rng.random((n, n)),
        "B": rng.random((n, n)),
    }


def test_sizes_that_leave_an_array_are_refused_before_running() -> None:
    fn = pk.load(str(GEMM))["gemm_tiled"]
    kernel = pk.compile(fn, target="mlir")
    assert isinstance(kernel, MlirKernel)
    args = _gemm_inputs(9, (8, 9))
    before = args["C"].copy()
    with pytest.raises(pk.BoundsError, match="leaves C"):
        kernel(**args)
    np.testing.assert_array_equal(args["C"], before)


def test_non_contiguous_arrays_are_copied_and_written_back() -> None:
    fn = pk.load(str(GEMM))["gemm_tiled"]
    want = _gemm_inputs(7, (7, 7))
    got = copy.deepcopy(want)
    got["C"] = np.asfortranarray(got["C"])
    got["A"] = np.ascontiguousarray(got["A"].T).T  # a transposed view: strides not C's
    pk.run_reference(fn, **want)
    pk.schedule(fn).to_mlir()(**got)
    np.testing.assert_array_equal(got["C"], want["C"])


def test_missing_tools_are_named_with_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native.shutil, "which", lambda _name: None)
    with pytest.raises(pk.UnsupportedError, match="mlir-opt-19") as e:
        native.compile_library("module {}\n", parallel=False)
    assert "apt-get install mlir-19-tools clang-19" in (e.value.hint or "")
    assert shutil.which is not None


def test_cli_emit_and_run(tmp_path: Path) -> None:
    out_file = tmp_path / "gemm.mlir"
    out = io.StringIO()
    argv = ["emit", "mlir", str(GEMM), "--func", "gemm_tiled", "-o", str(out_file)]
    assert main(argv, out=out, err=io.StringIO()) == 0
    assert "wrote" in out.getvalue()
    _mlir_opt_accepts(out_file.read_text())
    out = io.StringIO()
    argv = ["run", str(GEMM), "--func", "gemm", "--target", "mlir", "--verify", "--size", "5"]
    assert main(argv, out=out, err=io.StringIO()) == 0, out.getvalue()
    assert "MLIR kernel vs reference interpreter" in out.getvalue()
    assert "exactly equal to the reference" in out.getvalue()


def _gemm_loops(parallel: bool) -> pk.Schedule:
    """gemm_loops as onnx-mlir writes it (its scalar accumulator allocated before the
    loops, private to each (i, j)), with i marked parallel or not."""
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import onnx_shapes

    sched = pk.schedule(pk.parse(onnx_shapes.gemm_loops_text(6, 10, 9)).functions[0])
    return sched.parallel("i") if parallel else sched


def test_a_private_scratch_cell_is_one_buffer_when_the_loops_run_in_order() -> None:
    sched = _gemm_loops(False)
    kernel = to_mlir(sched)
    # Allocated once before the loops, no scope per iteration.
    head = kernel.source.split("scf.for")[0]
    assert "memref.alloca" in head and "alloca_scope" not in kernel.source, kernel.source
    fn = sched.program.function
    inputs = make_inputs(fn, {}, seed=2, size=6)
    want = pk.run_reference(fn, **copy.deepcopy(inputs))
    got = kernel(**copy.deepcopy(inputs))
    assert _same(want, got, exact=True)


def test_a_private_scratch_cell_in_parallel_loops_is_refused_at_its_allocation() -> None:
    with pytest.raises(pk.UnsupportedError) as e:
        to_mlir(_gemm_loops(True))
    assert REFUSAL.search(e.value.message) and "`memref.alloca`" in e.value.message
    assert e.value.location is not None and "memref.alloca" in e.value.location.line_text
