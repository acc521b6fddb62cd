"""A tile loop and its point loop that together run one range, merged into one loop.

The schedule says which loop is the tile loop of which point loop
(`Schedule.tile_of`); what isl generated must then be the plain strip-mined
ranges, `for t in range(L, U, S)` around `for p in range(t, min(t + S, U))`,
for the pair to run exactly the original loop's range [L, U). That is checked
on isl's expressions of the bounds read as affine forms (sums of atoms times
constants), so that `t + 4`, `4 + t`, `t + 3 + 1` and `min(U, t + 4)` compare as
what they mean; a part of a bound that is not affine (a division, a max) is one
atom, equal only to the same tree.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

# The name a merged tile loop's iterator gets: code that still uses it is refused.
POISON = "_polykrnl_merged_tile_loop_"

# An atom of an affine form: an isl name, or the tree of a part that is not affine.
Atom = str | tuple[object, ...]
LinearForm = frozenset[tuple[Atom, int]]  # {(atom, coefficient)}; "" is the constant term

_OP = isl.ast_expr_type.op
_INT = isl.ast_expr_type.int
_ID = isl.ast_expr_type.id
_OPS = isl.ast_expr_op_type


@dataclass(frozen=True)
class MergedRange:
    """A tile loop and its point loop as the one loop they strip-mine, run with step 1.

    Both parallel (or both reductions): the iterations of the pair are those of
    the loop before blocking, so running them at once is running that loop at
    once. The loop's iterator is the point loop's (`name`); its range is the
    tile loop's: from `lb`, while `cond` (the tile loop's condition on
    `tile_name`, `tile_name < U` or `tile_name <= U - 1`) holds.
    """

    name: str
    tile_name: str
    lb: isl.AstExpr
    cond: isl.AstExpr


ChainLoop = isl.AstNode | MergedRange


def iterator_name(node: ChainLoop) -> str:
    if isinstance(node, MergedRange):
        return node.name
    return str(node.for_get_iterator().id_get_id().get_name())


def range_exprs(node: ChainLoop) -> tuple[isl.AstExpr, isl.AstExpr]:
    """The isl expressions that bound the loop: its init and its condition."""
    if isinstance(node, MergedRange):
        return node.lb, node.cond
    return node.for_get_init(), node.for_get_cond()


def merge_tiles(
    chain: list[tuple[str, isl.AstNode]], status: dict[str, str], tile_of: dict[str, str]
) -> list[tuple[str, ChainLoop]]:
    """Pairs (tile loop, its point loop) of the chain with the same role, merged."""
    out: list[tuple[str, ChainLoop]] = list(chain)
    i = 0
    while i < len(out):
        mark, tile = out[i]
        if isinstance(tile, MergedRange):
            i += 1
            continue
        partner = next(
            (
                j
                for j in range(i + 1, len(out))
                if tile_of.get(out[j][0]) == mark
                and status.get(out[j][0]) == status.get(mark)
                and status.get(mark) in ("parallel", "reduction")
                and is_strip_mined(out[j][1], tile)
            ),
            None,
        )
        if partner is None:
            i += 1
            continue
        p_mark, point = out[partner]
        assert not isinstance(point, MergedRange)
        label = f"{mark}+{p_mark}"
        status[label] = status[mark]
        out[partner] = (label, MergedRange(iterator_name(point), iterator_name(tile), *_ends(tile)))
        del out[i]
    return out


def _ends(n: isl.AstNode) -> tuple[isl.AstExpr, isl.AstExpr]:
    return n.for_get_init(), n.for_get_cond()


def is_strip_mined(point: ChainLoop, tile: isl.AstNode) -> bool:
    """Whether `point` runs [t, min(U, t + S)) for each t of `tile` = range(L, U, S)."""
    if isinstance(point, MergedRange):
        return False
    t_it, p_it = iterator_name(tile), iterator_name(point)
    t_stop, p_stop = _stop(tile.for_get_cond(), t_it), _stop(point.for_get_cond(), p_it)
    step = _constant(linear(tile.for_get_inc()))
    if t_stop is None or p_stop is None or step is None or step < 1:
        return False
    if linear(point.for_get_init()) != {(t_it, 1)} or _constant(linear(point.for_get_inc())) != 1:
        return False
    end: LinearForm = frozenset({(t_it, 1), ("", step)})
    if p_stop == {end}:
        # Full tiles only (isl knew the step divides the trip count): constant bounds.
        lo = _constant(linear(tile.for_get_init()))
        hi = _constant(next(iter(t_stop))) if len(t_stop) == 1 else None
        return lo is not None and hi is not None and (hi - lo) % step == 0
    return p_stop == t_stop | {end} and len(p_stop) > 1


def _stop(cond: isl.AstExpr, it: str) -> frozenset[LinearForm] | None:
    """The end of a loop on `it` from its condition: the forms whose minimum it is
    (one form for a plain bound); None when the condition is not `it < E` or `it <= E`."""
    if cond.get_type() != _OP or cond.get_op_type() not in (_OPS.lt, _OPS.le):
        return None
    lhs, rhs = cond.op_get_arg(0), cond.op_get_arg(1)
    if lhs.get_type() != _ID or lhs.id_get_id().get_name() != it:
        return None
    past = 1 if cond.get_op_type() == _OPS.le else 0
    parts = [rhs]
    if rhs.get_type() == _OP and rhs.get_op_type() == _OPS.min:
        parts = [rhs.op_get_arg(i) for i in range(rhs.op_get_n_arg())]
    return frozenset(_plus(linear(p), past) for p in parts)


def _plus(form: LinearForm, c: int) -> LinearForm:
    terms = dict(form)
    terms[""] = terms.get("", 0) + c
    return frozenset((k, v) for k, v in terms.items() if v != 0)


def _constant(form: LinearForm) -> int | None:
    """The value of a form without atoms."""
    terms = dict(form)
    return terms.get("", 0) if set(terms) <= {""} else None


def linear(e: isl.AstExpr) -> LinearForm:
    """`e` as a sum of atoms times constants."""
    return frozenset((k, v) for k, v in _terms(e).items() if v != 0)


def _terms(e: isl.AstExpr) -> dict[Atom, int]:
    t = e.get_type()
    if t == _INT:
        return {"": int(e.int_get_val().to_python())}
    if t == _ID:
        return {str(e.id_get_id().get_name()): 1}
    op = e.get_op_type()
    args = [e.op_get_arg(i) for i in range(e.op_get_n_arg())]
    if op == _OPS.minus and len(args) == 1:
        return {k: -v for k, v in _terms(args[0]).items()}
    if op in (_OPS.add, _OPS.sub) and len(args) == 2:
        a, b = _terms(args[0]), _terms(args[1])
        sign = 1 if op == _OPS.add else -1
        for k, v in b.items():
            a[k] = a.get(k, 0) + sign * v
        return a
    if op == _OPS.mul and len(args) == 2:
        a, b = _terms(args[0]), _terms(args[1])
        for const, other in ((a, b), (b, a)):
            if set(const) <= {""}:
                return {k: const.get("", 0) * v for k, v in other.items()}
    return {_tree(e): 1}


def _tree(e: isl.AstExpr) -> tuple[object, ...]:
    """An isl expression as nested tuples: equal exactly when the trees are."""
    t = e.get_type()
    if t == _INT:
        return ("int", int(e.int_get_val().to_python()))
    if t == _ID:
        return ("id", str(e.id_get_id().get_name()))
    args = tuple(_tree(e.op_get_arg(i)) for i in range(e.op_get_n_arg()))
    return ("op", e.get_op_type(), *args)
