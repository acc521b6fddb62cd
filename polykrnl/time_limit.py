"""A wall-clock limit for one CLI command: the work runs in a forked child process.

isl's budget (poly/budget.py) bounds isl's work, but not its time: one long isl
call holds the GIL, so no thread or signal handler in the process can stop it, and a
pathological program spends the whole budget only after minutes. A child process can
be stopped at any moment. The child does the work and sends back what it would have
printed; the parent prints it, or, past the limit, kills the child and reports it.

Where the platform cannot fork (Windows), or the limit is 0, the work runs in-process.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import time
from collections.abc import Callable
from typing import TypeVar

R = TypeVar("R")


class TimeLimitExceeded(Exception):
    """The work did not finish within its limit (the child was stopped)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"more than {seconds:g} s")
        self.seconds = seconds


def call_with_time_limit(work: Callable[[], R], seconds: float) -> R:
    """`work()`, computed in a forked child stopped after `seconds`
    (TimeLimitExceeded). The result must pickle; an exception raised by `work` is
    re-raised here when it pickles, else reported as a RuntimeError naming it."""
    if seconds <= 0 or not hasattr(os, "fork"):
        return work()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        os.close(read_end)
        status = 0
        try:
            try:
                payload = pickle.dumps((True, work()))
            except BaseException as e:  # sent to the parent, raised there
                try:
                    payload = pickle.dumps((False, e))
                except Exception:
                    payload = pickle.dumps((False, RuntimeError(f"{type(e).__name__}: {e}")))
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(payload)
        except BaseException:  # the parent sees an empty answer
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    try:
        data = _read_until(read_end, time.monotonic() + seconds)
    except BaseException:
        _stop(pid)
        raise
    finally:
        os.close(read_end)
    if data is None:
        _stop(pid)
        raise TimeLimitExceeded(seconds)
    os.waitpid(pid, 0)
    if not data:
        raise RuntimeError("the worker process ended without an answer")
    ok, value = pickle.loads(data)
    if ok:
        return value
    raise value


def _read_until(fd: int, deadline: float) -> bytes | None:
    """Everything written to `fd` until its end, or None at the deadline."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return None
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass
