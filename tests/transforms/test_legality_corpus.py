"""Legality verdicts against the hand-derived corpus (tests/transforms/legality/).

Witnesses are checked, not trusted: for every reported violation, the two
instances touch the same element (one writes it), the original order runs the
source first, and the new schedule runs the sink first (or, for a parallel
loop, runs them in different iterations of that loop).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import islpy as isl
import pytest

import polykrnl as pk
from polykrnl.transforms.legality_report import Instance, Violation
from tests.parsed import load

HERE = Path(__file__).parent / "legality"


def _cases() -> ModuleType:
    spec = importlib.util.spec_from_file_location("legality_cases", HERE / "cases.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


CASES: list[dict[str, Any]] = _cases().CASES
# Each kernel file parsed once: the tests only read the programs (parsing is much of their time).


def _replay(case: dict[str, Any]) -> pk.Schedule:
    fn = load(HERE / f"{case['kernel']}.mlir")[case["kernel"]]
    s = pk.Schedule.from_function(fn, recipe=False)
    for name, *args in case["steps"]:
        s = getattr(s, name)(*args, force=True)
    return s


def test_the_corpus_is_big_enough() -> None:
    assert len(CASES) >= 40
    assert sum(not c["legal"] for c in CASES) >= 15


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_verdict(case: dict[str, Any]) -> None:
    s = _replay(case)
    report = s.check()
    assert report.legal == case["legal"], str(report)
    if case["legal"]:
        return
    kinds = {v.kind for v in report.violations}
    assert kinds == set(case["kinds"]), str(report)
    if case.get("reduction"):
        assert all(v.reduction for v in report.violations)
    for v in report.violations:
        _check_witness(s, v)


def _point(stmt: pk.PolyProgram, inst: Instance, params: dict[str, int]) -> isl.Set:
    s = stmt.statement(inst.stmt)
    names = list(s.dims)
    cons = " and ".join(f"{n} = {inst.point[n]}" for n in names) or "true"
    pcons = " and ".join(f"{k} = {v}" for k, v in params.items())
    p = f"[{', '.join(params)}] -> " if params else ""
    return isl.Set(
        f"{p}{{ {inst.stmt}[{', '.join(names)}] : {cons}"
        + (f" and {pcons}" if pcons else "")
        + " }"
    )


def _touched(
    program: pk.PolyProgram, inst: Instance, array: str, params: dict[str, int], write: bool | None
) -> isl.UnionSet:
    dom = _point(program, inst, params)
    out = isl.UnionSet.empty(dom.get_space().params())
    for a in program.statement(inst.stmt).accesses:
        if a.array == array and (write is None or a.write == write):
            out = out.union(
                isl.UnionSet.from_set(
                    a.relation.intersect_domain(
                        dom.align_params(a.relation.get_space().params())
                    ).range()
                )
            )
    return out


def _check_witness(s: pk.Schedule, v: Violation) -> None:
    program = s.program
    by_display = {d: p for p, d in program.param_display.items()}
    params = {by_display.get(k, k): val for k, val in v.params.items()}
    src_w = v.kind in ("RAW", "WAW")
    snk_w = v.kind in ("WAR", "WAW")
    a = _touched(program, v.source, v.array, params, src_w)
    b = _touched(program, v.sink, v.array, params, snk_w)
    assert not a.intersect(b).is_empty(), f"{v}: the two instances share no element"
    # The original order runs the source first ...
    orig = program.schedule.get_map()
    new = s.schedule_map
    sp, kp = _point(program, v.source, params), _point(program, v.sink, params)

    def time(m: isl.UnionMap, p: isl.Set) -> list[int]:
        img = m.intersect_domain(isl.UnionSet.from_set(p)).range()
        pts: list[list[int]] = []
        img.foreach_point(
            lambda q: pts.append(
                [
                    int(q.get_coordinate_val(isl.dim_type.set, i).to_python())
                    for i in range(q.get_space().dim(isl.dim_type.set))
                ]
            )
        )
        assert len(pts) == 1
        return pts[0]

    assert time(orig, sp) < time(orig, kp), f"{v}: not a dependence of the original order"
    if v.reason == "order":
        assert time(new, kp) < time(new, sp), f"{v}: the new order is not reversed"
    else:
        loop = v.loop
        assert loop is not None
        vals = s.loop_info[loop].values

        def at(inst: Instance) -> int:
            m = isl.Map.from_pw_aff(vals[inst.stmt]).intersect_domain(_point(program, inst, params))
            pts: list[int] = []
            m.range().foreach_point(
                lambda q: pts.append(int(q.get_coordinate_val(isl.dim_type.set, 0).to_python()))
            )
            return pts[0]

        assert at(v.source) != at(v.sink), f"{v}: same iteration of the parallel loop"


_HINT = re.compile(
    r"(?P<src>S\d+)\((?P<sp>[^)]*)\) (?P<a>writes|reads) (?P<arr>\w+)(?P<idx>(\[\d*\])+) "
    r"(?P<b>read by|overwritten by) (?P<snk>S\d+)\((?P<kp>[^)]*)\)"
)


def _points(u: isl.UnionSet) -> list[list[int]]:
    out: list[list[int]] = []

    def on(q: isl.Point) -> None:
        n = q.get_space().dim(isl.dim_type.set)
        out.append([int(q.get_coordinate_val(isl.dim_type.set, i).to_python()) for i in range(n)])

    u.foreach_point(on)
    return out


def _instance(stmt: str, text: str) -> Instance:
    pairs = [p.split("=") for p in text.split(",") if p]
    return Instance(stmt, {k.strip(): int(v) for k, v in pairs})


def _array_named(program: pk.PolyProgram, name: str) -> str:
    """The program's array for a name of the hand notation (`acc`: the iter_args array)."""
    if name in program.arrays:
        return name
    found = [a for a in program.arrays if a.startswith(name)]
    assert len(found) == 1, f"no single array for {name}: {list(program.arrays)}"
    return found[0]


ILLEGAL = [c for c in CASES if not c["legal"]]


@pytest.mark.parametrize("case", ILLEGAL, ids=[c["id"] for c in ILLEGAL])
def test_hand_witness_is_a_real_violation(case: dict[str, Any]) -> None:
    """The pair written by hand in the case touches one element and is reordered or split."""
    m = _HINT.fullmatch(case["witness_hint"])
    assert m, case["witness_hint"]
    s = _replay(case)
    program = s.program
    src, snk = _instance(m["src"], m["sp"]), _instance(m["snk"], m["kp"])
    array = _array_named(program, m["arr"])
    element = [int(x) for x in re.findall(r"\[(\d+)\]", m["idx"])]
    for inst, write in ((src, m["a"] == "writes"), (snk, m["b"] == "overwritten by")):
        touched = _touched(program, inst, array, {}, write)
        pts = _points(touched)
        # Private copies of a buffer are indexed first by the loops around it.
        assert any(p[len(p) - len(element) :] == element for p in pts), (
            f"{inst} does not {'write' if write else 'read'} {m['arr']}{m['idx']}"
        )
    kind = {("writes", "read by"): "RAW", ("reads", "overwritten by"): "WAR"}.get(
        (m["a"], m["b"]), "WAW"
    )
    parallel = [x for st in case["steps"] if st[0] == "parallel" for x in st[1:]]
    try:
        _check_witness(
            s,
            Violation(kind, array, src, snk, {}, {}, None, "order", None, None, ""),
        )
    except AssertionError:
        if not parallel:
            raise
        # Not reordered: then the pair must be split by one of the parallel loops.
        split = []
        for loop in parallel:
            v = Violation(kind, array, src, snk, {}, {}, loop, "parallel", None, None, "")
            try:
                _check_witness(s, v)
                split.append(loop)
            except AssertionError:
                pass
        assert split, f"{case['witness_hint']}: neither reordered nor split by {parallel}"
