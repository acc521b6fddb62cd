"""The bounds guard of a generated kernel: refuse arrays that do not fit, before any access.

Memory safety (``transforms/memory_safety.py``) gives, for every access that certainly
runs, the parameter values for which it leaves its array and the extent it needs
then. A kernel checks those sets on the sizes it is called with, right after computing
its parameters, and checks the static dimensions of its array arguments; subscripts
read from data are checked where they are used (``StatementWriter.checked``). A
failed check raises ``PkBoundsError`` (an ``IndexError``) naming the array, the
dimension, the extent needed and the one given; ``pk.compile``'s kernels turn it into
``pk.BoundsError``. NumPy would otherwise clip a slice, broadcast a short array or
read a negative index from the end, and Numba's own check is lost inside ``prange``.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence

import islpy as isl

from polykrnl.codegen.isl_ast import Translator
from polykrnl.codegen.pyast import call, const, name
from polykrnl.transforms.memory_safety import Guard, MemoryReport

#: the exception class a kernel defines and raises (a helper of the module)
BOUNDS_ERROR = "PkBoundsError"

BOUNDS_ERROR_SOURCE = '''
class PkBoundsError(IndexError):
    """Arrays that do not fit the kernel's accesses (raised before any access), or a
    subscript the model cannot bound (read from data) outside its array.
    args: (array, dim, kind, needed, given, where)."""

    def __str__(self):
        array, dim, kind, needed, given, where = self.args
        if kind == "extent":
            return (f"{where} addresses {array} up to index {needed - 1} along dimension "
                    f"{dim}: {array} needs at least {needed} elements there, given {given}")
        if kind == "negative":
            return f"{where} addresses {array} at index {needed} along dimension {dim}"
        if kind == "shape":
            return f"{array}: shape {needed} in the function's type, given {tuple(given)}"
        if kind.startswith("run"):
            return (f"{where}: a run of {kind[3:]} elements from {needed} along dimension "
                    f"{dim} of {array} leaves its {given} elements (a subscript the model "
                    "cannot bound, checked where it is used)")
        bad = np.asarray(needed)
        bad = bad[(bad < 0) | (bad >= given)] if bad.ndim else bad
        return (f"{where}: subscript {bad.flat[0]} along dimension {dim} of {array} is "
                f"outside [0, {given}) (a subscript the model cannot bound, checked "
                "where it is used)")
'''


def _raise(*args: ast.expr) -> ast.Raise:
    return ast.Raise(call(BOUNDS_ERROR, *args), None)


def _shape(arg: str, dim: int) -> ast.expr:
    return ast.Subscript(ast.Attribute(name(arg), "shape", ast.Load()), const(dim), ast.Load())


def static_checks(arrays: Sequence[tuple[str, str, tuple[int | None, ...]]]) -> list[ast.stmt]:
    """One test per array argument (its name in the source, its Python name, its shape
    with None for `?`): its rank and static dimensions, as its type has them."""
    out: list[ast.stmt] = []
    for array, py, shape in arrays:
        tests: list[ast.expr] = [
            ast.Compare(
                ast.Attribute(name(py), "ndim", ast.Load()), [ast.NotEq()], [const(len(shape))]
            )
        ]
        tests += [
            ast.Compare(_shape(py, d), [ast.NotEq()], [const(size)])
            for d, size in enumerate(shape)
            if size is not None
        ]
        typed = (
            "("
            + ", ".join("?" if n is None else str(n) for n in shape)
            + ("," if len(shape) == 1 else "")
            + ")"
        )
        given = ast.Attribute(name(py), "shape", ast.Load())
        out.append(
            ast.If(
                ast.BoolOp(ast.Or(), tests) if len(tests) > 1 else tests[0],
                [_raise(const(array), const(-1), const("shape"), const(typed), given, const(""))],
                [],
            )
        )
    return out


def guard_checks(
    report: MemoryReport,
    context: isl.Set,
    params: Mapping[str, str],
    extent_of: Mapping[tuple[str, int], ast.expr],
) -> list[ast.stmt]:
    """One `if` per guard: its set of parameter values (isl parameters named in Python by
    `params`) raises, with the extent needed and the one given (`extent_of`)."""
    out: list[ast.stmt] = []
    for g in report.guards:
        given = extent_of.get((g.array, g.dim))
        if given is None:
            continue
        tr = Translator(lambda _s, _a: [])
        tr.names.update(params)
        test, needed = _condition(g, context, tr)
        kind = "extent" if g.side == "upper" else "negative"
        out.append(
            ast.If(
                test,
                [
                    _raise(
                        const(g.array), const(g.dim), const(kind), needed, given, const(g.statement)
                    )
                ],
                [],
            )
        )
    return out


def _condition(g: Guard, context: isl.Set, tr: Translator) -> tuple[ast.expr, ast.expr]:
    """The Python test of `g.bad` and the expression of what it needs there."""
    bad = g.bad.align_params(context.get_space())
    ctx = context.align_params(bad.get_space())
    build = isl.AstBuild.from_context(ctx)
    test = tr.expr(build.expr_from_set(bad.gist(ctx)))
    inside = isl.AstBuild.from_context(bad.intersect(ctx))
    needed = tr.expr(inside.expr_from_pw_aff(g.needed.align_params(bad.get_space())))
    return test, needed


def oob_raises(flag: str, sites: Sequence[tuple[str, int, str, int]]) -> list[ast.stmt]:
    """After a Numba kernel's loops: the error of the first failed subscript check noted
    in `flag` ([site number + 1, the subscript, the extent]), if any."""
    value = ast.Subscript(name(flag), const(1), ast.Load())
    extent = ast.Subscript(name(flag), const(2), ast.Load())
    return [
        ast.If(
            ast.Compare(ast.Subscript(name(flag), const(0), ast.Load()), [ast.Eq()], [const(k)]),
            [
                _raise(
                    const(array),
                    const(dim),
                    const("data" if span == 1 else f"run{span}"),
                    value,
                    extent,
                    const(where),
                )
            ],
            [],
        )
        for k, (array, dim, where, span) in enumerate(sites, 1)
    ]


def subscript_check(
    ix: str,
    extent: ast.expr,
    array: str,
    dim: int,
    where: str,
    vector: bool,
    site: tuple[str, int] | None,
    span: int = 1,
) -> ast.If:
    """The check of subscript `ix` (an array over vectorized loops when `vector`) against
    `extent`: it raises, or with `site` (Numba: the flag array, the site's number)
    notes the failure and makes `ix` 0, since a raise inside prange keeps Numba from
    running the loop on threads (`oob_raises` raises after the loops). A run of `span`
    elements from `ix` (a vector.load) must end inside too."""
    low = ast.Compare(name(ix), [ast.Lt()], [const(0)])
    last = name(ix) if span == 1 else ast.BinOp(name(ix), ast.Add(), const(span - 1))
    high = ast.Compare(last, [ast.GtE()], [extent])
    test: ast.expr = (
        call("np.any", ast.BinOp(low, ast.BitOr(), high))
        if vector
        else ast.BoolOp(ast.Or(), [low, high])
    )
    kind = const("data" if span == 1 else f"run{span}")
    if site is None:
        error = _raise(const(array), const(dim), kind, name(ix), extent, const(where))
        return ast.If(test, [error], [])
    flag, number = site
    notes: list[ast.stmt] = [
        ast.Assign([ast.Subscript(name(flag), const(k), ast.Store())], v)
        for k, v in enumerate((const(number), name(ix), extent))
    ]
    return ast.If(test, [*notes, ast.Assign([ast.Name(ix, ast.Store())], const(0))], [])
