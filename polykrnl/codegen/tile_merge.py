"""A tile loop and its point loop that together run one range, merged into one loop.

The schedule says which loop is the tile loop of which point loop
(`Schedule.tile_of`); what isl generated must then be the plain strip-mined
ranges, `for t in range(L, U, S)` around `for p in range(t, min(t + S, U))`,
for the pair to run exactly the original loop's range [L, U). That is checked
on the loops' bounds as affine forms (sums of names times constants), so that
`t + 4`, `4 + t` and `min(U, t + 4)` compare as what they mean.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import islpy as isl

from polykrnl.codegen.isl_ast import Translator

# The name a merged tile loop's iterator gets: code that still uses it is refused.
POISON = "_polykrnl_merged_tile_loop_"

LinearForm = frozenset[tuple[str, int]]  # {(name, coefficient)}; "" is the constant term


@dataclass(frozen=True)
class MergedLoops:
    """A tile loop and its point loop, vectorized together as the original loop's range.

    Both parallel (or both reductions): the iterations of the pair are those of
    the loop before blocking, so running them at once is running that loop at
    once. The merged loop's iterator is the point loop's; its range the tile
    loop's (start and stop; step 1).
    """

    tile: isl.AstNode
    point: isl.AstNode
    tile_mark: str = ""


ChainLoop = isl.AstNode | MergedLoops


def iterator_name(node: ChainLoop) -> str:
    n = node.point if isinstance(node, MergedLoops) else node
    return str(n.for_get_iterator().id_get_id().get_name())


def range_exprs(node: ChainLoop) -> tuple[isl.AstExpr, isl.AstExpr]:
    """The isl expressions that bound the loop: its init and its condition."""
    n = node.tile if isinstance(node, MergedLoops) else node
    return n.for_get_init(), n.for_get_cond()


def merge_tiles(
    chain: list[tuple[str, isl.AstNode]], status: dict[str, str], tile_of: dict[str, str]
) -> list[tuple[str, ChainLoop]]:
    """Pairs (tile loop, its point loop) of the chain with the same role, merged."""
    out: list[tuple[str, ChainLoop]] = list(chain)
    i = 0
    while i < len(out):
        mark, tile = out[i]
        if isinstance(tile, MergedLoops):
            i += 1
            continue
        partner = next(
            (
                j
                for j in range(i + 1, len(out))
                if tile_of.get(out[j][0]) == mark
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
        assert not isinstance(point, MergedLoops)
        label = f"{mark}+{p_mark}"
        status[label] = status[mark]
        out[partner] = (label, MergedLoops(tile, point, mark))
        del out[i]
    return out


def _is_point_of(point: ChainLoop, tile: isl.AstNode) -> bool:
    """Whether `point` runs [t, min(U, t + S)) for each t of `tile` = range(L, U, S)."""
    if isinstance(point, MergedLoops):
        return False
    plain = Translator(lambda _s, _a: [])
    tb, pb = plain.bounds(tile), plain.bounds(point)
    if tb is None or pb is None:
        return False
    t_it, t_start, t_stop, t_step = tb
    _, p_start, p_stop, p_step = pb
    step, p_one = int_constant(t_step), int_constant(p_step)
    if step is None or p_one != 1 or linear(p_start) != frozenset({(t_it, 1)}):
        return False
    end = frozenset({(t_it, 1), ("", step)})
    if linear(p_stop) == end:
        # Full tiles only (isl knew the step divides the trip count): constant bounds.
        lo, hi = int_constant(t_start), int_constant(t_stop)
        return lo is not None and hi is not None and (hi - lo) % step == 0
    parts = _min_args(p_stop)
    return parts is not None and {linear(a) for a in parts} == {end, linear(t_stop)}


def _min_args(e: ast.expr) -> list[ast.expr] | None:
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "min":
        return list(e.args) if len(e.args) == 2 and not e.keywords else None
    return None


def linear(e: ast.expr) -> LinearForm | None:
    """`e` as a sum of names times constants (None: not of that form)."""
    terms = _terms(e)
    if terms is None:
        return None
    return frozenset((k, v) for k, v in terms.items() if v != 0)


def _terms(e: ast.expr) -> dict[str, int] | None:
    if isinstance(e, ast.Constant) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return {"": e.value}
    if isinstance(e, ast.Name):
        return {e.id: 1}
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        inner = _terms(e.operand)
        return None if inner is None else {k: -v for k, v in inner.items()}
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add | ast.Sub):
        a, b = _terms(e.left), _terms(e.right)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(e.op, ast.Add) else -1
        out = dict(a)
        for k, v in b.items():
            out[k] = out.get(k, 0) + sign * v
        return out
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult):
        a, b = _terms(e.left), _terms(e.right)
        if a is None or b is None:
            return None
        for const, other in ((a, b), (b, a)):
            if set(const) == {""}:
                return {k: const[""] * v for k, v in other.items()}
    return None


def int_constant(e: ast.expr) -> int | None:
    return e.value if isinstance(e, ast.Constant) and isinstance(e.value, int) else None
