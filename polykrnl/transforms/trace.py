"""The statement instances of a schedule in execution order, for given parameters."""

from __future__ import annotations

from collections.abc import Mapping

import islpy as isl

from polykrnl.errors import ArgumentError, UnsupportedError
from polykrnl.poly import PolyProgram
from polykrnl.transforms.core import Schedule

Instance = tuple[str, dict[str, int]]


def param_values(program: PolyProgram, given: Mapping[str, int]) -> dict[str, int]:
    """isl parameter -> value, from names as users write them (`N`, `A.0` or `A_d0`)."""
    by_user = {disp: p for p, disp in program.param_display.items()}
    out: dict[str, int] = {}
    fn = program.function
    for key, value in given.items():
        p = key if key in program.param_display else by_user.get(key)
        if p is None:
            known = ", ".join(program.param_display.values()) or "none"
            raise ArgumentError(
                f"@{fn.name} has no parameter named '{key}'",
                location=fn.location(fn.op),
                hint=f"its parameters are: {known}",
            )
        if isinstance(value, bool) or not isinstance(value, int):
            raise ArgumentError(
                f"parameter '{key}' must be an integer, got {value!r}",
                location=fn.location(fn.op),
                hint=f"pass {key}=<int>",
            )
        out[p] = value
    missing = [program.param_display[p] for p in program.domain_params() if p not in out]
    if missing:
        raise ArgumentError(
            f"missing value for parameter '{missing[0]}' of @{fn.name}"
            + (f" (and {', '.join(missing[1:])})" if len(missing) > 1 else ""),
            location=fn.location(fn.op),
            hint="give every symbolic size: "
            + ", ".join(f"{m}=..." for m in missing)
            + " (dynamic sizes of memref arguments are named ARG.DIM)",
        )
    return out


def fix_params(obj: isl.UnionMap, program: PolyProgram, values: Mapping[str, int]) -> isl.UnionMap:
    """`obj` with the parameters in `values` fixed to them."""
    if not values:
        return obj
    names = list(values)
    cons = " and ".join(f"{n} = {values[n]}" for n in names)
    ctx = isl.Set(f"[{', '.join(names)}] -> {{ : {cons} }}")
    return obj.intersect_params(ctx)


def trace(sched: Schedule, given: Mapping[str, int]) -> list[Instance]:
    """The statement instances of `sched` in execution order, with the parameters `given`."""
    program = sched.program
    values = param_values(program, given)
    # Parameters the domains do not depend on (array sizes) would leave the sets unbounded.
    smap = fix_params(sched.schedule_map, program, values).project_out_all_params()
    dims = {s.name: s.dims for s in program.statements}
    timed: list[tuple[tuple[int, ...], str, dict[str, int]]] = []

    def on_point(p: isl.Point, name: str, n_in: int, n_out: int) -> None:
        coords = [
            int(p.get_coordinate_val(isl.dim_type.set, k).to_python()) for k in range(n_in + n_out)
        ]
        point = dict(zip(dims[name], coords[:n_in], strict=True))
        timed.append((tuple(coords[n_in:]), name, point))

    def on_map(m: isl.Map) -> None:
        name = m.get_tuple_name(isl.dim_type.in_)
        n_in, n_out = m.dim(isl.dim_type.in_), m.dim(isl.dim_type.out)
        m.wrap().foreach_point(lambda p: on_point(p, name, n_in, n_out))

    try:
        smap.foreach_map(on_map)
    except isl.Error as e:
        raise UnsupportedError(
            f"cannot enumerate the instances of @{program.function.name}: {e}",
            hint="every loop needs finite bounds once the parameters are fixed",
        ) from None
    timed.sort(key=lambda t: t[0])
    return [(name, point) for _, name, point in timed]
