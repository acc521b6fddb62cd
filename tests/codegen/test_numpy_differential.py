"""Generated NumPy kernels against the reference interpreter, on every corpus program.

The oracle is ``pk.run_reference`` (the interpreter, in the program's order).
Every function of the semantic corpus and of the recipe tests runs after its
Krnl recipe; every legality kernel runs in its original order and after each
legal step list of ``cases.py``. Results must be equal (bit for bit, NaN where
NaN): the scalar kernels compute each element with the same ops in the same
order as the interpreter. A program the generator refuses must be listed in
UNSUPPORTED with the reason, so nothing is skipped silently.
"""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.inputs import make_inputs
from tests.parsed import load

ROOT = Path(__file__).parent.parent
FILES = sorted(
    p
    for p in [*ROOT.glob("corpus/*.mlir"), *ROOT.glob("transforms/recipes/*.mlir")]
    if "syntax-only" not in p.read_text().splitlines()[0]
)
# Each file parsed once: the tests only read the programs (parsing is much of their time).
PROGRAMS = [(p, fn.name) for p in FILES for fn in load(p).functions]

# file stem:function -> why the NumPy generator refuses it (checked below: it must fail).
UNSUPPORTED: dict[str, str] = {}


def _legality_cases() -> list[dict[str, Any]]:
    path = ROOT / "transforms" / "legality" / "cases.py"
    spec = importlib.util.spec_from_file_location("legality_cases", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return [c for c in mod.CASES if c["legal"]]


LEGAL_CASES = _legality_cases()


def _same(x: Any, y: Any, exact: bool, tol: float = 0.0) -> bool:
    a, b = np.asarray(x), np.asarray(y)
    if a.dtype.kind not in "fc":
        return bool(np.array_equal(a, b))
    if exact:
        return bool(np.array_equal(a, b, equal_nan=True))
    # A reassociated sum of n terms of magnitude <= 1 (the inputs are uniform in
    # [-1, 1), sizes 8) is off by at most about n * n * eps: 64 eps, relative and
    # absolute, for the element type; more where the kernel amplifies errors (`tol`).
    tol = max(tol, 64 * float(np.finfo(a.dtype).eps))
    return bool(np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True))


def _sensitivity(fn: pk.Function, args: dict[str, Any], expected: dict[str, Any]) -> float:
    """How much the reference's results move when the float inputs move by 8 eps.

    A reassociated sum of 8 terms is the exact sum of terms perturbed by at most
    8 eps (relative): a kernel that amplifies input errors (lu divides by pivots
    computed from earlier sums) amplifies the reassociation's the same way. Four
    times what such an input perturbation does to the reference is the bound.
    """
    rng = np.random.default_rng(11)
    moved = copy.deepcopy(args)
    for key, value in moved.items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            eps = float(np.finfo(value.dtype).eps)
            noise = rng.uniform(-1, 1, value.shape) * 8 * eps
            moved[key] = (value * (1 + noise)).astype(value.dtype)
    pk.run_reference(fn, **moved)
    worst = 0.0
    for key, value in expected.items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            worst = max(worst, float(np.nanmax(np.abs(moved[key] - value), initial=0.0)))
    return 4 * worst


def _compare(fn: pk.Function, sched: pk.Schedule, params: dict[str, int]) -> None:
    args = make_inputs(fn, params, seed=5, size=8)
    expected = copy.deepcopy(args)
    r1 = pk.run_reference(fn, **expected)
    tol = 0.0
    # The default kernel (vectorized, contractions allowed), the exact one, and
    # the threaded one where the schedule has parallel loops.
    kernels = [sched.to_numpy(), sched.to_numpy(reassociate=False)]
    if any(sched.loop(x).parallel for x in sched.loop_names()):
        kernels.append(sched.to_numpy(parallel=True))
    for kernel in kernels:
        got = copy.deepcopy(args)
        r2 = kernel(**got)
        if not kernel.exact and not all(
            _same(value, got[key], False)
            for key, value in expected.items()
            if not isinstance(value, str)
        ):
            tol = _sensitivity(fn, args, expected)
        for key, value in expected.items():
            if not isinstance(value, str):
                assert _same(value, got[key], kernel.exact, tol), f"{key} differs\n{kernel.source}"
        # Several results may differ in shape: compare them one by one.
        rs1, rs2 = (r if isinstance(r, tuple) else (r,) for r in (r1, r2))
        assert (r1 is None and r2 is None) or (
            len(rs1) == len(rs2)
            and all(_same(a, b, kernel.exact, tol) for a, b in zip(rs1, rs2, strict=True))
        ), f"{r1} != {r2}\n{kernel.source}"
    assert sched.to_numpy(reassociate=False).exact


# The interpreter takes about half a second on each of these (the static 20 x 30 x 25
# corpus gemm, 16-wide matmul panels): the fast tier runs the other programs.
SLOW = {"gemm-gemm", "matmul_panel-matmul_panel"}


def _param(path: Path, name: str) -> Any:
    key = f"{path.stem}-{name}"
    return pytest.param(path, name, id=key, marks=[pytest.mark.slow] if key in SLOW else [])


@pytest.mark.parametrize(("path", "name"), [_param(p, n) for p, n in PROGRAMS])
def test_recipe_kernel_matches_the_reference(path: Path, name: str) -> None:
    fn = load(path)[name]
    params = {a.name: 7 for a in fn.arguments if a.name in ("N", "n")}
    key = f"{path.stem}:{name}"
    sched = pk.schedule(fn, force=True)
    if key in UNSUPPORTED:
        with pytest.raises(pk.UnsupportedError):
            _compare(fn, sched, params)
        return
    _compare(fn, sched, params)


@pytest.mark.parametrize("case", LEGAL_CASES, ids=[c["id"] for c in LEGAL_CASES])
def test_legal_transformation_kernel_matches_the_reference(case: dict[str, Any]) -> None:
    path = ROOT / "transforms" / "legality" / f"{case['kernel']}.mlir"
    fn = load(path)[case["kernel"]]
    sched = pk.Schedule.from_function(fn, recipe=False)
    for step, *args in case["steps"]:
        sched = getattr(sched, step)(*args)
    _compare(fn, sched, {})


def test_kernel_source_is_python_named_after_the_loops() -> None:
    fn = pk.load(ROOT / "transforms" / "legality" / "gemm.mlir")["gemm"]
    sched = pk.Schedule.from_function(fn, recipe=False).block("i", 4).block("j", 4)
    sched = sched.reorder(["i_t", "j_t", "i", "j"])
    src = sched.to_numpy(vectorize=False).source
    compile(src, "kernel", "exec")
    for loop in ("for i_t in range(", "for j_t in range(", "for i in range(i_t, min("):
        assert loop in src, src
    assert sched.to_numpy() is sched.to_numpy()  # compiled once per schedule
    # Vectorized: tile and point loops of i (and of j) are parallel, so each pair runs
    # as one axis over the loop's whole range; the k reduction is one contraction.
    vec = sched.to_numpy().source
    body = vec.split("def ", 1)[1]
    assert " @ " in body and "for " not in body and "i_t+i, j_t+j" in body, vec


CALL = """
func.func @call(%A: memref<4xf64>, %B: memref<4xf64>) {
  "krnl.call"(%B, %A) {funcName = "pk_test_codegen_axpy", numOfOutput = 1 : si64,
                       alpha = 2.5 : f64} : (memref<4xf64>, memref<4xf64>) -> ()
  return
}
"""


def test_krnl_call_reaches_registered_functions_with_their_keywords() -> None:
    from polykrnl.interpreter import unregister_call

    def axpy(out: np.ndarray[Any, Any], x: np.ndarray[Any, Any], alpha: float) -> None:
        out += alpha * x

    fn = pk.parse(CALL)["call"]
    kernel = pk.schedule(fn).to_numpy()
    a, b = np.arange(4.0), np.ones(4)
    with pytest.raises(pk.UnsupportedError, match="not registered"):
        kernel(A=a, B=b.copy())
    pk.register_call("pk_test_codegen_axpy", axpy)
    try:
        kernel(A=a, B=b)
    finally:
        unregister_call("pk_test_codegen_axpy")
    assert np.array_equal(b, 1.0 + 2.5 * a)  # alpha arrived as a keyword
    assert "_pk_calls = {}" in kernel.source  # standalone: the user fills the table


def test_kernel_arguments_are_checked_like_the_reference() -> None:
    fn = pk.load(ROOT / "transforms" / "legality" / "gemm.mlir")["gemm"]
    kernel = pk.Schedule.from_function(fn, recipe=False).to_numpy()
    good = make_inputs(fn, {}, seed=1, size=8)
    kernel(**copy.deepcopy(good))  # the fast path
    for name, bad, message in (
        ("A", good["A"].astype(np.float64), "expected dtype float32"),
        ("A", good["A"][:, :3], "expected shape"),
        ("A", good["A"].tolist(), "expected a NumPy array"),
    ):
        with pytest.raises(pk.ArgumentError, match=message):
            kernel(**{**copy.deepcopy(good), name: bad})
    with pytest.raises(pk.ArgumentError, match="missing argument 'C'"):
        kernel(A=good["A"], B=good["B"])
