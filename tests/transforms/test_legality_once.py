"""Legality runs once per pipeline: the report stays with the schedule it judges."""

from __future__ import annotations

from pathlib import Path

import pytest

import polykrnl as pk
from polykrnl.transforms import legality

ROOT = Path(__file__).resolve().parents[2]
GEMM = pk.load(ROOT / "tests" / "corpus" / "gemm.mlir")["gemm_tiled"]


@pytest.fixture
def reports(monkeypatch: pytest.MonkeyPatch) -> list[pk.Schedule]:
    """The schedules whose full report was computed, in order."""
    seen: list[pk.Schedule] = []
    original = legality._check

    def counting(sched: pk.Schedule) -> legality.LegalityReport:
        seen.append(sched)
        return original(sched)

    monkeypatch.setattr(legality, "_check", counting)
    return seen


def test_schedule_then_numpy_checks_the_recipe_once(reports: list[pk.Schedule]) -> None:
    sched = pk.schedule(GEMM)  # a permuted recipe: judged here
    assert reports == [sched]
    sched.to_numpy()
    sched.check()
    assert sched.legal
    assert reports == [sched]


def test_a_new_schedule_gets_its_own_report(reports: list[pk.Schedule]) -> None:
    sched = pk.schedule(GEMM)
    swapped = sched.reorder(["jb", "ib"], force=True)
    report = swapped.check()
    assert reports == [sched, swapped]
    assert report.schedule is swapped
