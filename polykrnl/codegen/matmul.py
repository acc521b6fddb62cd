"""The tile loops around a krnl.matmul as one matmul over its box, for both Python targets.

`transforms/matmul_fold.py` proves with isl that the loops compute each point of a box
once, each C element's k ascending; `MatmulFolder` (asked at every loop, before the
vectorizer) then writes the whole nest as

- NumPy: `C[box] += A[box] @ B[box]` (BLAS: the sum over k reassociated), or with
  `reassociate=False` one rank-1 update per k, each multiply and add rounded in C's type
  as the interpreter does (bit for bit);
- Numba: the scalar loops of `StatementWriter.matmul_loops` over the whole box (i, k, j;
  bit for bit).

Loops that do not fold keep one krnl.matmul per tile, with the reason in a comment.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import cast

import islpy as isl
from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, MemRefType

from polykrnl.codegen.ast_loops import AstLoop, loop_tree_at
from polykrnl.codegen.isl_ast import Translator
from polykrnl.codegen.pyast import assign, call, const, name
from polykrnl.codegen.statements import KernelState, StatementWriter, minus
from polykrnl.codegen.vectorize import comment
from polykrnl.dialect import krnl as k
from polykrnl.interpreter import memref_dtype
from polykrnl.poly import Statement
from polykrnl.transforms.core import Schedule
from polykrnl.transforms.matmul_fold import FoldBox, fold_box, matmul_of


@dataclass
class MatmulFolder:
    """Asked at every loop of isl's AST (Translator.replace_loop): the nest from there
    as one matmul, or None."""

    state: KernelState
    sched: Schedule
    reassociate: bool
    copied: frozenset[str] = frozenset()  # statements isl wrote more than once
    reassociated: bool = False
    explained: set[str] = field(default_factory=set)
    # (statement, loops) -> the box they compute, or why not (a loop written as it is
    # comes back here)
    tried: dict[tuple[str, frozenset[str]], FoldBox | str] = field(default_factory=dict)
    _passing: isl.AstNode | None = None  # the loop being written as it is, after its reason

    def __call__(self, tr: Translator, n: isl.AstNode, mark: str | None) -> list[ast.stmt] | None:
        if self._passing is n:
            self._passing = None
            return None
        tree = loop_tree_at(n, mark)
        chain = tree.chain() if tree is not None else None
        if chain is None or len(chain[-1].items) != 1 or isinstance(chain[-1].items[0], AstLoop):
            return None
        user = chain[-1].items[0]
        assert isinstance(user, isl.AstExpr)
        s = self.state.program.statement(user.op_get_arg(0).id_get_id().get_name())
        op = matmul_of(s)
        if op is None:
            return None
        marks = [x.mark for x in chain]
        key = (s.name, frozenset(marks))
        if key not in self.tried:
            self.tried[key] = (
                fold_box(self.state.program, s, key[1], self._order(s))
                if s.name not in self.copied
                else "isl writes the krnl.matmul more than once (unrolled)"
            )
        found = self.tried[key]
        if not isinstance(found, str):
            return self._write(tr, chain, user, s, op, found)
        if s.name in self.explained:
            return None
        self.explained.add(s.name)
        if len(marks) == len(s.loops) and found == "a memory start changes inside the loops":
            # The outermost attempt: a batch loop around the tiles fails on its memory
            # starts, and its inner loops get their own attempt.
            self.explained.discard(s.name)
            return None
        # Say why, then write the loop as before (the vectorizer's turn, asked again).
        self._passing = n
        tr._pending_mark = mark
        return [
            comment(f"loops {', '.join(marks)} stay krnl.matmul's tiles: {found}"),
            *tr.for_node(n),
        ]

    def _order(self, s: Statement) -> isl.Map:
        """`s`'s instances -> their time, in the nest that holds it."""
        for tree in self.sched.nest_trees:
            m = tree.get_map().intersect_domain(isl.UnionSet.from_set(s.domain))
            if not m.is_empty():
                return isl.Map.from_union_map(m)
        raise AssertionError(f"{s.name} is in no nest")

    def _write(
        self,
        tr: Translator,
        chain: list[AstLoop],
        user: isl.AstExpr,
        s: Statement,
        op: k.MatMulOp,
        box: FoldBox,
    ) -> list[ast.stmt]:
        """The box's code: the values of the loops around, then the matmul, under the
        condition that the box is not empty."""
        saved = dict(tr.names)
        # The loops around are fixed inside the box, but their values may be written from
        # the statement's dims (a tile loop's from its point loop's): those of the box's
        # first instance, each folded loop at its first value.
        first: list[ast.Assign] = []
        for x in chain:
            it = x.node.for_get_iterator().id_get_id().get_name()
            init = tr.expr(x.node.for_get_init())
            local = self.state.names.fresh(f"{x.mark}_0")
            first.append(assign(local, init))
            tr.names[it] = local
        try:
            dims = [tr.expr(user.op_get_arg(i)) for i in range(1, user.op_get_n_arg())]
            writer = StatementWriter(self.state, s, dims)
            for d, lp in enumerate(box.outer):
                v = writer.loop_value(lp)
                if not isinstance(v, ast.Name):
                    local = self.state.names.fresh(f"{lp}_v")
                    writer.out.append(assign(local, v))
                    v = name(local)
                tr.names[f"__o{d}"] = v.id
            ctx = box.around
            lo = [_pw(tr, pa, ctx) for pa in box.lo]
            stop = [_pw(tr, _plus(pa, 1), ctx) for pa in box.hi]
            mems = [[_pw(tr, pa, ctx) for pa in ms] for ms in box.mems]
            # Each array's block: its fixed dimensions, then its rows and columns (the
            # box's sides minus the memory starts), as isl simplifies them.
            views: list[View] = []
            for ms, (r, c) in zip(box.mems, ((0, 2), (2, 1), (0, 1)), strict=True):
                sides = [
                    slice_of(
                        _pw(tr, _minus(box.lo[d], m), ctx),
                        _pw(tr, _minus(_plus(box.hi[d], 1), m), ctx),
                    )
                    for d, m in ((r, ms[-2]), (c, ms[-1]))
                ]
                views.append(View([_pw(tr, m, ctx) for m in ms[:-2]], sides[0], sides[1]))
            runs = _set(tr, box.runs, ctx)
            # Index arithmetic, safe where the box is empty; the arrays' lookups are not.
            values, writer.out = writer.out, []
        finally:
            tr.names.clear()
            tr.names.update(saved)
        marks = ", ".join(x.mark for x in chain)
        if self.state.form.compiled:
            threads = self._rows_on_threads(tr, chain)
            code = writer.matmul_loops(op, list(zip(lo, stop, strict=True)), mems, threads)
            note = f"loops {marks}: krnl.matmul's tiles partition its box (isl), one loop nest"
        else:
            code, note = self._numpy(writer, op, views, marks)
        body = [*writer.out, *code]
        if not (isinstance(runs, ast.Constant) and runs.value):
            body = [ast.If(runs, body, [])]
        used = {x.id for st in [*values, *body] for x in ast.walk(st) if isinstance(x, ast.Name)}
        first = [a for a in first if cast(ast.Name, a.targets[0]).id in used]
        return [comment(note), *first, *values, *body]

    def _rows_on_threads(self, tr: Translator, chain: list[AstLoop]) -> bool:
        """Whether the folded nest's rows run on threads: when a loop of `chain` is to run
        in parallel (its mark proven legal). The rows of C are independent whichever
        tile loop was marked (`matmul_loops` refuses a C that is A or B), so the rows
        loop runs in parallel and each marked loop is reported as run on threads."""
        marked = [x.mark for x in chain if x.mark in tr.prange]
        tr.pranged.update(dict.fromkeys(marked, "prange (the folded krnl.matmul's rows)"))
        return bool(marked)

    def _numpy(
        self, writer: StatementWriter, op: k.MatMulOp, views: list[View], marks: str
    ) -> tuple[list[ast.stmt], str]:
        """The NumPy code of the box: a matmul, or one rank-1 update per k."""
        a, b, c = (writer.value(v) for v in (op.A, op.B, op.C))
        types = [v.type for v in (op.A, op.B, op.C)]
        assert all(isinstance(t, MemRefType) for t in types)
        dtypes = {memref_dtype(t) for t in types}  # type: ignore[arg-type]
        c_view = views[2].of(c)
        is_float = isinstance(
            types[2].element_type,  # type: ignore[attr-defined]
            Float16Type | Float32Type | Float64Type,
        )
        if len(dtypes) == 1 and (self.reassociate or not is_float):
            self.reassociated |= is_float
            matmul = ast.BinOp(views[0].of(a), ast.MatMult(), views[1].of(b))
            target = ast.Subscript(c_view.value, c_view.slice, ast.Store())
            note = f"loops {marks}: krnl.matmul's tiles partition its box (isl), one matmul"
            return [ast.AugAssign(target, ast.Add(), matmul)], note
        kk = self.state.names.fresh("k")
        c_local = self.state.names.fresh("c_box")
        a_view, b_view = views[0], views[1]
        a_col, b_row = a_view.cols.lower, b_view.rows.lower
        assert a_col is not None and b_row is not None and a_view.cols.upper is not None
        c_dtype = memref_dtype(types[2])  # type: ignore[arg-type]
        product = ast.Call(
            ast.Attribute(name("np"), "multiply", ast.Load()),
            [
                View(a_view.fixed, a_view.rows, _one(_plus_name(a_col, kk))).of(a),
                View(b_view.fixed, _one(_plus_name(b_row, kk)), b_view.cols).of(b),
            ],
            [ast.keyword("dtype", ast.Attribute(name("np"), c_dtype.name, ast.Load()))],
        )
        update = ast.Assign(
            [ast.Subscript(name(c_local), ast.Constant(Ellipsis), ast.Store())],
            ast.BinOp(product, ast.Add(), name(c_local)),
        )
        why = (
            "reassociate=False keeps the interpreter's order of the sum over k"
            if len(dtypes) == 1
            else "A, B and C differ in type (the products are rounded in C's)"
        )
        n_k = minus(a_view.cols.upper, a_col)
        loop = ast.For(ast.Name(kk, ast.Store()), call("range", n_k), [update], [])
        note = f"loops {marks}: krnl.matmul's tiles partition its box (isl), rank-1 updates"
        return [assign(c_local, c_view), comment(f"loop {kk} stays a loop: {why}"), loop], note


@dataclass(frozen=True)
class View:
    """An array's block: the indices of its dimensions before the last two, then slices."""

    fixed: list[ast.expr]
    rows: ast.Slice
    cols: ast.Slice

    def of(self, arr: ast.expr) -> ast.Subscript:
        index = ast.Tuple([*self.fixed, self.rows, self.cols], ast.Load())
        return ast.Subscript(arr, index, ast.Load())


def slice_of(lo: ast.expr, stop: ast.expr) -> ast.Slice:
    return ast.Slice(lo, stop, None)


def _plus_name(e: ast.expr, n: str) -> ast.expr:
    if isinstance(e, ast.Constant) and e.value == 0:
        return name(n)
    return ast.BinOp(e, ast.Add(), name(n))


def _one(at: ast.expr) -> ast.Slice:
    """The slice of one index, `at:at + 1`: a dimension kept for broadcasting."""
    return slice_of(at, ast.BinOp(at, ast.Add(), const(1)))


def _plus(pa: isl.PwAff, n: int) -> isl.PwAff:
    return pa.add_constant_val(isl.Val.int_from_si(pa.get_ctx(), n))


def _minus(a: isl.PwAff, b: isl.PwAff) -> isl.PwAff:
    return a.align_params(b.get_space()).sub(b.align_params(a.get_space()))


def _pw(tr: Translator, pa: isl.PwAff, ctx: isl.Set) -> ast.expr:
    ctx = ctx.align_params(pa.get_space())
    pa = pa.align_params(ctx.get_space()).gist_params(ctx)
    build = isl.AstBuild.from_context(ctx)
    return tr.expr(build.expr_from_pw_aff(pa))


def _set(tr: Translator, s: isl.Set, ctx: isl.Set) -> ast.expr:
    ctx = ctx.align_params(s.get_space())
    build = isl.AstBuild.from_context(ctx)
    return tr.expr(build.expr_from_set(s.align_params(ctx.get_space()).gist_params(ctx)))
