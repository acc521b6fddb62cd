"""Loops that run as NumPy array expressions.

A chain of perfectly nested innermost loops becomes array code when every loop
of it is parallel in the legality report (it carries no dependence): then all
its iterations may run at once, and running the statements of the body one
after the other, each over the whole chain, keeps every dependence between
them (they only go from a statement to a later one in the same iteration).
Each vectorized loop is an axis; a subscript `iterator + constant` becomes a
slice, any other subscript NumPy integer-array indexing with the iterators as
broadcast ranges. NumPy evaluates the right-hand side of a statement before it
stores, which is what a loop that carries no dependence needs. Vector values (the
SIMD form's tile loops: a run at the tile's index) are arrays of the loops' axes and
then their lanes (codegen/vector_lanes.py).

Where a loop stays scalar, the code says why in a comment.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import islpy as isl
from xdsl.dialects import vector
from xdsl.dialects.builtin import VectorType

from polykrnl.codegen.ast_loops import AstLoop, ast_ids, loop_tree_at, statements_of, unmark
from polykrnl.codegen.isl_ast import FOR_NODE, Translator, expr_of_pw_aff
from polykrnl.codegen.masks import inside, masked_stores, unmaskable
from polykrnl.codegen.pyast import (
    add_constant,
    assign,
    call,
    comment,
    const,
    int_constant,
    same_tree,
)
from polykrnl.codegen.pyast import name as name_
from polykrnl.codegen.simd_remainder import run_remainder
from polykrnl.codegen.statements import (
    KernelState,
    NotVectorizable,
    StatementWriter,
    VecIter,
)
from polykrnl.codegen.stored_values import stored_values
from polykrnl.codegen.tile_merge import (
    POISON,
    ChainLoop,
    MergedRange,
    iterator_name,
    merge_tiles,
    range_exprs,
)
from polykrnl.codegen.updates import (
    COMBINE,
    REDUCE,
    Update,
    contraction,
    dotted,
    in_place,
    index_of,
    is_load,
    update_of,
)
from polykrnl.codegen.vector_lanes import vector_shape
from polykrnl.codegen.vector_ranges import (
    Clip,
    arange_of,
    guarded,
    names_in,
    not_below,
    range_call,
    target_name,
    uses_name,
)
from polykrnl.interpreter import scalar_dtype
from polykrnl.poly import Statement
from polykrnl.transforms.legality_report import LegalityReport
from polykrnl.transforms.loop_ranges import LoopRange
from polykrnl.transforms.memory_safety import call_context
from polykrnl.transforms.splits import SplitPoint


def forced_statements(report: LegalityReport) -> dict[str, str]:
    """The statements of each dependence a schedule breaks (made with force=True), with
    the first broken one through them, in words."""
    out: dict[str, str] = {}
    for v in report.violations:
        what = f"{v.kind} {v.source.stmt} -> {v.sink.stmt} on {v.array}"
        if v.reason != "order":
            what += f" (loop {v.loop} marked parallel carries it)"
        out.setdefault(v.source.stmt, what)
        out.setdefault(v.sink.stmt, what)
    return out


@dataclass
class Vectorizer:
    """The `replace_loop` hook of the Translator: array code for parallel chains."""

    state: KernelState
    statements: dict[str, Statement]
    status: dict[str, str]  # loop -> LoopVerdict status
    tile_of: dict[str, str]  # point loop -> its tile loop (from the schedule)
    reasons: dict[str, str]  # loop -> why it is not vectorizable
    explained: set[str] = field(default_factory=set)
    reassociate: bool = True  # allow contractions (np.einsum), which reorder sums
    reassociated: bool = False  # whether a contraction was emitted
    # loop -> (source, sink, reduction) of the dependences it carries (for distribution)
    carried: dict[str, list[tuple[str, str, bool]]] = field(default_factory=dict)
    # outer loop of a parallel chain -> why its array code failed (said once, above it)
    failed: dict[str, str] = field(default_factory=dict)
    # Statements isl writes more than once (the copies of an unrolled loop)
    copied: frozenset[str] = frozenset()
    # loop -> the iteration every dependence it carries goes through (None: none)
    split_of: Callable[[str], SplitPoint | None] | None = None
    # (loop, loops projected out) -> its range there: the bounding box of a triangle
    box_of: Callable[[str, frozenset[str], tuple[str, ...]], LoopRange] | None = None
    # krnl.parallel loops that run on threads (parallel=True): rows, never masked
    threaded: frozenset[str] = frozenset()
    # statement -> the dependence a forced schedule (force=True) breaks through it: its
    # nests run as written; the other nests keep their array code
    forced: dict[str, str] = field(default_factory=dict)
    # (a, b) -> whether a dependence orders instances of statements a and b (either way)
    related: Callable[[str, str], bool] | None = None
    _iters: dict[str, str] = field(default_factory=dict)  # loop -> its isl iterator
    # isl iterator -> the loop last entered with it (while inside a loop, no other loop
    # at its depth is entered: for the loops around the current one, this is them)
    _entered: dict[str, str] = field(default_factory=dict)
    # loop -> (start, stop) the part being written is clipped to (index-set splitting)
    _clip: dict[str, Clip] = field(default_factory=dict)
    _passing: isl.AstNode | None = None  # a loop written as a loop after its note
    _why: str | None = None  # the last reason array code failed
    _reduce_why: str | None = None  # the last reason a reduction's array form failed

    def _keys(self) -> dict[str, set[tuple[object, ...]]]:
        """A copy of the array keys registered so far (restored when array code fails)."""
        return {k: set(v) for k, v in self.state.vec_keys.items()}

    def carried_by(self, loop: str) -> list[tuple[str, str, bool]]:
        return self.carried.get(loop, [])

    def __call__(self, tr: Translator, n: isl.AstNode, mark: str | None) -> list[ast.stmt] | None:
        if self._passing is n:
            self._passing = None
            return None
        if mark is not None:
            it = n.for_get_iterator().id_get_id().get_name()
            self._iters[mark] = it
            self._entered[it] = mark
        tree = loop_tree_at(n, mark)
        if tree is None:
            return None  # ifs, or loops isl made without a Krnl loop's mark
        forced = sorted(statements_of(tree) & set(self.forced))
        if forced:
            return self._as_written(tr, n, mark, tree.mark, self.forced[forced[0]])
        split = self._split(tr, tree)
        if split is not None:
            return split or None  # [] : the split starts at an inner loop
        out = self._gen(tr, [], tree)
        if out is not None:
            return out
        chain = tree.chain()
        if chain is not None and not any(self.status.get(x.mark) == "parallel" for x in chain):
            return self._scalar_note(tr, n, mark, chain[-1].mark)
        why = self.failed.get(tree.mark)
        if why is None or tree.mark in self.explained:
            return None
        # A parallel loop that stays a loop: say why, then write it (its inner
        # loops may still become array code).
        self.explained.add(tree.mark)
        self._passing = n
        tr._pending_mark = mark
        return [comment(f"loop {tree.mark} stays a loop: {why}"), *tr.for_node(n)]

    def _split(self, tr: Translator, tree: AstLoop) -> list[ast.stmt] | None:
        """The chain under `tree` as array code in parts, its non-parallel loops split
        where every dependence they carry starts or ends (see transforms/splits.py).

        Each split loop runs as its parts in its own order; inside a part no loop of
        the chain carries a dependence, so the part is parallel. The parts of the
        chain run one after the other in lexicographic order: a dependence carried
        by a loop of the chain goes between two of its parts, forward. [] when the
        chain splits from an inner loop on (this one stays a loop); None when not.
        """
        chain = tree.chain()
        if self.split_of is None or chain is None:
            return None
        if any(
            self.statements[name].exports or self.statements[name].imports
            for name in statements_of(tree)
        ):
            # iter_args values are kept per iteration of the loops around their
            # iterate: a part of one iteration would store an array of one element.
            return None
        marks = [x.mark for x in chain]
        for start in range(len(chain)):
            inner = set(marks[start:])
            points: dict[str, SplitPoint] = {}
            for m in marks[start:]:
                status = self.status.get(m)
                if status == "parallel":
                    continue
                sp = self.split_of(m) if status == "forward" else None
                if sp is None or _point_uses(sp, inner):
                    break
                points[m] = sp
            else:
                if not points:
                    return None
                if start:
                    return []
                return self._split_parts(tr, chain, points)
        return None

    def _split_parts(
        self, tr: Translator, chain: list[AstLoop], points: dict[str, SplitPoint]
    ) -> list[ast.stmt] | None:
        inner = {x.mark for x in chain}
        node_of = {x.mark: x.node for x in chain}
        cuts: dict[str, list[tuple[str, Clip]]] = {}
        guards: list[ast.expr] = []
        for m, sp in points.items():
            names = []
            for o in sp.outer:
                it = self._iters.get(o)
                if o not in inner and (it is None or it not in tr.names):
                    return None  # an outer loop polykrnl did not write as a loop
                names.append("_" if o in inner else tr.names[it or ""])
            p = expr_of_pw_aff(isl.PwAff.from_aff(sp.point), names)
            text = ast.unparse(p)
            what = (f"{m} < {text}", f"{m} = {text}", f"{m} > {text}")
            own = tr.bounds(node_of[m])
            exact = own is not None and not (names_in(own[1]) | names_in(own[2])) & {
                tr.names.get(self._iters.get(x, ""), "") for x in inner
            }
            if (
                exact
                and own is not None
                and not any(_involves(pa, sp.outer, inner) for part in sp.parts for pa in part)
            ):
                # The parts' own ranges (`0:k`, `k:k + 1`, `k + 1:N`), exact where the
                # loop runs: the guard keeps them from running where it does not.
                guard = ast.Compare(own[2], [ast.Gt()], [own[1]])
                if not any(same_tree(guard, g) for g in guards):
                    guards.append(guard)
                cuts[m] = [
                    (w, Clip(expr_of_pw_aff(lo, names), expr_of_pw_aff(hi, names), True))
                    for w, (lo, hi) in zip(what, sp.parts, strict=True)
                ]
            else:
                after = add_constant(p, 1)
                clips = (Clip(None, p), Clip(p, after), Clip(after, None))
                cuts[m] = list(zip(what, clips, strict=True))
        saved = (dict(tr.names), set(tr.taken), self._keys(), self.status)
        self.status = {**self.status, **dict.fromkeys(points, "parallel")}
        at = ", ".join(what[1][0] for what in cuts.values())
        note = comment(
            f"loops {', '.join(points)} split at {at}: every dependence they carry "
            "starts or ends there, so each part is parallel"
        )
        out: list[ast.stmt] = []
        loops = [(x.mark, x.node) for x in chain]
        users = [u for u in chain[-1].items if not isinstance(u, AstLoop)]
        try:
            for part in itertools.product(*cuts.values()):
                self._clip = {m: clip for m, (_, clip) in zip(cuts, part, strict=True)}
                code = self._vector(tr, loops, users)
                if code is None:
                    tr.names.clear()
                    tr.names.update(saved[0])
                    tr.taken.clear()
                    tr.taken.update(saved[1])
                    self.state.vec_keys = saved[2]
                    return None
                out += [comment(", ".join(what for what, _ in part)), *code[1:]]
        finally:
            self.status = saved[3]
            self._clip = {}
        if guards:
            test = guards[0] if len(guards) == 1 else ast.BoolOp(ast.And(), guards)
            out = [ast.If(test, out, [])]
        return [note, *out]

    def _gen(self, tr: Translator, prefix: list[AstLoop], loop: AstLoop) -> list[ast.stmt] | None:
        """Array code for `loop` inside the (vectorized) `prefix` loops, or None."""
        chain = [*prefix, loop]
        if len(loop.items) == 1 and isinstance(loop.items[0], AstLoop):
            return self._gen(tr, chain, loop.items[0])
        users = [x for x in loop.items if not isinstance(x, AstLoop)]
        if len(users) == len(loop.items):
            before = self._saved(tr)
            found = self._try(tr, chain, users)
            if len(users) == 1 or (found is not None and not _in_loops(found)):
                return found
            # The statements together keep a loop in Python (a store and a reduction
            # of one Krnl statement: softmax's exp-and-sum keeps its column loop);
            # apart, each may run as array code. The form that leaves less in Python
            # loops wins; the statements together when equal.
            after = self._saved(tr)
            if found is not None:
                self._restore(tr, before)
            parts = self._distributed(tr, chain, loop)
            if parts is not None and (found is None or _in_loops(parts) < _in_loops(found)):
                return [comment(_DISTRIBUTED.format(chain[-1].mark)), *parts]
            self._restore(tr, after)
            return found
        return self._distributed(tr, chain, loop)

    def _saved(
        self, tr: Translator
    ) -> tuple[dict[str, str], set[str], dict[str, set[tuple[object, ...]]]]:
        return dict(tr.names), set(tr.taken), self._keys()

    def _restore(
        self,
        tr: Translator,
        saved: tuple[dict[str, str], set[str], dict[str, set[tuple[object, ...]]]],
    ) -> None:
        tr.names.clear()
        tr.names.update(saved[0])
        tr.taken.clear()
        tr.taken.update(saved[1])
        self.state.vec_keys = {k: set(v) for k, v in saved[2].items()}

    def _distributed(
        self, tr: Translator, chain: list[AstLoop], loop: AstLoop
    ) -> list[ast.stmt] | None:
        """The items of `loop`'s body one after the other, each over all the iterations of
        the `chain` (array code), or None."""
        # A body of several loops and statements: distribute the chain over them,
        # each part running all its iterations before the next part starts. Legal
        # when no dependence carried by a loop of the chain goes from a part back to
        # an earlier one (those inside one iteration go forward, in body order).
        # Each part then sees the loops as its own dependences make them.
        parts = [statements_of(item) for item in loop.items]
        where = {st: i for i, names in enumerate(parts) for st in names}
        # A statement in several parts (the copies of an unrolled loop) has instances
        # in each: a dependence between two of them may go from a later part back.
        shared = {st for st in where if sum(st in names for names in parts) > 1}
        per_part: list[dict[str, str]] = [{} for _ in parts]
        for x in chain:
            if self.status.get(x.mark) == "parallel":
                continue
            deps = self.carried_by(x.mark)
            for src, snk, _ in deps:
                if {src, snk} & shared:
                    why = f"loop {x.mark} carries a dependence between copies of {src}"
                    if src != snk:
                        why = f"loop {x.mark} carries a dependence {src} -> {snk}"
                    why += " in several parts of its body (an unrolled loop's copies)"
                elif where.get(src, -1) > where.get(snk, -1):
                    why = (
                        f"loop {x.mark} carries a dependence {src} -> {snk} back to an "
                        "earlier part of its body"
                    )
                else:
                    continue
                self.failed.setdefault(chain[0].mark, why)
                return None
            for i, names in enumerate(parts):
                own = [red for src, snk, red in deps if src in names and snk in names]
                per_part[i][x.mark] = (
                    "parallel" if not own else "reduction" if all(own) else "forward"
                )
        saved_names, saved_taken = dict(tr.names), set(tr.taken)
        saved_keys = self._keys()
        saved_status = self.status
        out: list[ast.stmt] = []
        saved_stored = self.state.stored
        stored = {**saved_stored, **stored_values(self.statements, parts)}
        items = loop.items
        i = 0
        while i < len(items):
            item, status = items[i], per_part[i]
            self.status = {**saved_status, **status}
            self.state.stored = stored
            try:
                # A SIMD run and its remainder, parts alike: one statement over both.
                part = (
                    self._run_and_remainder(tr, chain, item, items[i + 1])
                    if i + 1 < len(items) and per_part[i + 1] == status
                    else None
                )
                i += 2 if part is not None else 1
                if part is None:
                    part = (
                        self._gen(tr, chain, item)
                        if isinstance(item, AstLoop)
                        else self._try(tr, chain, [item])
                    )
            finally:
                self.status = saved_status
                self.state.stored = saved_stored
            tr.names.clear()
            tr.names.update(saved_names)
            if part is None:
                tr.taken.clear()
                tr.taken.update(saved_taken)
                self.state.vec_keys = saved_keys
                return None
            out += part
        return out

    def pair(
        self, tr: Translator, first: isl.AstNode, second: isl.AstNode
    ) -> list[ast.stmt] | None:
        """The `replace_pair` hook of the Translator: two sibling loops, a SIMD run and its
        remainder, as one statement (or None)."""
        trees: list[AstLoop] = []
        for node in (first, second):
            loop, mark = unmark(node)
            tree = loop_tree_at(loop, mark) if loop.get_type() == FOR_NODE else None
            if tree is None:
                return None
            trees.append(tree)
        return self._run_and_remainder(tr, [], trees[0], trees[1])

    def _run_and_remainder(
        self,
        tr: Translator,
        prefix: list[AstLoop],
        run: AstLoop | isl.AstExpr,
        rem: AstLoop | isl.AstExpr,
    ) -> list[ast.stmt] | None:
        """The remainder loop's statement over the elements of the SIMD run before it and
        its own, inside the vectorized `prefix` loops (codegen/simd_remainder.py), or None."""
        if self.related is None or self._clip or not isinstance(run, AstLoop):
            return None
        if not isinstance(rem, AstLoop):
            return None
        calls = [x.items[0] for x in (run, rem) if len(x.items) == 1]
        if len(calls) != 2 or any(isinstance(c, AstLoop) for c in calls):
            return None
        u1, u2 = (c for c in calls if not isinstance(c, AstLoop))
        s1, s2 = (self.statements[u.op_get_arg(0).id_get_id().get_name()] for u in (u1, u2))
        if {s1.name, s2.name} & (set(self.forced) | self.copied):
            return None
        if any(self.status.get(x.mark) != "parallel" for x in (*prefix, run, rem)):
            return None
        outer = _plain_args(u1, run.node)
        if outer is None or outer != _plain_args(u2, rem.node):
            return None
        for x in (run, rem):
            init, cond = range_exprs(x.node)
            if (ast_ids(init) | ast_ids(cond)) & set(outer):
                return None  # per outer value its own range: no box
        found = run_remainder(s1, s2, self.related, call_context(self.state.program))
        if isinstance(found, str):
            return None
        start, stop = (expr_of_pw_aff(pa, []) for pa in (found.start, found.end))
        saved, stored = self._saved(tr), self.state.stored
        self._clip = {rem.mark: Clip(start, stop, True)}
        # A value an earlier part stored exists at the remainder's elements only.
        self.state.stored = {n: v for n, v in stored.items() if n != s2.name}
        try:
            out = self._gen(tr, prefix, rem)
        finally:
            self._clip = {}
            self.state.stored = stored
        if out is None:
            self._restore(tr, saved)
            return None
        note = (
            f"the SIMD run of loop {run.mark} and its remainder loop {rem.mark} merged: "
            f"{s2.name} over {rem.mark} in {ast.unparse(start)}:{ast.unparse(stop)} computes "
            f"each lane of {s1.name} (simd_remainder.py)"
        )
        return [comment(note), *out]

    def _try(
        self, tr: Translator, loops: list[AstLoop], users: list[isl.AstExpr]
    ) -> list[ast.stmt] | None:
        chain = [(x.mark, x.node) for x in loops]
        reductions_only = self._may_reduce(users) and all(
            self.status.get(x) == "reduction" for x, _ in chain
        )
        if not reductions_only and not any(self.status.get(x) == "parallel" for x, _ in chain):
            return None
        if any(self.status.get(x) not in ("parallel", "forward", "reduction") for x, _ in chain):
            return None
        out = self._vector(tr, chain, users)
        if out is None and self._why is not None:
            self.failed.setdefault(chain[0][0], self._why)
        return out

    def _as_written(
        self, tr: Translator, n: isl.AstNode, mark: str | None, loop: str, why: str
    ) -> list[ast.stmt]:
        """A nest whose order was forced against a dependence (force=True) runs as the
        schedule writes it, every loop scalar: array code would run its iterations in
        yet another order than the one asked for."""
        hook, tr.replace_loop = tr.replace_loop, None
        tr._pending_mark = mark
        try:
            out = tr.for_node(n)
        finally:
            tr.replace_loop = hook
        note = f"loop {loop} and the loops inside stay loops, in the order forced: {why}"
        return [comment(note), *out]

    def _scalar_note(
        self, tr: Translator, n: isl.AstNode, mark: str | None, innermost: str
    ) -> list[ast.stmt] | None:
        """Leave the loop to the translator; say once why the innermost loop stays scalar."""
        if innermost in self.explained:
            return None
        self.explained.add(innermost)
        hook, tr.replace_loop = tr.replace_loop, None
        tr._pending_mark = mark
        try:
            out = tr.for_node(n)
        finally:
            tr.replace_loop = hook
        why = self.reasons.get(innermost, "not parallel")
        return [comment(f"loop {innermost} stays scalar: {why}"), *out]

    def _vector(
        self, tr: Translator, chain: list[tuple[str, isl.AstNode]], users: list[isl.AstExpr]
    ) -> list[ast.stmt] | None:
        """Sequential loops of the chain outside (in their order), parallel ones as axes.

        Exact, not a reassociation: a dependence is carried by a sequential loop
        (the parallel ones carry none), and the sequential loops keep their order.
        """
        merged = merge_tiles(chain, self.status, self.tile_of)
        isl_it = {loop: iterator_name(node) for loop, node in merged}
        self._iters.update(isl_it)
        par = [(loop, node) for loop, node in merged if self.status.get(loop) == "parallel"]
        seq = [(loop, node) for loop, node in merged if self.status.get(loop) != "parallel"]
        par_its = {isl_it[loop] for loop, _ in par}
        saved_names = dict(tr.names)
        saved_taken = set(tr.taken)
        saved_keys = self._keys()
        par_its |= {node.tile_name for _, node in par if isinstance(node, MergedRange)}
        try:
            seq_marks = {part for loop, _ in seq for part in loop.split("+")}
            self._refuse_absorbed(tr, par, par_its, users, seq_marks)
            self._refuse_copied_values(users)
            out = self._emit(tr, seq, par, par_its, users)
            if uses_name(out, POISON):
                raise NotVectorizable("a statement uses the value of a tile loop")
            return out
        except NotVectorizable as e:
            tr.names.clear()
            tr.names.update(saved_names)
            tr.taken.clear()
            tr.taken.update(saved_taken)
            self.state.vec_keys = saved_keys
            self.reasons.setdefault(chain[-1][0], str(e))
            self._why = str(e)
            return None

    def _refuse_copied_values(self, users: list[isl.AstExpr]) -> None:
        """Refuse a copy of an unrolled statement that keeps or reads values per iteration.

        Its copies may be vectorized differently (over other loops, or not at all), and
        the dictionary of kept values is keyed by the vectorization: one copy would store
        under keys another cannot read (a KeyError the differential campaign found)."""
        for u in users:
            st = self.statements[u.op_get_arg(0).id_get_id().get_name()]
            if st.name in self.copied and (st.exports or st.imports):
                raise NotVectorizable("a copy of an unrolled statement keeps values")

    def _refuse_absorbed(
        self,
        tr: Translator,
        par: list[tuple[str, ChainLoop]],
        par_its: set[str],
        users: list[isl.AstExpr],
        fixed: set[str],
    ) -> None:
        """Refuse a parallel AST loop that also runs the values of another loop.

        isl drops a loop whose value equals another's (`w = u` for a loop of one
        iteration per u) and lets one AST loop run both: vectorizing it then also moves
        the dropped loop innermost, legal only when that loop is parallel too. A loop
        with an AST loop of its own around this one, or one of the chain's `fixed`
        sequential loops (written outside the array code), stays fixed meanwhile (after
        a skew, `j - 2 * i` of an outer j and a vectorized i): nothing moves."""
        marks = {part for loop, _ in par for part in loop.split("+")}
        for u in users:
            st = self.statements[u.op_get_arg(0).id_get_id().get_name()]
            args = [ast_ids(u.op_get_arg(i)) for i in range(1, u.op_get_n_arg())]
            for it in par_its:
                dims = [d for d, ids in enumerate(args) if it in ids]
                if len(dims) < 2:
                    continue
                for d in dims:
                    loop = st.dim_loops[d] if d < len(st.dim_loops) else "?"
                    if loop in marks or loop in fixed or self._around(tr, loop):
                        continue
                    if self.status.get(loop) != "parallel":
                        raise NotVectorizable(
                            f"a vectorized loop also runs the values of loop {loop}, "
                            "which is not parallel"
                        )

    def _around(self, tr: Translator, loop: str) -> bool:
        """Whether `loop` has an AST loop around the one being written."""
        it = self._iters.get(loop)
        return it is not None and self._entered.get(it) == loop and it in tr.names

    def _emit(
        self,
        tr: Translator,
        seq: list[tuple[str, ChainLoop]],
        par: list[tuple[str, ChainLoop]],
        par_its: set[str],
        users: list[isl.AstExpr],
    ) -> list[ast.stmt]:
        def uses_par(node: ChainLoop) -> bool:
            init, cond = range_exprs(node)
            return bool((ast_ids(init) | ast_ids(cond)) & par_its)

        if any(uses_par(node) for _, node in seq):
            raise NotVectorizable("the bounds of a sequential loop use a parallel one")
        for loop, node in par:
            if self.box_of is None and ast_ids(range_exprs(node)[0]) & par_its:
                raise NotVectorizable(f"the bounds of loop {loop} use an outer parallel loop")
        why_seq = "they carry a dependence"
        if seq and all(self.status.get(loop) == "reduction" for loop, _ in seq):
            why_seq = "reassociate=False keeps the order of a float reduction"
        if (
            self._may_reduce(users)
            and seq
            and all(self.status.get(loop) == "reduction" for loop, _ in seq)
        ):
            # Reduce over the innermost reduction loops that can be axes (a point
            # loop's bounds use its tile loop: the tile loop then stays a loop).
            self._reduce_why = None
            for cut in range(len(seq)):
                found = self._reduction(tr, [*par, *seq[cut:]], len(par), users, seq[:cut])
                if found is not None:
                    return found
            why_seq = self._reduce_why or "a reduction of a form polykrnl does not vectorize"
        if not par:
            raise NotVectorizable("a reduction of a form polykrnl does not vectorize")
        outer: list[tuple[ast.Name, ast.expr]] = []
        for loop, node in seq:
            b = self._bounds(tr, node)
            if b is None:
                raise NotVectorizable(f"loop {loop} has no simple bound")
            it, start, stop, step = b
            py = tr.fresh(loop.split("+")[-1])
            tr.names[it] = py
            outer.append((ast.Name(py, ast.Store()), range_call(start, stop, step)))
        out: list[ast.stmt] = []
        vec: dict[str, VecIter] = {}
        rank = len(par)
        terms: list[ast.expr] = []  # the triangle inside the bounding box of the axes
        axes = tuple(loop for loop, _ in par)
        masked = self.box_of is not None and _triangular(par)
        for axis, (loop, node) in enumerate(par):
            b = self._bounds(tr, node)
            if b is None:
                raise NotVectorizable(f"loop {loop} has no simple bound")
            it, start, stop, step_expr = b
            clip = self._clip.get(loop)
            if clip is not None:
                start, stop = clip.range(start, stop)
            stride = int_constant(step_expr)
            if stride is None or stride < 1:
                raise NotVectorizable(f"loop {loop} has a step that is not a positive constant")
            triangle = (start, stop)
            if masked:
                start, stop = self._box(tr, loop, node, axes, users)
            elif (names_in(start) | names_in(stop)) & set(vec):
                raise NotVectorizable(f"the bounds of loop {loop} use an outer parallel loop")
            stop = not_below(stop, start)
            py = tr.fresh(loop.split("+")[-1])
            length = tr.fresh("n_" + loop.split("+")[-1])
            tr.names[it] = py
            terms += inside(py, *triangle, set(vec))
            shape = ast.Tuple([const(-1), *([const(1)] * (rank - 1 - axis))], ast.Load())
            rng = call("np.arange", start, stop, *([const(stride)] if stride != 1 else []))
            out.append(assign(py, call("np.reshape", rng, shape) if rank - 1 - axis else rng))
            count: ast.expr = ast.BinOp(stop, ast.Sub(), start)
            if stride != 1:
                count = call("len", call("range", start, stop, const(stride)))
            out.append(assign(length, count))
            vec[py] = VecIter(py, start, stop, axis, rank, length, stride)
        for u in users:
            stmt = u.op_get_arg(0).id_get_id().get_name()
            args = [tr.expr(u.op_get_arg(i)) for i in range(1, u.op_get_n_arg())]
            out += in_place(StatementWriter(self.state, self.statements[stmt], args, vec).write())
        # The ranges and lengths the slices made unnecessary go.
        setup, body = out[: 2 * rank], out[2 * rank :]
        body = _without_unread_constants(self._masked(tr, body, terms, vec))
        used = {x.id for st in body for x in ast.walk(st) if isinstance(x, ast.Name)}
        setup = [a for a in setup if isinstance(a, ast.Assign) and target_name(a) in used]
        note = f"loops {', '.join(loop for loop, _ in par)} vectorized (parallel)"
        if terms:
            note += " over their bounding box, stores masked"
        if seq:
            note += f"; {', '.join(loop for loop, _ in seq)} sequential, moved outside"
            note += f" ({why_seq})"
        block: list[ast.stmt] = guarded([*setup, *body], vec)
        for target, loop_range in reversed(outer):
            block = [ast.For(target, loop_range, block, [])]
        return [comment(note), *block]

    def _box(
        self,
        tr: Translator,
        loop: str,
        node: ChainLoop,
        axes: tuple[str, ...],
        users: list[isl.AstExpr],
    ) -> tuple[ast.expr, ast.expr]:
        """The range of `loop` where it runs the `users`, over all the values of the
        vectorized `axes`: with the others, the bounding box of the triangle the loops
        make (see codegen/masks.py). From the statements' domains, not from isl's loop:
        an outer loop distributed over several parts runs over all their ranges."""
        why = "the bounds of a vectorized loop use another one"
        if self.box_of is None or isinstance(node, MergedRange) or self._clip:
            raise NotVectorizable(why)
        on_threads = [x for x in axes if x in self.threaded]
        if on_threads:
            # The user asked for threads over its rows, not for one masked expression.
            raise NotVectorizable(f"{why}, which runs on threads")
        stmts = [self.statements[u.op_get_arg(0).id_get_id().get_name()] for u in users]
        refused = unmaskable(stmts, axes)
        if refused is not None:
            raise NotVectorizable(f"{why}, and masking it is not exact: {refused}")
        names_ = tuple(s.name for s in stmts)
        r = self.box_of(loop, frozenset(axes), names_)
        for one in names_ if len(names_) > 1 else ():
            own = self.box_of(loop, frozenset(axes), (one,))
            if not (own.first.is_equal(r.first) and own.end.is_equal(r.end)):
                raise NotVectorizable(f"{why}, and its statements run over different ranges")
        names: list[str] = []
        for o in r.outer:
            py = tr.names.get(self._iters.get(o, ""))
            if py is None:
                raise NotVectorizable(why)
            names.append(py)
        return expr_of_pw_aff(r.first, names), expr_of_pw_aff(r.end, names)

    def _masked(
        self,
        tr: Translator,
        body: list[ast.stmt],
        terms: list[ast.expr],
        vec: dict[str, VecIter],
        reduced: int = 0,
    ) -> list[ast.stmt]:
        """`body` storing only inside the triangle that `terms` describe (if any). The
        `reduced` innermost axes are summed away before the store: the mask (which
        does not depend on them) loses them too."""
        if not terms:
            return body
        mask = tr.fresh("inside")
        test = terms[0]
        for t in terms[1:]:
            test = ast.BinOp(test, ast.BitAnd(), t)
        if reduced:
            drop = ast.Tuple([ast.Constant(...), *[const(0)] * reduced], ast.Load())
            test = ast.Subscript(test, drop, ast.Load())
        dicts = set(self.state.dicts.values())
        return [assign(mask, test), *masked_stores(body, mask, set(vec), dicts)]

    def _bounds(
        self, tr: Translator, node: ChainLoop
    ) -> tuple[str, ast.expr, ast.expr, ast.expr] | None:
        """Like Translator.bounds; a merged tile and point loop run over the tile loop's range."""
        if not isinstance(node, MergedRange):
            return tr.bounds(node)
        found = tr.range_of(node.tile_name, node.lb, node.cond)
        if found is None:
            return None
        tr.names[node.tile_name] = POISON
        return node.name, *found, ast.Constant(1)

    def _may_reduce(self, users: list[isl.AstExpr]) -> bool:
        """Whether a reduction over a loop may become array code: always when the
        combination is exact (integers, max/min), else only when reassociating."""
        if self.reassociate:
            return True
        forms = [update_of(self.statements[u.op_get_arg(0).id_get_id().get_name()]) for u in users]
        return len(forms) == 1 and forms[0] is not None and forms[0].exact

    def _reduction(
        self,
        tr: Translator,
        loops: list[tuple[str, ChainLoop]],
        n_par: int,
        users: list[isl.AstExpr],
        outer: list[tuple[str, ChainLoop]],
    ) -> list[ast.stmt] | None:
        """`X[f] = X[f] op e` over the reduction loops (the innermost axes) as one update.

        A sum of products becomes `@` or np.einsum (a contraction), any other
        summand np.sum, and `*`, max, min np.prod, np.max, np.min along the
        reduction axes. Floating-point sums and products are reassociated (the
        results change in the last bits); the reduction loops carry nothing else,
        so only the order of the combinations into each X[f] changes.
        """
        if len(users) != 1:
            return None
        u = users[0]
        s = self.statements[u.op_get_arg(0).id_get_id().get_name()]
        form = update_of(s)
        if form is None or not (self.reassociate or form.exact):
            return None
        saved_names, saved_taken = dict(tr.names), set(tr.taken)
        saved_keys = self._keys()
        try:
            around: list[tuple[ast.Name, ast.expr]] = []
            for loop, node in outer:
                b = self._bounds(tr, node)
                if b is None:
                    raise NotVectorizable("no simple bound")
                it, start, stop, step = b
                py = tr.fresh(loop.split("+")[-1])
                tr.names[it] = py
                around.append((ast.Name(py, ast.Store()), range_call(start, stop, step)))
            vec: dict[str, VecIter] = {}
            rank = len(loops)
            terms: list[ast.expr] = []
            masked = self.box_of is not None and _triangular(loops[:n_par])
            for axis, (loop, node) in enumerate(loops):
                b = self._bounds(tr, node)
                stride = int_constant(b[3]) if b is not None else None
                if b is None or stride is None or not (stride == 1 or self._tile_run(s, stride)):
                    raise NotVectorizable("no simple bound")
                it, start, stop, _ = b
                triangle = (start, stop)
                if masked and axis < n_par:
                    vectorized = tuple(x for x, _ in loops)
                    start, stop = self._box(tr, loop, node, vectorized, [u])
                elif (names_in(start) | names_in(stop)) & set(vec):
                    # A reduction over a box would add the terms outside the triangle.
                    raise NotVectorizable("bounds use another vectorized loop")
                stop = not_below(stop, start)
                py = tr.fresh(loop.split("+")[-1])
                tr.names[it] = py
                terms += inside(py, *triangle, set(vec))
                length = tr.fresh("n_" + loop.split("+")[-1])
                vec[py] = VecIter(py, start, stop, axis, rank, length, stride)
            args = [tr.expr(u.op_get_arg(i)) for i in range(1, u.op_get_n_arg())]
            w = StatementWriter(self.state, s, args, vec)
            if n_par:
                _refuse_windows(w, s, form, n_par)
            mem, index = self._updated(w, form, n_par)
            total, how = self._reduced(w, form, rank, n_par)
            w.out.append(self._combined(form, mem, index, total))
            w.out = self._masked(tr, w.out, terms, vec, rank - n_par)
            if uses_name(w.out, POISON):
                raise NotVectorizable("a statement uses the value of a tile loop")
        except NotVectorizable as e:
            tr.names.clear()
            tr.names.update(saved_names)
            tr.taken.clear()
            tr.taken.update(saved_taken)
            self.state.vec_keys = saved_keys
            self._reduce_why = str(e)
            return None
        par = ", ".join(loop for loop, _ in loops[:n_par])
        red = ", ".join(loop for loop, _ in loops[n_par:])
        note = f"reduction over {red} as {how}"
        if par:
            box = " over their bounding box, stores masked" if terms else ""
            note = f"loops {par} vectorized{box}, {note}"
        if outer:
            note += f"; {', '.join(loop for loop, _ in outer)} sequential, outside"
        if not form.exact:
            self.reassociated = True
        used = {n.id for st in w.out for n in ast.walk(st) if isinstance(n, ast.Name)}
        setup = [arange_of(it) for it in vec.values() if it.name in used]
        # The runs of a SIMD tile loop read as (tiles, lanes) need the number of tiles.
        setup += [assign(it.length, _count(it)) for it in vec.values() if it.length in used]
        block: list[ast.stmt] = guarded([*setup, *w.out], vec)
        for loop_target, loop_range in reversed(around):
            block = [ast.For(loop_target, loop_range, block, [])]
        return [comment(note), *block]

    def _tile_run(self, s: Statement, step: int) -> bool:
        """Whether `s` moves runs of `step` lanes (onnx-mlir's SIMD form): its tile loop of
        that step reads them as (tiles, lanes), vector_lanes.py."""
        return any(
            isinstance(op, vector.LoadOp | vector.StoreOp) and vector_shape(op) == (step,)
            for op in s.ops
        )

    def _updated(self, w: StatementWriter, form: Update, n_par: int) -> tuple[ast.expr, ast.expr]:
        """The array and the index of the elements a reduction updates: the parallel
        loops' slice of its memref, or an iter_args value's entry."""
        if form.old is None:
            # An iter_args value: one per iteration of the loops around its iterate.
            assert form.carried is not None
            _arr, def_loops = self.state.program.virtual[form.carried]
            mem: ast.expr = name_(self.state.dict_of(form.carried))
            index: ast.expr = (
                _kept_key(w, def_loops, self.state.dict_of(form.carried), n_par)
                if n_par
                else w.key(def_loops)
            )
        else:
            mem = w.value(form.store.operands[1])
            own = [w.value(x) for x in form.store.operands[2:]]
            subs = w.private_subs(mem, own)
            sliced = w.slices(subs)
            if sliced is None or sorted(sliced[1]) != sliced[1] or sliced[1] != list(range(n_par)):
                raise NotVectorizable("the updated element is not the parallel loops' slice")
            if [w.value(x) for x in form.old.operands[1:]] != own:
                raise NotVectorizable("the update reads another element")
            index = index_of(sliced[0])
        return mem, index

    def _reduced(
        self, w: StatementWriter, form: Update, rank: int, n_par: int
    ) -> tuple[ast.expr, str]:
        """The reduced value along the reduction axes (the innermost `rank - n_par`), and
        how (`@`, np.einsum, np.sum, ...)."""
        total = None
        if form.kind in ("add", "sub"):
            total = contraction(w, form.value, rank, n_par)
        how = "a contraction (@)" if total is not None else ""
        if total is None:
            e = w.value(form.value)
            if not set(range(n_par, rank)) <= w.axes_of(e):
                # Constant along a reduction loop: combined once per iteration.
                raise NotVectorizable("a reduced value that does not depend on every loop")
            t = form.value.type
            lanes = len(t.get_shape()) if isinstance(t, VectorType) else 0
            if lanes and rank - n_par == 1 and form.kind == "add" and not form.exact:
                # A vector accumulator: the loop's axis comes before the lanes, where
                # np.sum runs 8-element inner loops (10x slower than along rows). Ones
                # times each element is the element: a sum, reassociated by BLAS.
                assert isinstance(t, VectorType)
                tiles = next(it for it in w.vec.values() if it.axis == rank - 1)
                ones = call("np.ones", name_(tiles.length))
                dt = scalar_dtype(t.element_type).name
                ones.keywords = [ast.keyword("dtype", dotted(f"np.{dt}"))]
                return call("np.matmul", ones, e), "np.matmul by ones (a sum over the tiles)"
            axes: ast.expr = (
                const(-1 - lanes)
                if rank - n_par == 1
                else ast.Tuple([const(-1 - lanes - i) for i in range(rank - n_par)], ast.Load())
            )
            fn = REDUCE[form.kind]
            keywords = [ast.keyword("axis", axes)]
            if form.identity is not None:
                keywords.append(ast.keyword("initial", form.identity))
            if form.kind in ("add", "sub", "mul") and form.exact:
                # NumPy sums small integers in int64: wrap in the element type.
                dt = scalar_dtype(form.value.type).name
                keywords.append(ast.keyword("dtype", dotted(f"np.{dt}")))
            total = ast.Call(dotted(fn), [e], keywords)
            how = fn
        elif "einsum" in ast.unparse(total):
            how = "a contraction (np.einsum)"
        return total, how

    @staticmethod
    def _combined(form: Update, mem: ast.expr, index: ast.expr, total: ast.expr) -> ast.stmt:
        """The update of the elements with the reduced value."""
        target = ast.Subscript(mem, index, ast.Store())
        combine = COMBINE[form.kind]
        if isinstance(combine, str) or form.old is None:
            # Elementwise max/min of the old values and the reduced ones; an iter_args
            # value is replaced, not updated: it may be a read-only broadcast view.
            old = ast.Subscript(mem, index, ast.Load())
            both = (
                dotted(combine, old, total)
                if isinstance(combine, str)
                else ast.BinOp(old, combine, total)
            )
            return ast.Assign([target], both)
        else:
            # In place: NumPy evaluates the right side first (copying where it overlaps).
            return ast.AugAssign(target, combine, total)


_DISTRIBUTED = (
    "the statements of loop {} run one after the other, each over all the loops' "
    "iterations: together they would keep a loop in Python"
)


def _in_loops(code: list[ast.stmt]) -> int:
    """How many statements of `code` run inside Python loops (what array code saves;
    a statement inside two loops counts twice)."""
    return sum(
        sum(1 for y in ast.walk(x) if isinstance(y, ast.stmt)) - 1
        for st in code
        for x in ast.walk(st)
        if isinstance(x, ast.For)
    )


WINDOW = "a window read ({}) would be gathered whole for {}"


def _count(it: VecIter) -> ast.expr:
    """The number of iterations of a vectorized loop."""
    if it.step == 1:
        return ast.BinOp(it.stop, ast.Sub(), it.start)
    return call("len", call("range", it.start, it.stop, const(it.step)))


def _kept_key(
    w: StatementWriter, def_loops: tuple[str, ...], dict_name: str, n_par: int
) -> ast.expr:
    """The key of an iter_args value kept per iteration of `def_loops`, all of them among
    the `n_par` parallel axes (outermost), as the statements that set and read it outside
    the reduction loops wrote it (vectorized over those axes alone)."""
    outer = {it.name: replace(it, rank=n_par) for it in w.vec.values() if it.axis < n_par}
    saved = w.vec
    w.vec = outer
    try:
        return w.key(def_loops, dict_name)
    finally:
        w.vec = saved


def _refuse_windows(w: StatementWriter, s: Statement, form: Update, n_par: int) -> None:
    """Refuse a reduction whose summand reads a window: a subscript of a parallel and a
    reduction loop (a convolution's `img[i + r, j + s]`). Summed along the reduction
    axes, the window is an integer-array gather as large as the reduction's trip count
    times the output; the reduction loops outside instead (in their order: exact) add
    one slice per iteration, as a hand-written convolution does."""
    for a in s.accesses:
        op = a.op
        if not is_load(op) or op is form.old:
            continue
        for x in op.operands[1:]:
            axes = w.axes_of(w.value(x))
            if any(ax < n_par for ax in axes) and any(ax >= n_par for ax in axes):
                raise NotVectorizable(WINDOW.format(a.array, REDUCE[form.kind]))


def _without_unread_constants(body: list[ast.stmt]) -> list[ast.stmt]:
    """`body` less the assignments of a constant (an expression of literals and `np`
    alone) to a name nothing reads: an operand an emitter did not use (the zero vector of
    relu's `_maxnumf0(x)`, whose emitter takes the constant's value, not its name)."""
    read = {
        x.id
        for st in body
        for x in ast.walk(st)
        if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)
    }

    def unread_constant(st: ast.stmt) -> bool:
        return (
            isinstance(st, ast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Name)
            and st.targets[0].id not in read
            and all(x.id == "np" for x in ast.walk(st.value) if isinstance(x, ast.Name))
        )

    return [st for st in body if not unread_constant(st)]


def _plain_args(call_: isl.AstExpr, loop: isl.AstNode) -> list[str] | None:
    """The iterators a statement call takes for its dimensions before the last, when each
    dimension is an iterator and the last one `loop`'s; else None."""
    ids: list[str] = []
    for i in range(1, call_.op_get_n_arg()):
        a = call_.op_get_arg(i)
        if a.get_type() != isl.ast_expr_type.id:
            return None
        ids.append(a.id_get_id().get_name())
    if not ids or ids[-1] != iterator_name(loop):
        return None
    return ids[:-1]


def _point_uses(sp: SplitPoint, loops: set[str]) -> bool:
    """Whether the split point of `sp` depends on one of `loops`."""
    return any(
        o in loops and not sp.point.get_coefficient_val(isl.dim_type.in_, i).is_zero()
        for i, o in enumerate(sp.outer)
    )


def _involves(pa: isl.PwAff, outer: tuple[str, ...], loops: set[str]) -> bool:
    """Whether `pa` (a function of the `outer` loops) depends on one of `loops`."""
    return any(pa.involves_dims(isl.dim_type.in_, i, 1) for i, o in enumerate(outer) if o in loops)


def _triangular(loops: list[tuple[str, ChainLoop]]) -> bool:
    """Whether the bounds of one of `loops` use another of them."""
    its = {iterator_name(node) for _, node in loops}
    for _, node in loops:
        init, cond = range_exprs(node)
        if (ast_ids(init) | ast_ids(cond)) & (its - {iterator_name(node)}):
            return True
    return False
