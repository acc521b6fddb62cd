"""Legality of a Schedule: exact validity, parallel loops, permutable bands, with witnesses.

A schedule is legal when every dependence of the program (see
:mod:`polykrnl.transforms.dependences`) still runs its source before its sink,
and no loop marked parallel carries a dependence. A loop that carries only
reduction dependences is "parallel only as a reduction": refused, like any
other carried dependence, but reported as such.

Each violation comes with a witness: a concrete pair of statement instances
(with the values of the original induction variables and of the parameters)
taken from the violated part of the dependence with isl's ``sample``.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import islpy as isl

from polykrnl.display import (
    BAD,
    GOOD,
    MUTED,
    Html,
    code,
    display_box,
    escape,
    highlight,
    html_table,
    section,
)
from polykrnl.errors import IllegalTransformError, ScheduleError, SourceLocation
from polykrnl.model.poly import CTX, Statement
from polykrnl.transforms.dependences import Dependence, dependences
from polykrnl.transforms.schedule import Schedule, SLoop, SNode, Step

LoopStatus = Literal["parallel", "reduction", "forward", "violates"]

_SHOWN = 5  # violations spelled out in the text form


@dataclass(frozen=True)
class Instance:
    stmt: str
    point: dict[str, int]

    def __str__(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self.point.items())
        return f"{self.stmt}({args})"

    def to_json(self) -> dict[str, Any]:
        return {"stmt": self.stmt, "point": dict(self.point)}


@dataclass(frozen=True)
class Violation:
    """A dependence the schedule breaks, with a concrete pair of instances."""

    kind: str  # RAW, WAR, WAW
    array: str
    source: Instance
    sink: Instance
    params: dict[str, int]
    # sink - source for each original induction variable they share
    distance: dict[str, int]
    loop: str | None  # the loop that runs the sink first, or is parallel
    reason: Literal["order", "parallel", "reduction"]
    op: str | None  # the primitive / recipe op responsible
    location: SourceLocation | None
    hint: str
    reduction: bool = False

    def __str__(self) -> str:
        where = f" at line {self.location.line}" if self.location else ""
        by = f" by {self.op}{where}" if self.op else ""
        params = (
            " with " + ", ".join(f"{k}={v}" for k, v in self.params.items()) if self.params else ""
        )
        what = {
            "order": f"now runs {self.sink} before {self.source}",
            "parallel": f"loop '{self.loop}' is parallel but carries it",
            "reduction": f"loop '{self.loop}' is parallel but carries it (a reduction)",
        }[self.reason]
        dist = ", ".join(f"{k}: {v:+d}" for k, v in self.distance.items())
        return (
            f"{self.kind} dependence on {self.array} from {self.source} to {self.sink}"
            f"{params} (distance {dist or 'none'}): {what}{by}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "array": self.array,
            "source": self.source.to_json(),
            "sink": self.sink.to_json(),
            "params": dict(self.params),
            "distance": dict(self.distance),
            "loop": self.loop,
            "reason": self.reason,
            "reduction": self.reduction,
            "op": self.op,
            "location": str(self.location) if self.location else None,
            "hint": self.hint,
        }


@dataclass(frozen=True)
class LoopVerdict:
    """Pluto-style: what the dependences carried by one loop allow."""

    loop: str
    status: LoopStatus
    parallel: bool  # marked parallel in the schedule
    innermost: bool
    distance_min: int | None
    distance_max: int | None
    carried: tuple[str, ...]  # "RAW on A", ...
    # (source statement, sink statement, reduction) of each dependence it carries
    pairs: tuple[tuple[str, str, bool], ...] = field(default=(), compare=False)

    @property
    def vectorizable(self) -> bool:
        return self.innermost and self.status == "parallel"

    @property
    def why_not_vectorizable(self) -> str:
        """Empty when vectorizable, else the reason."""
        if self.vectorizable:
            return ""
        if not self.innermost:
            return "not an innermost loop"
        dist = _range(self.distance_min, self.distance_max)
        return f"carries {', '.join(self.carried)} (distance {dist})"

    def to_json(self) -> dict[str, Any]:
        return {
            "loop": self.loop,
            "status": self.status,
            "parallel": self.parallel,
            "innermost": self.innermost,
            "vectorizable": self.vectorizable,
            "not_vectorizable_because": self.why_not_vectorizable,
            "distance": [self.distance_min, self.distance_max],
            "carried": list(self.carried),
        }


@dataclass(frozen=True)
class BandVerdict:
    """A perfectly nested chain of loops: permutable (so tilable) or not."""

    loops: tuple[str, ...]
    permutable: bool
    blocking: tuple[str, ...] = ()  # loops with a negative distance component
    # Skews that make the band permutable (checked), as calls: "skew('j', 'i', 1)".
    suggestion: tuple[str, ...] = ()
    # Who found them: "isl" (isl's scheduler) or "search" (the small exact search).
    suggested_by: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "loops": list(self.loops),
            "permutable": self.permutable,
            "negative": list(self.blocking),
            "suggestion": list(self.suggestion),
            "suggested_by": self.suggested_by,
        }


@dataclass(frozen=True)
class LegalityReport:
    function: str
    violations: tuple[Violation, ...]
    loops: tuple[LoopVerdict, ...]
    bands: tuple[BandVerdict, ...]
    # The loop nest of the schedule, written when the report is shown.
    schedule: Schedule | None = field(default=None, compare=False, repr=False)
    note: str = ""  # a limit of this verdict, when there is one

    @property
    def legal(self) -> bool:
        return not self.violations

    @property
    def loop_text(self) -> str:
        return str(self.schedule.loops()) if self.schedule is not None else ""

    def __bool__(self) -> bool:
        return self.legal

    def __str__(self) -> str:
        head = f"@{self.function}: " + (
            "legal"
            if self.legal
            else f"ILLEGAL ({len(self.violations)} violation{'s' * (len(self.violations) != 1)})"
        )
        lines = [head]
        if self.note:
            lines.append(f"  note: {self.note}")
        shown = self.violations[:_SHOWN]
        for n, v in enumerate(shown, 1):
            lines.append(f"  {n}. {v}")
            lines.append(f"     hint: {v.hint}")
        if len(self.violations) > len(shown):
            lines.append(
                f"  ... and {len(self.violations) - len(shown)} more (all of them in to_json())"
            )
        if self.loops:
            lines.append("  loops:")
            for lv in self.loops:
                rng = ""
                if lv.carried:
                    rng = f" distance {_range(lv.distance_min, lv.distance_max)}"
                    rng += " (" + ", ".join(lv.carried) + ")"
                mark = " [parallel]" if lv.parallel else ""
                vec = " vectorizable" if lv.vectorizable else ""
                lines.append(f"    {lv.loop}: {lv.status}{mark}{rng}{vec}")
        for b in self.bands:
            if len(b.loops) > 1:
                verdict = (
                    "permutable (tilable)"
                    if b.permutable
                    else ("not permutable: negative distances in " + ", ".join(b.blocking))
                )
                if b.suggestion:
                    verdict += "; tilable after " + ", then ".join(b.suggestion)
                lines.append(f"  band ({', '.join(b.loops)}): {verdict}")
        if not self.legal and self.loop_text:
            lines.append("  loop nest (the loops at fault marked):")
            lines += ["    " + x for x in self.marked_loops().splitlines()]
        return "\n".join(lines)

    def marked_loops(self) -> str:
        """The loop nest with `<-- ...` after the header of each loop at fault."""
        why: dict[str, list[str]] = {}
        for v in self.violations:
            if v.loop is not None:
                what = {
                    "order": "reverses",
                    "parallel": "parallel, carries",
                    "reduction": "parallel, carries the reduction",
                }[v.reason]
                text = f"{what} {v.kind} on {v.array}"
                if text not in why.setdefault(v.loop, []):
                    why[v.loop].append(text)
        out = []
        for line in self.loop_text.splitlines():
            head = line.strip()
            name = head[len("for %") :].split(" ", 1)[0] if head.startswith("for %") else None
            if name in why:
                line += "   <-- " + "; ".join(why[name])
            out.append(line)
        return "\n".join(out)

    def to_json(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "legal": self.legal,
            "note": self.note,
            "violations": [v.to_json() for v in self.violations],
            "bands": [b.to_json() for b in self.bands],
            "loops": [lv.to_json() for lv in self.loops],
        }

    def _repr_html_(self) -> str:
        color = GOOD if self.legal else BAD
        n = len(self.violations)
        verdict = "legal" if self.legal else f"illegal ({n} violation{'s' * (n != 1)})"
        parts: list[str] = []
        if self.note:
            parts.append(f'<div style="color: {MUTED};">note: {escape(self.note)}</div>')
        if self.violations:
            items = []
            for v in self.violations:
                what = {
                    "order": f"the schedule runs {code(str(v.sink))} first",
                    "parallel": f"parallel loop {code(str(v.loop))} runs them in different "
                    "iterations",
                    "reduction": f"parallel loop {code(str(v.loop))} carries the reduction",
                }[v.reason]
                params = ", ".join(f"{k}={x}" for k, x in v.params.items())
                dist = ", ".join(f"{k}: {x:+d}" for k, x in v.distance.items()) or "none"
                where = f" at line {v.location.line}" if v.location else ""
                by = f" (by {escape(v.op)}{where})" if v.op else ""
                items.append(
                    f'<li class="pk-violation" style="color: {BAD}; margin-bottom: 4px;">'
                    f"<b>{escape(v.kind)} on {escape(v.array)}"
                    + (" (reduction)" if v.reduction else "")
                    + f"</b>: {code(str(v.source))} must run before {code(str(v.sink))}"
                    + (f" with {code(params)}" if params else "")
                    + f" (distance {escape(dist)}), but {what}{by}"
                    f'<br><i style="color: {MUTED};">hint: {escape(v.hint)}</i></li>'
                )
            parts.append(
                section(
                    "violations (each with a witness pair of instances)",
                    f'<ol style="margin: 2px 0;">{"".join(items)}</ol>',
                )
            )
        at_fault = {v.loop for v in self.violations if v.loop is not None}
        if self.loops:
            loop_rows = [
                [
                    Html(code(lv.loop)),
                    lv.status,
                    "yes" if lv.parallel else "",
                    "yes" if lv.vectorizable else "",
                    ", ".join(lv.carried),
                    _range(lv.distance_min, lv.distance_max) if lv.carried else "",
                ]
                for lv in self.loops
            ]
            bad = [k for k, lv in enumerate(self.loops) if lv.loop in at_fault]
            parts.append(
                section(
                    "loops",
                    html_table(
                        ["loop", "status", "parallel", "vectorizable", "carries", "distance"],
                        loop_rows,
                        bad_rows=bad,
                    ),
                )
            )
        band_rows = []
        for b in self.bands:
            if len(b.loops) > 1:
                verdict_b = (
                    "permutable (tilable)"
                    if b.permutable
                    else "not permutable: negative distances in " + ", ".join(b.blocking)
                )
                band_rows.append([", ".join(b.loops), verdict_b, ", then ".join(b.suggestion)])
        if band_rows:
            parts.append(
                section("bands", html_table(["loops", "verdict", "tilable after"], band_rows))
            )
        if self.loop_text:
            title = "loop nest" + ("" if self.legal else " (the loops at fault marked)")
            text = self.loop_text if self.legal else self.marked_loops()
            parts.append(section(title, highlight(text, "mlir")))
        return display_box("legality", f"@{self.function}: {verdict}", "".join(parts), color=color)


def _range(lo: int | None, hi: int | None) -> str:
    a = "?" if lo is None else str(lo)
    b = "?" if hi is None else str(hi)
    return a if a == b else f"{a}..{b}"


# ------------------------------------------------------------------ checking


def check(sched: Schedule) -> LegalityReport:
    """The legality report of `sched` against the program's dependences."""
    deps = dependences(sched.reference_program).deps
    stmts = sched.statements
    new = sched.schedule_map
    domains = {name: isl.UnionSet.from_set(st.domain) for name, st in stmts.items()}
    pairs_cache: dict[tuple[str, str], isl.UnionMap] = {}

    def not_before(src: str, snk: str) -> isl.UnionMap:
        """(a, b) with a an instance of src, b of snk, a not running before b."""
        key = (src, snk)
        if key not in pairs_cache:
            a = new.intersect_domain(domains[src])
            b = new.intersect_domain(domains[snk])
            pairs_cache[key] = a.lex_ge_union_map(b)
        return pairs_cache[key]

    violations: list[Violation] = []
    paths = _paths(sched.nodes)
    dist = _Distances(sched, deps)
    for d in deps:
        bad = isl.UnionMap.from_map(d.relation).intersect(not_before(d.source, d.sink))
        if bad.is_empty():
            continue
        src, snk, params = _witness(bad, stmts)
        loop = _flipping_loop(sched, paths, src, snk, params)
        violations.append(_violation(sched, d, src, snk, params, loop, "order"))
    loops: list[LoopVerdict] = []
    for name, path in paths.items():
        verdict, carried = _loop_verdict(sched, dist, name, path)
        loops.append(verdict)
        info = sched.loop_info[name]
        if info.parallel and carried:
            for d, pairs in carried:
                src, snk, params = _witness(pairs, stmts)
                reason: Literal["parallel", "reduction"] = (
                    "reduction" if d.reduction else "parallel"
                )
                violations.append(_violation(sched, d, src, snk, params, name, reason))
    bands = _bands(sched, dist, paths)
    base_bands: list[BandVerdict] = []
    if violations and sched.base is not None:
        base = sched.base
        base_bands = _bands(base, _Distances(base, deps), _paths(base.nodes))
    violations = [_with_suggestion(v, bands, base_bands, sched) for v in violations]
    orders: dict[int, str] = {}
    violations = [_with_legal_order(v, sched, dist, paths, orders) for v in violations]
    return LegalityReport(
        sched.program.function.name,
        tuple(violations),
        tuple(loops),
        tuple(bands),
        sched,
        sched.reference_note,
    )


def _paths(nodes: Sequence[SNode], prefix: tuple[str, ...] = ()) -> dict[str, tuple[str, ...]]:
    """Loop -> the loops from the outermost down to it."""
    out: dict[str, tuple[str, ...]] = {}
    for n in nodes:
        if isinstance(n, SLoop):
            out[n.name] = (*prefix, n.name)
            out.update(_paths(n.body, (*prefix, n.name)))
    return out


def _below(sched: Schedule, name: str) -> list[str]:
    node = sched._node(name)
    out: list[str] = []

    def go(nodes: Sequence[SNode]) -> None:
        for n in nodes:
            if isinstance(n, SLoop):
                go(n.body)
            else:
                out.append(n.name)

    go(node.body)
    return out


def _prefix_map(sched: Schedule, path: Sequence[str], stmts: Sequence[str]) -> isl.UnionMap:
    """Statement instances under the last loop of `path` -> the values of the path's loops."""
    u: isl.UnionMap | None = None
    for s in stmts:
        vals = [sched.loop_info[x].values[s] for x in path]
        m = isl.Map.from_pw_aff(vals[0])
        for v in vals[1:]:
            m = m.flat_range_product(isl.Map.from_pw_aff(v))
        m = m.set_tuple_name(isl.dim_type.in_, s)
        um = isl.UnionMap.from_map(m)
        u = um if u is None else u.union(um)
    assert u is not None
    return u


def _carried_pairs(n: int) -> isl.Map:
    """{[o..., l] -> [o..., l'] : l' != l} over n dims (equal outer loops)."""
    xs = [f"x{i}" for i in range(n)]
    ys = [*xs[:-1], "y"]
    return isl.Map(f"{{ [{', '.join(xs)}] -> [{', '.join(ys)}] : y != x{n - 1} }}")


class _Distances:
    """Distance vectors of each dependence through the loops around both its ends.

    Computed once per dependence; a loop at depth k carries it where the first
    k - 1 distances are 0 and the k-th is not, and a band looks at a projection.
    """

    def __init__(self, sched: Schedule, deps: Sequence[Dependence]) -> None:
        self.sched = sched
        self.deps = deps
        around: dict[str, tuple[str, ...]] = {}

        def walk(nodes: Sequence[SNode], prefix: tuple[str, ...]) -> None:
            for n in nodes:
                if isinstance(n, SLoop):
                    walk(n.body, (*prefix, n.name))
                else:
                    around[n.name] = prefix

        walk(sched.nodes, ())
        self.common: list[tuple[str, ...]] = []
        self.delta: list[isl.Set | None] = []
        for d in deps:
            a, b = around.get(d.source, ()), around.get(d.sink, ())
            n = 0
            while n < min(len(a), len(b)) and a[n] == b[n]:
                n += 1
            common = a[:n]
            self.common.append(common)
            if not common:
                self.delta.append(None)
                continue
            m_src = _prefix_map(sched, common, [d.source])
            m_snk = _prefix_map(sched, common, [d.sink])
            rel = isl.UnionMap.from_map(d.relation).apply_domain(m_src).apply_range(m_snk)
            sets: list[isl.Set] = []
            rel.deltas().foreach_set(sets.append)
            self.delta.append(sets[0] if sets else None)

    def under(self, path: tuple[str, ...]) -> list[tuple[int, isl.Set]]:
        """(dependence index, distances) for the dependences inside `path`'s loop.

        The distances keep the dimensions of every common loop, `path`'s first:
        constraints on those are cheap, projecting the others out is not (tile
        and skewed loops make the sets full of integer divisions).
        """
        out: list[tuple[int, isl.Set]] = []
        k = len(path)
        for i, (common, delta) in enumerate(zip(self.common, self.delta, strict=True)):
            if delta is None or common[:k] != path:
                continue
            out.append((i, delta))
        return out


def _over(n: int, text: str) -> isl.Set:
    """{ [x0, ..., x(n-1)] : text }, parsed once."""
    return _parsed_set(f"{{ [{', '.join(f'x{i}' for i in range(n))}] : {text} }}")


def _loop_verdict(
    sched: Schedule, dist: _Distances, name: str, path: tuple[str, ...]
) -> tuple[LoopVerdict, list[tuple[Dependence, isl.UnionMap]]]:
    node = sched._node(name)
    innermost = not any(isinstance(b, SLoop) for b in node.body)
    info = sched.loop_info[name]
    k = len(path)
    outer = " and ".join(f"x{i} = 0" for i in range(k - 1)) or "true"
    carried: list[tuple[Dependence, isl.UnionMap]] = []
    lo: int | None = None
    hi: int | None = None
    negative = False
    names: list[str] = []
    pair: isl.UnionMap | None = None
    for i, delta in dist.under(path):
        n = delta.dim(isl.dim_type.set)
        c = delta.intersect(_over(n, f"{outer} and x{k - 1} != 0"))
        if c.is_empty():
            continue
        d = dist.deps[i]
        if info.parallel:
            # The instance pairs, for a witness of the parallel violation.
            if pair is None:
                m = _prefix_map(sched, path, sorted(set(_below(sched, name))))
                pair = m.apply_range(isl.UnionMap.from_map(_carried_pairs(k))).apply_range(
                    m.reverse()
                )
            carried.append((d, isl.UnionMap.from_map(d.relation).intersect(pair)))
        else:
            carried.append((d, isl.UnionMap.empty(isl.Space.params_alloc(CTX, 0))))
        label = f"{d.kind} on {d.array}" + (" (reduction)" if d.reduction else "")
        if label not in names:
            names.append(label)
        dmin, dmax = _dim_range(c, k - 1)
        lo = dmin if lo is None or (dmin is not None and dmin < lo) else lo
        hi = dmax if hi is None or (dmax is not None and dmax > hi) else hi
        if not negative and (dmin is None or dmin < 0):
            negative = not delta.intersect(_over(n, f"{outer} and x{k - 1} < 0")).is_empty()
    if not carried:
        status: LoopStatus = "parallel"
    elif negative:
        status = "violates"
    elif all(d.reduction for d, _ in carried):
        status = "reduction"
    else:
        status = "forward"
    return (
        LoopVerdict(
            name,
            status,
            info.parallel,
            innermost,
            lo,
            hi,
            tuple(names),
            tuple((d.source, d.sink, d.reduction) for d, _ in carried),
        ),
        carried,
    )


def _dim_range(s: isl.Set, pos: int) -> tuple[int | None, int | None]:
    """The smallest and largest value of dimension `pos` (None where unbounded)."""

    def value(v: isl.Val) -> int | None:
        return int(v.to_python()) if v.is_int() else None

    try:
        return value(s.dim_min_val(pos)), value(s.dim_max_val(pos))
    except isl.Error:
        return None, None


def _bands(
    sched: Schedule,
    dist: _Distances,
    paths: dict[str, tuple[str, ...]],
    suggest: bool = True,
) -> list[BandVerdict]:
    """Maximal perfectly nested chains, and whether each is permutable."""
    out: list[BandVerdict] = []
    seen: set[str] = set()
    for name, path in paths.items():
        if name in seen:
            continue
        chain = [name]
        node = sched._node(name)
        while len(node.body) == 1 and isinstance(node.body[0], SLoop):
            node = node.body[0]
            chain.append(node.name)
        seen.update(chain)
        deltas = _band_deltas(dist, path, chain)
        blocking = _negative(deltas, len(path) - 1, chain)
        suggestion: tuple[str, ...] = ()
        by = ""
        if blocking and suggest and len(chain) > 1:
            suggestion, by = _suggest_skews(deltas, len(path) - 1, chain)
        out.append(BandVerdict(tuple(chain), not blocking, tuple(blocking), suggestion, by))
    return out


def _band_deltas(dist: _Distances, path: tuple[str, ...], chain: list[str]) -> isl.UnionSet | None:
    """Distance vectors (outer loops, then the chain) of the dependences inside the band."""
    full = (*path[:-1], *chain)
    n = len(full)
    u: isl.UnionSet | None = None
    for _, delta in dist.under(full):
        extra = delta.dim(isl.dim_type.set) - n
        x = isl.UnionSet.from_set(delta.project_out(isl.dim_type.set, n, extra) if extra else delta)
        u = x if u is None else u.union(x)
    return u


def _negative(
    deltas: isl.UnionSet | None,
    n_out: int,
    chain: Sequence[str],
    skews: Sequence[tuple[int, int, int]] = (),
) -> list[str]:
    """Chain loops with a negative distance (after skews (x, o, f): d_x += f * d_o)."""
    if deltas is None:
        return []
    n = n_out + len(chain)
    xs = [f"x{i}" for i in range(n)]
    comp = {k: f"x{n_out + k}" for k in range(len(chain))}
    for x, o, f in skews:
        # skew(x, o, f) adds f times the loop value of o, itself maybe skewed already
        comp[x] = f"({comp[x]} + {f} * {comp[o]})"
    outer = " and ".join(f"x{i} = 0" for i in range(n_out)) or "true"
    out: list[str] = []
    for k in range(len(chain)):
        bad = _parsed_set(f"{{ [{', '.join(xs)}] : {outer} and {comp[k]} < 0 }}")
        if not deltas.intersect(isl.UnionSet.from_set(bad)).is_empty():
            out.append(chain[k])
    return out


@functools.lru_cache(maxsize=4096)
def _parsed_set(text: str) -> isl.Set:
    """isl sets of the skew search, parsed once (the same few shapes come back)."""
    return isl.Set(text)


def _suggest_skews(
    deltas: isl.UnionSet | None, n_out: int, chain: list[str]
) -> tuple[tuple[str, ...], str]:
    """Skews of inner loops by outer ones that make the band permutable, and who found them.

    isl's scheduler is asked first; when its band is not a chain of skews (or
    it finds none), a small exact search over factors 0..3 follows. Either
    way the skews are checked against every distance vector of the band, so a
    suggestion is always right (but not always found).
    """
    skews = _isl_skews(deltas, n_out, len(chain))
    if skews is not None and not _negative(deltas, n_out, chain, skews):
        return _skew_calls(skews, chain), "isl"
    skews = []
    for x in range(1, len(chain)):
        if chain[x] not in _negative(deltas, n_out, chain, skews):
            continue
        combos = sorted(itertools.product(range(4), repeat=x), key=lambda c: (sum(c), c))
        for combo in combos:
            trial = [*skews, *((x, o, f) for o, f in enumerate(combo) if f)]
            if any(combo) and chain[x] not in _negative(deltas, n_out, chain, trial):
                skews = trial
                break
        else:
            return (), ""
    if _negative(deltas, n_out, chain, skews):
        return (), ""
    return _skew_calls(skews, chain), "search"


def _skew_calls(skews: Sequence[tuple[int, int, int]], chain: Sequence[str]) -> tuple[str, ...]:
    return tuple(f"skew('{chain[x]}', '{chain[o]}', {f})" for x, o, f in skews)


def _isl_skews(
    deltas: isl.UnionSet | None, n_out: int, n: int
) -> list[tuple[int, int, int]] | None:
    """The skews isl's scheduler proposes for the band, if its band is a chain of skews.

    The band's dependences inside one iteration of the outer loops become uniform
    dependences of one statement S (S[x] -> S[x + d] for each distance d); isl
    computes a schedule whose outer band keeps every one of them non-negative in
    every member. If that band has all n members, in the original order, each
    member x_k + (a combination of the outer members), it reads as skews.
    """
    if deltas is None:
        return None
    distances = _inner_distances(deltas, n_out)
    # Distances with integer divisions (tile loops in the band) make isl's scheduler
    # slow (half a second for a tiled 6-deep band), and a skew of point loops by
    # tile loops is not what a user wants: those bands go to the search.
    if distances is None or any(b.dim(isl.dim_type.div) for b in distances.get_basic_sets()):
        return None
    rel = _uniform_dependence(distances)
    dom = isl.UnionSet.from_set(isl.Set.universe(rel.get_space().domain()))
    deps = isl.UnionMap.from_map(rel)
    sc = isl.ScheduleConstraints.on_domain(dom).set_validity(deps).set_proximity(deps)
    try:
        node = sc.compute_schedule().get_root().child(0)
    except isl.Error:
        return None
    if node.get_type() != isl.schedule_node_type.band or node.band_n_member() != n:
        return None
    if not node.band_get_permutable():
        return None
    rows: list[list[int]] = []
    mupa = node.band_get_partial_schedule()
    for k in range(n):
        pas: list[isl.PwAff] = []
        mupa.get_at(k).foreach_pw_aff(pas.append)
        if len(pas) != 1:
            return None
        aff = _only_piece(pas[0])
        if aff is None:
            return None
        rows.append(
            [int(aff.get_coefficient_val(isl.dim_type.in_, i).to_python()) for i in range(n)]
        )
    # Unit lower triangular: member k = x_k + sum of multiples of the members before it.
    skews: list[tuple[int, int, int]] = []
    for k, row in enumerate(rows):
        if row[k] != 1 or any(row[k + 1 :]):
            return None
        rest = row[:k]
        for o in range(k - 1, -1, -1):
            f = rest[o]
            if f:
                skews.append((k, o, f))
                rest = [a - f * b for a, b in zip(rest, rows[o][:k], strict=True)]
        if any(rest):
            return None
    return sorted(skews)


def _only_piece(pa: isl.PwAff) -> isl.Aff | None:
    """The affine expression of a one-piece PwAff without integer divisions."""
    affs: list[isl.Aff] = []
    pa.foreach_piece(lambda _set, aff: affs.append(aff))
    if len(affs) != 1 or affs[0].dim(isl.dim_type.div):
        return None
    return affs[0]


def _inner_distances(deltas: isl.UnionSet, n_out: int) -> isl.Set | None:
    """The band's distance vectors with the outer loops' distances 0, outer dims dropped."""
    sets: list[isl.Set] = []
    deltas.foreach_set(sets.append)
    out: isl.Set | None = None
    for s in sets:
        for i in range(n_out):
            s = s.fix_val(isl.dim_type.set, i, isl.Val.zero(s.get_ctx()))
        s = s.project_out(isl.dim_type.set, 0, n_out)
        out = s if out is None else out.union(s)
    return out


def _uniform_dependence(distances: isl.Set) -> isl.Map:
    """{ S[x] -> S[x + d] : d in distances }."""
    n = distances.dim(isl.dim_type.set)
    space = isl.Space.create_from_names(
        distances.get_ctx(), set=[f"x{i}" for i in range(n)]
    ).set_tuple_name(isl.dim_type.set, "S")
    space = space.align_params(distances.get_space())
    universe = isl.Map.universe(space.map_from_set())
    d = distances.set_tuple_name("S")
    return universe.deltas_map().intersect_range(d).domain().unwrap()


def _witness(
    pairs: isl.UnionMap, stmts: dict[str, Statement]
) -> tuple[Instance, Instance, dict[str, int]]:
    maps: list[isl.Map] = []
    pairs.foreach_map(maps.append)
    m = next(x for x in maps if not x.is_empty())
    p = m.wrap().sample_point()
    src_name = m.get_tuple_name(isl.dim_type.in_)
    snk_name = m.get_tuple_name(isl.dim_type.out)
    n_in = m.dim(isl.dim_type.in_)
    n_out = m.dim(isl.dim_type.out)
    coords = [
        int(p.get_coordinate_val(isl.dim_type.set, i).to_python()) for i in range(n_in + n_out)
    ]
    params: dict[str, int] = {}
    for i in range(m.dim(isl.dim_type.param)):
        name = str(m.get_dim_name(isl.dim_type.param, i))
        if m.involves_dims(isl.dim_type.param, i, 1):
            params[name] = int(p.get_coordinate_val(isl.dim_type.param, i).to_python())
    src = Instance(src_name, dict(zip(stmts[src_name].dims, coords[:n_in], strict=True)))
    snk = Instance(snk_name, dict(zip(stmts[snk_name].dims, coords[n_in:], strict=True)))
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


def _flipping_loop(
    sched: Schedule,
    paths: dict[str, tuple[str, ...]],
    src: Instance,
    snk: Instance,
    params: dict[str, int] | None = None,
) -> str | None:
    """The outermost loop around both instances where the sink's value is now smaller."""
    stmts = sched.statements
    common: list[str] = []
    for name in paths:
        under = set(_below(sched, name))
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


def _violation(
    sched: Schedule,
    d: Dependence,
    src: Instance,
    snk: Instance,
    params: dict[str, int],
    loop: str | None,
    reason: Literal["order", "parallel", "reduction"],
) -> Violation:
    display = sched.program.param_display
    shown = {display.get(k, k): v for k, v in params.items()}
    dist = {k: snk.point[k] - v for k, v in src.point.items() if k in snk.point}
    step = _responsible(sched.steps, loop, reason)
    op = _describe(step) if step is not None else None
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
            "operation may be reassociated (floating-point results change); force=True "
            "accepts it"
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


def _with_suggestion(
    v: Violation,
    bands: Sequence[BandVerdict],
    base_bands: Sequence[BandVerdict],
    sched: Schedule,
) -> Violation:
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


def _with_legal_order(
    v: Violation,
    sched: Schedule,
    dist: _Distances,
    paths: dict[str, tuple[str, ...]],
    found: dict[int, str],
) -> Violation:
    """Add to the hint of a violation made by a permute the legal order closest to it."""
    if v.reason != "order":
        return v
    step = _responsible(sched.steps, v.loop, v.reason)
    if step is None or step.op != "permute":
        return v
    key = id(step)
    if key not in found:
        found[key] = _legal_order_text(sched, dist, paths, step)
    return replace(v, hint=v.hint + found[key]) if found[key] else v


def _legal_order_text(
    sched: Schedule, dist: _Distances, paths: dict[str, tuple[str, ...]], step: Step
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
    sched: Schedule, dist: _Distances, paths: dict[str, tuple[str, ...]], step: Step
) -> list[str] | None:
    """The legal order of a permute's loops that follows the requested one most closely.

    Greedy and complete for a perfectly nested chain: at each position take the
    first loop, in the requested order, that no remaining dependence goes
    backwards along (and whose tile loop is already placed); the dependences it
    carries forward are done. Confirmed with the exact check before it is shown.
    """
    try:
        chain = sched._chain(list(step.loops))  # as nested now: the order asked for
    except ScheduleError:
        return None
    path = paths[chain[-1]]
    n_out = len(path) - len(chain)
    col = {name: n_out + i for i, name in enumerate(chain)}
    outer = " and ".join(f"x{i} = 0" for i in range(n_out)) or "true"
    remaining: list[isl.Set] = []
    for _, delta in dist.under(path):
        delta = delta.intersect(_over(delta.dim(isl.dim_type.set), outer))
        if not delta.is_empty():
            remaining.append(delta)
    placed: list[str] = []
    while len(placed) < len(chain):
        for name in chain:
            if name in placed or not (_tile_loops(sched, name) & set(chain)) <= set(placed):
                continue
            x = f"x{col[name]}"
            if all(
                d.intersect(_over(d.dim(isl.dim_type.set), f"{x} < 0")).is_empty()
                for d in remaining
            ):
                remaining = [
                    r
                    for r in (
                        d.intersect(_over(d.dim(isl.dim_type.set), f"{x} = 0")) for d in remaining
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
        candidate = sched.reorder(placed, force=True)
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


def _responsible(steps: Sequence[Step], loop: str | None, reason: str) -> Step | None:
    if loop is None:
        return None
    for st in reversed(steps):
        if reason != "order" and st.op != "parallel":
            continue
        if loop in st.loops or loop in st.names:
            return st
    return None


def step_text(st: Step) -> str:
    """How a step reads as the Python call that made it."""
    return _describe(st)


def _describe(st: Step) -> str:
    if st.op == "block":
        return f"block('{st.loops[0]}', {st.size})"
    if st.op == "permute":
        return f"permute({list(st.loops)}, {list(st.perm)})"
    if st.op == "skew":
        return f"skew('{st.loops[0]}', '{st.loops[1]}', {st.size})"
    return f"{st.op}({', '.join(repr(x) for x in st.loops)})"


def is_legal(sched: Schedule) -> bool:
    """Whether `sched` keeps every dependence and no parallel loop carries one.

    The verdict of check() without the report (no witnesses, tables, bands).
    """
    deps = dependences(sched.reference_program).deps
    new = sched.schedule_map
    domains = {name: isl.UnionSet.from_set(st.domain) for name, st in sched.statements.items()}
    for d in deps:
        a = new.intersect_domain(domains[d.source])
        b = new.intersect_domain(domains[d.sink])
        if not isl.UnionMap.from_map(d.relation).intersect(a.lex_ge_union_map(b)).is_empty():
            return False
    parallel = [n for n, info in sched.loop_info.items() if info.parallel]
    if not parallel:
        return True
    dist = _Distances(sched, deps)
    paths = _paths(sched.nodes)
    return all(not _loop_verdict(sched, dist, n, paths[n])[1] for n in parallel)


def refuse_if_illegal(sched: Schedule, what: str) -> Schedule:
    """`sched` if it is legal, else IllegalTransformError carrying the report."""
    if is_legal(sched):
        return sched
    report = check(sched)
    v = report.violations[0]
    raise IllegalTransformError(
        f"{what} is illegal: {v}",
        report,
        location=v.location,
        hint=v.hint
        + ("" if "force=True" in v.hint else " (force=True applies it anyway)")
        + "; sched.check() explains",
    )
