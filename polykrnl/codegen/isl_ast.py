"""isl's AST of a Schedule, translated into Python `ast` nodes.

isl generates the loops (``AstBuild.node_from_schedule`` on the schedule
tree); each loop comes out under the mark that names it, so its iterator is
written with the Krnl loop's name. Every isl expression kind becomes Python
on ints: ``fdiv_q`` / ``pdiv_q`` / ``div`` as ``//`` (floor division is exact
for the divisions isl marks exact and right for its floor divisions),
``pdiv_r`` / ``zdiv_r`` as ``%`` (isl only compares ``zdiv_r`` with 0, where
the sign convention does not matter), min / max as the builtins, select /
cond as a conditional expression.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import islpy as isl

from polykrnl.codegen.prange_work import PRANGE_MIN_TRIPS, iteration_work, stored_names
from polykrnl.codegen.safe_text import identifier
from polykrnl.errors import UnsupportedError

# A user statement: its name and the Python expressions of its domain dims.
EmitUser = Callable[[str, list[ast.expr]], list[ast.stmt]]

# islpy's names that its type stubs lack (Python keywords get a trailing underscore).
FOR_NODE = isl.ast_node_type.for_  # type: ignore[attr-defined]
IF_NODE = isl.ast_node_type.if_  # type: ignore[attr-defined]
_AND = isl.ast_expr_op_type.and_  # type: ignore[attr-defined]
_OR = isl.ast_expr_op_type.or_  # type: ignore[attr-defined]

_BIN: dict[Any, ast.operator] = {
    isl.ast_expr_op_type.add: ast.Add(),
    isl.ast_expr_op_type.sub: ast.Sub(),
    isl.ast_expr_op_type.mul: ast.Mult(),
    isl.ast_expr_op_type.div: ast.FloorDiv(),
    isl.ast_expr_op_type.fdiv_q: ast.FloorDiv(),
    isl.ast_expr_op_type.pdiv_q: ast.FloorDiv(),
    isl.ast_expr_op_type.pdiv_r: ast.Mod(),
    isl.ast_expr_op_type.zdiv_r: ast.Mod(),
}
# Shares of a cyclic prange (see Translator._cyclic_prange): more than any machine's
# threads, few enough that empty shares cost nothing.
CYCLIC_SHARES = 256

_CMP: dict[Any, ast.cmpop] = {
    isl.ast_expr_op_type.eq: ast.Eq(),
    isl.ast_expr_op_type.le: ast.LtE(),
    isl.ast_expr_op_type.lt: ast.Lt(),
    isl.ast_expr_op_type.ge: ast.GtE(),
    isl.ast_expr_op_type.gt: ast.Gt(),
}


def build_ast(tree: isl.Schedule, context: isl.Set | None = None) -> isl.AstNode:
    """isl's AST of a schedule tree (loops for its bands, in its order)."""
    if context is None:
        # Every parameter value, not only those for which some instance runs (the
        # domain's parameters): a kernel called where nothing runs must run nothing.
        context = isl.Set.universe(tree.get_domain().params().get_space())
    build = isl.AstBuild.from_context(context)
    return build.node_from_schedule(tree)


def python_name(name: str) -> str:
    """A Python identifier for a Krnl name (`%i_t`, `i.0`)."""
    return identifier(name.lstrip("%"))


@dataclass
class Translator:
    """isl AST -> Python statements, with loop iterators named after their marks."""

    emit_user: EmitUser
    # Asked at every loop: Python statements that replace the whole loop (the
    # vectorizer), or None to write it as a loop.
    replace_loop: Callable[[Translator, isl.AstNode, str | None], list[ast.stmt] | None] | None = (
        None
    )
    # Asked at every two sibling nodes (in a block, or two top-level nests in a row):
    # Python statements that replace both (a SIMD run and its remainder), or None.
    replace_pair: Callable[[Translator, isl.AstNode, isl.AstNode], list[ast.stmt] | None] | None = (
        None
    )
    # isl iterator / parameter name -> Python name
    names: dict[str, str] = field(default_factory=dict)
    taken: set[str] = field(default_factory=set)
    # Loops (marks) to run on threads when their body is array code.
    threaded: frozenset[str] = frozenset()
    # Loops (marks) to write as Numba's `prange` unless `shared` names a reason not to
    # in their body (values passed through dictionaries, which threads would race on).
    prange: frozenset[str] = frozenset()
    shared: Callable[[list[ast.stmt]], str | None] | None = None
    # Loops (marks) of `prange` to run in parts at a split point: the loops around each
    # (marks, outermost first) and the point, an affine function of their values.
    parts: Mapping[str, tuple[tuple[str, ...], isl.Aff]] = field(default_factory=dict)
    # What became of each loop of `prange`: "prange" or the reason it stayed a range.
    pranged: dict[str, str] = field(default_factory=dict)
    # The Python names of the loops being translated, by mark (what a split point reads).
    _open: dict[str, str] = field(default_factory=dict)
    _pending_mark: str | None = None
    _depth: int = 0  # enclosing loops of the loop being translated

    def fresh(self, base: str) -> str:
        name = python_name(base)
        n = 0
        out = name
        while out in self.taken:
            n += 1
            out = f"{name}_{n}"
        self.taken.add(out)
        return out

    # -- nodes
    def node(self, n: isl.AstNode) -> list[ast.stmt]:
        t = n.get_type()
        if t == isl.ast_node_type.block:
            children = n.block_get_children()
            return self.nodes([children.get_at(i) for i in range(children.n_ast_node())])
        if t == isl.ast_node_type.mark:
            mark = n.mark_get_id().get_name()
            self._pending_mark = mark
            try:
                return self.node(n.mark_get_node())
            finally:
                # A mark whose loop isl dropped (one iteration) names nothing: it must
                # not reach the next loop, which is another one.
                self._pending_mark = None
        if t == FOR_NODE:
            return self.for_node(n)
        if t == IF_NODE:
            return self.if_node(n)
        if t == isl.ast_node_type.user:
            call = n.user_get_expr()
            stmt = call.op_get_arg(0).id_get_id().get_name()
            args = [self.expr(call.op_get_arg(i)) for i in range(1, call.op_get_n_arg())]
            return self.emit_user(stmt, args)
        raise UnsupportedError(f"isl produced an AST node polykrnl does not translate: {t}")

    def nodes(self, ns: Sequence[isl.AstNode]) -> list[ast.stmt]:
        """Nodes run one after the other (a block's children, a function's nests)."""
        out: list[ast.stmt] = []
        i = 0
        while i < len(ns):
            both = None
            if self.replace_pair is not None and i + 1 < len(ns):
                both = self.replace_pair(self, ns[i], ns[i + 1])
            if both is not None:
                out += both
                i += 2
            else:
                out += self.node(ns[i])
                i += 1
        return out

    def for_node(self, n: isl.AstNode) -> list[ast.stmt]:
        mark, self._pending_mark = self._pending_mark, None
        if self.replace_loop is not None:
            replaced = self.replace_loop(self, n, mark)
            if replaced is not None:
                return replaced
        it = n.for_get_iterator().id_get_id().get_name()
        name = self.fresh(mark or it)
        init = self.expr(n.for_get_init())
        inc = self.expr(n.for_get_inc())
        outer = self.names.get(it)
        self.names[it] = name
        cond = n.for_get_cond()
        self._depth += 1
        if mark is not None:
            self._open[mark] = name
        try:
            body = self.node(n.for_get_body()) or [ast.Pass()]
        finally:
            self._depth -= 1
            self._open.pop(mark or "", None)
        stop = self._range_stop(cond, it)
        if outer is None:
            del self.names[it]
        else:
            self.names[it] = outer
        target = ast.Name(name, ast.Store())
        if stop is not None:
            zero = isinstance(init, ast.Constant) and init.value == 0
            args = [init, stop] if not _is_one(inc) or not zero else [stop]
            if not _is_one(inc):
                args.append(inc)
            loop = "range"
            if mark is not None and mark in self.prange:
                reason = self.shared(body) if self.shared is not None else None
                if reason is None and mark in self.parts:
                    reason = self._unsplittable(mark, inc)
                self.pranged[mark] = reason or (
                    "prange in parts" if mark in self.parts else "prange"
                )
                loop = "range" if reason else "prange"
            if loop == "prange":
                # Threads pay off only for enough work per launch (prange_work.py): a
                # run-time guard picks the prange or a plain loop, when the work of an
                # iteration is known before the loop (not for a triangle, say).
                work = iteration_work(body, stored_names(body) | {name})
                seq = ast.Call(ast.Name("range", ast.Load()), copy.deepcopy(args), [])
                twin, twin_body = self._renamed(name, body)
                sequential = ast.For(ast.Name(twin, ast.Store()), seq, twin_body, [])
                if mark is not None and mark in self.parts:
                    par = self._parts_prange(mark, name, init, stop, body)
                else:
                    par = self._prange(name, init, stop, inc, args, body)
                if work is None:
                    return par
                trips: ast.expr = copy.deepcopy(stop)
                if not (isinstance(init, ast.Constant) and init.value == 0):
                    trips = ast.BinOp(trips, ast.Sub(), copy.deepcopy(init))
                enough = ast.Compare(
                    trips if _is_one(work) else ast.BinOp(trips, ast.Mult(), work),
                    [ast.GtE()],
                    [_times(ast.Constant(PRANGE_MIN_TRIPS), copy.deepcopy(inc))],
                )
                return [ast.If(enough, par, [sequential])]
            rng = ast.Call(ast.Name(loop, ast.Load()), args, [])
            if mark in self.threaded and _array_code(body):
                return self._threaded(name, rng, body)
            return [ast.For(target, rng, body, [])]
        # A condition that is not a bound on the iterator: a while loop.
        if mark is not None and mark in self.prange:
            self.pranged[mark] = "its condition is not a bound on its iterator (a while loop)"
        self.names[it] = name
        test = self.expr(cond)
        self.names.pop(it)
        step = ast.AugAssign(ast.Name(name, ast.Store()), ast.Add(), inc)
        return [ast.Assign([target], init), ast.While(test, [*body, step], [])]

    def _prange(
        self,
        it: str,
        start: ast.expr,
        stop: ast.expr,
        step: ast.expr,
        args: list[ast.expr],
        body: list[ast.stmt],
    ) -> list[ast.stmt]:
        if _uneven(it, body):
            return self._cyclic_prange(it, start, stop, step, body)
        if not _is_one(step):
            return self._stepped_prange(it, start, stop, step, body)
        rng = ast.Call(ast.Name("prange", ast.Load()), args, [])
        return [ast.For(ast.Name(it, ast.Store()), rng, body, [])]

    def _renamed(self, it: str, body: list[ast.stmt]) -> tuple[str, list[ast.stmt]]:
        """A fresh name for the iterator `it` and a copy of its loop body `body` whose own
        names (every name it assigns, its inner loops' iterators) are fresh: each name of
        a kernel is then assigned in one place, which the Numba rewrites count on
        (`hoist_views` moves only a view assigned once: a prange's sequential twin built
        its pool views anew in every iteration, 16x slower; `index_offsets` knows the
        rows of an unrolled tile apart only from a tile iterator assigned once). A body's
        names are its own: values that outlive an iteration pass through dictionaries or
        buffers, never through locals."""
        out = copy.deepcopy(body)
        own = {
            n.id
            for n in ast.walk(ast.Module(out, []))
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        } | {it}
        new = {n: self.fresh(n) for n in sorted(own)}
        for n in ast.walk(ast.Module(out, [])):
            if isinstance(n, ast.Name) and n.id in new:
                n.id = new[n.id]
        return new[it], out

    def _unsplittable(self, mark: str, inc: ast.expr) -> str | None:
        """Why loop `mark` cannot run in parts here, or None when it can."""
        outer, point = self.parts[mark]
        used = [
            o
            for i, o in enumerate(outer)
            if not point.get_coefficient_val(isl.dim_type.in_, i).is_zero()
        ]
        missing = [o for o in used if o not in self._open]
        if missing:
            return f"its split point uses loop '{missing[0]}', which isl did not write as a loop"
        if not _is_one(inc):
            return "it does not run by steps of 1"
        return None

    def _parts_prange(
        self, mark: str, it: str, start: ast.expr, stop: ast.expr, body: list[ast.stmt]
    ) -> list[ast.stmt]:
        """`for it in range(start, stop)` in three parts at the loop's split point p: a
        prange before p, the iteration p alone, a prange after it (Schedule.parallel_parts:
        every dependence the loop carries starts or ends at p, so a part carries none)."""
        outer, point = self.parts[mark]
        names = [self._open.get(o, "_") for o in outer]
        at = self.fresh(f"{it}_at")
        after = _plus(ast.Name(at, ast.Load()), ast.Constant(1))

        def clipped(lo: ast.expr | None, hi: ast.expr | None) -> tuple[ast.expr, ast.expr]:
            first = copy.deepcopy(start)
            end = copy.deepcopy(stop)
            if lo is not None:
                first = ast.Call(ast.Name("max", ast.Load()), [first, lo], [])
            if hi is not None:
                end = ast.Call(ast.Name("min", ast.Load()), [end, hi], [])
            return first, end

        one = ast.Constant(1)
        lo1, hi1 = clipped(None, ast.Name(at, ast.Load()))
        lo2, hi2 = clipped(ast.Name(at, ast.Load()), copy.deepcopy(after))
        lo3, hi3 = clipped(copy.deepcopy(after), None)
        alone, alone_body = self._renamed(it, body)
        first, first_body = self._renamed(it, body)
        return [
            ast.Assign(
                [ast.Name(at, ast.Store())], expr_of_pw_aff(isl.PwAff.from_aff(point), names)
            ),
            *self._prange(first, lo1, hi1, one, [lo1, hi1], first_body),
            ast.For(
                ast.Name(alone, ast.Store()),
                ast.Call(ast.Name("range", ast.Load()), [lo2, hi2], []),
                alone_body,
                [],
            ),
            *self._prange(it, lo3, hi3, one, [copy.deepcopy(lo3), copy.deepcopy(hi3)], body),
        ]

    def _stepped_prange(
        self, it: str, start: ast.expr, stop: ast.expr, step: ast.expr, body: list[ast.stmt]
    ) -> list[ast.stmt]:
        """`for it in range(start, stop, step)` as a prange over the trip count (Numba's
        prange takes no step): `for n in prange(trips): it = start + n * step`."""
        n = self.fresh(f"{it}_n")
        value = ast.BinOp(start, ast.Add(), ast.BinOp(ast.Name(n, ast.Load()), ast.Mult(), step))
        first = ast.Assign([ast.Name(it, ast.Store())], value)
        rng = ast.Call(ast.Name("prange", ast.Load()), [_trips(start, stop, step)], [])
        return [ast.For(ast.Name(n, ast.Store()), rng, [first, *body], [])]

    def _cyclic_prange(
        self, it: str, start: ast.expr, stop: ast.expr, step: ast.expr, body: list[ast.stmt]
    ) -> list[ast.stmt]:
        """A prange whose iterations do unequal work, each share taking every n-th one.

        Numba's prange gives each thread one block of consecutive iterations: over a
        triangle one thread gets three quarters of the work (covariance ran 1.14x on two
        threads). Taking iterations cyclically, as OpenMP's schedule(static, 1), gave 1.77x.
        The iterations are independent, so any split gives the same results. The number of
        shares is at most a constant, not `get_num_threads()`: Numba cannot cache a
        function that calls it (a "dynamic global"). With CYCLIC_SHARES shares dealt to
        T threads in blocks, each share takes every CYCLIC_SHARES-th iteration: a triangle
        of 2000 rows is shared to within 2% on 2 threads, 8% on 4 (of 300 rows, 9% and
        27%: rows beyond 256 fall in the first block). A loop of fewer iterations (a tile
        loop: 16 tiles of 64 rows) has one share per iteration: with 256 shares, its 16
        would all fall in the first thread's block and the other threads would get none.
        """
        c, count = self.fresh(f"{it}_c"), self.fresh(f"{it}_shares")
        trips = _trips(copy.deepcopy(start), copy.deepcopy(stop), copy.deepcopy(step))
        shares = ast.Call(ast.Name("min", ast.Load()), [ast.Constant(CYCLIC_SHARES), trips], [])
        first = _plus(start, _times(ast.Name(c, ast.Load()), step))
        every = _times(ast.Name(count, ast.Load()), copy.deepcopy(step))
        inner = ast.For(
            ast.Name(it, ast.Store()),
            ast.Call(ast.Name("range", ast.Load()), [first, stop, every], []),
            body,
            [],
        )
        rng = ast.Call(ast.Name("prange", ast.Load()), [ast.Name(count, ast.Load())], [])
        return [
            ast.Assign([ast.Name(count, ast.Store())], shares),
            ast.For(ast.Name(c, ast.Store()), rng, [inner], []),
        ]

    def _threaded(self, it: str, rng: ast.expr, body: list[ast.stmt]) -> list[ast.stmt]:
        """`for it in rng: body` as shares of `rng` run by `_pk_parallel` on threads.

        The iterations are independent (a parallel loop); the values statements
        pass to each other live in dictionaries, never in locals of the body.
        """
        fn = self.fresh(f"_par_{it}")
        share = self.fresh("_share")
        loop = ast.For(ast.Name(it, ast.Store()), ast.Name(share, ast.Load()), body, [])
        args = ast.arguments([], [ast.arg(share)], None, [], [], None, [])
        define = ast.FunctionDef(fn, args, [loop], [], None)
        run = ast.Call(ast.Name("_pk_parallel", ast.Load()), [ast.Name(fn, ast.Load()), rng], [])
        return [define, ast.Expr(run)]

    def bounds(self, n: isl.AstNode) -> tuple[str, ast.expr, ast.expr, ast.expr] | None:
        """(isl iterator, start, stop, step) of a for node whose condition bounds it."""
        it = n.for_get_iterator().id_get_id().get_name()
        found = self.range_of(it, n.for_get_init(), n.for_get_cond())
        if found is None:
            return None
        return it, *found, self.expr(n.for_get_inc())

    def range_of(
        self, it: str, init: isl.AstExpr, cond: isl.AstExpr
    ) -> tuple[ast.expr, ast.expr] | None:
        """(start, stop) of a loop on `it` from its init and its condition, if that bounds it."""
        start = self.expr(init)
        self.names[it] = it
        try:
            stop = self._range_stop(cond, it)
        finally:
            del self.names[it]
        if stop is None:
            return None
        return start, stop

    def _range_stop(self, cond: isl.AstExpr, it: str) -> ast.expr | None:
        if cond.get_type() != isl.ast_expr_type.op:
            return None
        op = cond.get_op_type()
        if op not in (isl.ast_expr_op_type.le, isl.ast_expr_op_type.lt):
            return None
        lhs = cond.op_get_arg(0)
        if lhs.get_type() != isl.ast_expr_type.id or lhs.id_get_id().get_name() != it:
            return None
        saved = self.names.pop(it)
        try:
            rhs = self.expr(cond.op_get_arg(1))
        finally:
            self.names[it] = saved
        if op == isl.ast_expr_op_type.le:
            return _plus_one(rhs)
        return rhs

    def if_node(self, n: isl.AstNode) -> list[ast.stmt]:
        # A mark above an `if` names the loop in each branch (isl splits a loop in cases).
        mark = self._pending_mark
        test = self.expr(n.if_get_cond())
        then = self.node(n.if_get_then_node()) or [ast.Pass()]
        self._pending_mark = mark
        orelse = self.node(n.if_get_else_node()) if n.if_has_else_node() else []
        self._pending_mark = None
        return [ast.If(test, then, orelse)]

    # -- expressions
    def expr(self, e: isl.AstExpr) -> ast.expr:
        t = e.get_type()
        if t == isl.ast_expr_type.int:
            return ast.Constant(int(e.int_get_val().to_python()))
        if t == isl.ast_expr_type.id:
            name = e.id_get_id().get_name()
            return ast.Name(self.names.get(name, python_name(name)), ast.Load())
        op = e.get_op_type()
        args = [self.expr(e.op_get_arg(i)) for i in range(e.op_get_n_arg())]
        if op in _BIN:
            return ast.BinOp(args[0], _BIN[op], args[1])
        if op in _CMP:
            return ast.Compare(args[0], [_CMP[op]], [args[1]])
        if op == isl.ast_expr_op_type.minus:
            return ast.UnaryOp(ast.USub(), args[0])
        if op in (isl.ast_expr_op_type.min, isl.ast_expr_op_type.max):
            f = "min" if op == isl.ast_expr_op_type.min else "max"
            return ast.Call(ast.Name(f, ast.Load()), args, [])
        if op in (_AND, isl.ast_expr_op_type.and_then):
            return ast.BoolOp(ast.And(), args)
        if op in (_OR, isl.ast_expr_op_type.or_else):
            return ast.BoolOp(ast.Or(), args)
        if op in (isl.ast_expr_op_type.cond, isl.ast_expr_op_type.select):
            return ast.IfExp(args[0], args[1], args[2])
        raise UnsupportedError(f"isl produced an expression polykrnl does not translate: {op}")


def _is_one(e: ast.expr) -> bool:
    return isinstance(e, ast.Constant) and e.value == 1


def _minus_one(e: ast.expr) -> ast.expr:
    if isinstance(e, ast.Constant) and isinstance(e.value, int):
        return ast.Constant(e.value - 1)
    return ast.BinOp(e, ast.Sub(), ast.Constant(1))


def _plus_one(e: ast.expr) -> ast.expr:
    """`e + 1`, folded into a trailing constant (`n - 1 + 1` -> `n`)."""
    if isinstance(e, ast.Constant) and isinstance(e.value, int):
        return ast.Constant(e.value + 1)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in ("min", "max"):
        return ast.Call(e.func, [_plus_one(a) for a in e.args], [])
    if isinstance(e, ast.BinOp) and isinstance(e.right, ast.Constant):
        c = e.right.value
        if isinstance(c, int) and isinstance(e.op, ast.Add | ast.Sub):
            v = c + 1 if isinstance(e.op, ast.Add) else -c + 1
            if v == 0:
                return e.left
            return ast.BinOp(e.left, ast.Add() if v > 0 else ast.Sub(), ast.Constant(abs(v)))
    return ast.BinOp(e, ast.Add(), ast.Constant(1))


def expr_of_pw_aff(pa: isl.PwAff, names: Sequence[str]) -> ast.expr:
    """A Python expression of a piecewise quasi-affine function of the dims `names`."""
    n = pa.dim(isl.dim_type.in_)
    for i in range(n):
        pa = pa.set_dim_id(isl.dim_type.in_, i, isl.Id(f"__d{i}", context=pa.get_ctx()))
    pa = pa.move_dims(isl.dim_type.param, pa.dim(isl.dim_type.param), isl.dim_type.in_, 0, n)
    pa = pa.reset_tuple_id(isl.dim_type.in_)
    build = isl.AstBuild.from_context(isl.Set.universe(pa.get_domain_space()))
    tr = Translator(lambda _s, _a: [])
    tr.names.update({f"__d{i}": name for i, name in enumerate(names)})
    return tr.expr(build.expr_from_pw_aff(pa))


def _array_code(body: list[ast.stmt]) -> bool:
    """Whether `body` works on array slices (NumPy then releases the GIL)."""
    return any(isinstance(x, ast.Slice) for st in body for x in ast.walk(st))


def _trips(start: ast.expr, stop: ast.expr, step: ast.expr) -> ast.expr:
    """`max(0, (stop - start + step - 1) // step)`: the trip count of a range."""
    zero = isinstance(start, ast.Constant) and start.value == 0
    span: ast.expr = stop if zero else ast.BinOp(stop, ast.Sub(), start)
    if not _is_one(step):
        span = ast.BinOp(span, ast.Add(), _minus_one(step))
    per = span if _is_one(step) else ast.BinOp(span, ast.FloorDiv(), step)
    return ast.Call(ast.Name("max", ast.Load()), [ast.Constant(0), per], [])


def _times(x: ast.expr, step: ast.expr) -> ast.expr:
    return x if _is_one(step) else ast.BinOp(x, ast.Mult(), step)


def _plus(start: ast.expr, x: ast.expr) -> ast.expr:
    zero = isinstance(start, ast.Constant) and start.value == 0
    return x if zero else ast.BinOp(start, ast.Add(), x)


def _uneven(it: str, body: list[ast.stmt]) -> bool:
    """Whether a loop inside `body` has bounds that use `it` (a triangle, say), so that
    the iterations of the loop over `it` do unequal work."""
    for node in (x for st in body for x in ast.walk(st)):
        header: list[ast.AST] = []
        if isinstance(node, ast.For):
            header = [node.iter]
        elif isinstance(node, ast.While):
            header = [node.test]
        if any(isinstance(x, ast.Name) and x.id == it for h in header for x in ast.walk(h)):
            return True
    return False
