"""A tile loop and its point loop that together run one range, merged into one loop."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

import islpy as isl

from polykrnl.codegen.isl_ast import Translator

# The name a merged tile loop's iterator gets: code that still uses it is refused.
POISON = "_polykrnl_merged_tile_loop_"


@dataclass
class Merged:
    """A tile loop and its point loop, vectorized together: the original loop's range.

    Both parallel (or both reductions): the iterations of the pair are those of
    the loop before blocking, so running them at once is running that loop at once.
    """

    tile: isl.AstNode
    point: isl.AstNode
    tile_mark: str = ""

    def for_get_iterator(self) -> isl.AstExpr:
        return self.point.for_get_iterator()

    def for_get_init(self) -> isl.AstExpr:
        return self.tile.for_get_init()

    def for_get_cond(self) -> isl.AstExpr:
        return self.tile.for_get_cond()


def merge_tiles(
    chain: list[tuple[str, isl.AstNode]], status: dict[str, str], tile_of: dict[str, str]
) -> list[tuple[str, isl.AstNode]]:
    """Pairs (tile loop, its point loop) of the chain with the same role, merged.

    The schedule says which loop is the tile loop of which point loop (`tile_of`);
    isl's loops must then run the plain strip-mined ranges for the pair to be one
    range (a domain can make isl bound them otherwise)."""
    out: list[tuple[str, Any]] = list(chain)
    i = 0
    while i < len(out):
        mark, tile = out[i]
        if isinstance(tile, Merged):
            i += 1
            continue
        partner = next(
            (
                j
                for j in range(i + 1, len(out))
                if not isinstance(out[j][1], Merged)
                and tile_of.get(out[j][0]) == mark
                and status.get(out[j][0]) == status.get(mark)
                and status.get(mark) in ("parallel", "reduction")
                and _is_point_of(out[j][1], tile)
            ),
            None,
        )
        if partner is None:
            i += 1
            continue
        p_mark, point = out[partner]
        label = f"{mark}+{p_mark}"
        status[label] = status[mark]
        out[partner] = (label, Merged(tile, point, mark))
        del out[i]
    return out


def _is_point_of(point: isl.AstNode, tile: isl.AstNode) -> bool:
    """Whether `point` runs [t, min(U, t + S)) for each t of `tile` = range(L, U, S)."""
    plain = Translator(lambda _s, _a: [])
    tb, pb = plain.bounds(tile), plain.bounds(point)
    if tb is None or pb is None:
        return False
    t_it, _, t_stop, t_step = tb
    _, p_start, p_stop, p_step = pb
    if not (isinstance(t_step, ast.Constant) and isinstance(p_step, ast.Constant)):
        return False
    if p_step.value != 1 or ast.dump(p_start) != ast.dump(ast.Name(t_it, ast.Load())):
        return False
    end = ast.dump(ast.BinOp(ast.Name(t_it, ast.Load()), ast.Add(), ast.Constant(t_step.value)))
    if ast.dump(p_stop) == end:
        # Full tiles only (isl knew the step divides the trip count): constant bounds.
        ints = [int_constant(x) for x in (tb[1], t_stop, t_step)]
        lo, hi, step = ints
        return lo is not None and hi is not None and step is not None and (hi - lo) % step == 0
    if not (isinstance(p_stop, ast.Call) and len(p_stop.args) == 2):
        return False
    args = sorted(ast.dump(a) for a in p_stop.args)
    return ast.dump(p_stop.func) == ast.dump(ast.Name("min", ast.Load())) and args == sorted(
        [end, ast.dump(t_stop)]
    )


def int_constant(e: ast.expr) -> int | None:
    return e.value if isinstance(e, ast.Constant) and isinstance(e.value, int) else None
