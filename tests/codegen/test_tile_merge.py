"""Merging a tile loop with its point loop (`tile_merge`), on loops isl generates.

Each case is a one-statement schedule `S[i] -> [t, p]`; whether the point loop
`p` runs exactly [t, min(t + S, U)) for each `t` of the tile loop is read off
the schedule map by hand (the comment on each case says why).
"""

from __future__ import annotations

import ast

import islpy as isl
import pytest

from polykrnl.codegen.pyast import same_tree
from polykrnl.codegen.tile_merge import MergedRange, is_strip_mined, merge_tiles


def _loops(context: str, schedule: str) -> list[isl.AstNode]:
    """The perfectly nested for nodes isl generates for a schedule map."""
    build = isl.AstBuild.from_context(isl.Set(context))
    n = build.node_from_schedule_map(isl.UnionMap(schedule))
    out = []
    while n.get_type() == isl.ast_node_type.for_:  # type: ignore[attr-defined]
        out.append(n)
        n = n.for_get_body()
    assert len(out) == 2
    return out


PARAM = "[N] -> { : N >= 0 }"
NONE = "{ : }"


@pytest.mark.parametrize(
    ("context", "schedule", "merged"),
    [
        # The point loop ends at min(t + 4, N): the partial last tile.
        (PARAM, "[N] -> { S[i] -> [t, i] : 0 <= i < N and t = 4*floor(i/4) }", True),
        # 16 is a multiple of 4: isl writes the point loop without the min.
        (NONE, "{ S[i] -> [t, i] : 0 <= i < 16 and t = 4*floor(i/4) }", True),
        (NONE, "{ S[i] -> [t, i] : 0 <= i < 18 and t = 4*floor(i/4) }", True),
        # The upper bound holds an atom that is not affine (N mod 2), the same in both.
        (
            PARAM,
            "[N] -> { S[i] -> [t, i] : 0 <= i < 2*floor(N/2) and t = 4*floor(i/4) }",
            True,
        ),
        # Tiles of 8 (the tile loop's step) are merged as such.
        (PARAM, "[N] -> { S[i] -> [t, i] : 0 <= i < N and t = 8*floor(i/8) }", True),
        # The first tile starts at 0, the range at 2: the point loop starts at max(2, t).
        (NONE, "{ S[i] -> [t, i] : 2 <= i < 18 and t = 4*floor(i/4) }", False),
        # The point loop is shifted by one: [t + 1, t + 5).
        (PARAM, "[N] -> { S[i] -> [t, i + 1] : 0 <= i < N and t = 4*floor(i/4) }", False),
    ],
)
def test_strip_mined_pairs(context: str, schedule: str, merged: bool) -> None:
    tile, point = _loops(context, schedule)
    assert is_strip_mined(point, tile) is merged


def test_merge_tiles_gives_one_range_over_the_tile_loops_bounds() -> None:
    tile, point = _loops(PARAM, "[N] -> { S[i] -> [t, i] : 0 <= i < N and t = 4*floor(i/4) }")
    status = {"ib": "parallel", "il": "parallel"}
    out = merge_tiles([("ib", tile), ("il", point)], status, {"il": "ib"})
    assert [label for label, _ in out] == ["ib+il"]
    merged = out[0][1]
    assert isinstance(merged, MergedRange)
    assert (merged.name, merged.tile_name) == ("c1", "c0")
    assert merged.lb.to_C_str() == "0"
    assert merged.cond.to_C_str() == "c0 < N"
    assert status["ib+il"] == "parallel"


def test_loops_with_different_roles_stay_apart() -> None:
    tile, point = _loops(PARAM, "[N] -> { S[i] -> [t, i] : 0 <= i < N and t = 4*floor(i/4) }")
    status = {"ib": "parallel", "il": "reduction"}
    out = merge_tiles([("ib", tile), ("il", point)], status, {"il": "ib"})
    assert [label for label, _ in out] == ["ib", "il"]


def test_same_tree() -> None:
    def e(src: str) -> ast.expr:
        return ast.parse(src, mode="eval").body

    assert same_tree(e("A[i + 1, 0:4]"), e("A[i + 1, 0:4]"))
    assert not same_tree(e("A[i + 1]"), e("A[1 + i]"))
    # Equal in Python, not the same constant.
    assert not same_tree(e("x + 1"), e("x + 1.0"))
    assert not same_tree(e("x + 1"), e("x + True"))
    # Line numbers do not count.
    assert same_tree(e("f(a)"), ast.parse("\n\nf(a)", mode="eval").body)
