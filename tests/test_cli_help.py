"""What the command line says about itself: --version, and every verb's --help against
README.md's "Command line" section."""

from __future__ import annotations

import contextlib
import io
import re
from importlib import metadata
from pathlib import Path

import pytest

import polykrnl as pk
from polykrnl.cli import main

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
VERBS = [
    ["print"],
    ["verify"],
    ["lower"],
    ["check"],
    ["trace"],
    ["emit"],
    ["emit", "numpy"],
    ["emit", "numba"],
    ["emit", "pto"],
    ["run"],
    ["ops"],
    ["demo"],
]


def _exits(*argv: str) -> str:
    """What `polykrnl ARGV` prints before argparse exits (--help, --version)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stop:
        main(list(argv))
    assert stop.value.code == 0
    return out.getvalue()


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _readme_cli_section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("## Command line")
    return text[start : text.index("\n## ", start + 1)]


def _options(help_text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", help_text)) - {"--help"}


def test_version_reads_the_installed_distributions() -> None:
    lines = _exits("--version").splitlines()
    assert lines[0] == f"polykrnl {metadata.version('polykrnl')}"
    assert pk.__version__ == metadata.version("polykrnl")
    for dist in ("islpy", "xdsl", "numpy"):
        assert f"{dist} {metadata.version(dist)}" in lines[1]


def test_emit_help_names_every_target_not_only_numpy() -> None:
    top = _exits("--help")
    emit_line = top[top.index("    emit ") : top.index("    run ")]
    for target in ("NumPy", "Numba", "PTO"):
        assert target in emit_line, emit_line
    assert "standalone NumPy module" not in " ".join(emit_line.split())


@pytest.mark.parametrize("verb", VERBS, ids=" ".join)
def test_each_verb_help_has_its_summary_and_readme_documents_its_options(
    verb: list[str],
) -> None:
    own = _exits(*verb, "--help")
    # The summary the parent lists is also the verb's own description.
    parent = _exits(*verb[:-1], "--help")
    listed = parent[parent.index(f"    {verb[-1]} ") :].split("\n    ")[0]
    summary = " ".join(listed.split()[1:])
    assert summary and summary in " ".join(own.split()), (summary, own)
    readme = _readme_cli_section()
    assert f"polykrnl {' '.join(verb)}" in readme
    missing = {o for o in _options(own) if o not in readme}
    assert not missing, f"README's Command line section lacks {missing} of {verb}"
