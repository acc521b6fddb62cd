"""Witnesses of violations: a concrete pair of instances, the loop at fault, the step to blame.

A witness is taken from the violated part of a dependence with isl's
``sample``; the loop at fault is the outermost one around both instances
that now runs the sink first (or the parallel loop that carries it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Literal

import islpy as isl

from polykrnl.poly import Statement
from polykrnl.transforms.core import Schedule, Step, step_text
from polykrnl.transforms.dependences import Dependence
from polykrnl.transforms.legality_report import BandVerdict, Instance, Violation
from polykrnl.transforms.samples import sample_pair


def witness(
    pairs: isl.UnionMap, stmts: Mapping[str, Statement]
) -> tuple[Instance, Instance, dict[str, int]]:
    """A sample pair of instances of `pairs`, and the parameter values it needs."""
    maps: list[isl.Map] = []
    pairs.foreach_map(maps.append)
    m = next(x for x in maps if not x.is_empty())
    src_name = m.get_tuple_name(isl.dim_type.in_)
    snk_name = m.get_tuple_name(isl.dim_type.out)
    src_at, snk_at, values = sample_pair(m)
    params = {
        name: v
        for i, (name, v) in enumerate(values.items())
        if m.involves_dims(isl.dim_type.param, i, 1)
    }
    src = Instance(src_name, dict(zip(stmts[src_name].dims, src_at, strict=True)))
    snk = Instance(snk_name, dict(zip(stmts[snk_name].dims, snk_at, strict=True)))
    return src, snk, params


def _value_at(pa: isl.PwAff, stmt: Statement, inst: Instance, params: dict[str, int]) -> int | None:
    dom = pa.domain()
    pt = isl.Point.zero(dom.get_space())
    for i, d in enumerate(stmt.dims):
        pt = pt.set_coordinate_val(isl.dim_type.set, i, inst.point[d])
    for i in range(dom.dim(isl.dim_type.param)):
        name = dom.get_dim_name(isl.dim_type.param, i)
        if name in params:
            pt = pt.set_coordinate_val(isl.dim_type.param, i, params[name])
    try:
        v = pa.eval(pt)
    except isl.Error:
        return None
    return int(v.to_python()) if v.is_int() else None


def flipping_loop(
    sched: Schedule,
    paths: Mapping[str, tuple[str, ...]],
    src: Instance,
    snk: Instance,
    params: dict[str, int] | None = None,
) -> str | None:
    """The outermost loop around both instances where the sink's value is now smaller."""
    stmts = sched.statements
    common: list[str] = []
    for name in paths:
        under = set(sched.statements_below(name))
        if src.stmt in under and snk.stmt in under:
            common.append(name)
    common.sort(key=lambda n: len(paths[n]))
    for name in common:
        vals = sched.loop_info[name].values
        a = _value_at(vals[src.stmt], stmts[src.stmt], src, params or {})
        b = _value_at(vals[snk.stmt], stmts[snk.stmt], snk, params or {})
        if a is None or b is None:
            return None
        if a != b:
            return name if b < a else None
    return None


def violation(
    sched: Schedule,
    d: Dependence,
    src: Instance,
    snk: Instance,
    params: dict[str, int],
    loop: str | None,
    reason: Literal["order", "parallel", "reduction"],
) -> Violation:
    """The violation of `d` shown by the pair (src, snk), with the step to blame and a hint."""
    display = sched.program.param_display
    shown = {display.get(k, k): v for k, v in params.items()}
    dist = {k: snk.point[k] - v for k, v in src.point.items() if k in snk.point}
    step = responsible(sched.steps, loop, reason)
    op = step_text(step) if step is not None else None
    location = step.location if step is not None else None
    if reason == "reduction":
        hint = (
            f"loop '{loop}' carries the reduction into {d.array}: it can run in parallel only "
            "as a reduction (combine partial results), which polykrnl does not do; keep it "
            "sequential, or make an outer loop parallel"
        )
    elif reason == "parallel":
        hint = (
            f"loop '{loop}' carries this dependence: run it sequentially (remove it from "
            "parallel), or parallelize a loop that carries none (see the loop table)"
        )
    elif d.reduction:
        hint = (
            f"this reorders the updates of the reduction into {d.array}: only legal if the "
            "operation may be reassociated (floating-point results change)"
        )
    else:
        hint = (
            f"{snk} must run after {src}: keep the original order of the loops that carry "
            f"the dependence{f' (loop {loop!r} reverses it)' if loop else ''}, or skew the band "
            "first so that every distance becomes non-negative"
        )
    return Violation(
        d.kind, d.array, src, snk, shown, dist, loop, reason, op, location, hint, d.reduction
    )


def with_skew_suggestion(
    v: Violation,
    bands: Sequence[BandVerdict],
    base_bands: Sequence[BandVerdict],
    sched: Schedule,
) -> Violation:
    """`v` with the skews that make its band tilable added to its hint, when there are some."""
    if v.reason != "order" or v.loop is None or v.reduction:
        return v
    origin = sched.loop_info[v.loop].origin
    for b, loop in (*((b, v.loop) for b in bands), *((b, origin) for b in base_bands)):
        if loop in b.loops and b.suggestion:
            extra = (
                "; the band ("
                + ", ".join(b.loops)
                + ") becomes tilable after "
                + ", then ".join(b.suggestion)
            )
            return replace(v, hint=v.hint + extra)
    return v


def responsible(steps: Sequence[Step], loop: str | None, reason: str) -> Step | None:
    """The last step that made `loop` (or, for a parallel violation, marked it parallel)."""
    if loop is None:
        return None
    for st in reversed(steps):
        if reason != "order" and st.op not in ("parallel", "parts"):
            continue
        if loop in st.loops or loop in st.names:
            return st
    return None
