"""The `polykrnl` command.

Every failure a user can cause exits with status 2 and prints
`error: FILE:LINE:COL: message`, the offending line with a caret, and a hint;
never a Python traceback.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

from polykrnl.cli_parser import Handler, UsageError, build_parser
from polykrnl.errors import ArgumentError, ComplexityError, PolykrnlError

if TYPE_CHECKING:
    from polykrnl.ir import Function, Module
    from polykrnl.targets.numba.kernel import NumbaKernel
    from polykrnl.targets.numpy.kernel import NumpyKernel

EXIT_OK = 0
EXIT_FAIL = 1  # a verdict that is "no" (an illegal schedule), not bad input
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3  # a bug in polykrnl: reported in one paragraph, not as a traceback
EXIT_UNPROVEN = 4  # `check`: only may-dependences, through approximated statements


def _param_items(items: Sequence[str], form: str, option: str = "--param") -> list[tuple[str, str]]:
    """The NAME=VALUE pairs of --param options; NAME is an identifier or ARG.DIM (for
    --param only)."""
    pairs: list[tuple[str, str]] = []
    for item in items:
        name, sep, value = item.partition("=")
        arg, dot, dim = name.partition(".")
        if (
            not sep
            or not arg.isidentifier()
            or (dot and (not dim.isdigit() or option != "--param"))
        ):
            raise UsageError(f"{option} takes {form}, got '{item}'")
        pairs.append((name, value))
    return pairs


def _parse_params(items: Sequence[str]) -> dict[str, int]:
    """Integer params: NAME=INT for an index argument, ARG.DIM=INT for a memref dimension."""
    params: dict[str, int] = {}
    for name, value in _param_items(items, "NAME=INTEGER or ARG.DIM=INTEGER"):
        try:
            params[name] = int(value)
        except ValueError:
            raise UsageError(f"--param {name} needs an integer value, got '{value}'") from None
    return params


def _definitions(module: Module) -> list[Function]:
    """The functions with a body (declarations have nothing to schedule)."""
    return [f for f in module.functions if f.op.body.blocks]


def _cmd_print(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from polykrnl.reader.parser import load
    from polykrnl.verifier import verify

    module = load(args.file)
    try:
        text = module.print(generic=args.generic)
    except Exception:
        # An op too malformed to print (its operand segments disagree with its
        # operands, say): the verifier says which and where.
        verify(module)
        raise
    out.write(text)
    return EXIT_OK


def _cmd_ops(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from polykrnl.ops import SupportTable, supported_ops

    table = supported_ops()
    if args.dialect is not None:
        rows = tuple(r for r in table.rows if r.dialect == args.dialect)
        if not rows:
            dialects = sorted({r.dialect for r in table.rows})
            raise UsageError(
                f"no dialect named {args.dialect!r}; polykrnl parses {', '.join(dialects)}"
            )
        table = SupportTable(table.stages, rows)
    out.write((table.to_json() if args.json else str(table)) + "\n")
    return EXIT_OK


def _cmd_verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from polykrnl.reader.parser import load
    from polykrnl.verifier import verify

    if not args.more:
        verify(load(args.file))
        out.write("ok\n")
        return EXIT_OK
    # Several files in one process: the start-up (importing xDSL's dialects, most of a
    # one-file run) is paid once. Each file gets its line; a bad one does not stop the rest.
    files = [args.file, *args.more]
    failed = 0
    for file in files:
        try:
            verify(load(file))
        except PolykrnlError as e:
            failed += 1
            out.flush()
            err.write(e.render(default_file=file) + "\n")
            continue
        out.write(f"{file}: ok\n")
    if failed:
        err.write(f"error: {failed} of {len(files)} files failed verification\n")
        return EXIT_BAD_INPUT
    return EXIT_OK


def _parse_run_params(items: Sequence[str]) -> dict[str, float]:
    """`run` params: NAME=NUMBER for a scalar argument, ARG.DIM=INT for a memref dimension."""
    params: dict[str, float] = {}
    for name, value in _param_items(items, "NAME=NUMBER or ARG.DIM=SIZE"):
        try:
            params[name] = int(value)
        except ValueError:
            try:
                params[name] = float(value)
            except ValueError:
                raise UsageError(f"--param {name} needs a number, got '{value}'") from None
    return params


def _cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from polykrnl.reader.parser import load
    from polykrnl.runner import run_cli
    from polykrnl.verifier import verify

    module = load(args.file)
    verify(module)  # as every other verb: a malformed program is reported, not run
    return run_cli(
        module,
        func=args.func,
        params=_parse_run_params(args.param),
        reference=args.reference,
        verify=args.verify,
        seed=args.seed,
        out=out,
        size=args.size,
        parallel=args.threads,
        input_files=dict(_param_items(args.input, "NAME=FILE.npy", "--input")),
        target=args.target,
    )


def _cmd_emit_numpy(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from polykrnl.codegen.module_source import standalone_module
    from polykrnl.pipeline import schedule
    from polykrnl.reader.parser import load
    from polykrnl.targets.numpy.kernel import NumpyKernel
    from polykrnl.verifier import verify

    module = load(args.file)
    verify(module)
    functions = [module[args.func]] if args.func is not None else _definitions(module)
    if not functions:
        raise ArgumentError("the module defines no function: there is nothing to emit")
    kernels: list[NumpyKernel] = []
    for fn in functions:
        # The function's Krnl recipe, checked: an illegal one raises, located at its op.
        kernel = schedule(fn).to_numpy(parallel=args.threads)
        assert isinstance(kernel, NumpyKernel)
        kernels.append(kernel)
    # The whole text is built before anything is written: an error leaves no partial file.
    text = standalone_module(kernels, Path(args.file).name)
    return _emit(out, args.output, text, ", ".join(k.entry for k in kernels))


def _cmd_emit_numba(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from polykrnl.codegen.module_source import standalone_module
    from polykrnl.pipeline import schedule
    from polykrnl.reader.parser import load
    from polykrnl.verifier import verify

    module = load(args.file)
    verify(module)
    functions = [module[args.func]] if args.func is not None else _definitions(module)
    if not functions:
        raise ArgumentError("the module defines no function: there is nothing to emit")
    kernels: list[NumbaKernel] = []
    for fn in functions:
        kernels.append(
            schedule(fn).to_numba(
                parallel=not args.sequential, boundscheck=False if args.no_boundscheck else None
            )
        )
    text = standalone_module(kernels, Path(args.file).name)
    return _emit(out, args.output, text, ", ".join(k.entry for k in kernels))


def _cmd_emit_mlir(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from polykrnl.pipeline import schedule
    from polykrnl.reader.parser import load
    from polykrnl.runner import choose_function
    from polykrnl.verifier import verify

    module = load(args.file)
    verify(module)
    fn = choose_function(module, args.func, question="which one should be emitted?")
    kernel = schedule(fn).to_mlir(parallel=not args.sequential)
    return _emit(out, args.output, kernel.source, f"@{kernel.symbol}")


def _emit(out: TextIO, output: str | None, text: str, what: str) -> int:
    """`text` to standard output, or to the file `output` (then say `wrote OUT: what`)."""
    if output is None:
        out.write(text)
        return EXIT_OK
    try:
        Path(output).write_text(text)
    except OSError as e:
        raise ArgumentError(
            f"cannot write {output}: {e.strerror or e}",
            hint="-o takes the path of a file in an existing, writable directory",
        ) from None
    out.write(f"wrote {output}: {what}\n")
    return EXIT_OK


def _cmd_emit_pto(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from polykrnl.pipeline import schedule
    from polykrnl.reader.parser import load
    from polykrnl.runner import choose_function
    from polykrnl.targets.pto.types import arch
    from polykrnl.verifier import verify

    target = arch(args.arch)  # an unknown name is refused before anything else
    sizes = _parse_params(args.param)
    module = load(args.file)
    verify(module)
    fn = choose_function(module, args.func, question="which one should be emitted?")
    sched = schedule(fn)
    # --param names are the user's (N, A.0); the static shapes take isl names (A_d0).
    by_display = {d: p for p, d in sched.program.param_display.items()}
    isl_sizes = {by_display.get(n, n): v for n, v in sizes.items()}
    kernel = sched.to_pto(target.name, params=isl_sizes, double_buffer=not args.single_buffer)
    known = set(kernel.params.values())
    unknown = sorted(set(sizes) - known - set(by_display))
    if unknown:
        raise ArgumentError(
            f"--param {unknown[0]}: @{fn.name} has no size of that name",
            hint="sizes of this kernel: " + (", ".join(sorted(known)) or "none"),
        )
    if args.harness:
        missing = sorted(known - set(sizes))
        if missing:
            raise ArgumentError(
                f"--harness fixes every size of @{fn.name}; missing: {', '.join(missing)}",
                hint="add " + " ".join(f"--param {m}=64" for m in missing),
            )
        text = kernel.harness(**sizes)
    else:
        text = kernel.source
    from polykrnl.codegen.safe_text import cpp_comment_text

    lines = [f"// tmp tiles of {kernel.program.name} ({target.title}), bytes needed:"]
    given = {p: sizes[src] for p, src in kernel.params.items() if src in sizes}
    try:
        numbers = kernel.tmp_bytes(**given)
    except ArgumentError:  # not every size the formulas use was given: formulas only
        numbers = {}
    for name, expr in kernel.tmp_sizes.items():
        at = f" = {numbers[name]} at the given sizes" if name in numbers else ""
        lines.append("//   " + cpp_comment_text(f"{name}: {expr}{at}"))
    if not kernel.tmp_sizes:
        lines.append("//   none")
    if kernel.lowered.fixed:
        at = ", ".join(f"{kernel.params[p]} = {v}" for p, v in kernel.lowered.fixed.items())
        only = f"emitted for {at} only: static tile shapes come from these sizes"
        lines.append("// " + cpp_comment_text(only))
    text += "\n".join(lines) + "\n"
    what = "C++ kernel with a main for the CPU simulator" if args.harness else "C++ kernel"
    return _emit(out, args.output, text, f"{what} {kernel.program.name}")


def _cmd_lower(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from polykrnl.codegen.safe_text import comment_text
    from polykrnl.pipeline import schedule
    from polykrnl.reader.parser import load
    from polykrnl.verifier import verify

    module = load(args.file)
    verify(module)
    functions = [module[args.func]] if args.func is not None else _definitions(module)
    # Every tree is built before anything is printed: an error leaves no partial output.
    # The nest as the recipe builds it, legal or not (`check` judges it).
    trees = [schedule(fn, force=True).loops() for fn in functions]
    if args.json:
        data: object = trees[0].to_json() if args.func is not None else [t.to_json() for t in trees]
        out.write(json.dumps(data, indent=2) + "\n")
        return EXIT_OK
    for i, tree in enumerate(trees):
        if len(trees) > 1:
            out.write(("\n" if i else "") + f"// @{comment_text(tree.function)}\n")
        out.write(str(tree))
    return EXIT_OK


def _cmd_trace(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from polykrnl.pipeline import schedule
    from polykrnl.reader.parser import load
    from polykrnl.runner import choose_function
    from polykrnl.verifier import verify

    params = _parse_params(args.param)
    module = load(args.file)
    verify(module)
    fn = choose_function(module, args.func, question="which one should be traced?")
    instances = schedule(fn, force=True).trace(**params)
    if args.json:
        # One instance per line: still one JSON list, and long traces stay greppable.
        items = [json.dumps({"stmt": stmt, "point": point}) for stmt, point in instances]
        out.write("[\n" + ",\n".join(items) + "\n]\n" if items else "[]\n")
        return EXIT_OK
    for stmt, point in instances:
        out.write(" ".join([stmt, *(f"{iv}={v}" for iv, v in point.items())]) + "\n")
    return EXIT_OK


def _cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from polykrnl.pipeline import check
    from polykrnl.reader.parser import load
    from polykrnl.verifier import verify

    module = load(args.file)
    verify(module)
    functions = [module[args.func]] if args.func is not None else _definitions(module)
    reports = [check(fn) for fn in functions]
    if args.json:
        data = [r.to_json() for r in reports]
        out.write(json.dumps(data[0] if args.func is not None else data, indent=2) + "\n")
    else:
        out.write("\n".join(str(r) for r in reports) + "\n")
    # An access out of bounds for every size is an error in the program, as a violation is.
    worst = {r.verdict for r in reports}
    if any(r.memory is not None and not r.memory.safe for r in reports):
        worst.add("illegal")
    return EXIT_FAIL if "illegal" in worst else (EXIT_UNPROVEN if "unproven" in worst else EXIT_OK)


def _cmd_tune(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from polykrnl.inputs import load_inputs
    from polykrnl.reader.parser import load
    from polykrnl.runner import choose_function
    from polykrnl.tuning import tune
    from polykrnl.verifier import verify

    if args.workers is not None and args.workers < 0:
        raise UsageError(f"--workers cannot be negative ({args.workers})")
    params = _parse_run_params(args.param)
    module = load(args.file)
    verify(module)
    fn = choose_function(module, args.func, question="which one should be tuned?")
    sample = load_inputs(fn, dict(_param_items(args.input, "NAME=FILE.npy", "--input")))

    def progress(p: object) -> None:
        from polykrnl.tuning.search import Progress

        assert isinstance(p, Progress)
        best = "-" if p.best is None else f"{p.best * 1e3:.3f} ms"
        left = max(0.0, p.budget - p.elapsed)
        err.write(
            f"\rtune @{fn.name}: {p.tried} tried, {p.pruned} pruned, best {best}, "
            f"{left:.0f} s left   "
        )
        err.flush()

    result = tune(
        fn,
        params,
        budget=args.budget,
        target=args.target,
        dask=args.dask,
        seed=args.seed,
        threads=args.threads,
        workers=args.workers,
        size=args.size,
        # the output is Krnl text, which has no skew
        skew=args.output is None,
        progress=progress,
        sample=sample,
    )
    err.write("\n")
    out.write(str(result) + "\n\n# the winner in Python\n" + result.script + "\n")
    if args.output is None:
        out.write("\n// the winner in Krnl\n")
    try:
        text = result.krnl
    except PolykrnlError as e:  # a skewed winner: Krnl has no skew op
        out.write(f"// not written as Krnl: {e.message}\n")
        return EXIT_OK
    if args.output is None:
        out.write(text)
        return EXIT_OK
    return _emit(out, args.output, text, f"@{fn.name} with the winner's recipe")


def _cmd_demo(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from polykrnl.demo import run_demo

    return run_demo(out)


_HANDLERS: dict[str, Handler] = {
    "print": _cmd_print,
    "verify": _cmd_verify,
    "lower": _cmd_lower,
    "check": _cmd_check,
    "trace": _cmd_trace,
    "emit numpy": _cmd_emit_numpy,
    "emit numba": _cmd_emit_numba,
    "emit mlir": _cmd_emit_mlir,
    "emit pto": _cmd_emit_pto,
    "run": _cmd_run,
    "tune": _cmd_tune,
    "ops": _cmd_ops,
    "demo": _cmd_demo,
}


def main(
    argv: Sequence[str] | None = None,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run the CLI; returns the exit status (the console script exits with it)."""
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser(_HANDLERS)
    try:
        args = parser.parse_args(argv)
    except UsageError as e:
        err.write(f"error: {e}\n{parser.format_usage()}")
        return EXIT_BAD_INPUT
    limit: float = getattr(args, "time_limit", 0.0)
    if limit <= 0:
        return _dispatch(args, out, err)
    from polykrnl.time_limit import TimeLimitExceeded, call_with_time_limit

    def work() -> tuple[int, str, str]:
        o, e = io.StringIO(), io.StringIO()
        return _dispatch(args, o, e), o.getvalue(), e.getvalue()

    try:
        status, printed, complained = call_with_time_limit(work, limit)
    except TimeLimitExceeded:
        verb = " ".join(filter(None, [args.command, getattr(args, "target", None)]))
        stopped = ComplexityError(
            f"`polykrnl {verb}` stopped after {limit:g} s (--time-limit): the polyhedral "
            "analysis of this program takes too long",
            hint="fewer or smaller tiles, fewer nested loops or parameters, or smaller "
            "constants make it tractable; --time-limit 0 waits as long as it takes",
        )
        err.write(stopped.render(default_file=args.file) + "\n")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        err.write("error: interrupted\n")
        return 130
    out.write(printed)
    err.write(complained)
    return status


def _dispatch(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run the verb of `args`, every failure turned into a message and an exit status."""
    try:
        handler: Handler = args.handler
        return handler(args, out, err)
    except UsageError as e:
        err.write(f"error: {e}\n{build_parser(_HANDLERS).format_usage()}")
        return EXIT_BAD_INPUT
    except PolykrnlError as e:
        file = getattr(args, "file", "<input>")
        err.write(e.render(default_file=file) + "\n")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        err.write("error: interrupted\n")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as e:  # a bug in polykrnl, not bad input: say so, and where
        tb = traceback.extract_tb(e.__traceback__)
        own = [f for f in tb if "polykrnl" in f.filename] or tb
        where = f"{Path(own[-1].filename).name}:{own[-1].lineno} ({own[-1].name})" if own else "?"
        file = getattr(args, "file", None)
        err.write(
            f"error: internal error in polykrnl ({type(e).__name__} at {where}): {e}\n"
            "hint: this is a bug in polykrnl, not in your input: please report it with the "
            f"input file{f' ({file})' if file else ''} and the command\n"
        )
        return EXIT_INTERNAL


def entry_point() -> NoReturn:
    sys.exit(main())


if __name__ == "__main__":
    entry_point()
