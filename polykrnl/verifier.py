"""Structural and scoping checks of Krnl modules.

:func:`diagnostics` lists every problem of a module, in program order, each
with the op's source location and a hint; :func:`verify` raises
:class:`~polykrnl.errors.VerifyError` when there is any. The checks:

- xDSL's own verification of every op, and SSA dominance;
- the loop-recipe misuses found while building the concrete loop nest
  (:func:`polykrnl.nest.loops.build_nest`);
- handles: each handle of krnl.define_loops bound by exactly one `with`
  entry, loop-handle operands that have a loop, unroll of a point loop or of a
  constant trip count, a loop made parallel or unrolled once;
- memory: index counts of loads and stores, the operand ranks and attribute
  sizes of krnl.matmul and the tile-buffer copies (as onnx-mlir's verifiers);
- scoping: loop-bound operands that are valid affine symbols or dimensions
  (krnl.region), every statement inside the concrete loops whose induction
  variables and definitions it uses, krnl.movable inside a loop;
- iter_args: krnl.yield matches the carried values.

Where onnx-mlir only asserts or crashes on a misuse, the message says what
it is instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import affine, arith, func, memref, scf
from xdsl.dialects.builtin import AffineMapAttr, ArrayAttr, IndexType
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineExpr,
)

from polykrnl.dialect import krnl as k
from polykrnl.dialect.krnl import recipe as rules
from polykrnl.dialect.krnl.checks import SelfChecks, rank_of
from polykrnl.errors import Diagnostic, SourceLocation, VerifyError
from polykrnl.ir import Function, Module, const_int, location_of, value_name
from polykrnl.nest.loops import (
    Chain,
    ChildAnchor,
    Item,
    IVBound,
    Loop,
    LoopNest,
    Stmt,
    YieldPoint,
    build_nest,
    constant_trip_count,
)

__all__ = ["diagnostics", "verify"]


def verify(module: Module) -> None:
    """Raise :class:`VerifyError` listing every problem of `module` (the first is its message).

    Checks the structure and scoping rules of Krnl (loop handles defined and bound
    once, `krnl.iterate` bounds, `krnl.region`/`krnl.movable` placement, dominance)
    beyond each op's own checks; `pk.schedule`, `pk.compile` and `pk.run_reference`
    run it themselves. Returns None when the module is valid.

    Examples
    --------
    >>> import polykrnl as pk
    >>> pk.verify(pk.parse("func.func @f() { return }"))

    `VerifyError` shows a module that breaks a rule.
    """
    found = diagnostics(module)
    if found:
        raise VerifyError(found)


def diagnostics(module: Module) -> list[Diagnostic]:
    """Every problem of `module`, in program order (empty when it verifies)."""
    return _Verifier(module).run()


# xDSL messages that a polykrnl check reports better (per op class): when that
# check fired on the op, the xDSL message is dropped.
_COVERED: tuple[tuple[type[Operation], str], ...] = (
    (k.YieldOp, r"krnl\.yield operand types"),
    (k.ParallelOp, r"proc_bind must be one of"),
    (memref.LoadOp, r"expected an index for each dimension"),
    (memref.StoreOp, r"expected an index for each dimension"),
)

_XDSL_HINTS: tuple[tuple[str, str], ...] = (
    (
        r"krnl\.define_loops \d+ defines",
        "the count after krnl.define_loops must equal the number of handles it defines",
    ),
    (r"terminat", "end the region with its terminator (krnl.yield, func.return, ...)"),
    (
        r"type|constraint|attribute|propert",
        "check the operand, result and attribute types against the op's definition "
        "(the Krnl op reference for krnl ops, the MLIR dialect docs for the others)",
    ),
)


def _xdsl_hint(message: str) -> str:
    for pattern, hint in _XDSL_HINTS:
        if re.search(pattern, message, re.IGNORECASE):
            return hint
    return "compare the op with its definition (the Krnl op reference, or the MLIR dialect docs)"


@dataclass(frozen=True)
class _Found:
    order: int  # position of the op in the module, to sort in program order
    op: Operation
    diagnostic: Diagnostic


class _Verifier:
    def __init__(self, module: Module) -> None:
        self.module = module
        self.order = {op: i for i, op in enumerate(module.op.walk())}
        self.found: list[_Found] = []
        self.xdsl: list[tuple[Operation, str]] = []

    # ------------------------------------------------------------ reporting

    def name(self, v: SSAValue) -> str:
        return value_name(v, self.module)

    def location(self, op: Operation) -> SourceLocation | None:
        # Ops made by the parser itself (an implicit krnl.yield) have no
        # location: show the nearest enclosing op that has one.
        cur: Operation | None = op
        while cur is not None:
            loc = location_of(cur, self.module)
            if loc is not None:
                return loc
            cur = cur.parent_op()
        return None

    def where(self, op: Operation) -> str:
        loc = self.location(op)
        return f"line {loc.line}" if loc else "another place"

    def error(self, op: Operation, message: str, hint: str) -> None:
        d = Diagnostic(message, self.location(op), hint)
        self.found.append(_Found(self.order.get(op, len(self.order)), op, d))

    # ------------------------------------------------------------ driver

    def run(self) -> list[Diagnostic]:
        for op in self.module.op.walk():
            self.check_xdsl(op)
            self.check_dominance(op)
            if isinstance(op, memref.DimOp | k.DimOp):
                self.check_dim_index(op)
            self.check_map_divisors(op)
        for fn in self.module.functions:
            self.check_function(fn)
        reported = {f.op for f in self.found}
        for op, message in self.xdsl:
            if isinstance(op, SelfChecks) and any(p in message for p, _ in _own_problems(op)):
                continue  # reported by check_op_problems, with the source's names
            if op in reported and any(
                isinstance(op, cls) and re.search(p, message) for cls, p in _COVERED
            ):
                continue
            self.error(op, f"{op.name}: {message}", _xdsl_hint(message))
        result: list[Diagnostic] = []
        seen: set[tuple[str, str]] = set()
        for f in sorted(self.found, key=lambda f: f.order):  # stable: rule order within an op
            key = (f.diagnostic.message, str(f.diagnostic.location))
            if key not in seen:
                seen.add(key)
                result.append(f.diagnostic)
        return result

    def check_function(self, fn: Function) -> None:
        if not fn.op.body.blocks:
            return  # a declaration: no loops, nothing to check
        self.check_return(fn)
        before = len(self.found)
        try:
            nest = build_nest(fn)
            for op, d in zip(nest.diagnostic_ops, nest.diagnostics, strict=True):
                self.found.append(_Found(self.order.get(op, len(self.order)), op, d))
            _FunctionChecks(self, fn, nest).run()
        except Exception:
            # A malformed op (already reported by xDSL's verification) can break
            # the loop-nest checks; its own message is the one to show.
            if not any(fn.op.is_ancestor(op) for op, _ in self.xdsl):
                raise
            del self.found[before:]

    def check_return(self, fn: Function) -> None:
        """The body ends in a func.return of the signature's result types (MLIR checks it)."""
        last = fn.op.body.block.last_op
        want = [str(t) for t in fn.result_types]
        if not isinstance(last, func.ReturnOp):
            self.error(
                last or fn.op,
                f"@{fn.name} does not end with func.return",
                "end the function's body with `return` "
                + (f"of values of types {', '.join(want)}" if want else "(no values)"),
            )
            return
        got = [str(v.type) for v in last.operands]
        if got != want:
            self.error(
                last,
                f"func.return of @{fn.name} returns ({', '.join(got)}), but its signature "
                f"says ({', '.join(want)})",
                "return one value of each result type of the signature, in order",
            )

    # ------------------------------------------------------------ rule 1

    def check_xdsl(self, op: Operation) -> None:
        try:
            op.verify(verify_nested_ops=False)
        except Exception as e:  # xDSL's memref ops raise plain Exception
            message = " ".join(str(e).split()) or type(e).__name__
            self.xdsl.append((op, message))

    def check_map_divisors(self, op: Operation) -> None:
        """floordiv, ceildiv and mod in an affine map do not divide by a constant <= 0."""
        for attr in (*op.properties.values(), *op.attributes.values()):
            maps = attr.data if isinstance(attr, ArrayAttr) else (attr,)
            for m in maps:
                if not isinstance(m, AffineMapAttr):
                    continue
                bad = next((e for r in m.data.results for e in _divisions(r)), None)
                if bad is not None:
                    self.error(
                        op,
                        f"{op.name}: affine map {m.data} divides by {bad.rhs} ({bad.kind.name})",
                        "floordiv, ceildiv and mod take a positive constant on their right",
                    )
                    return

    def check_dim_index(self, op: memref.DimOp | k.DimOp) -> None:
        """A constant dimension index must name a dimension of the memref (as MLIR checks)."""
        if len(op.operands) != 2:
            return  # malformed (a generic form with other operands): xDSL's checks say so
        mem, index = op.operands
        rank, d = rank_of(mem.type), const_int(index)
        if rank is not None and d is not None and not 0 <= d < rank:
            self.error(
                op,
                f"{op.name} of {self.name(mem)}: dimension {d} is out of range for "
                f"{mem.type} (rank {rank})",
                f"dimensions are numbered 0 to {rank - 1}"
                if rank
                else "a rank-0 memref has no dimension to query",
            )

    def check_dominance(self, op: Operation) -> None:
        """Each operand is defined before `op`, in `op`'s block or an enclosing one."""
        for v in op.operands:
            if isinstance(v, OpResult):
                d = v.op
                if d is op or d.is_ancestor(op):
                    self.error(
                        op,
                        f"{op.name} uses its own result {self.name(v)}",
                        "a value can only be used after the op that defines it",
                    )
                    continue
                user = self._ancestor_in(op, d.parent_block())
                if user is None or not d.is_before_in_block(user):
                    self.error(
                        op,
                        f"{self.name(v)} is used before it is defined "
                        f"(by the {d.name} at {self.where(d)})",
                        f"move the definition of {self.name(v)} above its first use, in the "
                        "same block or an enclosing one",
                    )
            elif isinstance(v, BlockArgument) and not v.block.is_ancestor(op):
                self.error(
                    op,
                    f"{self.name(v)} is used outside the region that defines it",
                    "a block argument can only be used inside its own block",
                )

    @staticmethod
    def _ancestor_in(op: Operation, block: object) -> Operation | None:
        cur: Operation | None = op
        while cur is not None and cur.parent_block() is not block:
            cur = cur.parent_op()
        return cur


class _FunctionChecks:
    """The checks that need the concrete loop nest of one function."""

    def __init__(self, v: _Verifier, fn: Function, nest: LoopNest) -> None:
        self.v = v
        self.fn = fn
        self.nest = nest
        self.error = v.error
        self.name = v.name
        # Where each op runs: the concrete loops around it, outermost first.
        self.placement: dict[Operation, tuple[Loop, ...]] = {}
        # Where the loops of each iterate with a `with` list start.
        self.chain_at: dict[k.IterateOp, tuple[Loop, ...]] = {}

    def refuse(self, op: Operation, refusal: rules.Refusal) -> None:
        self.error(op, refusal.message, refusal.hint)

    def users(self, h: SSAValue) -> list[Operation]:
        """The ops that use `h`, in program order (xDSL keeps uses in a set)."""
        return sorted({u.operation for u in h.uses}, key=lambda op: self.v.order.get(op, 0))

    def run(self) -> None:
        self.place_all()
        for op in self.fn.op.walk():
            if isinstance(op, k.DefineLoopsOp):
                self.check_define_loops(op)
            elif isinstance(op, k.IterateOp):
                self.check_bounds_scope(op)
                self.check_yield(op)
            elif isinstance(op, k.UnrollOp):
                self.check_unroll(op)
            elif isinstance(op, k.ParallelOp):
                self.check_parallel(op)
            elif isinstance(op, k.GetInductionVarValueOp):
                self.check_get_iv(op)
            elif isinstance(op, k.MatMulOp):
                self.check_matmul(op)
            elif isinstance(op, SelfChecks):  # tile copies, access ops: checks of their own
                self.check_op_problems(op)
            elif isinstance(op, k.SpecializedKernelOp):
                for h in op.loops:
                    self.handle_loop(h, op)
            elif isinstance(op, k.MovableOp):
                self.check_movable(op)
            self.check_indices(op)
        self.check_placement()

    # ------------------------------------------------------------ handles (rule 3)

    def check_define_loops(self, op: k.DefineLoopsOp) -> None:
        for h in op.loops:
            # A handle used anywhere is reported at that use (nest.py, handle_loop).
            if h not in self.nest.origins and not h.uses:
                self.error(
                    op,
                    f"loop handle {self.name(h)} of krnl.define_loops is never bound by a "
                    "krnl.iterate `with` entry",
                    f"bind it (krnl.iterate({self.name(h)}) with ({self.name(h)} -> %i = LB to "
                    "UB) { ... }) or define one loop fewer",
                )

    def blocked_by(self, h: SSAValue) -> k.BlockOp | None:
        return next((op for op in self.users(h) if isinstance(op, k.BlockOp)), None)

    def handle_loop(self, h: SSAValue, op: Operation) -> Loop | None:
        """The concrete loop of handle `h` used by `op`, or None with a diagnostic."""
        loop = self.nest.loop_of.get(h)
        if loop is not None:
            return loop
        name = self.name(h)
        if not isinstance(h.type, k.LoopType) or not isinstance(
            h.owner, k.DefineLoopsOp | k.BlockOp
        ):
            self.error(
                op,
                f"{op.name} uses {name}, which is not a loop handle from krnl.define_loops "
                "or krnl.block",
                "loop handles are the !krnl.loop results of krnl.define_loops and krnl.block",
            )
        elif (block := self.blocked_by(h)) is not None:
            self.error(
                op,
                f"{op.name} uses loop handle {name}, which has no loop: the krnl.block at "
                f"{self.v.where(block)} replaces it by a tile and a point loop",
                f"use the tile handle {self.name(block.loop_block)} or the point handle "
                f"{self.name(block.loop_local)} instead",
            )
        else:
            self.error(
                op,
                f"{op.name} uses loop handle {name}, which no krnl.iterate `with` entry binds",
                f"add `{name} -> %iv = LB to UB` to the `with` list of a krnl.iterate",
            )
        return None

    # ------------------------------------------------------------ recipe (rules 4, 12)

    def check_unroll(self, op: k.UnrollOp) -> None:
        h = op.loop
        name = self.name(h)
        earlier = [
            other
            for other in self.users(h)
            if isinstance(other, k.UnrollOp)
            and self.v.order.get(other, 0) < self.v.order.get(op, 0)
        ]
        if earlier:
            self.refuse(op, rules.twice_refusal(op.name, name, self.v.where(earlier[0])))
            return
        block = self.blocked_by(h)
        if block is not None and self.v.order.get(block, 0) > self.v.order.get(op, 0):
            # onnx-mlir unrolls after every other recipe op, when the loop of a
            # blocked handle no longer exists.
            handles = (self.name(block.loop_block), self.name(block.loop_local))
            self.refuse(op, rules.unrolled_block_refusal(name, self.v.where(block), handles))
            return
        if block is not None or h not in self.nest.loop_of:
            return  # nest.py reports the use of a handle without a loop
        loop = self.nest.loop_of[h]
        # A point loop runs at most its tile size: when the last tile is partial,
        # the full tiles are unrolled apart from it (transforms/full_tiles.py).
        if constant_trip_count(loop) is not None or loop.kind == "point":
            return
        self.refuse(op, rules.no_trip_count_refusal(name))

    def check_parallel(self, op: k.ParallelOp) -> None:
        if op.proc_bind is not None and op.proc_bind.data not in k.ParallelOp.PROC_BINDS:
            self.error(
                op,
                f'krnl.parallel proc_bind "{op.proc_bind.data}" is not one of '
                + ", ".join(f'"{p}"' for p in k.ParallelOp.PROC_BINDS),
                'write proc_bind = "primary", "close" or "spread", or leave it out',
            )
        mine = self.v.order.get(op, 0)
        if (twice := rules.listed_twice([self.name(h) for h in op.loops], op.name)) is not None:
            self.refuse(op, twice)
        for i, h in enumerate(op.loops):
            name = self.name(h)
            if h in op.loops[:i]:
                continue
            for other in self.users(h):
                if self.v.order.get(other, 0) >= mine:
                    continue
                if isinstance(other, k.ParallelOp):
                    # onnx-mlir turns the loop into an affine.parallel, which the
                    # second krnl.parallel cannot find as an affine.for.
                    self.refuse(op, rules.twice_refusal(op.name, name, self.v.where(other)))
                    break
                if isinstance(other, k.UnrollOp):
                    self.refuse(
                        op, rules.parallel_unroll_refusal(op.name, name, self.v.where(other))
                    )
                    break

    # ------------------------------------------------------------ rule 11

    def check_get_iv(self, op: k.GetInductionVarValueOp) -> None:
        for h in op.loops:
            self.handle_loop(h, op)
        n, m = len(op.loops), len(op.ind_var_vals)
        if n != m or any(not isinstance(t, IndexType) for t in op.ind_var_vals.types):
            self.error(
                op,
                f"krnl.get_induction_var_value of {n} handle(s) must give {n} index "
                f"value(s), got {m} result(s) of type "
                + (", ".join(str(t) for t in op.ind_var_vals.types) or "none"),
                "write one index result per handle: "
                "%a, %b = krnl.get_induction_var_value(%h0, %h1) : "
                "(!krnl.loop, !krnl.loop) -> (index, index)",
            )

    def check_yield(self, op: k.IterateOp) -> None:
        y = op.body.block.last_op
        if not isinstance(y, k.YieldOp):
            return  # xDSL's verification reports the missing terminator
        want = list(op.result_types)
        got = list(y.values.types)
        carried = ", ".join(f"{self.name(a)}: {a.type}" for a in op.iter_args) or "none"
        if len(got) != len(want):
            self.error(
                y,
                f"krnl.yield passes {len(got)} value(s), but the krnl.iterate carries "
                f"{len(want)} iter_args ({carried})",
                "end the body with one krnl.yield value per iter_args entry, in order: "
                "krnl.yield %v : f32",
            )
            return
        for i, (value, t) in enumerate(zip(y.values, want, strict=True)):
            if value.type != t:
                self.error(
                    y,
                    f"krnl.yield value {self.name(value)} has type {value.type}, but iter_args "
                    f"{self.name(op.iter_args[i])} has type {t}",
                    f"yield a value of type {t} in position {i}",
                )

    # ------------------------------------------------------------ memory (rules 5-7)

    def check_indices(self, op: Operation) -> None:
        ref: SSAValue
        if isinstance(op, k.LoadOp | k.StoreOp | memref.LoadOp | memref.StoreOp):
            ref, count = op.memref, len(op.indices)
        elif isinstance(op, affine.LoadOp | affine.StoreOp):
            ref, count = op.memref, len(op.map.data.results)
        else:
            return
        rank = rank_of(ref.type)
        if rank is None or rank == count:
            return
        self.error(
            op,
            f"{op.name} of {self.name(ref)} has {count} "
            f"{'index' if count == 1 else 'indices'}, but {ref.type} has rank {rank}",
            f"give one index per dimension ({rank}): {self.name(ref)}["
            + ", ".join(f"%i{d}" for d in range(rank))
            + "]",
        )

    def check_op_problems(self, op: Operation) -> None:
        """The op's own structural checks (in its class), with the source's value names."""
        assert isinstance(op, SelfChecks)
        for message, hint in _own_problems(op, self.name):
            self.error(op, message, hint)

    def check_matmul(self, op: k.MatMulOp) -> None:
        self.check_op_problems(op)
        for h in op.loops:
            loop = self.handle_loop(h, op)
            if loop is not None and any(
                isinstance(it, Stmt | Chain | YieldPoint) for it in loop.items
            ):
                # onnx-mlir erases the loops of a matmul; one with statements
                # in it cannot be erased (an assertion fails).
                self.error(
                    op,
                    f"the loop of {self.name(h)}, which krnl.matmul replaces, also holds "
                    "other statements",
                    "do not list the handles of a krnl.matmul in a krnl.iterate: the matmul "
                    "computes the whole panel itself",
                )

    # ------------------------------------------------------------ scoping (rules 8-10)

    def check_bounds_scope(self, op: k.IterateOp) -> None:
        for e in op.entries:
            for v in dict.fromkeys((*e.lb_operands, *e.ub_operands)):
                if not self.valid_bound_operand(v, op):
                    self.error(
                        op,
                        f"{self.name(v)} cannot be used as a symbol or dimension in the bound "
                        f"of loop {self.name(e.iv)}",
                        f"loop bounds may use constants, function arguments, values defined "
                        f"at the top level of the function or of an enclosing krnl.region, "
                        f"and enclosing induction variables: define {self.name(v)} at "
                        f"function level, or wrap the loop in a krnl.region that defines it",
                    )

    def valid_bound_operand(self, v: SSAValue, user: Operation) -> bool:
        if isinstance(v, BlockArgument):
            parent = v.block.parent_op()
            if isinstance(parent, func.FuncOp):
                return True
            if isinstance(parent, k.IterateOp):
                return v in parent.induction_vars
            if isinstance(parent, affine.ForOp | scf.ForOp):
                return v.index == 0
            return isinstance(parent, affine.ParallelOp | scf.ParallelOp)
        assert isinstance(v, OpResult)
        d = v.op
        if isinstance(d, arith.ConstantOp | k.GetInductionVarValueOp):
            return True
        parent = d.parent_op()
        if isinstance(parent, func.FuncOp):
            return True
        if isinstance(parent, k.RegionOp) and parent.is_ancestor(user):
            return True
        # As in MLIR: an affine.apply of valid operands is valid, and the size
        # of a memref that is itself valid.
        if isinstance(d, affine.ApplyOp):
            return all(self.valid_bound_operand(x, user) for x in d.operands)
        if isinstance(d, memref.DimOp | k.DimOp):
            return self.valid_bound_operand(d.operands[0], user)
        return False

    def check_movable(self, op: k.MovableOp) -> None:
        it = op.parent_op()
        while it is not None and not isinstance(it, k.IterateOp):
            it = it.parent_op()
        if it is None:
            self.error(
                op,
                "krnl.movable is outside any krnl.iterate: it has no loop to move into",
                "put the statements directly in the function, or inside the krnl.iterate "
                "whose loop they belong to",
            )
            return
        if it.optimized_loops:
            last = it.optimized_loops[-1]
            if self.nest.destination.get(it) is None:
                self.error(
                    op,
                    f"krnl.movable is in a krnl.iterate whose destination loop "
                    f"{self.name(last)} does not exist",
                    f"bind {self.name(last)} in a `with` list (or use a handle that has a loop)",
                )
                return
        elif not it.entries:
            self.error(
                op,
                "krnl.movable is in a krnl.iterate() with (), which has no loop to move into",
                "list the handle of the destination loop: krnl.iterate(%h) with () { ... }",
            )
            return
        unrolled = [lp for lp in self.placement.get(op, ()) if lp.unroll]
        if unrolled:
            # onnx-mlir asserts that an unrolled loop holds no krnl.movable.
            self.error(
                op,
                f"krnl.movable inside the loop of {self.name(unrolled[0].handle)}, which "
                "krnl.unroll unrolls",
                "move the statements out of the krnl.movable, or do not unroll the loop",
            )

    # -- where every op runs

    def place_all(self) -> None:
        for op in self.fn.op.body.block.ops:
            self.place_op(op, ())

    def place_op(self, op: Operation, at: tuple[Loop, ...]) -> None:
        if isinstance(op, k.IterateOp):
            self.place_iterate(op, at)
            return
        self.placement[op] = at
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    self.place_op(inner, at)

    def place_iterate(self, op: k.IterateOp, at: tuple[Loop, ...]) -> None:
        self.placement[op] = at
        if op.entries:
            self.chain_at[op] = at
        if op.entries and op in self.nest.inline:
            for it in self.nest.inline_body(op):
                if isinstance(it, Loop):
                    self.place_loop(it, at)
                else:
                    self.place_items([it], at)
        elif op.entries:
            root = self.nest.roots.get(op)
            if root is not None:
                self.place_loop(root, at)
        elif not op.optimized_loops:
            self.place_items(self.nest.inline.get(op, []), at)
        # `with ()` bodies sit in their destination loop's items.

    def place_loop(self, loop: Loop, at: tuple[Loop, ...]) -> None:
        inside = (*at, loop)
        for it in loop.body():
            if isinstance(it, Loop):
                self.place_loop(it, inside)
            else:
                self.place_items([it], inside)

    def place_items(self, items: Sequence[Item], at: tuple[Loop, ...]) -> None:
        for it in items:
            if isinstance(it, Stmt):
                for op in it.ops:
                    self.place_op(op, at)
            elif isinstance(it, Chain):
                self.place_iterate(it.iterate, at)
            elif isinstance(it, YieldPoint):
                y = it.iterate.body.block.last_op
                if y is not None:
                    self.placement[y] = at
            else:
                assert isinstance(it, ChildAnchor)
                self.placement[it.iterate] = at

    # -- rule 10

    def check_placement(self) -> None:
        reported: set[tuple[Operation, SSAValue]] = set()
        for op, at in self.placement.items():
            inside = set(at)
            values: Sequence[SSAValue] = op.operands
            if isinstance(op, k.IterateOp):
                # Bounds are read where the loops start; the other operands are handles.
                values = [v for e in op.entries for v in (*e.lb_operands, *e.ub_operands)]
                values += op.iter_inits
            for v in values:
                if (op, v) not in reported and not self.available(v, op, at):
                    reported.add((op, v))
            if isinstance(op, k.GetInductionVarValueOp):
                for h in op.loops:
                    loop = self.nest.loop_of.get(h)
                    if loop is not None and loop not in inside:
                        self.error(
                            op,
                            f"krnl.get_induction_var_value({self.name(h)}) is outside the "
                            f"loop of {self.name(h)}, where its value is not defined",
                            self.inside_hint(at, loop),
                        )

    def available(self, v: SSAValue, op: Operation, at: tuple[Loop, ...]) -> bool:
        """Whether `v` is defined where `op` runs, inside the loops `at` (else report it)."""
        inside = set(at)
        origin = self.nest.origin_of_iv.get(v)
        if origin is not None and origin.carrier is not None:
            carrier = origin.carrier
            if carrier.trivial:
                tile = _tile_of(carrier)
                self.error(
                    op,
                    f"{self.name(v)} is used, but its loop never materializes: the point "
                    f"handle {self.name(carrier.handle)} of the krnl.block at "
                    f"{self.v.where(carrier.block_op or op)} is never used, so its loop runs "
                    "once",
                    f"list {self.name(carrier.handle)} in the krnl.iterate, or use "
                    + (
                        f"krnl.get_induction_var_value({self.name(tile.handle)}) for the start "
                        "of the tile"
                        if tile is not None
                        else "krnl.get_induction_var_value of the tile handle"
                    ),
                )
                return False
            if carrier not in inside:
                self.error(
                    op,
                    f"{self.name(v)} is used outside the loop that carries it: {op.name} runs "
                    f"in {self.describe(op)}, but {self.name(v)} is the induction variable of "
                    f"loop {self.name(carrier.handle)}",
                    self.inside_hint(at, carrier),
                )
                return False
            return True
        if isinstance(v, OpResult) and v.op in self.placement:
            def_at = self.placement[v.op]
            if def_at and def_at[-1] not in inside:
                self.error(
                    op,
                    f"{self.name(v)} is used outside the loop it is defined in: it is defined "
                    f"in the loop of {self.name(def_at[-1].handle)}, and {op.name} runs in "
                    f"{self.describe(op)}",
                    "the body of a krnl.iterate runs in the loop of the last handle it lists: "
                    "list the handles in nesting order, outermost first",
                )
                return False
        return True

    def describe(self, op: Operation) -> str:
        at = self.placement.get(op, ())
        return f"the loop of {self.name(at[-1].handle)}" if at else "no loop"

    def inside_hint(self, at: Sequence[Loop], loop: Loop) -> str:
        tile = next(
            (lp for lp in reversed(at) if lp.origin is loop.origin and lp.kind == "tile"), None
        )
        hint = (
            f"list {self.name(loop.handle)} in the krnl.iterate so that the statement runs "
            "inside its loop"
        )
        if tile is not None:
            hint += (
                f", or use krnl.get_induction_var_value({self.name(tile.handle)}) for the "
                "start of the enclosing tile"
            )
        return hint


def _divisions(e: AffineExpr) -> list[AffineBinaryOpExpr]:
    """The floordiv / ceildiv / mod of `e` by a constant that is not positive."""
    if not isinstance(e, AffineBinaryOpExpr):
        return []
    out = _divisions(e.lhs) + _divisions(e.rhs)
    divides = e.kind in (
        AffineBinaryOpKind.FloorDiv,
        AffineBinaryOpKind.CeilDiv,
        AffineBinaryOpKind.Mod,
    )
    if divides and isinstance(e.rhs, AffineConstantExpr) and e.rhs.value <= 0:
        out.append(e)
    return out


def _own_problems(
    op: SelfChecks, name: Callable[[SSAValue], str] = value_name
) -> list[tuple[str, str]]:
    """op.problems(), or none when the op is too malformed for its own checks to read it
    (a property or operand missing: xDSL's verification of the op reports that)."""
    try:
        return list(op.problems(name))
    except (KeyError, IndexError, AttributeError, ValueError):
        return []


def _tile_of(point: Loop) -> Loop | None:
    """The tile loop of a point loop (its lower bound is the tile's IV)."""
    first = point.lbs[0]
    return first.loop if isinstance(first, IVBound) and first.offset == 0 else None
