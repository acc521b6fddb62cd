"""Reductions stored back into memory become np.sum/np.prod/np.max/np.min (or `@`).

The values are checked against ``pk.run_reference`` for every function of
tests/corpus/reductions.mlir by test_numpy_differential.py; this file checks
the form the vectorizer chose (so that a regression to scalar loops shows) and
the corner cases random inputs do not reach: integer wrap-around, an empty
reduction range, exact reductions without reassociation.
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk

CORPUS = Path(__file__).parent.parent / "corpus"
MOD = pk.load(CORPUS / "reductions.mlir")

# function -> the reduction call its kernel must contain (None: no reduction call)
FORMS = {
    "row_max": "np.max(",
    "col_sum_exp": "np.sum(",
    "row_minus": "np.sum(",
    "row_product": "np.prod(",
    "int_sum": "np.sum(",
    "int_min": "np.min(",
    "nan_ignoring_max": "np.fmax.reduce(",
    "row_max_symbolic": "np.max(",
    # b[i] does not depend on j: adding it once per j is not one sum over j.
    "invariant_summand": None,
}


def test_every_function_is_listed() -> None:
    assert sorted(FORMS) == sorted(fn.name for fn in MOD.functions)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_reduction_form(name: str) -> None:
    source = pk.schedule(MOD[name]).to_numpy().source
    form = FORMS[name]
    if form is None:
        assert not any(f in source for f in ("np.sum(", "np.prod(", "np.max(", "np.min("))
        assert "for j in range(4)" in source
    else:
        assert form in source, source
        assert "for j" not in source, source


@pytest.mark.parametrize(
    ("name", "exact"),
    [
        ("row_max", True),
        ("int_sum", True),
        ("int_min", True),
        ("nan_ignoring_max", True),
        ("col_sum_exp", False),
        ("row_minus", False),
        ("row_product", False),
    ],
)
def test_only_float_sums_and_products_reassociate(name: str, exact: bool) -> None:
    sched = pk.schedule(MOD[name])
    assert sched.to_numpy().reassociated is not exact
    strict = sched.to_numpy(reassociate=False)
    assert strict.exact
    # Exact reductions stay array code without reassociation; the others are loops.
    form = FORMS[name]
    assert form is not None
    assert (form in strict.source) is exact, strict.source


def test_integer_sum_wraps_like_the_reference() -> None:
    fn = MOD["int_sum"]
    a = np.full((7, 9), 2**31 - 5, dtype=np.int32)
    got = {"a": a, "total": np.array([7], dtype=np.int32)}
    expected = copy.deepcopy(got)
    pk.run_reference(fn, **expected)
    pk.schedule(fn).to_numpy()(**got)
    # 63 * (2**31 - 5) + 7 = 31 * 2**32 + 2**31 - 308: modulo 2**32, as int32,
    # 2**31 - 308 (by hand).
    assert got["total"][0] == expected["total"][0] == 2**31 - 308


def test_empty_max_keeps_the_old_values() -> None:
    fn = MOD["row_max_symbolic"]
    out = np.arange(6, dtype=np.float32)
    got = {"n": 0, "x": np.zeros((6, 0), np.float32), "out": out.copy()}
    pk.schedule(fn).to_numpy()(**got)
    assert np.array_equal(got["out"], out)


def test_lu_updates_are_dot_products() -> None:
    fn = pk.load(Path(__file__).parent.parent / "transforms" / "legality" / "lu.mlir")["lu"]
    source = pk.Schedule.from_function(fn).to_numpy().source
    assert source.count(" @ ") == 2 and "for k" not in source, source
