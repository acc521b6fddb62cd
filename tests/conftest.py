"""Test tiers: ``python -m pytest -q -n 2 -m "not slow"`` is the fast tier (README gives its
time; every pytest-xdist worker collects the same items in the same order, so SAMPLED
selects the same cases in each);
the plain run is everything (the `slow` marker: pyproject.toml; property tests and SIZED
tests: property_tiers.py; the sampled parametrizations: SAMPLED below)."""

from __future__ import annotations

import gc
from collections import Counter

import pytest

from tests.property_tiers import ALL, FEW, PARAM, TIER

# The long tail of the largest parametrizations (a case each of the corpus, a size each)
# is slow: the fast tier runs every k-th case of these tests, the first included, and the
# rest wait for the whole suite. Each case runs the same code on another program or size;
# the explicit cases of each behaviour stay in the fast tier.
SAMPLED: dict[str, int] = {
    "tests/codegen/test_numpy_differential.py::test_recipe_kernel_matches_the_reference": 4,
    "tests/codegen/test_numpy_differential.py::"
    "test_legal_transformation_kernel_matches_the_reference": 4,
    "tests/transforms/test_run_in_schedule_order.py::test_recipe_order_runs_like_the_reference": 4,
    "tests/transforms/test_legality_corpus.py::test_verdict": 3,
    "tests/transforms/test_nest_dependences.py::"
    "test_nest_dependences_are_the_whole_programs_inside_one_nest": 4,
    "tests/targets/pto/test_pto_emit.py::test_simulation_matches_the_reference": 3,
    "tests/targets/pto/test_pto_emit.py::test_more_sizes_match_the_reference": 3,
    "tests/codegen/test_index_set_splitting.py::test_floyd_warshall_equals_the_interpreter": 3,
    "tests/codegen/test_masks.py::test_polybench_triangles_equal_the_interpreter": 3,
    "tests/transforms/test_full_tiles.py::test_unrolled_and_jammed_syrk_equals_the_interpreter": 3,
    "tests/transforms/test_full_tiles.py::test_partial_tiles_run_every_iteration_once": 3,
    "tests/reader/test_roundtrip.py::test_cli_print": 8,
    "tests/reader/test_roundtrip.py::test_cli_print_generic": 8,
    "tests/targets/pto/test_tmp_rules.py::test_row_arg": 3,
    "tests/targets/pto/test_tmp_rules.py::test_ttrans_conversions": 2,
    "tests/targets/pto/test_symbolic.py::test_pw_aff_to_sympy_equals_isl_eval": 3,
    "tests/benchmarks/test_c_kernels.py::test_c_matches_hand_numpy": 3,
    "tests/codegen/test_differential_regressions.py::test_campaign_reproducer": 2,
    "tests/codegen/test_hostile_text.py::test_python_modules_hold_only_generated_code": 2,
    "tests/targets/numba/test_numba_kernel.py::test_numba_kernel_equals_the_reference": 2,
    "tests/codegen/test_scalar_ops.py::test_op_matches_interpreter": 2,
}
_sampled_seen: Counter[str] = Counter()


def pytest_configure(config: pytest.Config) -> None:
    """Python's full garbage collections walk every object alive, and a test session
    keeps many (parsed programs, isl objects, Numba's compiled functions): at the default
    thresholds they took about a tenth of the run. A full collection now waits for ten
    times as many younger ones; young objects are collected as before."""
    gen0, gen1, _ = gc.get_threshold()
    gc.set_threshold(gen0, gen1, 100)


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark slow all but every k-th case of a SAMPLED test (before -m selects)."""
    base, bracket, _ = item.nodeid.partition("[")
    every = SAMPLED.get(base)
    if every is None or not bracket:
        return
    index = _sampled_seen[base]
    _sampled_seen[base] += 1
    if index % every:
        item.add_marker(pytest.mark.slow)


def _property_tier(item: pytest.Item) -> tuple[str, str] | None:
    """(its tier, the test's node id) for an item of a tiered test (property or SIZED)."""
    if not isinstance(item, pytest.Function):
        return None
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    tier = callspec.params.get(PARAM, callspec.params.get(TIER))
    if tier not in (FEW, ALL):
        return None
    parent = item.parent.nodeid if item.parent is not None else ""
    return tier, f"{parent}::{item.originalname}"


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Drop a tiered test's few run where its all run is selected too."""
    tiers = {item.nodeid: _property_tier(item) for item in items}
    full = {t[1] for t in tiers.values() if t is not None and t[0] == ALL}
    drop = [
        item
        for item in items
        if (t := tiers[item.nodeid]) is not None and t[0] == FEW and t[1] in full
    ]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [item for item in items if item not in drop]
