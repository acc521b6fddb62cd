"""The ranges of vectorized loops: guards, slice stops, aranges, clipped parts."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from polykrnl.codegen.pyast import assign, call, const, int_constant, same_tree
from polykrnl.codegen.statements import VecIter


@dataclass(frozen=True)
class Clip:
    """The part of a split loop being written: its range replaced, or clipped."""

    start: ast.expr | None
    stop: ast.expr | None
    replaces: bool = False

    def range(self, start: ast.expr, stop: ast.expr) -> tuple[ast.expr, ast.expr]:
        if self.replaces:
            assert self.start is not None and self.stop is not None
            return self.start, self.stop
        return (
            start if self.start is None else call("max", start, self.start),
            stop if self.stop is None else call("min", stop, self.stop),
        )


def nonempty(start: ast.expr, stop: ast.expr) -> bool:
    """Whether `range(start, stop)` surely runs: constants only. (A range shaped like a
    tile's point loop, `range(t, min(U, t + S))`, may still be empty when isl dropped
    the tile loop and `t` is another loop's value: found by the differential campaign.)"""
    a, b = int_constant(start), int_constant(stop)
    return a is not None and b is not None and b > a


def one_past(stop: ast.expr, start: ast.expr) -> bool:
    """Whether `stop` is `start + c` with a constant c > 0 (a range that always runs)."""
    return (
        isinstance(stop, ast.BinOp)
        and isinstance(stop.op, ast.Add)
        and same_tree(stop.left, start)
        and (int_constant(stop.right) or 0) > 0
    )


def guarded(block: list[ast.stmt], vec: dict[str, VecIter]) -> list[ast.stmt]:
    """`block` run only when every vectorized range is non-empty: an empty slice reads
    nothing, but the statement's other subscripts (`A[p:4, p]` at p = 4) may then be
    out of bounds, where the loop would not have run them at all."""
    tests: list[ast.expr] = []
    for it in vec.values():
        test = ast.Compare(it.stop, [ast.Gt()], [it.start])
        if nonempty(it.start, it.stop) or one_past(it.stop, it.start):
            continue
        if not any(same_tree(test, t) for t in tests):
            tests.append(test)
    if not tests:
        return block
    both = tests[0] if len(tests) == 1 else ast.BoolOp(ast.And(), tests)
    return [ast.If(both, block, [])]


def not_below(stop: ast.expr, start: ast.expr) -> ast.expr:
    """`stop`, or `start` for a constant range that is empty. (A symbolic stop below
    its start, which a slice would count from the end of the array, never runs: the
    guard of `guarded` tests every such range.)"""
    a, b = int_constant(start), int_constant(stop)
    if a is not None and b is not None and b < a:
        return start
    return stop


def uses_name(stmts: list[ast.stmt], name_: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name_ for st in stmts for n in ast.walk(st))


def arange_of(it: VecIter) -> ast.stmt:
    """`it = np.arange(start, stop)`, shaped to broadcast along its axis."""
    rng = call("np.arange", it.start, it.stop)
    trailing = it.rank - 1 - it.axis
    if not trailing:
        return assign(it.name, rng)
    shape = ast.Tuple([const(-1), *([const(1)] * trailing)], ast.Load())
    return assign(it.name, call("np.reshape", rng, shape))


def range_call(start: ast.expr, stop: ast.expr, step: ast.expr) -> ast.expr:
    one = isinstance(step, ast.Constant) and step.value == 1
    zero = isinstance(start, ast.Constant) and start.value == 0
    args = [stop] if one and zero else [start, stop] if one else [start, stop, step]
    return call("range", *args)


def names_in(e: ast.expr) -> set[str]:
    return {x.id for x in ast.walk(e) if isinstance(x, ast.Name)}


def target_name(a: ast.Assign) -> str:
    t = a.targets[0]
    return t.id if isinstance(t, ast.Name) else ""
