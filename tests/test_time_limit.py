"""The CLI's wall-clock limit: analysis verbs run in a child process stopped at the limit."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import pytest

from polykrnl.cli import main
from polykrnl.time_limit import TimeLimitExceeded, call_with_time_limit
from tests.poly.test_isl_budget import DEEP

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="the limit needs os.fork")


@needs_fork
def test_the_result_of_the_child_comes_back() -> None:
    parent = os.getpid()
    assert call_with_time_limit(lambda: (os.getpid() != parent, [1, 2]), 30) == (True, [1, 2])


@needs_fork
def test_an_exception_of_the_child_is_raised_in_the_parent() -> None:
    def work() -> None:
        raise ValueError("bad size 7")

    with pytest.raises(ValueError, match="bad size 7"):
        call_with_time_limit(work, 30)


@needs_fork
def test_a_child_past_its_limit_is_stopped() -> None:
    started = time.monotonic()
    with pytest.raises(TimeLimitExceeded):
        call_with_time_limit(lambda: time.sleep(60), 0.2)
    # Stopped, not waited for: far less than the 60 s the child would have slept.
    assert time.monotonic() - started < 30


def test_no_limit_runs_in_process() -> None:
    parent = os.getpid()
    assert call_with_time_limit(os.getpid, 0) == parent


@needs_fork
def test_a_check_that_takes_too_long_is_stopped_with_a_located_error(tmp_path: Path) -> None:
    """DEEP's legality check spends isl's whole budget only after minutes (see
    test_isl_budget.py); the time limit ends the command first, with a message."""
    path = tmp_path / "deep.mlir"
    path.write_text(DEEP)
    out, err = io.StringIO(), io.StringIO()
    assert main(["check", str(path), "--time-limit", "0.25"], out=out, err=err) == 2
    assert out.getvalue() == ""
    message = err.getvalue()
    assert message.startswith(f"error: {path}: `polykrnl check` stopped after 0.25 s")
    assert "--time-limit 0" in message and "Traceback" not in message


@needs_fork
@pytest.mark.parametrize(
    "verb",
    [["check"], ["lower", "--json"], ["emit", "numpy"], ["check", "--func", "nope"]],
)
def test_the_child_prints_what_the_command_prints_in_process(verb: list[str]) -> None:
    gemm = str(Path(__file__).parent / "corpus" / "gemm.mlir")
    argv = [*verb[:2], gemm, *verb[2:]] if verb[0] == "emit" else [verb[0], gemm, *verb[1:]]
    runs = []
    for limit in ("0", "60"):
        out, err = io.StringIO(), io.StringIO()
        status = main([*argv, "--time-limit", limit], out=out, err=err)
        runs.append((status, out.getvalue(), err.getvalue()))
    assert runs[0] == runs[1]
    assert runs[0][1] or runs[0][2]
