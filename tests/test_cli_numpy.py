"""`polykrnl emit numpy` and `polykrnl run` (the generated kernel, --reference, --verify).

The oracle is ``pk.run_reference``: emitted modules are imported in a fresh
interpreter that cannot import polykrnl and must compute what the reference
computes; `run --verify` must accept the generated kernels and refuse kernels
made wrong on purpose (by exactly one ulp for an exact kernel, by a whole term
for a reassociated one).
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import io
import pickle
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType

import polykrnl as pk
from polykrnl.cli import main
from polykrnl.inputs import make_inputs
from polykrnl.interpreter import scalar_dtype
from polykrnl.pipeline import Schedule
from polykrnl.tolerance import compare, reassociation_tolerance

ROOT = Path(__file__).resolve().parent
CORPUS = ROOT / "corpus"
LEGALITY = ROOT / "transforms" / "legality"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


# ------------------------------------------------------------------ emit numpy


def _standalone_call(module: Path, calls: list[tuple[str, list[Any]]], tmp: Path) -> list[Any]:
    """Import `module` in a fresh interpreter that cannot import polykrnl, make the calls.

    Returns, per call, (the arguments after the call, the returned value).
    """
    (tmp / "calls.pkl").write_bytes(pickle.dumps(calls))
    script = textwrap.dedent(
        f"""
        import importlib.util, pathlib, pickle, sys
        sys.path[:] = [p for p in sys.path if not (pathlib.Path(p or ".") / "polykrnl").exists()]
        assert importlib.util.find_spec("polykrnl") is None, sys.path
        spec = importlib.util.spec_from_file_location("kernels", {str(module)!r})
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        calls = pickle.loads(pathlib.Path({str(tmp / "calls.pkl")!r}).read_bytes())
        done = [(args, getattr(mod, entry)(*args)) for entry, args in calls]
        assert not [m for m in sys.modules if m.split(".")[0] == "polykrnl"]
        assert mod.__doc__
        pathlib.Path({str(tmp / "done.pkl")!r}).write_bytes(pickle.dumps(done))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-I", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp,
    )
    assert proc.returncode == 0, proc.stderr
    done: list[Any] = pickle.loads((tmp / "done.pkl").read_bytes())
    return done


def _entries(source: str) -> dict[str, list[str]]:
    """The parameters of every top-level function of a module, by name."""
    return {
        n.name: [a.arg for a in n.args.args]
        for n in ast.parse(source).body
        if isinstance(n, ast.FunctionDef)
    }


def _positional(fn: pk.Function, args: dict[str, Any]) -> list[Any]:
    """The arguments of `fn` in order, as the emitted docstring says to pass them."""
    out = []
    for a in fn.arguments:
        v = args[a.name]
        if not isinstance(a.type, MemRefType) and isinstance(v, float):
            v = scalar_dtype(a.type).type(v)  # f32 -> np.float32, as documented
        out.append(v)
    return out


STANDALONE = [
    (CORPUS / "companion_ops.mlir", None, 8),  # func.call between kernels, the _index helper
    (CORPUS / "companion_ops.mlir", "normalize_rows", 8),  # --func: its callee comes along
    (CORPUS / "matmul_panel.mlir", None, 16),  # tile copies and krnl.matmul: shared helpers
    (CORPUS / "gemm.mlir", None, 8),  # f32 scalars, contractions
    (LEGALITY / "two_mm.mlir", None, 8),
]


# The interpreter takes most of a second on the corpus gemm (static 20 x 30 x 25) and on
# matmul_panel at size 16: the fast tier runs the other modules (here and in --verify below).
SLOW = {"gemm-None", "matmul_panel-None", "gemm-gemm"}


def _param(path: Path, func: str | None, extra: Any) -> Any:
    key = f"{path.stem}-{func}"
    return pytest.param(path, func, extra, id=key, marks=[pytest.mark.slow] if key in SLOW else [])


@pytest.mark.parametrize(("path", "func", "size"), [_param(*s) for s in STANDALONE])
def test_emitted_module_runs_standalone(
    path: Path, func: str | None, size: int, tmp_path: Path
) -> None:
    select = [] if func is None else ["--func", func]
    code, out, err = cli("emit", "numpy", str(path), *select, "-o", str(tmp_path / "kernels.py"))
    assert code == 0, err
    source = (tmp_path / "kernels.py").read_text()
    module = pk.load(path)
    functions = module.functions if func is None else (module[func],)
    entries = _entries(source)
    assert (
        out
        == f"wrote {tmp_path / 'kernels.py'}: "
        + ", ".join(f"kernel_{f.name}" for f in functions)
        + "\n"
    )
    # One definition per function and per helper, numpy as the only import.
    defs = re.findall(r"^def (\w+)\(", source, flags=re.M)
    assert len(defs) == len(set(defs)), defs
    imports = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import | ast.ImportFrom)]
    assert [ast.unparse(n) for n in imports] == ["import numpy as np"]
    calls, expected = [], []
    n = 1
    for fn in functions:
        params = {a.name: size for a in fn.arguments if a.name in ("n", "N", "M", "K")}
        args = make_inputs(fn, params, seed=1, size=size)
        n = max([n, *(max(v.shape, default=1) for v in args.values() if isinstance(v, np.ndarray))])
        ref = copy.deepcopy(args)
        result = pk.run_reference(fn, **ref)
        expected.append((fn, ref, result))
        calls.append((f"kernel_{fn.name}", _positional(fn, args)))
        assert entries[f"kernel_{fn.name}"] == [a.name for a in fn.arguments]
    done = _standalone_call(tmp_path / "kernels.py", calls, tmp_path)
    for (fn, ref, result), (after, got) in zip(expected, done, strict=True):
        exact = pk.compile(fn).exact
        for a, value in zip(fn.arguments, after, strict=True):
            if not isinstance(a.type, MemRefType):
                continue
            d = compare(ref[a.name], value, exact=exact, n=n)
            assert d.ok, (fn.name, a.name, d)
        if result is None:
            assert got is None
        else:
            assert compare(result, got, exact=exact, n=n).ok, (fn.name, result, got)


def test_emit_docstring_says_how_to_call(tmp_path: Path) -> None:
    code, out, err = cli("emit", "numpy", str(CORPUS / "gemm.mlir"), "--func", "gemm_tiled")
    assert code == 0 and err == ""
    doc = ast.get_docstring(ast.parse(out))
    assert doc is not None
    assert doc.startswith("NumPy kernel of @gemm_tiled (after the Krnl recipe),\n")
    assert "generated by polykrnl from gemm.mlir." in doc
    assert "kernel_gemm_tiled(A, B, C, M, N, K)  # @gemm_tiled" in doc
    assert "    A: memref<?x?xf32>, a NumPy float32 array of shape (?, ?)" in doc
    assert "    M: index, an int" in doc
    assert "    returns: nothing" in doc
    exact = pk.compile(pk.load(CORPUS / "gemm.mlir")["gemm_tiled"]).exact
    assert ("reassociated (float sums or products" in doc) == (not exact)
    # --func: that function only, as pk.compile makes it, after the docstring.
    assert out.endswith(pk.compile(pk.load(CORPUS / "gemm.mlir")["gemm_tiled"]).source)
    assert list(_entries(out)) == ["kernel_gemm_tiled"]


def test_emit_docstring_scalars_and_results() -> None:
    code, out, _ = cli("emit", "numpy", str(CORPUS / "companion_ops.mlir"))
    assert code == 0
    doc = ast.get_docstring(ast.parse(out))
    assert doc is not None
    assert doc.startswith(
        "NumPy kernels of @norm, @normalize_rows, @histogram, @exp_scaled (after the Krnl recipe)"
    )
    assert (
        "kernel_norm(v, n)  # @norm\n    v: memref<?xf32>, a NumPy float32 array of shape (?,)"
        in doc
    )
    assert "    returns: f32" in doc
    assert "    h: memref<8xi32>, a NumPy int32 array of shape (8,)" in doc
    assert "reassociated" not in doc  # every kernel of this file is exact
    # the callee is defined once, before or after its caller, and each entry has its schedule
    assert out.count("def kernel_norm(") == 1 and out.count("def _index(") == 1
    assert out.count("# polykrnl NumPy kernel of @") == 4


def test_emit_docstring_escapes_the_file_name(tmp_path: Path) -> None:
    path = tmp_path / 'a"""b\\.mlir'
    path.write_text((LEGALITY / "transpose.mlir").read_text())
    code, out, err = cli("emit", "numpy", str(path))
    assert code == 0, err
    doc = ast.get_docstring(ast.parse(out))
    # Shown as a string literal writes it: the backslash doubled (a name holding a line
    # break shows `\n`, tests/codegen/test_hostile_text.py).
    assert doc is not None and 'from a"""b\\\\.mlir.' in doc


def test_emit_to_stdout_matches_the_file(tmp_path: Path) -> None:
    path = str(LEGALITY / "jacobi_2d.mlir")
    code, out, _ = cli("emit", "numpy", path)
    assert code == 0
    assert cli("emit", "numpy", path, "-o", str(tmp_path / "k.py"))[0] == 0
    assert (tmp_path / "k.py").read_text() == out
    compile(out, "k.py", "exec")


def test_emit_illegal_recipe_exits_2_located() -> None:
    path = CORPUS / "generic_form_loops.mlir"
    code, out, err = cli("emit", "numpy", str(path))
    assert code == 2 and out == ""
    assert err.startswith(
        f"error: {path}:30:6: the Krnl recipe of @generic_sum_permuted is illegal"
    )
    assert "Traceback" not in err
    # the legal function of the same file emits
    code, out, _ = cli("emit", "numpy", str(path), "--func", "generic_copy_upper")
    assert code == 0 and "def kernel_generic_copy_upper(" in out


def test_emit_bad_input_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f(%A: memref<4xf32>) {\n  krnl.bogus\n}\n")
    code, out, err = cli("emit", "numpy", str(bad), "-o", str(tmp_path / "k.py"))
    assert code == 2 and out == ""
    assert err.startswith(f"error: {bad}:2:3: ")
    assert "    krnl.bogus\n    ^" in err and "Traceback" not in err
    assert not (tmp_path / "k.py").exists()


def test_emit_unsupported_op_exits_2_located() -> None:
    path = CORPUS / "strings_and_hash.mlir"
    code, out, err = cli("emit", "numpy", str(path), "--func", "lookup")
    assert code == 2 and out == ""
    assert err.startswith(f"error: {path}:8:11: NumPy code generation: krnl.find_index")


def test_emit_unknown_function_and_usage_errors(tmp_path: Path) -> None:
    path = str(CORPUS / "gemm.mlir")
    code, out, err = cli("emit", "numpy", path, "--func", "nope")
    assert code == 2 and out == ""
    assert "no function named 'nope'" in err and "gemm, gemm_tiled" in err
    code, _, err = cli("emit", "numpy", path, "-o", str(tmp_path / "missing" / "k.py"))
    assert code == 2 and f"cannot write {tmp_path / 'missing' / 'k.py'}" in err
    code, _, err = cli("emit", "fortran", path)
    assert code == 2 and "invalid choice: 'fortran'" in err and "usage: polykrnl" in err
    code, _, err = cli("emit", "numpy")
    assert code == 2 and "required: file" in err
    code, _, err = cli("emit", "numpy", str(tmp_path / "none.mlir"))
    assert code == 2 and err.startswith(f"error: {tmp_path / 'none.mlir'}: cannot read")


def test_emit_empty_module(tmp_path: Path) -> None:
    empty = tmp_path / "empty.mlir"
    empty.write_text("builtin.module {\n}\n")
    code, out, err = cli("emit", "numpy", str(empty))
    assert code == 2 and out == ""
    assert err == f"error: {empty}: the module defines no function: there is nothing to emit\n"


# ------------------------------------------------------------------ run


def test_run_runs_the_kernel_and_reports_like_the_reference() -> None:
    path = str(CORPUS / "companion_ops.mlir")
    code, out, err = cli("run", path, "--func", "histogram", "--seed", "4")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "@histogram: NumPy kernel, seed 4"
    assert lines[1] == "  inputs: x 50 int32, h 8 int32"
    assert re.fullmatch(
        r"  compiled in \S+ m?s \(schedule \S+ m?s, NumPy code generation \S+ m?s\)", lines[2]
    ), lines[2]
    assert re.fullmatch(r"  ran in \S+ m?s", lines[3]), lines[3]
    code, ref, _ = cli("run", path, "--func", "histogram", "--seed", "4", "--reference")
    assert code == 0
    assert ref.splitlines()[0] == "@histogram: reference interpreter, seed 4"
    assert "compiled" not in ref
    # the same inputs, the same (exact) output summary
    assert lines[4:] == ref.splitlines()[3:]
    assert lines[4].startswith("  output h: 8 int32  checksum=5.000000e+01")


def test_run_kernel_result_and_params() -> None:
    code, out, err = cli(
        "run",
        str(CORPUS / "companion_ops.mlir"),
        "--func",
        "norm",
        "--param",
        "v.0=5",
        "--param",
        "n=5",
    )
    assert code == 0, err
    assert "inputs: v 5 float32, n 5" in out
    fn = pk.load(CORPUS / "companion_ops.mlir")["norm"]
    v = make_inputs(fn, {"v.0": 5, "n": 5}, seed=0)["v"]
    m = re.search(r"result 0: float32 (\S+)", out)
    assert m is not None, out
    assert float(m.group(1)) == float(np.sqrt(np.sum(v * v, dtype=np.float32)))


VERIFIED = [
    (CORPUS / "gemm.mlir", "gemm", []),
    (CORPUS / "gemm.mlir", "gemm_tiled", ["--size", "9"]),
    (CORPUS / "companion_ops.mlir", "normalize_rows", ["--param", "m.0=5"]),
    (CORPUS / "companion_ops.mlir", "norm", []),
    (CORPUS / "conv1d.mlir", "maxpool_2x2", []),
    (CORPUS / "triangular.mlir", "upper_triangular_product", ["--size", "7"]),
    (CORPUS / "reduction_iter_args.mlir", "min_max", []),
    (CORPUS / "softmax.mlir", "softmax_rows", []),
    (CORPUS / "generic_form_recipe.mlir", "generic_panels", []),
    (LEGALITY / "jacobi_2d.mlir", "jacobi_2d", []),
    (LEGALITY / "two_mm.mlir", "two_mm", []),
    (LEGALITY / "cholesky.mlir", "cholesky", []),
]


@pytest.mark.parametrize(("path", "func", "extra"), [_param(*v) for v in VERIFIED])
def test_run_verify_accepts_the_generated_kernel(path: Path, func: str, extra: list[str]) -> None:
    code, out, err = cli("run", str(path), "--func", func, "--verify", *extra)
    assert code == 0, out + err
    assert out.startswith(f"@{func}: NumPy kernel vs reference interpreter, seed 0\n")
    assert re.search(r"\n  kernel ran in \S+ m?s, reference interpreter in \S+ m?s\n", out)
    compared = re.findall(r"\n    vs reference: (.*)", out)
    assert compared, out
    if pk.compile(pk.load(path)[func]).exact:
        assert all(c.endswith("exactly equal") for c in compared), out
        assert out.endswith(
            "  verify: ok, exactly equal to the reference (the kernel keeps its order)\n"
        )
    else:
        assert all("within rtol=" in c or c.endswith("exactly equal") for c in compared), out
        kernel = pk.compile(pk.load(path)[func])
        if kernel.reassociated:
            assert "reductions reassociated (float sums or products in another order)" in out
        for f in kernel.narrow_math:
            assert f in out.split("computed in float32")[0].splitlines()[-1], out
        assert out.endswith("within the tolerance of an inexact kernel\n")


class _Shifted:
    """A kernel that runs the generated one, then moves element 0 of one output."""

    def __init__(self, kernel: Any, arg: str, delta: Callable[[np.ndarray], Any], exact: bool):
        self.kernel, self.arg, self.delta, self.exact = kernel, arg, delta, exact
        self.source = kernel.source

    def __call__(self, **args: Any) -> Any:
        result = self.kernel(**args)
        flat = args[self.arg].reshape(-1)
        flat[0] = self.delta(flat)
        return result


def _patch_kernel(monkeypatch: pytest.MonkeyPatch, make: Callable[[Any], Any]) -> None:
    original = Schedule.kernel

    def kernel(self: Schedule, target: str, **kwargs: Any) -> Any:
        return make(original(self, target, **kwargs))

    # `run` builds its kernel through the target registry: Schedule.kernel.
    monkeypatch.setattr(Schedule, "kernel", kernel)


def test_run_verify_refuses_an_exact_kernel_one_ulp_off(monkeypatch: pytest.MonkeyPatch) -> None:
    def one_ulp(flat: np.ndarray) -> Any:
        return np.nextafter(flat[0], np.float32(np.inf))

    _patch_kernel(monkeypatch, lambda k: _Shifted(k, "y", one_ulp, exact=True))
    code, out, err = cli("run", str(CORPUS / "softmax.mlir"), "--func", "softmax_rows", "--verify")
    assert code == 1, out + err
    assert re.search(r"vs reference: max abs error \S+, max rel error \S+: NOT exactly equal", out)
    assert out.endswith("  verify: FAILED: output y differs from the reference\n")


def test_run_verify_tolerance_of_a_reassociated_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(LEGALITY / "gemm.mlir")
    # (the wrapper says exact=False: reductions reassociated, whatever the generator did)
    # One ulp: what reassociation does; accepted.
    _patch_kernel(
        monkeypatch,
        lambda k: _Shifted(k, "C", lambda f: np.nextafter(f[0], np.float32(np.inf)), False),
    )
    code, out, err = cli("run", path, "--verify")
    assert code == 0, out + err
    assert "not exactly equal, within rtol=" in out
    # A term of the sum counted twice (or dropped): refused.
    monkeypatch.undo()
    _patch_kernel(monkeypatch, lambda k: _Shifted(k, "C", lambda f: f[0] + np.float32(0.5), False))
    code, out, err = cli("run", path, "--verify")
    assert code == 1, out + err
    assert re.search(r"max abs error 0\.5\d*, .*BEYOND rtol=\S+ atol=\S+\n", out), out
    assert out.endswith("  verify: FAILED: output C differs from the reference\n")


def test_run_verify_refuses_a_patched_generated_source(monkeypatch: pytest.MonkeyPatch) -> None:
    """The generated module itself made wrong: its entry adds 1 to every output element."""

    def wrong(k: Any) -> Any:
        source = k.source + textwrap.dedent(
            f"""
            _right = {k.entry}


            def {k.entry}(A, B):
                _right(A, B)
                B += 1
            """
        )
        return dataclasses.replace(k, source=source)

    _patch_kernel(monkeypatch, wrong)
    path = str(LEGALITY / "transpose.mlir")
    code, out, err = cli("run", path, "--verify")
    assert code == 1, out + err
    assert "output B: 8x6 float32" in out and "max abs error 1, " in out
    assert out.endswith("  verify: FAILED: output B differs from the reference\n")
    assert cli("run", path)[0] == 0  # without --verify, a wrong kernel just runs


def test_run_verify_kernel_that_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(k: Any) -> Any:
        return dataclasses.replace(k, source=k.source + f"\n{k.entry} = None\n")

    _patch_kernel(monkeypatch, broken)
    path = str(LEGALITY / "transpose.mlir")
    code, out, err = cli("run", path, "--verify")
    assert code == 1, out + err
    assert "  verify: FAILED: the NumPy kernel of @transpose raised TypeError" in out
    code, out, err = cli("run", path)  # without --verify: an error, located, no traceback
    assert code == 2 and "Traceback" not in err
    assert re.match(
        rf"error: {re.escape(path)}:\d+:\d+: the NumPy kernel of @transpose raised "
        "TypeError",
        err,
    )


def test_run_errors() -> None:
    gemm = str(CORPUS / "gemm.mlir")
    code, out, err = cli("run", gemm, "--func", "gemm", "--verify", "--reference")
    assert code == 2 and out == ""
    assert "--reference: not allowed with argument --verify" in err and "usage:" in err
    code, out, err = cli("run", gemm)
    assert code == 2 and "--func NAME" in err and "gemm, gemm_tiled" in err
    path = CORPUS / "strings_and_hash.mlir"
    code, out, err = cli("run", str(path), "--func", "lookup")
    assert code == 2 and out == ""  # refused before anything is printed
    assert err.startswith(f"error: {path}:8:11: NumPy code generation: krnl.find_index")
    assert err.endswith("hint: add --reference to run the reference interpreter instead\n")
    code, out, err = cli(
        "run", str(CORPUS / "generic_form_loops.mlir"), "--func", "generic_sum_permuted"
    )
    assert code == 2 and out == "" and "is illegal" in err
    code, out, err = cli("run", gemm, "--func", "gemm", "--size", "-1")
    assert code == 2 and "--size cannot be negative" in err
    code, out, err = cli("run", gemm, "--func", "gemm", "--param", "Q=3")
    assert code == 2 and "no argument 'Q'" in err


def test_compare() -> None:
    a = np.array([1.0, 2.0, np.nan, np.inf], np.float32)
    d = compare(a, a.copy(), exact=True, n=4)
    assert d.equal and d.ok and d.max_abs == 0.0
    b = a.copy()
    b[2] = 0.0  # a NaN on one side only is never close
    d = compare(a, b, exact=False, n=4)
    assert not d.ok and d.max_abs == np.inf
    tol = reassociation_tolerance(np.dtype(np.float32), 4)
    assert tol == 8 * float(np.finfo(np.float32).eps)
    c = a.copy()
    c[0] = np.nextafter(c[0], np.float32(2))
    assert compare(a, c, exact=False, n=4).ok and not compare(a, c, exact=True, n=4).ok
    assert not compare(np.arange(3), np.arange(3.0), exact=False, n=3).ok  # dtype differs
    words = np.array(["a", "b"], dtype=object)
    assert compare(words, words.copy(), exact=True, n=2).equal
    assert not compare(words, np.array(["a", "c"], dtype=object), exact=True, n=2).ok


def test_console_script_runs_and_verifies(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "polykrnl"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "polykrnl.cli"]
    path = str(LEGALITY / "jacobi_1d.mlir")
    proc = subprocess.run(
        [*cmd, "run", path, "--verify"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith(
        "verify: ok, exactly equal to the reference (the kernel keeps its order)\n"
    )


@pytest.mark.slow  # another new process (fast tier: the run above; this error in-process:
# test_emit_unknown_function_and_usage_errors)
def test_console_script_emit_error_exits_2_without_traceback() -> None:
    script = Path(sys.executable).parent / "polykrnl"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "polykrnl.cli"]
    path = str(LEGALITY / "jacobi_1d.mlir")
    proc = subprocess.run(
        [*cmd, "emit", "numpy", path, "--func", "missing"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr


DECLARED = """\
func.func private @ext(%a: index)
func.func @f(%A: memref<4xf32>) {
  %one = arith.constant 1.0 : f32
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 4) {
    krnl.store %one, %A[%i] : memref<4xf32>
  }
  return
}
"""


def test_declarations_are_skipped_and_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "declared.mlir"
    path.write_text(DECLARED)
    for argv in (["verify"], ["check"], ["lower"], ["emit", "numpy"], ["run"]):
        out, err = io.StringIO(), io.StringIO()
        assert main([*argv, str(path)], out=out, err=err) == 0, (argv, err.getvalue())
    out = io.StringIO()
    main(["emit", "numpy", str(path)], out=out, err=io.StringIO())
    assert "def kernel_f(" in out.getvalue() and "kernel_ext" not in out.getvalue()
    with pytest.raises(pk.UnsupportedError, match="declaration without a body"):
        pk.poly_program(pk.parse(DECLARED)["ext"])


def test_run_threads_verifies() -> None:
    path = ROOT / "corpus" / "parallel_threads.mlir"
    code, out, err = cli(
        "run", str(path), "--func", "tril_exp", "--size", "40", "--threads", "--verify"
    )
    assert code == 0, err
    assert "verify: ok" in out


def test_emitted_threaded_module_runs_standalone(tmp_path: Path) -> None:
    path = ROOT / "corpus" / "parallel_threads.mlir"
    target = tmp_path / "kernels.py"
    code, _out, err = cli(
        "emit", "numpy", str(path), "--func", "tril_exp", "--threads", "-o", str(target)
    )
    assert code == 0, err
    source = target.read_text()
    assert "_pk_parallel(_par_i" in source
    # numpy, and the standard library's thread pool (imported when a loop runs).
    imports = {ast.unparse(n) for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import)}
    assert imports == {
        "import numpy as np",
        "import concurrent.futures",
        "import os",
        "import time",
    }
    fn = pk.load(path)["tril_exp"]
    args = make_inputs(fn, {"N": 40}, seed=2, size=40)
    ref = copy.deepcopy(args)
    pk.run_reference(fn, **ref)
    ((after, _),) = _standalone_call(target, [("kernel_tril_exp", _positional(fn, args))], tmp_path)
    # the default kernel computes float32 exp in float32 (kernel.narrow_math)
    np.testing.assert_allclose(after[2], ref["y"], rtol=2e-7)
