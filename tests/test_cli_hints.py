"""Hints the command line prints name only what the command line has: an illegal
recipe's hint says `polykrnl check` where Python's says force=True and sched.check()."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

import polykrnl as pk
from polykrnl.cli import main

CORPUS = Path(__file__).resolve().parent / "corpus"


def _exits(*argv: str) -> str:
    """What `polykrnl ARGV` prints before argparse exits (--help)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stop:
        main(list(argv))
    assert stop.value.code == 0
    return out.getvalue()


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _options(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", text)) - {"--help"}


@pytest.mark.parametrize(
    "argv",
    [
        ["emit", "numpy"],
        ["emit", "numba"],
        ["emit", "pto", "--arch", "a2a3"],
        ["run"],
        ["run", "--verify"],
    ],
    ids=" ".join,
)
def test_illegal_recipe_hint_on_the_cli_names_no_python_keyword(argv: list[str]) -> None:
    path = str(CORPUS / "generic_form_loops.mlir")
    verb = [a for a in argv if not a.startswith("-") and a != "a2a3"]
    code, out, err = cli(*argv, path, "--func", "generic_sum_permuted")
    assert code == 2 and out == "" and "is illegal" in err
    hint = next(line for line in err.splitlines() if line.startswith("hint: "))
    assert "force=True" not in err and "sched.check()" not in err, hint
    assert "`polykrnl check`" in hint
    # every option the output mentions is one the verb has
    assert _options(err) <= _options(_exits(*verb, "--help")), err


def test_illegal_recipe_hint_in_python_keeps_force() -> None:
    fn = pk.load(CORPUS / "generic_form_loops.mlir")["generic_sum_permuted"]
    with pytest.raises(pk.IllegalTransformError) as e:
        pk.schedule(fn)
    assert e.value.hint is not None and "force=True applies it anyway" in e.value.hint
    assert "force=True" in str(e.value)
    assert pk.schedule(fn, force=True).check().legal is False


def test_check_report_on_the_cli_names_no_python_keyword() -> None:
    code, out, err = cli(
        "check", str(CORPUS / "generic_form_loops.mlir"), "--func", "generic_sum_permuted"
    )
    assert code == 1 and "ILLEGAL" in out
    assert "force=True" not in out + err
