"""Property tests in two tiers: all their examples (marked slow), or a few (the fast tier).

``@tiered(PROPERTY, few, **strategies)`` stands for ``@PROPERTY @given(**strategies)`` and
parametrizes the test by how many examples Hypothesis draws: ``[all]`` with PROPERTY's
max_examples, marked slow, and ``[few]`` with `few`. Explicit ``@example`` inputs (below the
decorator) run in both. tests/conftest.py drops ``[few]`` where ``[all]`` of the same test is
selected too, so a run without ``-m`` draws each property's examples once, and
``-m "not slow"`` still draws a few of each.

``@SIZED`` does the same for a test that is not a property (a bounded campaign, a long
parametrization): it takes ``tier`` (FEW or ALL) and picks its size by it, e.g.
``programs = 12 if tier == FEW else 60``; ``[few]`` runs in the fast tier, ``[all]`` is
slow, and a run that selects both keeps ``[all]`` only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis.strategies import SearchStrategy

PARAM = "hypothesis_examples"
TIER = "tier"
FEW, ALL = "few", "all"
TIERS = [pytest.param(FEW, id=FEW), pytest.param(ALL, id=ALL, marks=pytest.mark.slow)]
SIZED = pytest.mark.parametrize(TIER, TIERS)


def tiered(
    full: settings, few: int, *args: SearchStrategy[Any], **kwargs: SearchStrategy[Any]
) -> Callable[[Callable[..., None]], Callable[[str], None]]:
    def decorate(test: Callable[..., None]) -> Callable[[str], None]:
        runs = {
            FEW: settings(full, max_examples=few)(given(*args, **kwargs)(test)),
            ALL: settings(full)(given(*args, **kwargs)(test)),
        }

        def run(hypothesis_examples: str) -> None:
            runs[hypothesis_examples]()

        # pytest collects `run` under the property's name; not functools.wraps, whose
        # __wrapped__ would make pytest read the strategies' arguments as fixtures.
        run.__name__, run.__qualname__ = test.__name__, test.__qualname__
        run.__module__, run.__doc__ = test.__module__, test.__doc__
        return pytest.mark.parametrize(PARAM, TIERS)(run)

    return decorate
