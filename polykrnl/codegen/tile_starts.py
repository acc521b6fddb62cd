"""isl's AST of tile loops built by tile index, read as loops over tile starts.

isl builds the AST of a strip-mined loop 1.2-2x faster when the tile loop's schedule
value is its tile's index, floor(x / s), than when it is the tile's start s * floor(x / s)
(the integer divisions of the starts cost it at every level): Schedule.indexed_nest_trees.
Everything after the AST (the translator, the vectorizer, tile_merge) reads a tile loop
by its starts, the value Krnl gives it. `TileStarts` wraps an AST built by index and
answers as the AST of the same loops by start, for a tile loop `c` of step s:

* the loop `for c = lo .. hi` reads `for c = s*lo .. s*hi step s` (`c <= floord(F, s)`
  reads `c <= F`, the same for a multiple of s);
* below it, `k * c` reads `(k / s) * c` where s divides k, any other `c` reads `c / s`
  (isl's exact division: c is a multiple of s).

The iterator keeps its name, so the loop's mark and everything that names it are
unchanged. Only reading is wrapped: the methods are those of isl.AstNode that
code generation calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import islpy as isl

_MUL = isl.ast_expr_op_type.mul
_DIV = isl.ast_expr_op_type.div
_ADD = isl.ast_expr_op_type.add
_SUB = isl.ast_expr_op_type.sub
_SPREAD = (_ADD, _SUB, isl.ast_expr_op_type.min, isl.ast_expr_op_type.max)
_FLOORS = (isl.ast_expr_op_type.fdiv_q, isl.ast_expr_op_type.pdiv_q)
_LE = isl.ast_expr_op_type.le
_LT = isl.ast_expr_op_type.lt


def tile_starts(root: isl.AstNode, steps: Mapping[str, int]) -> isl.AstNode:
    """`root` (an AST built with the loops `steps` by tile index) read by tile starts."""
    if not steps:
        return root
    return TileStarts(root, {}, steps, None)  # type: ignore[return-value]


def _int(value: int) -> isl.AstExpr:
    return isl.AstExpr.from_val(isl.Val.int_from_si(isl.DEFAULT_CONTEXT, value))


def _int_of(e: isl.AstExpr) -> int | None:
    if e.get_type() == isl.ast_expr_type.int:
        return int(e.int_get_val().to_python())
    return None


def _id_of(e: isl.AstExpr) -> str | None:
    if e.get_type() == isl.ast_expr_type.id:
        return str(e.id_get_id().get_name())
    return None


def _times(k: int, e: isl.AstExpr) -> isl.AstExpr:
    """`k * e`, folded: constants multiplied, `k * (x / s)` as `(k / s) * x` where s
    divides k (isl's division is exact), and spread over sums, minima and maxima (k > 0)."""
    value = _int_of(e)
    if value is not None:
        return _int(k * value)
    if k == 1:
        return e
    if e.get_type() == isl.ast_expr_type.op:
        op, n = e.get_op_type(), e.op_get_n_arg()
        if op == _MUL and n == 2:
            for a, x in ((0, 1), (1, 0)):
                factor = _int_of(e.op_get_arg(a))
                if factor is not None:
                    return _times(k * factor, e.op_get_arg(x))
        if op == _DIV and n == 2:
            divisor = _int_of(e.op_get_arg(1))
            if divisor is not None and divisor > 0 and k % divisor == 0:
                return _times(k // divisor, e.op_get_arg(0))
        if k > 0 and op in _SPREAD:
            out = e
            for i in range(n):
                out = out.set_op_arg(i, _times(k, e.op_get_arg(i)))
            return out
    return e.neg() if k == -1 else _int(k).mul(e)


def by_start(e: isl.AstExpr, steps: Mapping[str, int]) -> isl.AstExpr:
    """`e` over tile indices (the iterators in `steps`) written over tile starts."""
    if not steps:
        return e
    name = _id_of(e)
    if name is not None:
        step = steps.get(name)
        return e if step is None else e.div(_int(step))
    if e.get_type() != isl.ast_expr_type.op:
        return e
    if e.get_op_type() == _MUL and e.op_get_n_arg() == 2:
        # k * c reads k * (c / s), which _times folds to (k / s) * c where s divides k.
        for k_at, x_at in ((0, 1), (1, 0)):
            k, x = _int_of(e.op_get_arg(k_at)), e.op_get_arg(x_at)
            if k is not None and _id_of(x) in steps:
                return _times(k, by_start(x, steps))
    out = e
    for i in range(e.op_get_n_arg()):
        arg = e.op_get_arg(i)
        new = by_start(arg, steps)
        if new is not arg:
            out = out.set_op_arg(i, new)
    return out


@dataclass(frozen=True)
class _Children:
    items: list[TileStarts]

    def n_ast_node(self) -> int:
        return len(self.items)

    def get_at(self, i: int) -> TileStarts:
        return self.items[i]


@dataclass(frozen=True)
class TileStarts:
    """An AST node read by tile starts (see the module docstring)."""

    node: isl.AstNode
    # The iterators of the enclosing tile loops built by index -> their steps.
    scale: Mapping[str, int]
    # The tile loops (marks) built by index -> their steps.
    steps: Mapping[str, int]
    # The step of the tile loop whose mark is above this node (the loops below it, up to
    # the first for node on each path, are that tile loop).
    pending: int | None

    def _wrap(self, node: isl.AstNode, pending: int | None = None) -> TileStarts:
        return TileStarts(node, self.scale, self.steps, pending)

    def get_type(self) -> int:
        return self.node.get_type()

    # -- block and mark
    def block_get_children(self) -> _Children:
        children = self.node.block_get_children()
        return _Children(
            [self._wrap(children.get_at(i), self.pending) for i in range(children.n_ast_node())]
        )

    def mark_get_id(self) -> isl.Id:
        return self.node.mark_get_id()

    def mark_get_node(self) -> TileStarts:
        step = self.steps.get(self.node.mark_get_id().get_name())
        return self._wrap(self.node.mark_get_node(), step)

    # -- for
    def for_get_iterator(self) -> isl.AstExpr:
        return self.node.for_get_iterator()

    def for_get_init(self) -> isl.AstExpr:
        init = by_start(self.node.for_get_init(), self.scale)
        return init if self.pending is None else _times(self.pending, init)

    def for_get_cond(self) -> isl.AstExpr:
        cond = self.node.for_get_cond()
        if self.pending is None:
            return by_start(cond, self.scale)
        step, it = self.pending, self._iterator()
        bounded = cond.get_type() == isl.ast_expr_type.op and cond.get_op_type() in (_LE, _LT)
        if bounded and _id_of(cond.op_get_arg(0)) == it:
            last = by_start(cond.op_get_arg(1), self.scale)  # the last tile's index
            if cond.get_op_type() == _LT:
                last = last.sub(_int(1))
            start = isl.AstExpr.from_id(cond.op_get_arg(0).id_get_id())
            return start.le(self._last_start(last, step))
        return by_start(cond, {**self.scale, it: step})

    def _last_start(self, last: isl.AstExpr, step: int) -> isl.AstExpr:
        """A bound B with `start <= B` exactly when `start / step <= last`, as isl writes
        the loop by starts: the last element of the last tile (floord(F, step) + k gives
        F + step * k; a constant gives the point loop's constant when it lies in that
        tile, else the tile's end)."""
        core, k = _split_constant(last)
        if core is None:
            found = self._point_constant()
            if found is not None and step * k <= found < step * (k + 1):
                return _int(found)
            return _int(step * k + step - 1)
        floor = core.get_type() == isl.ast_expr_type.op and core.get_op_type() in _FLOORS
        if floor and _int_of(core.op_get_arg(1)) == step:
            return _plus(core.op_get_arg(0), step * k)
        return _plus(_times(step, last), step - 1)

    def _point_constant(self) -> int | None:
        """The constant in the bound of this tile loop's point loop, read by starts (the
        loop inside it that starts at its iterator: `p <= min(C, ...)` or `p < min(C +
        1, ...)`), if it has one; the point loop is looked for down the nested loops."""
        it = self._iterator()
        n: TileStarts = self.for_get_body()
        while True:
            while n.get_type() == isl.ast_node_type.mark:
                n = n.mark_get_node()
            if n.get_type() != isl.ast_node_type.for_:  # type: ignore[attr-defined]
                return None
            if _id_of(n.for_get_init()) == it:
                break
            n = n.for_get_body()
        cond = n.for_get_cond()
        if cond.get_type() != isl.ast_expr_type.op or cond.get_op_type() not in (_LE, _LT):
            return None
        rhs = cond.op_get_arg(1)
        parts = [rhs]
        if rhs.get_type() == isl.ast_expr_type.op and rhs.get_op_type() == isl.ast_expr_op_type.min:
            parts = [rhs.op_get_arg(i) for i in range(rhs.op_get_n_arg())]
        found = [v for v in map(_int_of, parts) if v is not None]
        if len(found) != 1:
            return None
        return found[0] - (1 if cond.get_op_type() == _LT else 0)

    def for_get_inc(self) -> isl.AstExpr:
        inc = by_start(self.node.for_get_inc(), self.scale)
        return inc if self.pending is None else _times(self.pending, inc)

    def for_get_body(self) -> TileStarts:
        scale = self.scale
        if self.pending is not None:
            scale = {**scale, self._iterator(): self.pending}
        return TileStarts(self.node.for_get_body(), scale, self.steps, None)

    def _iterator(self) -> str:
        return str(self.node.for_get_iterator().id_get_id().get_name())

    # -- if and user
    def if_get_cond(self) -> isl.AstExpr:
        return by_start(self.node.if_get_cond(), self.scale)

    def if_get_then_node(self) -> TileStarts:
        return self._wrap(self.node.if_get_then_node(), self.pending)

    def if_has_else_node(self) -> bool:
        return bool(self.node.if_has_else_node())

    def if_get_else_node(self) -> TileStarts:
        return self._wrap(self.node.if_get_else_node(), self.pending)

    def user_get_expr(self) -> isl.AstExpr:
        return by_start(self.node.user_get_expr(), self.scale)


def _plus(e: isl.AstExpr, c: int) -> isl.AstExpr:
    """`e + c`, folded into constants and spread over minima and maxima."""
    if c == 0:
        return e
    value = _int_of(e)
    if value is not None:
        return _int(value + c)
    if e.get_type() == isl.ast_expr_type.op:
        op = e.get_op_type()
        if op in (isl.ast_expr_op_type.min, isl.ast_expr_op_type.max):
            out = e
            for i in range(e.op_get_n_arg()):
                out = out.set_op_arg(i, _plus(e.op_get_arg(i), c))
            return out
        core, k = _split_constant(e)
        if core is not None and core is not e:
            return _plus(core, k + c)
    return e.add(_int(c)) if c > 0 else e.sub(_int(-c))


def _split_constant(e: isl.AstExpr) -> tuple[isl.AstExpr | None, int]:
    """(core, k) with e = core + k (core None: e is the constant k)."""
    value = _int_of(e)
    if value is not None:
        return None, value
    if e.get_type() == isl.ast_expr_type.op and e.get_op_type() in (_ADD, _SUB):
        k = _int_of(e.op_get_arg(1))
        if k is not None:
            return e.op_get_arg(0), k if e.get_op_type() == _ADD else -k
    return e, 0
