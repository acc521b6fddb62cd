"""Legality: refusal, reports, skew, Krnl recipes, CLI (verdicts by hand, results by the oracle)."""

from __future__ import annotations

import copy
import io
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import islpy as isl
import numpy as np
import pytest

import polykrnl as pk
from polykrnl.cli import main
from polykrnl.inputs import make_inputs

LEGALITY = Path(__file__).parent / "legality"

WAVE = """\
func.func @wave(%A: memref<6x6xi64>) {
  %one = arith.constant 1 : i64
  %ii, %jj = krnl.define_loops 2
  krnl.permute(%ii, %jj) [1, 0] : !krnl.loop, !krnl.loop
  krnl.iterate(%jj, %ii) with (%ii -> %i = 1 to 6, %jj -> %j = 0 to 5) {
    %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %jp = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
    %v = krnl.load %A[%im, %jp] : memref<6x6xi64>
    %w = arith.addi %v, %one : i64
    krnl.store %w, %A[%i, %j] : memref<6x6xi64>
  }
  return
}
"""


def _kernel(name: str) -> pk.Function:
    return pk.load(LEGALITY / f"{name}.mlir")[name]


def _same_results(fn: pk.Function, sched: pk.Schedule) -> bool:
    args = make_inputs(fn, {}, seed=3, size=8)
    a, b = copy.deepcopy(args), copy.deepcopy(args)
    pk.run_reference(fn, **a)
    pk.run_reference(fn, schedule=sched, **b)
    return all(
        np.array_equal(np.asarray(a[k]), np.asarray(b[k]), equal_nan=True)
        for k in a
        if isinstance(a[k], np.ndarray)
    )


def test_illegal_tiling_is_refused_with_the_report() -> None:
    s = pk.Schedule.from_function(_kernel("jacobi_1d"), recipe=False)
    with pytest.raises(pk.IllegalTransformError) as info:
        s.block("t", 2).block("i", 4).reorder(["t_t", "i_t", "t", "i"])
    e = info.value
    report = e.report
    assert isinstance(report, pk.LegalityReport) and not report.legal
    v = report.violations[0]
    assert (v.kind, v.array, v.reason) == ("RAW", "A", "order")
    # The distance of jacobi-1d's dependence: one time step later, one cell to the left.
    assert v.distance == {"t": 1, "i": -1}
    assert "skew('i', 't', 1)" in (e.hint or "")
    assert "<-- reverses RAW on A" in e.render()


def test_the_suggested_skew_makes_time_tiling_legal_and_correct() -> None:
    fn = _kernel("jacobi_1d")
    s = pk.Schedule.from_function(fn, recipe=False)
    (band,) = s.check().bands
    assert not band.permutable and band.suggestion == ("skew('i', 't', 1)",)
    t = s.skew("i", "t", 1).block("t", 2).block("i", 4).reorder(["t_t", "i_t", "t", "i"])
    assert t.check().legal
    assert _same_results(fn, t)
    assert sorted(map(str, t.trace())) == sorted(map(str, s.trace()))


@pytest.mark.parametrize(
    ("kernel", "skews", "by"),
    [
        ("jacobi_1d", [("i", "t", 1)], "isl"),
        ("jacobi_2d", [("i", "t", 1), ("j", "t", 1)], "isl"),
        ("seidel_2d", [("i", "t", 1), ("j", "t", 1), ("j", "i", 1)], "isl"),
        # isl's band here is (i + j, i): not a chain of skews, so the search answers.
        ("stencil_skew", [("j", "i", 1)], "search"),
    ],
)
def test_skew_suggestions_from_isl_make_the_band_tilable(
    kernel: str, skews: list[tuple[str, str, int]], by: str
) -> None:
    # Expected skews derived by hand from the distances in legality/README.md
    # (the smallest non-negative factors; seidel needs j + i + 2t).
    fn = _kernel(kernel)
    s = pk.Schedule.from_function(fn, recipe=False)
    (band,) = s.check().bands
    assert not band.permutable
    assert band.suggestion == tuple(f"skew('{a}', '{b}', {f})" for a, b, f in skews)
    assert band.suggested_by == by
    for a, b, f in skews:
        s = s.skew(a, b, f)
    (after,) = s.check().bands
    assert after.permutable
    for loop in band.loops:
        s = s.block(loop, 2)
    tiled = s.reorder([*(f"{x}_t" for x in band.loops), *band.loops])
    assert tiled.check().legal and _same_results(fn, tiled)


def test_a_skew_by_a_skewed_loop_keeps_the_original_values() -> None:
    # seidel's skews run j over j + t + (i + t): the value of loop i as it runs then.
    # Each statement's original iterators are read back (vid_value) and shown in its
    # subscripts with the loops' names; both are checked against the domain's identity.
    fn = _kernel("seidel_2d")
    s = pk.Schedule.from_function(fn, recipe=False)
    skewed = s.skew("i", "t", 1).skew("j", "t", 1).skew("j", "i", 1)
    (st,) = skewed.statements
    dom = skewed.statements[st].domain
    for pos, loop in enumerate(("t", "i", "j")):
        identity = isl.PwAff.var_on_domain(
            isl.LocalSpace.from_space(dom.get_space()), isl.dim_type.set, pos
        )
        got = skewed.vid_value(skewed.loop(loop).vid, st)
        assert got.is_equal(identity.intersect_domain(dom)), (loop, got)
    assert skewed.vid_text(skewed.loop("j").vid) == "(%j - %t * 2 - (%i - %t))"
    # the loop's range is that of its values: j + 2t + i for 1 <= j < 6
    assert skewed.format_bounds(skewed.loop("j")) == (
        "%t + 1 + (%i - %t) + %t to %t + 6 + (%i - %t) + %t"
    )


def test_refused_permute_suggests_the_closest_legal_order() -> None:
    # Floyd-Warshall tiled in k, i, j: moving the i, j tile loops outside k is illegal
    # ((1, 0, -1) across a j tile), but the i, j tiles may go inside k (hand: inside one
    # k the distances are (0, +, 0), (0, 0, +), a permutable i, j band).
    fn = _kernel("floyd_warshall")
    s = pk.Schedule.from_function(fn, recipe=False).block("k", 2).block("i", 4).block("j", 4)
    with pytest.raises(pk.IllegalTransformError) as info:
        s.reorder(["k_t", "i_t", "j_t", "k", "i", "j"])
    hint = info.value.hint or ""
    assert "reorder(['k_t', 'k', 'i_t', 'j_t', 'i', 'j'])" in hint
    ok = s.reorder(["k_t", "k", "i_t", "j_t", "i", "j"])  # not refused
    assert ok.check().legal and _same_results(fn, ok)
    # Only the original order is legal for the (1, -1) stencil: no order is proposed.
    w = pk.Schedule.from_function(_kernel("stencil_skew"), recipe=False)
    with pytest.raises(pk.IllegalTransformError) as info:
        w.reorder(["j", "i"])
    assert "legal order" not in (info.value.hint or "")


def test_refused_krnl_permute_suggests_a_krnl_permute() -> None:
    text = """\
func.func @rows(%A: memref<6x6xi64>) {
  %one = arith.constant 1 : i64
  %ii, %jj, %kk = krnl.define_loops 3
  krnl.permute(%ii, %jj, %kk) [2, 0, 1] : !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%jj, %kk, %ii) with (%ii -> %i = 1 to 6, %jj -> %j = 0 to 6, %kk -> %k = 0 to 2) {
    %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %v = krnl.load %A[%im, %j] : memref<6x6xi64>
    %w = arith.addi %v, %one : i64
    krnl.store %w, %A[%i, %j] : memref<6x6xi64>
  }
  return
}
"""
    # A[i][j] = A[i-1][j] + 1 repeated for k: RAW (0, 0, +) from row i - 1 and WAW/WAR
    # between the k repetitions (0, 0, +) on A[i][j], with (1, 0, -1) from A[i-1][j]
    # written at k = 1 and read at k = 0 of the next row. Putting k outermost reverses
    # that; by hand the closest legal order to (j, k, i) keeps i before k: (j, i, k).
    fn = pk.parse(text, "rows.mlir")["rows"]
    with pytest.raises(pk.IllegalTransformError) as info:
        pk.schedule(fn)
    hint = info.value.hint or ""
    assert "reorder(['j', 'i', 'k'])" in hint, hint
    assert "krnl.permute(%i, %j, %k) [1, 0, 2]" in hint, hint


def test_mlir_misses_negative_constant_distances_polykrnl_does_not() -> None:
    # A[i][j] = A[i-1][j+1] + 1: distance (1, -1); the band (i, j) is not permutable.
    s = pk.Schedule.from_function(_kernel("stencil_skew"), recipe=False)
    report = s.check()
    assert report.legal
    (band,) = report.bands
    assert band.loops == ("i", "j") and not band.permutable and band.blocking == ("j",)
    loops = {lv.loop: lv for lv in report.loops}
    assert loops["i"].status == "forward" and loops["j"].status == "parallel"
    assert loops["j"].vectorizable


def test_reduction_loop_is_parallel_only_as_a_reduction() -> None:
    s = pk.Schedule.from_function(_kernel("gemm"), recipe=False)
    with pytest.raises(pk.IllegalTransformError, match="reduction"):
        s.parallel("k")
    forced = s.parallel("k", force=True)
    report = forced.check()
    assert {v.reason for v in report.violations} == {"reduction"}
    assert {lv.loop: lv.status for lv in report.loops}["k"] == "reduction"
    assert s.parallel("i").parallel("j").check().legal


def test_force_keeps_an_illegal_schedule_and_later_steps_are_not_refused() -> None:
    s = pk.Schedule.from_function(
        pk.parse(
            WAVE.replace("  krnl.permute(%ii, %jj) [1, 0] : !krnl.loop, !krnl.loop\n", "").replace(
                "krnl.iterate(%jj, %ii)", "krnl.iterate(%ii, %jj)"
            )
        )["wave"],
        recipe=False,
    )
    bad = s.reorder(["j", "i"], force=True)
    assert not bad.check().legal
    # Already illegal: a further (legal) step is not blamed for it.
    assert not bad.block("i", 2).check().legal


def test_illegal_krnl_recipe_is_refused_at_the_recipe_op() -> None:
    fn = pk.parse(WAVE, "wave.mlir")["wave"]
    with pytest.raises(pk.IllegalTransformError) as info:
        pk.schedule(fn)
    loc = info.value.location
    assert loc is not None and (loc.file, loc.line) == ("wave.mlir", 4)
    report = pk.check(fn)  # never raises for illegality
    assert not report.legal
    assert report.violations[0].op == "permute(['i', 'j'], [1, 0])"
    assert pk.schedule(fn, force=True).loops()


def test_recipe_legality_is_judged_against_the_unpermuted_order() -> None:
    # Distance (1, 1) instead of (1, -1): the same interchange is legal, and the
    # dependence is still there in the report's loop table.
    fn = pk.parse(WAVE.replace("(d0) -> (d0 + 1)", "(d0) -> (d0 - 1)").replace("0 to 5", "1 to 6"))[
        "wave"
    ]
    report = pk.check(fn)
    assert report.legal
    # j (outside now) carries the (1, 1) distance; inside one j, i carries nothing.
    assert {lv.loop: lv.status for lv in report.loops} == {"j": "forward", "i": "parallel"}
    assert _same_results(fn, pk.schedule(fn))


def test_skew_refuses_krnl_and_misuse() -> None:
    s = pk.Schedule.from_function(_kernel("stencil_skew"), recipe=False)
    with pytest.raises(pk.ScheduleError, match="Krnl has no skew"):
        s.skew("j", "i").to_krnl()
    with pytest.raises(pk.ScheduleError, match="does not enclose"):
        s.skew("i", "j")
    with pytest.raises(pk.ScheduleError, match="non-zero integer"):
        s.skew("j", "i", 0)


def test_report_json_and_html() -> None:
    fn = pk.parse(WAVE)["wave"]
    report = pk.check(fn)
    data = json.loads(json.dumps(report.to_json()))
    assert data["legal"] is False
    v = data["violations"][0]
    for key in ("kind", "array", "source", "sink", "distance", "op", "location", "hint"):
        assert key in v
    assert v["source"] == {"stmt": "S0", "point": {"i": 1, "j": 1}} or v["source"]["stmt"] == "S0"
    assert {b["permutable"] for b in data["bands"]} == {False}
    html = report._repr_html_()

    class Collect(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tags: list[str] = []

        def handle_starttag(self, tag: str, attrs: Any) -> None:
            self.tags.append(tag)

    p = Collect()
    p.feed(html)
    assert "table" in p.tags and "li" in p.tags and "illegal" in html


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_cli_check_exit_codes(tmp_path: Path) -> None:
    bad = tmp_path / "wave.mlir"
    bad.write_text(WAVE)
    code, out, err = _cli("check", str(bad))
    assert code == 1 and "ILLEGAL" in out and err == ""
    code, out, _ = _cli("check", str(bad), "--json", "--func", "wave")
    assert code == 1 and json.loads(out)["legal"] is False
    code, out, _ = _cli("check", str(Path(__file__).parent.parent / "corpus" / "gemm.mlir"))
    assert code == 0 and "legal" in out
    broken = tmp_path / "broken.mlir"
    broken.write_text("func.func @f( {\n")
    code, out, err = _cli("check", str(broken))
    assert code == 2 and err.startswith("error:") and "Traceback" not in err


TILE_LEVEL = """\
func.func @tile_level(%X: memref<8xf32>, %T: memref<8xf32>, %A: memref<12x8xf32>,
                      %B: memref<12x8xf32>) {
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  PARALLEL
  krnl.iterate(%ib) with (%ii -> %i = 0 to 8, %jj -> %j = 0 to 8) {
    %t = krnl.get_induction_var_value(%ib) : (!krnl.loop) -> index
    %x = krnl.load %X[%t] : memref<8xf32>
    krnl.store %x, %T[%t] : memref<8xf32>
    krnl.iterate(%il, %jj) with () {
      %v = krnl.load %A[%i, %j] : memref<12x8xf32>
      krnl.store %v, %B[%i, %j] : memref<12x8xf32>
    }
    %n = affine.apply affine_map<(d0) -> (d0 + 4)>(%t)
    %c0 = arith.constant 0 : index
    %y = krnl.load %T[%t] : memref<8xf32>
    krnl.store %y, %A[%n, %c0] : memref<12x8xf32>
  }
  return
}
"""


def test_statements_between_tile_and_point_loops() -> None:
    # S2, after the point loops of tile ib, writes A[ib + 4][0], which S1 of the next
    # tile reads: the tile loop carries a RAW dependence, the point band does not.
    fn = pk.parse(TILE_LEVEL.replace("  PARALLEL\n", ""), "tile_level.mlir")["tile_level"]
    s = pk.schedule(fn)
    report = s.check()
    assert report.legal
    status = {lv.loop: lv.status for lv in report.loops}
    assert status == {"ib": "forward", "il": "parallel", "j": "parallel"}
    assert s.parallel("il").check().legal
    with pytest.raises(pk.IllegalTransformError) as info:
        s.parallel("ib")
    v = info.value.report.violations[0]
    assert (v.kind, v.array, v.reason, v.loop) == ("RAW", "A", "parallel", "ib")
    assert v.source.stmt == "S2" and v.sink.stmt == "S1"
    assert v.sink.point["i"] == v.source.point["ib"] + 4 and v.sink.point["j"] == 0

    marked = pk.parse(
        TILE_LEVEL.replace("PARALLEL", "krnl.parallel %ib : !krnl.loop"), "tile_level.mlir"
    )["tile_level"]
    with pytest.raises(pk.IllegalTransformError) as info:
        pk.schedule(marked)
    loc = info.value.location
    assert loc is not None and loc.line == 5
