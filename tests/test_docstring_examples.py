"""Every public name of `polykrnl` has an example in its docstring, and every example runs.

The API reference (mkdocs.yml, docs/api/) shows these docstrings: an example that no
longer runs, or prints something else, fails here. A class's methods continue the class's
example (they use the `fn` or `sched` it defines), so they run in its namespace, in the
order the class defines them.
"""

from __future__ import annotations

import doctest
import inspect
from collections.abc import Iterator
from typing import Any

import pytest

import polykrnl as pk

PUBLIC = [name for name in pk.__all__ if name != "__version__"]
PARSER = doctest.DocTestParser()
# ELLIPSIS: an example may elide long output with "..."; the tracebacks of examples that
# raise are compared on the exception's type and message only, as doctest always does.
FLAGS = doctest.ELLIPSIS


class _Checker(doctest.OutputChecker):
    # print() of a value whose str() ends with a newline (a loop tree) prints a blank last
    # line, which doctest would need written as <BLANKLINE>: trailing newlines are ignored.
    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        return super().check_output(_trim(want), _trim(got), optionflags)


def _trim(text: str) -> str:
    text = text.rstrip("\n")
    return text + "\n" if text else text


def _members(cls: type) -> Iterator[tuple[str, Any]]:
    """The public methods and properties `cls` itself defines, in source order."""
    for name, value in vars(cls).items():
        if not name.startswith("_") and inspect.getdoc(value):
            yield name, value


def _docstrings(name: str) -> list[tuple[str, str]]:
    obj = getattr(pk, name)
    docs = [(name, inspect.getdoc(obj) or "")]
    if inspect.isclass(obj) and not issubclass(obj, BaseException):
        docs += [(f"{name}.{m}", inspect.getdoc(v) or "") for m, v in _members(obj)]
    return docs


def _run(docs: list[tuple[str, str]]) -> list[str]:
    """Run the examples of `docs` one after the other in one namespace; the failures."""
    globs: dict[str, Any] = {"__name__": "docstring_examples"}
    failures: list[str] = []
    for qualname, doc in docs:
        test = PARSER.get_doctest(doc, globs, f"pk.{qualname}", None, 0)
        out: list[str] = []
        runner = doctest.DocTestRunner(checker=_Checker(), optionflags=FLAGS, verbose=False)
        runner.run(test, out=out.append, clear_globs=False)
        if runner.failures:
            failures.append("".join(out))
        globs = test.globs  # DocTest ran in a copy of `globs`: the next one continues it
    return failures


def test_every_public_name_has_an_example() -> None:
    missing = [n for n in PUBLIC if ">>>" not in _docstrings(n)[0][1]]
    assert not missing, f"no example in the docstring of: {missing}"


@pytest.mark.parametrize("name", PUBLIC)
def test_docstring_examples_run(name: str) -> None:
    failures = _run(_docstrings(name))
    assert not failures, "\n".join(failures)


def test_a_wrong_example_fails() -> None:
    # the harness must be able to fail: wrong output, and an example that raises
    assert _run([("wrong", ">>> 1 + 1\n3\n")])
    assert _run([("raises", ">>> pk.parse('func.func @f(')\n")])
    assert not _run([("right", ">>> print('a\\n')\na\n")])
