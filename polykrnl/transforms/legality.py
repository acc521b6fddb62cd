"""Legality of a Schedule: exact validity, parallel loops, permutable bands, with witnesses.

A schedule is legal when every dependence of the program (see
:mod:`polykrnl.transforms.dependences`) still runs its source before its sink,
and no loop marked parallel carries a dependence (a loop in parallel parts may, when
every dependence it carries starts or ends at its split point). A loop that carries only
reduction dependences is "parallel only as a reduction": refused, like any
other carried dependence, but reported as such.

Each violation comes with a witness: a concrete pair of statement instances
(with the values of the original induction variables and of the parameters)
taken from the violated part of the dependence with isl's ``sample``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Literal

import islpy as isl

from polykrnl.errors import IllegalTransformError, ScheduleError, UnprovenTransformError
from polykrnl.transforms.bands import band_verdicts
from polykrnl.transforms.core import Schedule, ScheduleT, Step
from polykrnl.transforms.dependences import Dependence, kept_dependences
from polykrnl.transforms.distances import Distances, loop_verdict, over
from polykrnl.transforms.legality_report import (
    CERTAINTY_RANK,
    BandVerdict,
    Instance,
    LegalityReport,
    LoopVerdict,
    Violation,
)
from polykrnl.transforms.memory_safety import memory_report
from polykrnl.transforms.primitives.permute import reorder
from polykrnl.transforms.splits import split_point
from polykrnl.transforms.verdicts import condition, judge
from polykrnl.transforms.witnesses import (
    flipping_loop,
    responsible,
    violation,
    with_skew_suggestion,
    witness,
)

_REPORT = "_polykrnl_legality_report"


def check(sched: Schedule) -> LegalityReport:
    """The legality report of `sched` against the program's dependences (computed once
    per schedule: a schedule is an immutable value, and the report is kept on it)."""
    found = sched.__dict__.get(_REPORT)
    if found is None:
        found = _check(sched)
        # As functools.cached_property stores its values: in the instance's __dict__.
        sched.__dict__[_REPORT] = found
    assert isinstance(found, LegalityReport)
    return found


def _check(sched: Schedule) -> LegalityReport:
    deps = kept_dependences(sched.reference_program, sched.nest_statements).deps
    paths = sched.loop_paths()
    dist = Distances(sched, deps)
    violations = _order_violations(sched, deps, paths)
    loops: list[LoopVerdict] = []
    for name, path in paths.items():
        verdict, carried = loop_verdict(sched, dist, name, path)
        loops.append(verdict)
        if carried and _runs_in_parallel(sched, name):
            for d, pairs in carried:
                src, snk, params, marks = _judged(sched, d, pairs)
                reason: Literal["parallel", "reduction"] = (
                    "reduction" if d.reduction else "parallel"
                )
                found = violation(sched, d, src, snk, params, name, reason)
                if sched.loop_info[name].parts:
                    found = replace(found, hint=_PARTS_HINT.format(loop=name))
                violations.append(_with_certainty(found, marks))
    bands = band_verdicts(sched, dist, paths)
    base_bands: list[BandVerdict] = []
    if violations and sched.base is not None:
        base = sched.base
        base_bands = band_verdicts(base, Distances(base, deps), base.loop_paths())
    violations = [with_skew_suggestion(v, bands, base_bands, sched) for v in violations]
    orders: dict[int, str] = {}
    violations = [_with_legal_order(v, sched, dist, paths, orders) for v in violations]
    approximations = tuple(
        f"{st.label}: {why}" for st in sched.program.statements for why in st.approximations
    )
    # The surest first: a refusal quotes the first one.
    violations.sort(key=lambda v: CERTAINTY_RANK[v.certainty])
    return LegalityReport(
        sched.program.function.name,
        tuple(violations),
        tuple(loops),
        tuple(bands),
        sched,
        sched.reference_note,
        approximations,
        memory_report(sched.program),
    )


def _order_violations(
    sched: Schedule, deps: Sequence[Dependence], paths: Mapping[str, tuple[str, ...]]
) -> list[Violation]:
    """A witness for each dependence the schedule reverses (its sink runs first)."""
    times = statement_times(sched)
    pairs_cache: dict[tuple[str, str], isl.UnionMap] = {}

    def not_before(src: str, snk: str) -> isl.UnionMap:
        """(a, b) with a an instance of src, b of snk, a not running before b."""
        key = (src, snk)
        if key not in pairs_cache:
            pairs_cache[key] = times[src].lex_ge_union_map(times[snk])
        return pairs_cache[key]

    out: list[Violation] = []
    for d in deps:
        bad = isl.UnionMap.from_map(d.relation).intersect(not_before(d.source, d.sink))
        if bad.is_empty():
            continue
        src, snk, params, marks = _judged(sched, d, bad)
        loop = flipping_loop(sched, paths, src, snk, params)
        out.append(_with_certainty(violation(sched, d, src, snk, params, loop, "order"), marks))
    return out


def _judged(
    sched: Schedule, d: Dependence, bad: isl.UnionMap
) -> tuple[Instance, Instance, dict[str, int], Violation]:
    """A witness of `d` among `bad`, from the surest accesses that realize one, and the
    violation with how sure it is (its loop and reason still to set)."""
    reference = sched.reference_program
    j = judge(reference, d, bad)
    src, snk, params = witness(j.pairs, sched.statements)
    text = condition(reference, j.accesses, src, snk, params) if j.accesses else ""
    marks = Violation(
        d.kind,
        d.array,
        src,
        snk,
        {},
        {},
        None,
        "order",
        None,
        None,
        "",
        certainty=j.certainty,
        condition=text,
        approximated=j.reasons,
    )
    return src, snk, params, marks


def _with_certainty(v: Violation, marks: Violation) -> Violation:
    """`v` with how sure it is (from `marks`), and a hint that says so when unsure."""
    hint = v.hint
    if marks.certainty == "may":
        hint = (
            "polykrnl cannot tell whether these instances touch one element (the "
            "statements named are approximated); " + hint
        )
    return replace(
        v,
        hint=hint,
        certainty=marks.certainty,
        condition=marks.condition,
        approximated=marks.approximated,
    )


def is_legal(sched: Schedule) -> bool:
    """Whether `sched` keeps every dependence and no parallel loop carries one.

    The verdict of check() without the report (no witnesses, tables, bands), or the
    report's when check() already ran.
    """
    known = sched.__dict__.get(_REPORT)
    if isinstance(known, LegalityReport):
        return known.legal
    deps = kept_dependences(sched.reference_program, sched.nest_statements).deps
    times = statement_times(sched)
    for d in deps:
        not_before = times[d.source].lex_ge_union_map(times[d.sink])
        if not isl.UnionMap.from_map(d.relation).intersect(not_before).is_empty():
            return False
    parallel = [n for n, info in sched.loop_info.items() if info.parallel or info.parts]
    if not parallel:
        return True
    dist = Distances(sched, deps)
    paths = sched.loop_paths()
    return all(
        not loop_verdict(sched, dist, n, paths[n])[1] or not _runs_in_parallel(sched, n)
        for n in parallel
    )


_PARTS_HINT = (
    "loop '{loop}' runs in parallel parts, but the dependences it carries do not all start "
    "or end at one iteration (a split point): run it sequentially (remove "
    "parallel_parts), or split a loop that has one (Floyd-Warshall's row loop at row k)"
)


def _runs_in_parallel(sched: Schedule, loop: str) -> bool:
    """Whether a loop that carries dependences runs iterations of one of them in
    parallel: a parallel loop does, a loop in parallel parts unless every dependence
    it carries starts or ends at its split point (each part then carries none)."""
    info = sched.loop_info[loop]
    return info.parallel or (info.parts and split_point(sched, loop) is None)


def statement_times(sched: Schedule) -> dict[str, isl.UnionMap]:
    """Each statement's instances -> their time in `sched` (one map per statement:
    restricting the whole schedule map to a statement costs time in all of them)."""
    out: dict[str, isl.UnionMap] = {}

    def add(m: isl.Map) -> None:
        out[m.get_tuple_name(isl.dim_type.in_)] = isl.UnionMap.from_map(m)

    sched.schedule_map.foreach_map(add)
    return out


def refuse_if_illegal(sched: ScheduleT, what: str, *, cli_hint: str | None = None) -> ScheduleT:
    """`sched` if it is proven legal, else IllegalTransformError carrying the report, or
    UnprovenTransformError when every violation goes through approximated accesses.

    `cli_hint` ends the hint the command line shows instead of the Python one (which
    names force=True and sched.check(), neither of which the CLI has).
    """
    if is_legal(sched):
        return sched
    report = check(sched)
    v = report.violations[0]
    if report.verdict == "unproven":
        raise UnprovenTransformError(
            f"{what} cannot be proven legal: {v}",
            report,
            location=v.location,
            hint="polykrnl cannot tell whether it breaks a dependence: the statements "
            "named are approximated, so the model assumes they may touch the elements "
            "named; force=True applies it anyway (generated code then runs no loop in "
            "parallel that legality does not prove); sched.check() explains",
            cli_hint=cli_hint,
        )
    raise IllegalTransformError(
        f"{what} is illegal: {v}",
        report,
        location=v.location,
        hint=f"{v.hint}; force=True applies it anyway, sched.check() explains",
        cli_hint=f"{v.hint}; {cli_hint}" if cli_hint else None,
    )


def _with_legal_order(
    v: Violation,
    sched: Schedule,
    dist: Distances,
    paths: Mapping[str, tuple[str, ...]],
    found: dict[int, str],
) -> Violation:
    """Add to the hint of a violation made by a permute the legal order closest to it."""
    if v.reason != "order":
        return v
    step = responsible(sched.steps, v.loop, v.reason)
    if step is None or step.op != "permute":
        return v
    key = id(step)
    if key not in found:
        found[key] = _legal_order_text(sched, dist, paths, step)
    return replace(v, hint=v.hint + found[key]) if found[key] else v


def _legal_order_text(
    sched: Schedule, dist: Distances, paths: Mapping[str, tuple[str, ...]], step: Step
) -> str:
    order = _legal_order(sched, dist, paths, step)
    if order is None:
        return ""
    text = f"; a legal order of these loops, closest to the one asked: reorder({order})"
    if step.location is not None:
        # In Krnl: the handles in their nesting order before the permute, scattered.
        krnl_map = [order.index(x) for x in step.loops]
        handles = ", ".join(f"%{x}" for x in step.loops)
        text += f", in Krnl krnl.permute({handles}) {krnl_map}"
    return text


def _legal_order(
    sched: Schedule, dist: Distances, paths: Mapping[str, tuple[str, ...]], step: Step
) -> list[str] | None:
    """The legal order of a permute's loops that follows the requested one most closely.

    Greedy and complete for a perfectly nested chain: at each position take the
    first loop, in the requested order, that no remaining dependence goes
    backwards along (and whose tile loop is already placed); the dependences it
    carries forward are done. Confirmed with the exact check before it is shown.
    """
    try:
        chain = sched.chain(list(step.loops))  # as nested now: the order asked for
    except ScheduleError:
        return None
    path = paths[chain[-1]]
    n_out = len(path) - len(chain)
    col = {name: n_out + i for i, name in enumerate(chain)}
    outer = " and ".join(f"x{i} = 0" for i in range(n_out)) or "true"
    remaining: list[isl.Set] = []
    for _, delta in dist.under(path):
        delta = delta.intersect(over(delta.dim(isl.dim_type.set), outer))
        if not delta.is_empty():
            remaining.append(delta)
    placed: list[str] = []
    while len(placed) < len(chain):
        for name in chain:
            if name in placed or not (_tile_loops(sched, name) & set(chain)) <= set(placed):
                continue
            x = f"x{col[name]}"
            if all(
                d.intersect(over(d.dim(isl.dim_type.set), f"{x} < 0")).is_empty() for d in remaining
            ):
                remaining = [
                    r
                    for r in (
                        d.intersect(over(d.dim(isl.dim_type.set), f"{x} = 0")) for d in remaining
                    )
                    if not r.is_empty()
                ]
                placed.append(name)
                break
        else:
            return None
    if placed in (chain, list(step.loops)):
        return None  # nothing new: the hint already says to keep the original order
    try:
        candidate = reorder(sched, placed)
    except ScheduleError:
        return None
    return placed if is_legal(candidate) else None


def _tile_loops(sched: Schedule, name: str) -> set[str]:
    """The loops whose values the bounds of point loop `name` use (they must enclose it)."""
    info = sched.loop_info[name]
    if info.kind != "point":
        return set()
    out: set[str] = set()
    for b in (*info.lbs, *info.ubs):
        for r in b.operands:
            if r.kind == "value":
                out.update(sched.vid_loops(r.name))
    return out
