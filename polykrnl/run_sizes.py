"""Dynamic sizes a random run can take: grown until the program's accesses fit.

onnx-mlir compiles a model for shapes that agree with each other (a Concat's inputs
share every dimension but the axis; a loop runs to a static 32 over a `?` dimension
it knows is 32), and the Krnl it writes relies on that without checking. A run that
gives every dynamic dimension the same `--size` breaks those assumptions and stops
out of bounds. The memory-safety guards (``transforms/memory_safety.py``: for each
access that certainly runs, the sizes for which it leaves its array and the extent it
needs then) say exactly which dimension must be larger: `fit_sizes` grows such
dimensions of the arguments to the extent needed, until no guard fires or only
guards remain that growing an argument cannot satisfy (those runs are refused as
before, by the kernel's guard or the interpreter). Dimensions the user sets
(`--param A.0=N`, `--input`) are never changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import islpy as isl

from polykrnl.errors import PolykrnlError
from polykrnl.ir import Function
from polykrnl.poly import DimParam, poly_program
from polykrnl.reference_work import param_values
from polykrnl.transforms.memory_safety import memory_report

#: rounds of growing (each round can only grow a dimension the previous one needed)
_ROUNDS = 4


def fit_sizes(
    fn: Function,
    params: Mapping[str, float],
    fixed: set[str],
    inputs_at: Callable[[Mapping[str, float]], Mapping[str, Any]],
) -> tuple[dict[str, float], list[str]]:
    """`params` (``A.0 -> N``) with the dynamic dimensions of arguments that accesses
    need larger grown to the extent they need, and a note per grown dimension.

    `inputs_at(params)` draws the arguments at those sizes; `fixed` names the
    dimensions not to change (the user's)."""
    try:
        program = poly_program(fn)
        guards = [g for g in memory_report(program).guards if g.side == "upper"]
    except PolykrnlError:
        return dict(params), []
    dims = {
        (src.array_name, src.dim): p
        for p, src in program.param_sources.items()
        if isinstance(src, DimParam)
    }
    out = dict(params)
    grown: dict[str, int] = {}
    for _ in range(_ROUNDS):
        values = param_values(program, inputs_at(out))
        changed = False
        for g in guards:
            key = f"{g.array}.{g.dim}"
            if (g.array, g.dim) not in dims or key in fixed:
                continue
            needed = _needed_at(g.bad, g.needed, values)
            if needed is not None and needed > values.get(dims[(g.array, g.dim)], needed):
                out[key] = needed
                grown[key] = needed
                changed = True
        if not changed:
            break
    notes = [
        f"{key} = {n}: the program addresses it up to index {n - 1} at the other sizes"
        for key, n in grown.items()
    ]
    return out, notes


def _needed_at(bad: isl.Set, needed: isl.PwAff, values: Mapping[str, int]) -> int | None:
    """The extent a guard needs at these parameter values, None when it does not fire
    (or a parameter it involves has no value)."""
    space = bad.get_space()
    for pos in range(space.dim(isl.dim_type.param)):
        name = str(space.get_dim_name(isl.dim_type.param, pos))
        if name not in values:
            return None
        bad = bad.fix_val(isl.dim_type.param, pos, isl.Val(values[name]))
    if bad.is_empty():
        return None
    at = needed.intersect_params(bad.align_params(needed.get_space()))
    top = at.max_val()
    return int(top.to_python()) if top.is_int() else None
