"""The `polykrnl` command's arguments: one parser per verb, with the help each prints.

Kept apart from `cli.py`, which runs the verbs: building the parser imports nothing
heavy (`polykrnl --help` and `--version` answer at once).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn, TextIO

Handler = Callable[[argparse.Namespace, TextIO, TextIO], int]


class UsageError(Exception):
    """A command line argparse or a verb refuses (printed with the usage, exit 2)."""


class CliArgumentParser(argparse.ArgumentParser):
    """argparse that reports usage errors in polykrnl's format instead of exiting itself."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


DEFAULT_TIME_LIMIT = 60.0
_FILE = "a Krnl MLIR file (onnx-mlir's --EmitKrnl output, or written by hand)"


def _add_time_limit(sp: argparse.ArgumentParser) -> None:
    sp.add_argument(
        "--time-limit",
        type=float,
        default=DEFAULT_TIME_LIMIT,
        metavar="SECONDS",
        help=f"stop with an error if the command runs longer than SECONDS (default "
        f"{DEFAULT_TIME_LIMIT:g}; 0: no limit)",
    )


def versions() -> str:
    """`polykrnl X.Y.Z`, then the versions of the libraries it computes with.

    Read from the installed distributions' metadata: importing islpy, xdsl or numpy to
    ask them would take longer than the answer is worth.
    """
    from importlib import metadata

    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "not installed"

    import polykrnl

    deps = ", ".join(f"{d} {version(d)}" for d in ("islpy", "xdsl", "numpy"))
    python = ".".join(str(n) for n in sys.version_info[:3])
    return f"polykrnl {polykrnl.__version__}\n{deps}, Python {python}\n"


class _VersionAction(argparse.Action):
    """--version: computed when asked (argparse's own needs the text up front)."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        sys.stdout.write(versions())
        parser.exit()


def _verb(group: Any, name: str, summary: str) -> CliArgumentParser:
    """A verb's parser: `summary` is its line in the parent's --help and the description
    its own --help starts with."""
    sp: CliArgumentParser = group.add_parser(name, help=summary, description=summary)
    return sp


def build_parser(handlers: Mapping[str, Handler]) -> CliArgumentParser:
    """The parser of every verb; `handlers` runs each (keys: \"print\", ..., \"emit numpy\")."""
    p = CliArgumentParser(
        prog="polykrnl",
        description="Polyhedral loop transformation for ONNX-MLIR Krnl programs.",
    )
    p.add_argument(
        "--version",
        action=_VersionAction,
        help="print polykrnl's version and those of islpy, xdsl and numpy, and exit",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=CliArgumentParser)
    sub.required = True
    _analysis_verbs(sub, handlers)
    _emit_verb(sub, handlers)
    _run_verb(sub, handlers)
    _tune_verb(sub, handlers)
    _other_verbs(sub, handlers)
    return p


def _analysis_verbs(sub: Any, handlers: Mapping[str, Handler]) -> None:
    """print, verify, lower, check, trace: the verbs that read and analyse a file."""
    sp = _verb(sub, "print", "parse a Krnl file and print it back (round trip)")
    sp.add_argument("file", help=_FILE)
    sp.add_argument("--generic", action="store_true", help="print the generic MLIR form")
    sp.set_defaults(handler=handlers["print"])

    sp = _verb(
        sub,
        "verify",
        "structural and scoping checks; prints 'ok' (several files: 'FILE: ok' or the "
        "error of each, exit 2 if any fails)",
    )
    sp.add_argument("file", metavar="FILE", help=_FILE)
    sp.add_argument(
        "more", nargs="*", metavar="FILE", help="more files, checked in the same process"
    )
    sp.set_defaults(handler=handlers["verify"])

    sp = _verb(sub, "lower", "the loop nest after the Krnl recipe, as a loop tree")
    sp.add_argument("file", help=_FILE)
    sp.add_argument(
        "--func",
        help="only this function (default: every function of the file, each after a line "
        "'// @NAME' when there are several)",
    )
    sp.add_argument(
        "--json",
        action="store_true",
        help="print the loop tree as JSON: one object with --func, else a list of one "
        "object per function in file order (even when the file has a single function)",
    )
    _add_time_limit(sp)
    sp.set_defaults(handler=handlers["lower"])

    sp = _verb(
        sub,
        "check",
        "legality of the Krnl recipe, with a witness for each violated dependence, and "
        "memory safety per array: exit 0 legal, 1 illegal or an array out of bounds for "
        "every size, 4 not proven, 2 bad input",
    )
    sp.add_argument("file", help=_FILE)
    sp.add_argument("--func", help="only this function (default: every function of the file)")
    sp.add_argument(
        "--json",
        action="store_true",
        help='print {"legal", "verdict" (legal, illegal or unproven), "violations", "bands", '
        '"loops", "memory"}: one object with --func, else a list of one object per function',
    )
    _add_time_limit(sp)
    sp.set_defaults(handler=handlers["check"])

    sp = _verb(sub, "trace", "the statement instances in execution order after the recipe")
    sp.add_argument("file", help=_FILE)
    sp.add_argument(
        "--func", help="the function to trace (default: the only one; required if several)"
    )
    sp.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=N",
        help="an index argument (N=10) or a dynamic memref dimension (A.0=64); "
        "every symbolic size of the function needs one",
    )
    sp.add_argument(
        "--json",
        action="store_true",
        help='print a JSON list of {"stmt": "S0", "point": {"i": 0, ...}}, one instance per '
        "line; the keys of point are the original induction variables",
    )
    _add_time_limit(sp)
    sp.set_defaults(handler=handlers["trace"])


def _module_arguments(tp: argparse.ArgumentParser) -> None:
    """FILE, --func and -o of the emit verbs that write one module for a whole file."""
    tp.add_argument("file", help=_FILE)
    tp.add_argument(
        "--func", help="only this function (default: every function of the file, in one module)"
    )
    tp.add_argument(
        "-o", "--output", metavar="OUT", help="write the module to OUT (default: standard output)"
    )


def _emit_verb(sub: Any, handlers: Mapping[str, Handler]) -> None:
    """emit numpy / numba / mlir / pto: generated code to a file or standard output."""
    sp = _verb(
        sub,
        "emit",
        "generate code after the Krnl recipe: a NumPy or Numba Python module, standard MLIR, "
        "or PTO C++",
    )
    targets = sp.add_subparsers(dest="target", metavar="TARGET", parser_class=CliArgumentParser)
    targets.required = True
    tp = _verb(
        targets,
        "numpy",
        "a standalone Python module that imports only numpy: one function per Krnl "
        "function, after its recipe",
    )
    _module_arguments(tp)
    tp.add_argument(
        "--threads",
        action="store_true",
        help="run krnl.parallel loops that stay Python loops around array code on threads",
    )
    _add_time_limit(tp)
    tp.set_defaults(handler=handlers["emit numpy"])
    tp = _verb(
        targets,
        "numba",
        "a Python module of Numba @njit functions (needs polykrnl[numba]): scalar loops "
        "in the schedule's order, krnl.parallel loops as prange",
    )
    _module_arguments(tp)
    tp.add_argument(
        "--sequential", action="store_true", help="krnl.parallel loops as plain range loops"
    )
    tp.add_argument(
        "--no-boundscheck",
        action="store_true",
        help="no Numba index checks even where the bounds guard does not prove every access "
        "(faster; an access outside an array is then undefined behaviour); by default they "
        "are off only where the guard proves every access in bounds",
    )
    _add_time_limit(tp)
    tp.set_defaults(handler=handlers["emit numba"])
    tp = _verb(
        targets,
        "mlir",
        "standard MLIR (scf, arith, math, memref) that mlir-opt accepts: the loops in the "
        "schedule's order, krnl.parallel loops that legality proves parallel as scf.parallel",
    )
    tp.add_argument("file", help=_FILE)
    tp.add_argument("--func", help="the function to emit (needed when the file defines several)")
    tp.add_argument(
        "-o", "--output", metavar="OUT", help="write the module to OUT (default: standard output)"
    )
    tp.add_argument(
        "--sequential", action="store_true", help="krnl.parallel loops as plain scf.for loops"
    )
    _add_time_limit(tp)
    tp.set_defaults(handler=handlers["emit mlir"])
    _emit_pto_verb(targets, handlers)


def _emit_pto_verb(targets: Any, handlers: Mapping[str, Handler]) -> None:
    """emit pto: the C++ kernel for the PTO tile ISA, or a whole program with --harness."""
    tp = _verb(
        targets,
        "pto",
        "C++ for the PTO tile ISA (Ascend): tiles, TLOAD/TSTORE and vector/cube "
        "instructions, with the tmp tiles' sizes in a comment (formulas, and bytes for the "
        "given sizes)",
    )
    tp.add_argument("file", help=_FILE)
    tp.add_argument("--arch", required=True, help="a2a3 or a5")
    tp.add_argument("--func", help="the function (default: the only one)")
    tp.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=N",
        help="a size: an index argument (N=40) or a memref dimension (A.0=40)",
    )
    tp.add_argument(
        "--harness",
        action="store_true",
        help="add a main: ./prog ARG0.bin ARG1.bin ... (one raw file per memref argument, "
        "read, run, written back); needs every size",
    )
    tp.add_argument(
        "--single-buffer",
        action="store_true",
        help="one copy of every tile: no overlap of the next tile's load with this tile's "
        "compute (default: double buffering where the copies fit)",
    )
    tp.add_argument("-o", "--output", metavar="OUT", help="write to OUT (default: stdout)")
    _add_time_limit(tp)
    tp.set_defaults(handler=handlers["emit pto"])


def _run_verb(sub: Any, handlers: Mapping[str, Handler]) -> None:
    """run: a generated kernel or the reference interpreter on random or given inputs."""
    sp = _verb(
        sub,
        "run",
        "run a function's generated kernel (NumPy, Numba or MLIR), the reference interpreter, or "
        "both compared (--verify), on random or given inputs; prints times and a summary "
        "of what it wrote",
    )
    sp.add_argument("file", help=_FILE)
    sp.add_argument("--func", help="the function to run (default: the only one)")
    sp.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=N",
        help="a scalar argument (N=64) or a dynamic memref dimension (A.0=64)",
    )
    sp.add_argument(
        "--size",
        type=int,
        default=None,
        help="value of the dynamic dimensions and index/integer arguments no --param sets "
        "(default 16; with the reference interpreter, 8, 4 or 2 when 16 would keep it "
        "running more than a few seconds: the run says so)",
    )
    mode = sp.add_mutually_exclusive_group()
    mode.add_argument(
        "--reference",
        action="store_true",
        help="run the reference interpreter instead of the generated kernel",
    )
    mode.add_argument(
        "--verify",
        action="store_true",
        help="run both on the same inputs and compare every output: exit 1 if they differ "
        "(exactly for an exact kernel, else beyond the tolerance of reassociated sums)",
    )
    sp.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    sp.add_argument(
        "--target",
        choices=("numpy", "numba", "mlir"),
        default="numpy",
        help="the generated kernel to run: NumPy (default), Numba (needs polykrnl[numba]; "
        "krnl.parallel loops that legality proves parallel run on Numba's threads) or MLIR "
        "(standard MLIR compiled natively; needs mlir-opt-19, mlir-translate-19, clang-19)",
    )
    sp.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="NAME=FILE.npy",
        help="the data of memref argument NAME, from a NumPy .npy file, instead of random "
        "data (it also sets NAME's dynamic dimensions)",
    )
    sp.add_argument(
        "--threads",
        action="store_true",
        help="run krnl.parallel loops that stay Python loops around array code on threads "
        "(to_numpy(parallel=True))",
    )
    sp.set_defaults(handler=handlers["run"])


def _tune_verb(sub: Any, handlers: Mapping[str, Handler]) -> None:
    """tune: search the legal schedules of a function for the fastest, by measured time."""
    sp = _verb(
        sub,
        "tune",
        "search the legal schedules of a function (blocking, orders, unrolling, the parallel "
        "loop) for the fastest by measured time on the Numba target; prints the winner as "
        "Krnl and Python, and writes the file with the winner's recipe (-o)",
    )
    sp.add_argument("file", help=_FILE)
    sp.add_argument(
        "--function", "--func", dest="func", help="the function to tune (default: the only one)"
    )
    sp.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=N",
        help="a size the kernel is timed at, as `run` takes it: a scalar argument (N=1000) "
        "or a dynamic memref dimension (A.0=1000)",
    )
    sp.add_argument(
        "--size",
        type=int,
        default=16,
        help="value of the dynamic dimensions and index arguments no --param sets",
    )
    sp.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="NAME=FILE.npy",
        help="a sample of memref argument NAME (a NumPy .npy file): its shape sets NAME's "
        "dynamic dimensions, as `run --input` does",
    )
    sp.add_argument(
        "--budget",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="how long to search (default 120)",
    )
    sp.add_argument(
        "--target",
        choices=("numba", "mlir"),
        default="numba",
        help="what to time on: Numba, or native code through MLIR's own tools (mlir-opt, "
        "mlir-translate, clang)",
    )
    sp.add_argument(
        "--threads",
        action="store_true",
        help="time parallel kernels (krnl.parallel loops on Numba's threads) and search the "
        "parallel loop too (default: one thread)",
    )
    sp.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="measure on the workers of a Dask cluster (tcp://HOST:8786) instead of local "
        "processes; needs polykrnl[tune]",
    )
    sp.add_argument(
        "--workers", type=int, help="local processes measuring candidates (default: one per core)"
    )
    sp.add_argument("--seed", type=int, help="seed of the sampler (default: random)")
    sp.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="write FILE with the function's recipe replaced by the winner's (check, run "
        "and emit take it)",
    )
    sp.set_defaults(handler=handlers["tune"])


def _other_verbs(sub: Any, handlers: Mapping[str, Handler]) -> None:
    """ops and demo."""
    sp = _verb(
        sub,
        "ops",
        "every op polykrnl parses and which stages support it (interpret, poly, and each "
        "target: numpy, numba, pto, mlir)",
    )
    sp.add_argument("--json", action="store_true", help="a JSON list, one object per op")
    sp.add_argument("--dialect", help="only the ops of this dialect (arith, krnl, ...)")
    sp.set_defaults(handler=handlers["ops"])

    sp = _verb(
        sub,
        "demo",
        "an end-to-end tour on built-in examples (a tiled matmul, a stencil tiled after a "
        "skew, a softmax on PTO), each result checked: exit 1 if a check fails",
    )
    sp.set_defaults(handler=handlers["demo"])
