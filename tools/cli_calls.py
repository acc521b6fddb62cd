"""One CLI command in-process, with a time limit, catching whatever escapes (for tools/).

Shared by the mutation fuzzer and the onnx-mlir corpus measurement: both need
each command's exit status and, when an exception escapes polykrnl's CLI, its
type and innermost polykrnl frame, without letting one command hang the run.
"""

from __future__ import annotations

import io
import signal
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INTERNAL = 3  # polykrnl.cli.EXIT_INTERNAL


class _Timeout(BaseException):  # not an Exception: the CLI must not catch it
    pass


def _alarm(_signum: int, _frame: object) -> None:
    raise _Timeout


def rel(p: Path) -> str:
    """`p` relative to the checkout, when it is inside it."""
    try:
        return str(p.relative_to(ROOT))
    except ValueError:
        return str(p)


def innermost_frame(tb: traceback.StackSummary) -> str:
    own = [f for f in tb if "/polykrnl/" in f.filename]
    f = own[-1] if own else tb[-1]
    return f"{rel(Path(f.filename))}:{f.lineno} in {f.name}"


def call(argv: list[str], limit: int) -> tuple[int | None, str, tuple[str, str] | None]:
    """(exit status, or None on timeout; the first line of stderr; (exception, frame)
    when one escaped the CLI)."""
    from polykrnl.cli import main

    err = io.StringIO()
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(limit)
    try:
        status = main(argv, out=io.StringIO(), err=err)
        first = err.getvalue().split("\n", 1)[0]
        if status == INTERNAL:
            # The CLI caught a bug of polykrnl's and said so: still a finding.
            inner = first.split("internal error in polykrnl (", 1)[-1]
            kind, _, rest = inner.partition(" at ")
            return status, first, (kind, rest.split(")", 1)[0])
        return status, first, None
    except _Timeout:
        return None, "", None
    except BaseException as e:  # anything that escapes the CLI is the finding
        frame = innermost_frame(traceback.extract_tb(e.__traceback__))
        return 3, "", (f"{type(e).__name__}: {str(e)[:160]}", frame)
    finally:
        signal.alarm(0)
