"""Tile loops built by tile index and read as tile starts (codegen/tile_starts.py).

The oracle is isl itself: each case is a schedule tree whose tile loops are valued by
their starts, s * floor(x / s), and the same tree with them valued by their indices,
floor(x / s). isl's AST of the first, translated to Python and run, gives the statement
instances in order; the AST of the second read through `tile_starts` must give the same
instances in the same order, for every parameter value tried, and must read as a loop
over tile starts (the step of the tile loop, its iterator used as the start).
"""

from __future__ import annotations

import ast

import islpy as isl
import pytest

from polykrnl.codegen.isl_ast import Translator, build_ast
from polykrnl.codegen.tile_merge import is_strip_mined
from polykrnl.codegen.tile_starts import by_start, tile_starts


def _tree(domain: str, bands: list[tuple[str, str]]) -> isl.Schedule:
    """A schedule tree over `domain`: one marked single-member band per (mark, value),
    outermost first."""
    node = isl.Schedule.from_domain(isl.UnionSet(domain)).get_root().child(0)
    for mark, value in reversed(bands):
        node = node.insert_partial_schedule(isl.MultiUnionPwAff(value))
        node = node.insert_mark(isl.Id(mark))
    return node.get_schedule()


Instance = tuple[str, tuple[int, ...], tuple[int, ...]]


def _instances(root: isl.AstNode, params: dict[str, int], tiles: list[str]) -> list[Instance]:
    """The statement instances the translated AST runs, in order, each with the values
    of the tile loops around it (named after their marks)."""

    def emit(stmt: str, args: list[ast.expr]) -> list[ast.stmt]:
        values = ast.Tuple([ast.Name(t, ast.Load()) for t in tiles], ast.Load())
        item = ast.Tuple([ast.Constant(stmt), ast.Tuple(args, ast.Load()), values], ast.Load())
        append = ast.Attribute(ast.Name("out", ast.Load()), "append", ast.Load())
        return [ast.Expr(ast.Call(append, [item], []))]

    body = Translator(emit).node(root) or [ast.Pass()]
    module = ast.fix_missing_locations(ast.Module(body, []))
    out: list[Instance] = []
    exec(compile(module, "<ast>", "exec"), {"out": out, **params})
    return out


def _source(root: isl.AstNode) -> str:
    module = ast.Module(Translator(lambda _s, _a: [ast.Pass()]).node(root), [])
    return ast.unparse(ast.fix_missing_locations(module))


Band = tuple[str, str, str | None]  # mark, value by start, value by index (None: a point loop)


def _tile(
    mark: str, step: int, stmt: str = "S[i]", var: str = "i", params: str = "[N] -> "
) -> Band:
    return (
        mark,
        f"{params}[{{ {stmt} -> [({step} * floor({var} / {step}))] }}]",
        f"{params}[{{ {stmt} -> [(floor({var} / {step}))] }}]",
    )


def _point(mark: str, stmt: str = "S[i]", var: str = "i", params: str = "[N] -> ") -> Band:
    return (mark, f"{params}[{{ {stmt} -> [({var})] }}]", None)


# (domain, bands outermost first, tile loops -> step, parameter values)
CASES = [
    # Partial last tile, symbolic size.
    ("[N] -> { S[i] : 0 <= i < N }", [_tile("t", 4), _point("p")], {"t": 4}, [0, 1, 3, 4, 5, 17]),
    # Constant sizes: full tiles, a partial one.
    (
        "{ S[i] : 0 <= i < 16 }",
        [_tile("t", 8, params=""), _point("p", params="")],
        {"t": 8},
        [0],
    ),
    (
        "{ S[i] : 0 <= i < 10 }",
        [_tile("t", 4, params=""), _point("p", params="")],
        {"t": 4},
        [0],
    ),
    # The range starts at 2 (the first tile is partial at its start too).
    ("[N] -> { S[i] : 2 <= i < N }", [_tile("t", 4), _point("p")], {"t": 4}, [0, 2, 3, 6, 11]),
    # Two tiled loops, tile loops outside, a triangle (j <= i) across tiles.
    (
        "[N] -> { S[i, j] : 0 <= j <= i < N }",
        [
            _tile("it", 4, "S[i, j]", "i"),
            _tile("jt", 2, "S[i, j]", "j"),
            _point("i", "S[i, j]", "i"),
            _point("j", "S[i, j]", "j"),
        ],
        {"it": 4, "jt": 2},
        [0, 1, 5, 9],
    ),
    # Blocked twice: tiles of 8, each cut in tiles of 4 (block_twice).
    (
        "[N] -> { S[i] : 0 <= i < N }",
        [_tile("t8", 8), _tile("t4", 4), _point("p")],
        {"t8": 8, "t4": 4},
        [0, 3, 4, 8, 13, 21],
    ),
    # A statement at tile level (its instance is the tile start) beside the point loop.
    (
        "[N] -> { T[s] : 0 <= s < N and s mod 4 = 0; S[i] : 0 <= i < N }",
        [
            (
                "t",
                "[N] -> [{ T[s] -> [(s)]; S[i] -> [(4 * floor(i / 4))] }]",
                "[N] -> [{ T[s] -> [(floor(s / 4))]; S[i] -> [(floor(i / 4))] }]",
            ),
            ("p", "[N] -> [{ T[s] -> [(-1)]; S[i] -> [(i)] }]", None),
        ],
        {"t": 4},
        [0, 1, 4, 7, 9],
    ),
]


@pytest.mark.parametrize(("domain", "bands", "steps", "values"), CASES)
def test_index_ast_read_by_starts_runs_the_same_instances(
    domain: str,
    bands: list[Band],
    steps: dict[str, int],
    values: list[int],
) -> None:
    by_starts = build_ast(_tree(domain, [(m, start) for m, start, _ in bands]))
    by_index = build_ast(_tree(domain, [(m, index or start) for m, start, index in bands]))
    read = tile_starts(by_index, steps)
    tiles = list(steps)
    for v in values:
        params = {"N": v} if "[N]" in domain else {}
        expected = _instances(by_starts, params, tiles)
        assert _instances(read, params, tiles) == expected, (v, _source(read))
    # Without the reading, the tile loops run over indices (the test can fail).
    assert _instances(by_index, params, tiles) != expected


def test_tile_loop_reads_as_a_loop_over_starts() -> None:
    domain = "[N] -> { S[i] : 0 <= i < N }"
    index = _tree(
        domain,
        [
            ("t", "[N] -> [{ S[i] -> [(floor(i / 4))] }]"),
            ("p", "[N] -> [{ S[i] -> [(i)] }]"),
        ],
    )
    source = _source(tile_starts(build_ast(index), {"t": 4}))
    # The start's bound is the last element, as isl writes it for the starts; the point
    # loop starts at the tile loop's value.
    assert "for t in range(0, N, 4):" in source, source
    assert "for p in range(t, min(N, t + 4)):" in source, source


def test_merge_of_tile_and_point_loop_sees_the_starts() -> None:
    # tile_merge reads the for nodes themselves: through tile_starts they are the pair
    # of loops isl writes for the starts, so the merge still recognizes them.
    index = _tree(
        "[N] -> { S[i] : 0 <= i < N }",
        [
            ("t", "[N] -> [{ S[i] -> [(floor(i / 4))] }]"),
            ("p", "[N] -> [{ S[i] -> [(i)] }]"),
        ],
    )
    mark = tile_starts(build_ast(index), {"t": 4})
    tile = mark.mark_get_node()
    point = tile.for_get_body().mark_get_node()
    assert is_strip_mined(point, tile)


def _expr(text_of: str) -> isl.AstExpr:
    build = isl.AstBuild.from_context(isl.Set("[c0, c1, N] -> { : }"))
    return build.expr_from_pw_aff(isl.PwAff(f"[c0, c1, N] -> {{ [({text_of})] }}"))


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("32 * c0", "c0"),  # the tile start itself
        ("64 * c0 + c1", "2 * c0 + c1"),
        ("c0", "c0 / 32"),  # isl's exact division: c0 is a multiple of 32
        ("N - 32 * c0", "-c0 + N"),
        ("c1 + N", "c1 + N"),  # no tile iterator: unchanged
    ],
)
def test_expressions_over_indices_read_over_starts(value: str, written: str) -> None:
    assert by_start(_expr(value), {"c0": 32}).to_C_str() == written
