"""The legality report: violations with witnesses, loop and band verdicts, as text and HTML.

:func:`polykrnl.transforms.legality.check` makes a :class:`LegalityReport`;
each violation names a concrete pair of statement instances (with the values
of the original induction variables and of the parameters) that the schedule
runs in the wrong order or in parallel.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

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
from polykrnl.errors import SourceLocation
from polykrnl.transforms.core import Schedule
from polykrnl.transforms.looptree import loop_tree
from polykrnl.transforms.memory_safety import MemoryReport

LoopStatus = Literal["parallel", "reduction", "forward", "violates"]
# legal: proven (no dependence broken); illegal: a violation whose instances both run and
# touch one element (maybe under a stated data condition); unproven: violations only
# through accesses the model over-approximates.
Verdict = Literal["legal", "illegal", "unproven"]
# How sure one violation is (transforms/verdicts.py).
Certainty = Literal["certain", "data", "may"]
CERTAINTY_RANK = {"certain": 0, "data": 1, "may": 2}

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
    certainty: Certainty = "certain"
    # For "data": when the two instances touch one element ("idx[0] == idx[1]").
    condition: str = ""
    # For "may": the approximated statements it goes through, each with why.
    approximated: tuple[str, ...] = ()

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
        may = "possible " if self.certainty == "may" else ""
        when = f" when {self.condition}" if self.condition else ""
        through = (
            " (not proven: only through accesses the model over-approximates: "
            + "; ".join(self.approximated)
            + ")"
            if self.certainty == "may"
            else ""
        )
        return (
            f"{may}{self.kind} dependence on {self.array} from {self.source} to {self.sink}"
            f"{params}{when} (distance {dist or 'none'}): {what}{by}{through}"
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
            "certainty": self.certainty,
            "condition": self.condition,
            "approximated": list(self.approximated),
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
    """Whether a schedule keeps every dependence, and what each loop and band allows.

    Made by `Schedule.check()` and `pk.check(fn)`. `legal` (also `bool(report)`) and
    `verdict` ("legal", "illegal" or "unproven": broken only through accesses the model
    over-approximates); `violations`, each with the dependence (`kind`, `array`), a
    witness pair of instances (`source`, `sink`), the loop and the step at fault, and a
    hint; `loops`, each loop's verdict (parallel, reduction, forward with its carried
    distances, vectorizable); `bands`, each perfectly nested chain's permutability (so
    tilability) with a skew that would make it tilable; `approximations`; `memory`, the
    `MemoryReport`. `str()` is the text `polykrnl check` prints, `to_json()` its
    `--json`.

    Examples
    --------
    >>> import polykrnl as pk
    >>> fn = pk.parse('''
    ... func.func @rowsum(%X: memref<4x8xf32>, %Y: memref<4xf32>) {
    ...   %ii, %jj = krnl.define_loops 2
    ...   krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 8) {
    ...     %x = krnl.load %X[%i, %j] : memref<4x8xf32>
    ...     %y = krnl.load %Y[%i] : memref<4xf32>
    ...     %s = arith.addf %x, %y : f32
    ...     krnl.store %s, %Y[%i] : memref<4xf32>
    ...   }
    ...   return
    ... }''')["rowsum"]
    >>> report = pk.check(fn)
    >>> report.verdict
    'legal'
    >>> [(v.loop, v.status) for v in report.loops]
    [('i', 'parallel'), ('j', 'reduction')]
    """

    function: str
    violations: tuple[Violation, ...]
    loops: tuple[LoopVerdict, ...]
    bands: tuple[BandVerdict, ...]
    # The loop nest of the schedule, written when the report is shown.
    schedule: Schedule | None = field(default=None, compare=False, repr=False)
    note: str = ""  # a limit of this verdict, when there is one
    # Statements whose accesses the model over-approximates, each with why
    # ("S2 (krnl.load, line 6): ..."): the verdict is sound but may be pessimistic.
    approximations: tuple[str, ...] = ()
    # Whether every access stays inside its array, per array (memory_safety.py).
    memory: MemoryReport | None = field(default=None, compare=False)

    @property
    def legal(self) -> bool:
        """Proven legal: no dependence broken, approximated ones included."""
        return not self.violations

    @property
    def verdict(self) -> Verdict:
        """ "legal" (proven), "illegal" (a violation that happens, maybe under a stated
        data condition) or "unproven" (violations only through approximated accesses)."""
        if not self.violations:
            return "legal"
        if any(v.certainty != "may" for v in self.violations):
            return "illegal"
        return "unproven"

    def _headline(self) -> str:
        n = len(self.violations)
        if self.verdict == "legal":
            return "legal"
        if self.verdict == "illegal":
            return f"ILLEGAL ({n} violation{'s' * (n != 1)})"
        return (
            f"NOT PROVEN ({n} possible violation{'s' * (n != 1)}, "
            "only through approximated accesses)"
        )

    @property
    def loop_text(self) -> str:
        return str(loop_tree(self.schedule)) if self.schedule is not None else ""

    def __bool__(self) -> bool:
        return self.legal

    def __str__(self) -> str:
        lines = [f"@{self.function}: {self._headline()}"]
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
        if self.approximations:
            lines.append("  approximated accesses (sound, maybe pessimistic):")
            lines += [f"    {a}" for a in self.approximations]
        if self.memory is not None:
            lines.append("  memory safety:")
            lines += [f"    {x}" for x in self.memory.lines()]
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
            "verdict": self.verdict,
            "note": self.note,
            "approximations": list(self.approximations),
            "violations": [v.to_json() for v in self.violations],
            "bands": [b.to_json() for b in self.bands],
            "loops": [lv.to_json() for lv in self.loops],
            "memory": None if self.memory is None else self.memory.to_json(),
        }

    def _repr_html_(self) -> str:
        color = GOOD if self.legal else (BAD if self.verdict == "illegal" else MUTED)
        verdict = self._headline().lower()
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
                may = v.certainty == "may"
                when = f" when {code(v.condition)}" if v.condition else ""
                through = (
                    "; not proven: only through " + "; ".join(escape(a) for a in v.approximated)
                    if may
                    else ""
                )
                items.append(
                    f'<li class="pk-violation" style="color: {MUTED if may else BAD}; '
                    'margin-bottom: 4px;">'
                    f"<b>{'possible ' if may else ''}{escape(v.kind)} on {escape(v.array)}"
                    + (" (reduction)" if v.reduction else "")
                    + f"</b>: {code(str(v.source))} must run before {code(str(v.sink))}"
                    + (f" with {code(params)}" if params else "")
                    + when
                    + f" (distance {escape(dist)}), but {what}{by}{through}"
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
        if self.approximations:
            items_a = "".join(f"<li>{escape(a)}</li>" for a in self.approximations)
            parts.append(
                section(
                    "approximated accesses (sound, maybe pessimistic)",
                    f'<ul style="margin: 2px 0; color: {MUTED};">{items_a}</ul>',
                )
            )
        if self.memory is not None:
            parts.append(section("memory safety", self.memory.html_table()))
        if self.loop_text:
            title = "loop nest" + ("" if self.legal else " (the loops at fault marked)")
            text = self.loop_text if self.legal else self.marked_loops()
            parts.append(section(title, highlight(text, "mlir")))
        return display_box("legality", f"@{self.function}: {verdict}", "".join(parts), color=color)


def _range(lo: int | None, hi: int | None) -> str:
    a = "?" if lo is None else str(lo)
    b = "?" if hi is None else str(hi)
    return a if a == b else f"{a}..{b}"
