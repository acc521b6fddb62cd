"""Property tests in two tiers: all their examples (marked slow), or a few (the fast tier).

``@tiered(PROPERTY, few, **strategies)`` stands for ``@PROPERTY @given(**strategies)`` and
parametrizes the test by how many examples Hypothesis draws: ``[all]`` with PROPERTY's
max_examples, marked slow, and ``[few]`` with `few`. Explicit ``@example`` inputs (below the
decorator) run in both. tests/conftest.py drops ``[few]`` where ``[all]`` of the same test is
selected too, so a run without ``-m`` draws each property's examples once, and
``-m "not slow"`` still draws a few of each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis.strategies import SearchStrategy

PARAM = "hypothesis_examples"
FEW, ALL = "few", "all"


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
        tiers = [pytest.param(FEW, id=FEW), pytest.param(ALL, id=ALL, marks=pytest.mark.slow)]
        return pytest.mark.parametrize(PARAM, tiers)(run)

    return decorate
