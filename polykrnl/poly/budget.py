"""A bound on isl's work per call into the pipeline, so that no input hangs polykrnl.

Domains with huge constants, many parameters or deep tiled nests can make isl's
algorithms (lexicographic optimization, dataflow analysis, AST generation) take
minutes or more. isl counts its operations and fails once a context's maximum is
reached; `isl_budget` sets that maximum for the outermost call into the pipeline
(nested calls share it) and turns running out into a :class:`ComplexityError`, even
where polykrnl's own code catches isl errors to take another path: once the budget
is spent, every isl call fails, which a probe at the end detects.

The budget, MAX_ISL_OPERATIONS (2^25), is 64 times what the heaviest program of the
test corpus and the PolyBench kernels needs in one call (2^19 operations, a third of a
second), and 2 to 4 times what the heaviest of 6000 random programs of the
differential campaign needed (between 2^23 and 2^24, 2.8 s). isl's operations are not
of one cost, though: a 3-deep nest blocked twice per loop with a `mod 1000` subscript
(DEEP in tests/poly/test_isl_budget.py) spent 2^23 of them in 52 s and the whole
budget in 4.5 minutes, and a 6-deep one spent 2^21 in four minutes. So the bound is on
work, not time: a pathological program ends in a ComplexityError, but possibly after
minutes (isl holds the GIL, so no watchdog thread can stop one long isl call sooner;
the CLI's analysis verbs bound their wall-clock time in a child process instead,
polykrnl/time_limit.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

import islpy as isl

from polykrnl.errors import ComplexityError
from polykrnl.poly.program import CTX

MAX_ISL_OPERATIONS = 1 << 25

_depth = 0


def _spent() -> bool:
    try:
        isl.Set.universe(isl.Space.set_alloc(CTX, 0, 1)).is_empty()
    except isl.Error:
        return True
    return False


@contextmanager
def isl_budget(what: str, limit: int | None = None) -> Iterator[None]:
    """Run the body with at most `limit` (default MAX_ISL_OPERATIONS) isl operations,
    shared with the calls nested in it; ComplexityError when they run out."""
    global _depth
    outermost = _depth == 0
    if outermost:
        CTX.set_max_operations(limit or MAX_ISL_OPERATIONS)
        CTX.reset_operations()
    _depth += 1
    failed: BaseException | None = None
    try:
        yield
    except BaseException as e:  # whatever an exhausted budget made of it, re-raised below
        failed = e
    finally:
        _depth -= 1
        spent = outermost and _spent()
        if outermost:
            CTX.set_max_operations(0)
            CTX.reset_operations()
    if outermost and (spent or "maximal number of operations" in str(failed)):
        raise ComplexityError(
            f"{what} needs more than {limit or MAX_ISL_OPERATIONS:,} isl operations: its "
            "iteration domains, accesses or schedule are too complex to analyse here",
            hint="fewer or smaller tiles, fewer nested loops or parameters, or smaller "
            "constants make the analysis tractable",
        ) from failed
    if failed is not None:
        raise failed


P = ParamSpec("P")
R = TypeVar("R")


def bounded(what: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a pipeline entry point: its isl work is bounded by `isl_budget`."""

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            with isl_budget(what):
                return fn(*args, **kwargs)

        return wrapper

    return decorate
