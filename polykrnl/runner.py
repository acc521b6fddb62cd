"""`polykrnl run`: run a function on random inputs and summarize what it wrote.

By default the function runs as its generated NumPy kernel (``pk.schedule(fn)``,
the function's Krnl recipe, then ``.to_numpy()``); the compile time (schedule
and code generation) is printed apart from the run time. ``--reference`` runs
the reference interpreter instead. ``--verify`` runs both on copies of the same
inputs and compares every array argument that either run changed, and every
result: it prints the max absolute error, the max relative error (to the
largest magnitude of the reference's array) and whether the two are exactly
equal, and exits with 1 when they differ beyond the tolerance. A kernel marked
exact (``kernel.exact``: every op in the reference's order) must match exactly;
one that reassociates reductions (contractions as ``np.einsum``) must match
within ``np.allclose`` with the tolerance of ``reassociation_tolerance``.

The inputs are :mod:`polykrnl.inputs`'s (random, sized by ``--param`` and ``--size``,
or ``--input NAME=FILE.npy``), the comparison :mod:`polykrnl.tolerance`'s, and the
estimate of the interpreter's time before it runs :mod:`polykrnl.reference_work`'s.
"""

from __future__ import annotations

import contextlib
import copy
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from polykrnl.errors import ArgumentError, InterpretError, PolykrnlError, UnsupportedError
from polykrnl.inputs import DEFAULT_SIZE, load_inputs, make_inputs
from polykrnl.interpreter import Interpreter
from polykrnl.ir import Function, Module
from polykrnl.reference_work import (
    MAX_REFERENCE_ITERATIONS,
    MAX_REFERENCE_STEPS,
    NOTICE_REFERENCE_STEPS,
    REFERENCE_RATE,
    reference_work,
)
from polykrnl.run_sizes import fit_sizes
from polykrnl.tolerance import compare, describe_difference

if TYPE_CHECKING:
    from polykrnl.targets.mlir import MlirKernel
    from polykrnl.targets.numba.kernel import NumbaKernel
    from polykrnl.targets.numpy.kernel import NumpyKernel


def choose_function(
    module: Module, name: str | None, *, question: str = "which one should run?"
) -> Function:
    """The function called `name`, or the module's only function when `name` is None.

    `question` ends the error message when the module has several (or no) functions.
    """
    if name is not None:
        return module[name]
    functions = [f for f in module.functions if f.op.body.blocks]
    if len(functions) == 1:
        return functions[0]
    names = ", ".join(f.name for f in functions) or "none"
    raise ArgumentError(
        f"{module.filename} defines {len(functions)} functions; {question}",
        hint=f"choose one with --func NAME (the module defines: {names})",
    )


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        shape = "x".join(map(str, value.shape)) or "scalar"
        return f"{shape} {value.dtype}"
    return repr(value)


def _summary(value: Any) -> str:
    if not isinstance(value, np.ndarray):
        return f"{type(value).__name__} {value}"
    text = _describe(value)
    if value.dtype.kind in "fiub" and value.size:
        data = value.astype(np.float64)
        finite = data[np.isfinite(data)]
        with np.errstate(all="ignore"):  # inf + -inf is a NaN checksum, not a warning
            checksum = float(np.sum(data))
        text += f"  checksum={checksum:.6e}"
        if finite.size:
            text += f"  min={float(finite.min()):.6g}  max={float(finite.max()):.6g}"
        nan = int(np.count_nonzero(np.isnan(data)))
        if nan:
            text += f"  nan={nan}"
    return text


def _changed(before: np.ndarray[Any, Any], after: np.ndarray[Any, Any]) -> bool:
    if after.dtype.kind == "O":
        return any(x is not y for x, y in zip(before.flat, after.flat, strict=True))
    return not np.array_equal(before, after, equal_nan=after.dtype.kind == "f")


def _seconds(t: float) -> str:
    return f"{t * 1e3:.2f} ms" if t < 0.1 else f"{t:.3f} s"


def _results(result: Any) -> tuple[Any, ...]:
    return () if result is None else result if isinstance(result, tuple) else (result,)


def _inexact(kernel: Any) -> str:
    """What the compile line says of a kernel that is not bit for bit the reference's."""
    if kernel.exact:
        return ""
    parts = []
    if getattr(kernel, "reassociated", True):
        parts.append("reductions reassociated (float sums or products in another order)")
    if getattr(kernel, "narrow_math", ()):
        parts.append(f"{', '.join(kernel.narrow_math)} computed in float32")
    return "; " + "; ".join(parts)


def _run_reference(
    module: Module, fn: Function, inputs: dict[str, Any], out: TextIO
) -> tuple[tuple[Any, ...], float]:
    work = reference_work(fn, inputs)
    if work is not None and work > MAX_REFERENCE_STEPS:
        raise ArgumentError(
            f"the reference interpreter would run up to {work:.3g} ops of @{fn.name} on "
            f"these inputs (about {work / REFERENCE_RATE / 60:.0f} minutes): refused",
            location=fn.location(fn.op),
            hint="give smaller sizes (--size, --param NAME=VALUE), or run the NumPy kernel "
            "alone (without --verify or --reference)",
        )
    if work is not None and work > NOTICE_REFERENCE_STEPS:
        out.write(
            f"  the reference interpreter runs up to {work:.3g} ops: up to about "
            f"{work / REFERENCE_RATE:.0f} s (smaller --size or --param run faster)\n"
        )
        out.flush()
    interpreter = Interpreter(module, stdout=out, max_iterations=MAX_REFERENCE_ITERATIONS)
    start = time.perf_counter()
    result = interpreter.call(fn, inputs)
    return _results(result), time.perf_counter() - start


def _run_kernel(
    kernel: NumpyKernel | NumbaKernel | MlirKernel,
    fn: Function,
    inputs: dict[str, Any],
    out: TextIO,
    target: str = "generated",
) -> tuple[tuple[Any, ...], float]:
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out):
            result = kernel(**inputs)
    except PolykrnlError:
        raise
    except Exception as e:  # the generated code failed: say so without a traceback
        raise InterpretError(
            f"the {target} kernel of @{fn.name} raised {type(e).__name__}: {e}",
            location=fn.location(fn.op),
            hint="run it with --reference: the reference interpreter points at the op that "
            "fails (with --verify, a kernel that fails where the reference does not is a "
            "verification failure)",
        ) from None
    return _results(result), time.perf_counter() - start


def _compile(
    fn: Function, parallel: bool = False, target: str = "numpy"
) -> tuple[NumpyKernel | NumbaKernel | MlirKernel, float, float]:
    """The kernel of `fn` after its recipe; the schedule and codegen times."""
    from polykrnl.pipeline import schedule

    try:
        start = time.perf_counter()
        sched = schedule(fn)
        middle = time.perf_counter()
        # Threads only when asked: NumPy's default is none, Numba's already prange.
        kernel: NumpyKernel | NumbaKernel | MlirKernel = sched.kernel(
            target, **({"parallel": True} if parallel else {})
        )
    except UnsupportedError as e:  # the interpreter runs more than the generator translates
        raise UnsupportedError(
            e.message,
            location=e.location,
            hint="add --reference to run the reference interpreter instead",
        ) from None
    return kernel, middle - start, time.perf_counter() - middle


def _write_outputs(
    out: TextIO, before: Mapping[str, Any], after: Mapping[str, Any], results: tuple[Any, ...]
) -> None:
    shown = False
    for name, old in before.items():
        if _changed(old, after[name]):
            out.write(f"  output {name}: {_summary(after[name])}\n")
            shown = True
    for i, r in enumerate(results):
        out.write(f"  result {i}: {_summary(r)}\n")
        shown = True
    if not shown:
        out.write("  no output: no memref argument changed and nothing was returned\n")


#: op executions (`reference_work`) a `run --verify` without --size aims at: a few
#: seconds of the reference interpreter
AUTO_REFERENCE_STEPS = 1_000_000


def _auto_size(
    fn: Function,
    params: Mapping[str, float],
    seed: int,
    given: Mapping[str, np.ndarray[Any, Any]],
    reference: bool,
) -> tuple[int, str]:
    """The value of the dynamic sizes when --size is not given, and a note saying why
    when it is not DEFAULT_SIZE.

    A run without the reference interpreter takes DEFAULT_SIZE. With it, the largest of
    DEFAULT_SIZE, /2, /4, /8 whose estimated reference work stays under
    AUTO_REFERENCE_STEPS: a check at 16 that takes minutes in the interpreter is
    rarely what an unsized `run --verify` asks for. Sizes that do not change the work
    (a program without dynamic sizes) keep DEFAULT_SIZE.
    """
    if not reference:
        return DEFAULT_SIZE, ""
    works: dict[int, int] = {}
    for size in (DEFAULT_SIZE, DEFAULT_SIZE // 2, DEFAULT_SIZE // 4, DEFAULT_SIZE // 8):
        work = reference_work(fn, make_inputs(fn, params, seed=seed, size=size, given=given))
        if work is None:
            return DEFAULT_SIZE, ""
        works[size] = work
        if work <= AUTO_REFERENCE_STEPS:
            break
    size = min(works, key=lambda n: (works[n], -n))
    first = works[DEFAULT_SIZE]
    if works[size] >= first:
        return DEFAULT_SIZE, ""
    return size, (
        f"dynamic sizes {size}, not {DEFAULT_SIZE}: at {DEFAULT_SIZE} the reference "
        f"interpreter would run up to {first:.3g} ops (give --size to choose)"
    )


def _inputs(
    fn: Function,
    params: Mapping[str, float],
    seed: int,
    size: int | None,
    input_files: Mapping[str, str],
    reference: bool,
) -> tuple[dict[str, Any], list[str]]:
    """The arguments of a run (random, or read from `input_files`) and the notes on the
    sizes chosen for them (:func:`_auto_size`, :func:`fit_sizes`)."""
    given = load_inputs(fn, input_files)
    notes: list[str] = []
    if size is None:
        size, note = _auto_size(fn, params, seed, given, reference)
        notes += [note] * bool(note)
    fixed = set(params) | {f"{n}.{d}" for n, a in given.items() for d in range(a.ndim)}
    run_size = size
    params, fit_notes = fit_sizes(
        fn, params, fixed, lambda p: make_inputs(fn, p, seed=seed, size=run_size, given=given)
    )
    return make_inputs(fn, params, seed=seed, size=size, given=given), notes + fit_notes


def run_cli(
    module: Module,
    *,
    func: str | None,
    params: Mapping[str, float],
    reference: bool,
    verify: bool,
    seed: int,
    out: TextIO,
    size: int | None = None,
    parallel: bool = False,
    input_files: Mapping[str, str] | None = None,
    target: str = "numpy",
) -> int:
    """`polykrnl run`: returns the exit status (errors raise PolykrnlError).

    0: ran (and, with `verify`, the kernel matches the reference); 1: with
    `verify`, the kernel differs from the reference beyond the tolerance. `size`
    None: DEFAULT_SIZE, or smaller when the reference interpreter runs
    (:func:`_auto_size`).
    """
    fn = choose_function(module, func)
    if reference and verify:
        raise ArgumentError(
            "--reference and --verify do not combine: --verify runs the reference "
            "interpreter too, and compares the NumPy kernel with it",
            hint="drop --reference",
        )
    if size is not None and size < 0:
        raise ArgumentError(f"--size cannot be negative ({size})")
    inputs, notes = _inputs(fn, params, seed, size, input_files or {}, reference or verify)
    # The arrays a user gives have the normalized shape: say which signatures changed.
    notes = [str(n) for n in module.layout_notes if n.function == fn.name] + notes
    before = {n: v.copy() for n, v in inputs.items() if isinstance(v, np.ndarray)}
    # Everything that can refuse the program (an illegal recipe, an op without a
    # NumPy translation) does so before anything is printed.
    compiled = None if reference else _compile(fn, parallel, target)
    from polykrnl.targets import target as target_named

    label = target_named(target).label
    what = (
        "reference interpreter"
        if compiled is None
        else f"{label} kernel vs reference interpreter"
        if verify
        else f"{label} kernel"
    )
    out.write(f"@{fn.name}: {what}, seed {seed}\n")
    out.write(
        "  inputs: "
        + (", ".join(f"{n} {_describe(v)}" for n, v in inputs.items()) or "none")
        + "\n"
    )
    for line in notes:
        out.write(f"  note: {line}\n")
    if compiled is None:
        results, elapsed = _run_reference(module, fn, inputs, out)
        out.write(f"  ran in {_seconds(elapsed)}\n")
        _write_outputs(out, before, inputs, results)
        return 0
    kernel, t_schedule, t_codegen = compiled
    jit = ""
    compile_for = getattr(kernel, "compile", None)
    if compile_for is not None:
        # A kernel compiled for its arguments' types (Numba's): timed here, apart from
        # the run.
        jit = f", {label} compilation {_seconds(compile_for(**inputs))}"
    for note in getattr(kernel, "notes", ()):
        out.write(f"  note: {note}\n")
    out.write(
        f"  compiled in {_seconds(t_schedule + t_codegen)} (schedule {_seconds(t_schedule)}, "
        f"{label} code generation {_seconds(t_codegen)}{jit})" + _inexact(kernel) + "\n"
    )
    if not verify:
        results, elapsed = _run_kernel(kernel, fn, inputs, out, label)
        out.write(f"  ran in {_seconds(elapsed)}\n")
        _write_outputs(out, before, inputs, results)
        return 0
    expected = copy.deepcopy(inputs)
    ref_results, ref_elapsed = _run_reference(module, fn, expected, out)
    try:
        results, elapsed = _run_kernel(kernel, fn, inputs, out, label)
    except InterpretError as e:
        out.write(f"  reference interpreter ran in {_seconds(ref_elapsed)}\n")
        out.write(f"  verify: FAILED: {e.message}\n")
        return 1
    out.write(
        f"  kernel ran in {_seconds(elapsed)}, reference interpreter in {_seconds(ref_elapsed)}\n"
    )
    return _verify(out, kernel.exact, before, expected, inputs, ref_results, results)


def _verify(
    out: TextIO,
    exact: bool,
    before: Mapping[str, Any],
    expected: Mapping[str, Any],
    got: Mapping[str, Any],
    ref_results: tuple[Any, ...],
    results: tuple[Any, ...],
) -> int:
    """Print the kernel's outputs against the reference's; the exit status."""
    n = max((max(v.shape, default=1) for v in before.values()), default=1)
    compared: list[tuple[str, Any, Any]] = [
        (f"output {name}", expected[name], got[name])
        for name, old in before.items()
        if _changed(old, expected[name]) or _changed(old, got[name])
    ]
    if len(ref_results) != len(results):
        out.write(
            f"  verify: FAILED: the kernel returned {len(results)} values, "
            f"the reference {len(ref_results)}\n"
        )
        return 1
    compared += [
        (f"result {i}", r, g) for i, (r, g) in enumerate(zip(ref_results, results, strict=True))
    ]
    if not compared:
        out.write("  no output: no memref argument changed and nothing was returned\n")
    failed: list[str] = []
    for label, ref, value in compared:
        d = compare(ref, value, exact=exact, n=n)
        out.write(f"  {label}: {_summary(value)}\n    vs reference: {describe_difference(d)}\n")
        if not d.ok:
            failed.append(label)
    if failed:
        out.write(
            f"  verify: FAILED: {', '.join(failed)} differ{'s' if len(failed) == 1 else ''} "
            "from the reference\n"
        )
        return 1
    if exact:
        out.write("  verify: ok, exactly equal to the reference (the kernel keeps its order)\n")
    else:
        out.write(
            "  verify: ok, equal to the reference within the tolerance of an inexact kernel\n"
        )
    return 0
