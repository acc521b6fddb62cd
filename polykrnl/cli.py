"""The `polykrnl` command.

Every failure a user can cause exits with status 2 and prints
`error: FILE:LINE:COL: message`, the offending line with a caret, and a hint;
never a Python traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn, TextIO

from polykrnl.errors import PolykrnlError

EXIT_OK = 0
EXIT_FAIL = 1  # a verdict that is "no" (an illegal schedule), not bad input
EXIT_BAD_INPUT = 2


class _UsageError(Exception):
    pass


class _ArgumentParser(argparse.ArgumentParser):
    """argparse that reports usage errors in polykrnl's format instead of exiting itself."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def _parse_params(items: Sequence[str]) -> dict[str, int]:
    params: dict[str, int] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise _UsageError(f"--param takes NAME=INTEGER, got '{item}'")
        try:
            params[name] = int(value)
        except ValueError:
            raise _UsageError(f"--param {name} needs an integer value, got '{value}'") from None
    return params


def _cmd_print(args: argparse.Namespace, out: TextIO) -> int:
    from polykrnl.model.parser import load

    out.write(load(args.file).print(generic=args.generic))
    return EXIT_OK


def _cmd_verify(args: argparse.Namespace, out: TextIO) -> int:
    from polykrnl.model.parser import load
    from polykrnl.model.verifier import verify

    verify(load(args.file))
    out.write("ok\n")
    return EXIT_OK


def _parse_run_params(items: Sequence[str]) -> dict[str, float]:
    """`run` params: NAME=NUMBER for a scalar argument, ARG.DIM=INT for a memref dimension."""
    params: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        arg, dot, dim = name.partition(".")
        if not sep or not arg.isidentifier() or (dot and not dim.isdigit()):
            raise _UsageError(f"--param takes NAME=NUMBER or ARG.DIM=SIZE, got '{item}'")
        try:
            params[name] = int(value)
        except ValueError:
            try:
                params[name] = float(value)
            except ValueError:
                raise _UsageError(f"--param {name} needs a number, got '{value}'") from None
    return params


def _cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    from polykrnl.model.parser import load
    from polykrnl.runner import run_cli

    return run_cli(
        load(args.file),
        func=args.func,
        params=_parse_run_params(args.param),
        reference=args.reference,
        verify=args.verify,
        seed=args.seed,
        out=out,
        size=args.size,
    )


def _cmd_demo(args: argparse.Namespace, out: TextIO) -> int:
    from polykrnl.demo import run_demo

    return run_demo(out)


def _build_parser() -> _ArgumentParser:
    p = _ArgumentParser(
        prog="polykrnl",
        description="Polyhedral loop transformation for ONNX-MLIR Krnl programs.",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_ArgumentParser)
    sub.required = True

    sp = sub.add_parser("print", help="parse a Krnl file and print it back (round trip)")
    sp.add_argument("file")
    sp.add_argument("--generic", action="store_true", help="print the generic MLIR form")
    sp.set_defaults(handler=_cmd_print)

    sp = sub.add_parser("verify", help="structural and scoping checks; prints 'ok'")
    sp.add_argument("file")
    sp.set_defaults(handler=_cmd_verify)

    sp = sub.add_parser("run", help="run a function on random inputs")
    sp.add_argument("file")
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
        default=16,
        help="value of the dynamic dimensions and index/integer arguments no --param sets",
    )
    sp.add_argument("--reference", action="store_true", help="run the reference interpreter")
    sp.add_argument("--verify", action="store_true", help="compare with the reference")
    sp.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    sp.set_defaults(handler=_cmd_run)

    sp = sub.add_parser("demo", help="an end-to-end tour on a built-in example")
    sp.set_defaults(handler=_cmd_demo)
    return p


def main(
    argv: Sequence[str] | None = None,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run the CLI; returns the exit status (the console script exits with it)."""
    out = out or sys.stdout
    err = err or sys.stderr
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        handler: Callable[[argparse.Namespace, TextIO], int] = args.handler
        return handler(args, out)
    except _UsageError as e:
        err.write(f"error: {e}\n{parser.format_usage()}")
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


def entry_point() -> NoReturn:
    sys.exit(main())


if __name__ == "__main__":
    entry_point()
