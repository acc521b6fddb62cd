"""The `polykrnl` command.

Every failure a user can cause exits with status 2 and prints
`error: FILE:LINE:COL: message`, the offending line with a caret, and a hint;
never a Python traceback.
"""

from __future__ import annotations

import argparse
import json
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


def _param_items(items: Sequence[str], form: str) -> list[tuple[str, str]]:
    """The NAME=VALUE pairs of --param options; NAME is an identifier or ARG.DIM."""
    pairs: list[tuple[str, str]] = []
    for item in items:
        name, sep, value = item.partition("=")
        arg, dot, dim = name.partition(".")
        if not sep or not arg.isidentifier() or (dot and not dim.isdigit()):
            raise _UsageError(f"--param takes {form}, got '{item}'")
        pairs.append((name, value))
    return pairs


def _parse_params(items: Sequence[str]) -> dict[str, int]:
    """Integer params: NAME=INT for an index argument, ARG.DIM=INT for a memref dimension."""
    params: dict[str, int] = {}
    for name, value in _param_items(items, "NAME=INTEGER or ARG.DIM=INTEGER"):
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
    for name, value in _param_items(items, "NAME=NUMBER or ARG.DIM=SIZE"):
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


def _cmd_lower(args: argparse.Namespace, out: TextIO) -> int:
    from polykrnl.model.parser import load
    from polykrnl.model.verifier import verify
    from polykrnl.transforms.recipe import schedule

    module = load(args.file)
    verify(module)
    functions = [module[args.func]] if args.func is not None else list(module.functions)
    # Every tree is built before anything is printed: an error leaves no partial output.
    # The nest as the recipe builds it, legal or not (`check` judges it).
    trees = [schedule(fn, force=True).loops() for fn in functions]
    if args.json:
        data: object = trees[0].to_json() if args.func is not None else [t.to_json() for t in trees]
        out.write(json.dumps(data, indent=2) + "\n")
        return EXIT_OK
    for i, tree in enumerate(trees):
        if len(trees) > 1:
            out.write(("\n" if i else "") + f"// @{tree.function}\n")
        out.write(str(tree))
    return EXIT_OK


def _cmd_trace(args: argparse.Namespace, out: TextIO) -> int:
    from polykrnl.model.parser import load
    from polykrnl.model.verifier import verify
    from polykrnl.runner import choose_function
    from polykrnl.transforms.recipe import schedule

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


def _cmd_check(args: argparse.Namespace, out: TextIO) -> int:
    from polykrnl.model.parser import load
    from polykrnl.model.verifier import verify
    from polykrnl.transforms.recipe import check

    module = load(args.file)
    verify(module)
    functions = [module[args.func]] if args.func is not None else list(module.functions)
    reports = [check(fn) for fn in functions]
    if args.json:
        data: object = (
            reports[0].to_json() if args.func is not None else [r.to_json() for r in reports]
        )
        out.write(json.dumps(data, indent=2) + "\n")
    else:
        out.write("\n".join(str(r) for r in reports) + "\n")
    return EXIT_OK if all(r.legal for r in reports) else EXIT_FAIL


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

    sp = sub.add_parser("lower", help="the final loop nest after the Krnl recipe")
    sp.add_argument("file")
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
    sp.set_defaults(handler=_cmd_lower)

    sp = sub.add_parser(
        "check", help="legality of the Krnl recipe: exit 0 legal, 1 illegal, 2 bad input"
    )
    sp.add_argument("file")
    sp.add_argument("--func", help="only this function (default: every function of the file)")
    sp.add_argument(
        "--json",
        action="store_true",
        help='print {"legal", "violations", "bands", "loops"}: one object with --func, else a '
        "list of one object per function",
    )
    sp.set_defaults(handler=_cmd_check)

    sp = sub.add_parser("trace", help="statement instances in execution order after the recipe")
    sp.add_argument("file")
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
    sp.set_defaults(handler=_cmd_trace)

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
