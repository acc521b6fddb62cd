"""Test tiers: ``python -m pytest -q -m "not slow"`` is the fast tier (under a minute); the
plain run is everything (the `slow` marker: pyproject.toml; property tests: property_tiers.py)."""

from __future__ import annotations

import pytest

from tests.property_tiers import ALL, FEW, PARAM


def _property_tier(item: pytest.Item) -> tuple[str, str] | None:
    """(its tier, the property test's node id) for an item of a tiered property test."""
    if not isinstance(item, pytest.Function):
        return None
    callspec = getattr(item, "callspec", None)
    if callspec is None or PARAM not in callspec.params:
        return None
    parent = item.parent.nodeid if item.parent is not None else ""
    return callspec.params[PARAM], f"{parent}::{item.originalname}"


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Drop a property's few-examples run where its all-examples run is selected too."""
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
