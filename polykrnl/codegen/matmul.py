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

# A folded loop's iterator while the statement's values are written: a value that uses
# it is not fixed for the whole box (then nothing is folded).
_POISON = "_pk_folded_loop"


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
        out = None if isinstance(found, str) else self._write(tr, chain, user, s, op, found)
        if out is not None:
            return out
        if s.name in self.explained:
            return None
        self.explained.add(s.name)
        why = found if isinstance(found, str) else "a value of the box uses the folded loops"
        if len(marks) == len(s.loops) and why == "a memory start changes inside the loops":
            # The outermost attempt: a batch loop around the tiles fails on its memory
            # starts, and its inner loops get their own attempt.
            self.explained.discard(s.name)
            return None
        # Say why, then write the loop as before (the vectorizer's turn, asked again).
        self._passing = n
        tr._pending_mark = mark
        return [
            comment(f"loops {', '.join(marks)} stay krnl.matmul's tiles: {why}"),
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
    ) -> list[ast.stmt] | None:
        saved = dict(tr.names), set(tr.taken)
        for x in chain:
            it = x.node.for_get_iterator().id_get_id().get_name()
            tr.names[it] = f"{_POISON}_{len(tr.names)}"
        try:
            dims = [tr.expr(user.op_get_arg(i)) for i in range(1, user.op_get_n_arg())]
            writer = StatementWriter(self.state, s, dims)
            outer = [writer.loop_value(lp) for lp in box.outer]
            for d, v in enumerate(outer):
                if not isinstance(v, ast.Name):
                    local = self.state.names.fresh(f"o{d}")
                    writer.out.append(assign(local, v))
                    v = name(local)
                tr.names[f"__o{d}"] = v.id
            lo = [_pw(tr, pa) for pa in box.lo]
            stop = [_plus_one(_pw(tr, pa)) for pa in box.hi]
            mems = [[_pw(tr, pa) for pa in ms] for ms in box.mems]
            runs = _set(tr, box.runs)
            marks = ", ".join(x.mark for x in chain)
            if self.state.form.compiled:
                ranges = list(zip(lo, stop, strict=True))
                code = writer.matmul_loops(op, ranges, mems)
                note = f"loops {marks}: krnl.matmul's tiles partition its box (isl), one loop nest"
            else:
                code, note = self._numpy(writer, op, lo, stop, mems, marks)
            body = [*writer.out, *code]
            if not (isinstance(runs, ast.Constant) and runs.value):
                body = [ast.If(runs, body, [])]
            out = [comment(note), *body]
        finally:
            tr.names.clear()
            tr.names.update(saved[0])
        if any(
            isinstance(x, ast.Name) and x.id.startswith(_POISON) for st in out for x in ast.walk(st)
        ):
            tr.taken.clear()
            tr.taken.update(saved[1])
            return None
        return out

    def _numpy(
        self,
        writer: StatementWriter,
        op: k.MatMulOp,
        lo: list[ast.expr],
        stop: list[ast.expr],
        mems: list[list[ast.expr]],
        marks: str,
    ) -> tuple[list[ast.stmt], str]:
        """The NumPy code of the box: a matmul, or one rank-1 update per k."""
        a, b, c = (writer.value(v) for v in (op.A, op.B, op.C))
        rows, cols, ks = (slice_of(lo[d], stop[d]) for d in range(3))
        types = [v.type for v in (op.A, op.B, op.C)]
        assert all(isinstance(t, MemRefType) for t in types)
        dtypes = {memref_dtype(t) for t in types}  # type: ignore[arg-type]
        c_view = _view(c, mems[2], rows, cols)
        is_float = isinstance(
            types[2].element_type,  # type: ignore[attr-defined]
            Float16Type | Float32Type | Float64Type,
        )
        if len(dtypes) == 1 and (self.reassociate or not is_float):
            self.reassociated |= is_float
            matmul = ast.BinOp(
                _view(a, mems[0], rows, ks), ast.MatMult(), _view(b, mems[1], ks, cols)
            )
            target = ast.Subscript(c_view.value, c_view.slice, ast.Store())
            note = f"loops {marks}: krnl.matmul's tiles partition its box (isl), one matmul"
            return [ast.AugAssign(target, ast.Add(), matmul)], note
        kk = self.state.names.fresh("k")
        c_local = self.state.names.fresh("c_box")
        one = slice_of(name(kk), _plus_one(name(kk)))
        c_dtype = memref_dtype(types[2])  # type: ignore[arg-type]
        product = ast.Call(
            ast.Attribute(name("np"), "multiply", ast.Load()),
            [_view(a, mems[0], rows, one), _view(b, mems[1], one, cols)],
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
        loop = ast.For(ast.Name(kk, ast.Store()), call("range", lo[2], stop[2]), [update], [])
        note = f"loops {marks}: krnl.matmul's tiles partition its box (isl), rank-1 updates"
        return [assign(c_local, c_view), comment(f"loop {kk} stays a loop: {why}"), loop], note


def slice_of(lo: ast.expr, stop: ast.expr) -> ast.Slice:
    return ast.Slice(lo, stop, None)


def _view(arr: ast.expr, mem: list[ast.expr], rows: ast.Slice, cols: ast.Slice) -> ast.Subscript:
    """`arr`'s block of global rows and columns: its memory starts subtracted, the
    dimensions before the last two fixed at their memory starts."""

    def shifted(sl: ast.Slice, m: ast.expr) -> ast.Slice:
        assert sl.lower is not None and sl.upper is not None
        return slice_of(minus(sl.lower, m), minus(sl.upper, m))

    index = [*mem[:-2], shifted(rows, mem[-2]), shifted(cols, mem[-1])]
    return ast.Subscript(arr, ast.Tuple(index, ast.Load()), ast.Load())


def _plus_one(e: ast.expr) -> ast.expr:
    if isinstance(e, ast.Constant) and isinstance(e.value, int):
        return const(e.value + 1)
    return ast.BinOp(e, ast.Add(), const(1))


def _pw(tr: Translator, pa: isl.PwAff) -> ast.expr:
    build = isl.AstBuild.from_context(isl.Set.universe(pa.get_domain_space()))
    return tr.expr(build.expr_from_pw_aff(pa))


def _set(tr: Translator, s: isl.Set) -> ast.expr:
    build = isl.AstBuild.from_context(isl.Set.universe(s.get_space()))
    return tr.expr(build.expr_from_set(s))
