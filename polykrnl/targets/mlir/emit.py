"""A Schedule as one standard MLIR function: isl's loops as `scf` loops, each statement's
ops re-emitted through the MLIR op table.

The loops are isl's AST of the schedule, one AST per top-level nest as the NumPy target
builds them (``Schedule.indexed_nest_trees``, read by tile starts), so their order, tiles
and bounds are the schedule's exactly. A loop the schedule marks parallel and the legality
report proves parallel is an ``scf.parallel`` (the outermost of nested ones); every other
loop is an ``scf.for``. isl's conditions are ``scf.if``; its expressions, ``arith`` ops on
``index`` values. A statement instance gets the values of its dimensions from the AST and
computes its loops' values from them (``Statement.loop_values``); values it reads from
outside (constants, sizes) are computed again where it needs them, which LLVM folds.
Allocations outside every loop are made at the function's start, and so are those inside
loops whose per-iteration copies never overlap in the schedule's order (each iteration's
uses run before the next allocation: `codegen/private_buffers.py`) when no loop runs in
parallel: one buffer then serves every iteration, as one local does in Numba.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl
from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import IndexType, MemRefType
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue

from polykrnl.codegen.isl_ast import build_ast
from polykrnl.codegen.private_buffers import local_buffers
from polykrnl.codegen.safe_text import cpp_identifier
from polykrnl.codegen.tile_starts import tile_starts
from polykrnl.dialect import krnl as k
from polykrnl.errors import SourceLocation, UnsupportedError
from polykrnl.poly import DimParam, PolyProgram, Statement, is_pure
from polykrnl.targets.mlir.ops import MLIR
from polykrnl.targets.mlir.writer import MlirWriter, comment
from polykrnl.transforms import legality
from polykrnl.transforms.core import Schedule
from polykrnl.transforms.looptree import loop_tree
from polykrnl.transforms.memory_safety import memory_report

STAGE = "MLIR code generation"
_FOR = isl.ast_node_type.for_  # type: ignore[attr-defined]
_IF = isl.ast_node_type.if_  # type: ignore[attr-defined]


@dataclass(frozen=True)
class WrittenFunction:
    """The MLIR module of a schedule, and what the caller of its C entry point needs."""

    source: str
    symbol: str  # the function's symbol; its C entry point is `_mlir_ciface_<symbol>`
    parallel_loops: tuple[str, ...]  # the loops written as scf.parallel
    # Each krnl.parallel loop that stays sequential, and why.
    sequential: tuple[tuple[str, str], ...] = ()


def unsupported(
    message: str, location: SourceLocation | None, hint: str | None = None
) -> Exception:
    return UnsupportedError(
        f"{STAGE}: {message}",
        location=location,
        hint=hint or "run it with the NumPy target (`--target numpy`) or pk.run_reference",
    )


def missing(op: Operation, location: SourceLocation | None) -> Exception:
    """The refusal of an op the MLIR op table has no entry for."""
    return unsupported(
        f"`{op.name}` has no MLIR-target translation yet",
        location,
        f"{MLIR.hint} (`polykrnl ops` lists what each stage supports)",
    )


@dataclass
class Scope:
    """What every statement of the function shares."""

    program: PolyProgram
    w: MlirWriter
    env: dict[SSAValue, str]  # arguments, parameters, allocations made at the start
    loop_exprs: dict[str, list[isl.PwAff]] = field(default_factory=dict)
    # The allocation statements made once, at the function's start.
    hoisted: frozenset[str] = frozenset()


class StatementEmission:
    """The ops of one statement instance (or of the function's start, `s` None), written
    into the scope's writer with their operands renamed."""

    def __init__(self, scope: Scope, s: Statement | None, dims: list[str]) -> None:
        self.scope = scope
        self.w = scope.w
        self.s = s
        self.dims = dims
        self.env: dict[SSAValue, str] = dict(scope.env)
        self._loops: dict[str, str] = {}

    @property
    def location(self) -> SourceLocation | None:
        return self.s.location if self.s is not None else None

    def unsupported(self, message: str, hint: str | None = None) -> UnsupportedError:
        e = unsupported(message, self.location, hint)
        assert isinstance(e, UnsupportedError)
        return e

    def loop_value(self, loop: str) -> str:
        """The value of the program's loop `loop` for this instance."""
        s = self.s
        assert s is not None
        if loop not in self._loops:
            exprs = self.scope.loop_exprs.get(s.name)
            if exprs is None:
                pma = isl.PwMultiAff.from_map(s.loop_values)
                exprs = [pma.get_pw_aff(i) for i in range(len(s.loops))]
                self.scope.loop_exprs[s.name] = exprs
            self._loops[loop] = self.w.pw_aff(exprs[s.loops.index(loop)], self.dims)
        return self._loops[loop]

    def bind(self, v: SSAValue, name: str) -> None:
        self.env[v] = name

    def value(self, v: SSAValue) -> str:
        found = self.env.get(v)
        if found is not None:
            return found
        program = self.scope.program
        if v in program.virtual:
            # Outside every statement (a loop bound) the refusal is located at the value's op.
            maker = v.op if isinstance(v, OpResult) else None
            where = self.location or (program.function.location(maker) if maker else None)
            raise unsupported(
                f"{_describe(v)} ({_made_by(v)}) is kept between statements (an iter_arg, "
                "or a value computed outside the loop that uses it): the MLIR target has no "
                "translation for that yet",
                where,
            )
        if isinstance(v, BlockArgument):
            origin = program.nest.origin_of_iv.get(v)
            if origin is not None and origin.carrier is not None and self.s is not None:
                loop = program.loop_names[origin.carrier]
                if loop in self.s.loops:
                    return self.loop_value(loop)
            raise self.unsupported(f"{_describe(v)} is not available here")
        assert isinstance(v, OpResult)
        op = v.op
        if isinstance(op, k.GetInductionVarValueOp):
            for h, r in zip(op.loops, op.results, strict=True):
                handle_loop = program.handle_names.get(h)
                if self.s is None or handle_loop is None or handle_loop not in self.s.loops:
                    raise self.unsupported(
                        "krnl.get_induction_var_value of a loop around no statement here"
                    )
                self.env[r] = self.loop_value(handle_loop)
            return self.env[v]
        if is_pure(op) and not isinstance(op, k.IterateOp):
            self.op(op)
            return self.env[v]
        raise self.unsupported(f"{_describe(v)} is not available here")

    def op(self, op: Operation) -> None:
        if op.results and all(r in self.env for r in op.results):
            return
        if isinstance(op, k.GetInductionVarValueOp):
            self.value(op.results[0])
            return
        emitter = MLIR.get(op)
        if emitter is None:
            raise missing(op, self.scope.program.function.location(op) or self.location)
        self._check_subscripts(op)
        emitter(self, op)

    def _check_subscripts(self, op: Operation) -> None:
        """Refuse an access whose subscripts only a check where it runs keeps inside its
        array (read from data, or in a branch the model does not follow): the other
        targets check those there; this one does not yet."""
        if self.s is None:
            return
        for a in self.s.accesses:
            if a.op is not op or a.clips:
                continue
            if a.data_dims or (a.may and not a.data_subscripts and _may_leave(self, a.array)):
                raise self.unsupported(
                    f"`{op.name}` addresses {a.array} by subscripts the model cannot bound "
                    "(read from data, or in a branch it does not follow): the MLIR target "
                    "has no check where it runs yet"
                )

    def write(self) -> None:
        s = self.s
        assert s is not None
        if s.kind in ("init", "yield") or s.exports or s.imports:
            raise self.unsupported(
                f"`{s.anchor.name}`: values kept between statements (iter_args, a value "
                "used by an inner loop) have no MLIR-target translation yet"
            )
        # Stack buffers of a statement inside loops are freed at its end (scf loops are no
        # allocation scope: they would pile up for every iteration); one made at the start
        # serves the whole call.
        scoped = (
            bool(s.loops)
            and s.name not in self.scope.hoisted
            and any(isinstance(op, memref.AllocaOp) for op in s.ops)
        )
        if scoped:
            self.w.line("memref.alloca_scope {")
            self.w.depth += 1
        for op in s.ops:
            if not isinstance(op, k.YieldOp):
                self.op(op)
        if scoped:
            self.w.depth -= 1
            self.w.line("}")

    # -- ops with regions inside one statement
    def region_op(self, op: Operation) -> None:
        types = [r.type for r in op.results]
        head = self._results(op)
        sig = f" -> ({', '.join(map(str, types))})" if types else ""
        if isinstance(op, scf.IfOp):
            cond = self.value(op.cond)
            self.w.line(f"{head}scf.if {cond}{sig} {{")
            self._block(op.true_region.block)
            if op.false_region.blocks:
                self.w.line("} else {")
                self._block(op.false_region.block)
            self.w.line("}")
        elif isinstance(op, scf.ForOp):
            lb, ub, step = self.value(op.lb), self.value(op.ub), self.value(op.step)
            block = op.body.block
            iv, *carried = block.args
            saved = dict(self.env)
            iv_name = self.w.fresh(iv.name_hint or "iv")
            inits = [self.value(x) for x in op.iter_args]
            names = [self.w.fresh(a.name_hint or "acc") for a in carried]
            self.env[iv] = iv_name
            self.env.update(zip(carried, names, strict=True))
            pairs = ", ".join(f"{n} = {i}" for n, i in zip(names, inits, strict=True))
            iters = f" iter_args({pairs})" if carried else ""
            typed = "" if isinstance(iv.type, IndexType) else f" : {iv.type}"
            self.w.line(f"{head}scf.for {iv_name} = {lb} to {ub} step {step}{iters}{sig}{typed} {{")
            self._block(block)
            self.w.line("}")
            self.env = {**saved, **{r: n for r, n in self.env.items() if r in op.results}}
        else:
            raise missing(op, self.scope.program.function.location(op))

    def _results(self, op: Operation) -> str:
        """`%r = ` / `%r:2 = ` for the op's results, bound as `%r` / `%r#0`, `%r#1`."""
        if not op.results:
            return ""
        base = self.w.fresh(op.results[0].name_hint or "r")
        if len(op.results) == 1:
            self.env[op.results[0]] = base
            return f"{base} = "
        for i, r in enumerate(op.results):
            self.env[r] = f"{base}#{i}"
        return f"{base}:{len(op.results)} = "

    def _block(self, block: Block) -> None:
        """The ops of a region's block; values first computed inside are not kept."""
        saved = dict(self.env)
        self.w.depth += 1
        for inner in block.ops:
            if isinstance(inner, scf.YieldOp):
                vals = [self.value(x) for x in inner.operands]
                types = ", ".join(str(x.type) for x in inner.operands)
                self.w.line(f"scf.yield {', '.join(vals)} : {types}" if vals else "scf.yield")
                continue
            self.op(inner)
        self.w.depth -= 1
        self.env = {**saved, **{r: n for r, n in self.env.items() if r in saved}}


def _may_leave(e: StatementEmission, array: str) -> bool:
    verdict = next((a for a in memory_report(e.scope.program).arrays if a.array == array), None)
    return verdict is not None and verdict.verdict != "in bounds"


def _describe(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else "a value"


def _made_by(v: SSAValue) -> str:
    """The op a value comes from, named as users write it (the refusal names the op)."""
    if isinstance(v, OpResult):
        return f"a result of `{v.op.name}`"
    owner = v.owner.parent_op() if isinstance(v, BlockArgument) else None
    return f"an argument of `{owner.name}`" if owner is not None else "a block argument"


def _hoisted(sched: Schedule, parallel: bool) -> frozenset[str]:
    """The allocation statements made once, at the function's start: those outside every
    loop, and, when no loop runs in parallel, those inside loops whose copies the schedule
    never keeps alive together (then one buffer is every iteration's copy in turn).
    Refuses, located, an allocation inside loops that other statements use otherwise."""
    program = sched.program
    reusable = set(local_buffers(sched)) if not parallel else set()
    out: set[str] = set()
    for s in program.statements:
        if not isinstance(s.anchor, memref.AllocOp | memref.AllocaOp) or s.kind != "op":
            continue
        if s.exports or s.imports:
            continue
        v = s.anchor.results[0]
        if not s.loops or (v in reusable and not s.anchor.operands):
            out.add(s.name)
        elif any(v in op.operands for t in program.statements if t is not s for op in _walk(t)):
            raise unsupported(
                f"`{s.anchor.name}` inside loops makes a buffer that other statements use"
                + (
                    " in parallel loops"
                    if parallel
                    else ", and the schedule interleaves the copies"
                ),
                s.location,
                "the MLIR target allocates such a buffer once, when the loops around it run in "
                "order and each iteration is done with its copy before the next allocation",
            )
    return frozenset(out)


def _walk(s: Statement) -> list[Operation]:
    return [inner for op in s.ops for inner in op.walk()]


@dataclass
class AstWriter:
    """isl's AST as scf loops and conditionals, statements through StatementEmission."""

    scope: Scope
    parallel: frozenset[str]  # marks of the loops to write as scf.parallel
    written_parallel: list[str] = field(default_factory=list)
    nested_parallel: set[str] = field(default_factory=set)
    _mark: str | None = None
    _in_parallel: bool = False

    @property
    def w(self) -> MlirWriter:
        return self.scope.w

    def node(self, n: isl.AstNode) -> None:
        t = n.get_type()
        if t == isl.ast_node_type.block:
            children = n.block_get_children()
            for i in range(children.n_ast_node()):
                self.node(children.get_at(i))
        elif t == isl.ast_node_type.mark:
            self._mark = str(n.mark_get_id().get_name())
            try:
                self.node(n.mark_get_node())
            finally:
                self._mark = None  # a mark whose loop isl dropped names nothing after it
        elif t == _FOR:
            self.for_node(n)
        elif t == _IF:
            mark = self._mark  # a mark above an `if` names the loop in each branch
            cond = self.w.expr(n.if_get_cond())
            self.w.line(f"scf.if {cond} {{")
            self._body(n.if_get_then_node(), mark)
            if n.if_has_else_node():
                self.w.line("} else {")
                self._body(n.if_get_else_node(), mark)
            self.w.line("}")
            self._mark = None
        elif t == isl.ast_node_type.user:
            call = n.user_get_expr()
            name = str(call.op_get_arg(0).id_get_id().get_name())
            dims = [self.w.expr(call.op_get_arg(i)) for i in range(1, call.op_get_n_arg())]
            s = self.scope.program.statement(name)
            if name not in self.scope.hoisted:
                StatementEmission(self.scope, s, dims).write()
        else:
            raise unsupported(f"isl produced an AST node polykrnl does not translate: {t}", None)

    def _body(self, n: isl.AstNode, mark: str | None) -> None:
        self.w.depth += 1
        self._mark = mark
        self.node(n)
        self.w.depth -= 1

    def for_node(self, n: isl.AstNode) -> None:
        mark, self._mark = self._mark, None
        it = str(n.for_get_iterator().id_get_id().get_name())
        cond = n.for_get_cond()
        bounded = (
            cond.get_type() == isl.ast_expr_type.op
            and cond.get_op_type() in (isl.ast_expr_op_type.le, isl.ast_expr_op_type.lt)
            and cond.op_get_arg(0).get_type() == isl.ast_expr_type.id
            and cond.op_get_arg(0).id_get_id().get_name() == it
        )
        if not bounded:
            raise unsupported(
                f"isl wrote loop {mark or it} with a condition that is not a bound on its "
                "iterator (a while loop): the MLIR target has no translation for it yet",
                None,
            )
        lb = self.w.expr(n.for_get_init())
        bound = cond.op_get_arg(1)
        if cond.get_op_type() == isl.ast_expr_op_type.le:
            bound = _plus_one(bound)
        ub = self.w.expr(bound)
        step = self.w.expr(n.for_get_inc())
        iv = self.w.fresh(mark or it)
        outer = self.w.isl_names.get(it)
        self.w.isl_names[it] = iv
        parallel = mark is not None and mark in self.parallel
        if parallel and self._in_parallel:
            assert mark is not None
            self.nested_parallel.add(mark)
            parallel = False
        if parallel:
            assert mark is not None
            self.written_parallel.append(mark)
            self.w.line(f"scf.parallel ({iv}) = ({lb}) to ({ub}) step ({step}) {{")
        else:
            self.w.line(f"scf.for {iv} = {lb} to {ub} step {step} {{")
        was, self._in_parallel = self._in_parallel, self._in_parallel or parallel
        self.w.depth += 1
        self.node(n.for_get_body())
        if parallel:
            self.w.line("scf.reduce")
        self.w.depth -= 1
        self._in_parallel = was
        self.w.line("}")
        if outer is None:
            del self.w.isl_names[it]
        else:
            self.w.isl_names[it] = outer


def _plus_one(e: isl.AstExpr) -> isl.AstExpr:
    """`e + 1`, folded into a trailing constant and spread over minima and maxima (the
    exclusive bound of isl's `it <= e`: `n - 1 + 1` is `n`)."""
    one = isl.AstExpr.from_val(isl.Val.int_from_si(isl.DEFAULT_CONTEXT, 1))
    t = e.get_type()
    if t == isl.ast_expr_type.int:
        value = int(e.int_get_val().to_python()) + 1
        return isl.AstExpr.from_val(isl.Val.int_from_si(isl.DEFAULT_CONTEXT, value))
    if t != isl.ast_expr_type.op:
        return e.add(one)
    op = e.get_op_type()
    if op in (isl.ast_expr_op_type.min, isl.ast_expr_op_type.max):
        out = e
        for i in range(e.op_get_n_arg()):
            out = out.set_op_arg(i, _plus_one(e.op_get_arg(i)))
        return out
    rhs = e.op_get_arg(1) if e.op_get_n_arg() == 2 else None
    if rhs is not None and rhs.get_type() == isl.ast_expr_type.int:
        c = int(rhs.int_get_val().to_python())
        lhs = e.op_get_arg(0)
        k = (
            c + 1
            if op == isl.ast_expr_op_type.add
            else (-c + 1 if op == isl.ast_expr_op_type.sub else None)
        )
        if k is not None:
            if k == 0:
                return lhs
            kv = isl.AstExpr.from_val(isl.Val.int_from_si(isl.DEFAULT_CONTEXT, abs(k)))
            return lhs.add(kv) if k > 0 else lhs.sub(kv)
    return e.add(one)


def write_function(sched: Schedule, *, parallel: bool = True) -> WrittenFunction:
    """The MLIR module of `sched`'s function (see the module docstring)."""
    program = sched.program
    fn = program.function
    where = fn.location(fn.op)
    w = MlirWriter()
    block = fn.op.body.block
    env: dict[SSAValue, str] = {}
    params: list[str] = []
    for a, arg in zip(fn.arguments, block.args, strict=True):
        env[arg] = w.fresh(a.name)
        params.append(f"{env[arg]}: {a.type}")
    marked = frozenset(x for x in sched.loop_names() if parallel and sched.loop(x).parallel)
    proven: frozenset[str] = frozenset()
    if marked:
        report = legality.check(sched)
        if report.legal:
            proven = frozenset(lv.loop for lv in report.loops if lv.status == "parallel")
    scope = Scope(program, w, env, hoisted=_hoisted(sched, bool(marked & proven)))
    start = StatementEmission(scope, None, [])
    by_value = {p: v for v, p in program.symbols.items()}
    for p in program.params:
        v = by_value.get(p)
        src = program.param_sources[p]
        if isinstance(src, DimParam) and src.array in env:
            t = src.array.type
            name = w.op(p, f"memref.dim {env[src.array]}, {w.index(src.dim)} : {t}")
        elif v is not None:
            name = start.value(v)  # an argument, or computed from them before the loops
        else:
            raise unsupported(f"the parameter {src} of @{fn.name} has no value", where)
        w.isl_names[p] = name
        if v is not None:
            env[v] = start.env[v] = name
    for s in program.statements:
        if s.name in scope.hoisted:
            # Made once at the start; the statements that use it read it from the scope.
            e = StatementEmission(scope, s, [])
            e.write()
            for r in s.anchor.results:
                env[r] = e.env[r]
    ast_writer = AstWriter(scope, marked & proven)
    trees, steps = sched.indexed_nest_trees
    for tree in trees:
        ast_writer.node(tile_starts(build_ast(tree), steps))
    results, result_types = _returns(scope, fn)
    symbol = cpp_identifier(fn.name)
    sequential = tuple(
        (
            m,
            "inside another parallel loop"
            if m in ast_writer.nested_parallel
            else "not proven parallel",
        )
        for m in sorted(marked - set(ast_writer.written_parallel))
    )
    sig = f" -> ({', '.join(result_types)})" if result_types else ""
    ret = f"return {', '.join(results)} : {', '.join(result_types)}" if results else "return"
    header = [
        f"// polykrnl MLIR kernel of @{comment(fn.name)}",
        "// schedule:",
        *(f"//   {comment(line)}" for line in str(loop_tree(sched)).splitlines()),
        *(f"// {comment(m)} runs sequentially: {why}" for m, why in sequential),
    ]
    text = "\n".join(
        [
            *header,
            "module {",
            f"  func.func @{symbol}({', '.join(params)}){sig}"
            " attributes {llvm.emit_c_interface} {",
            *w.constant_lines(),
            *w.lines,
            f"    {ret}",
            "  }",
            "}",
            "",
        ]
    )
    return WrittenFunction(
        text, symbol, tuple(dict.fromkeys(ast_writer.written_parallel)), sequential
    )


def _returns(scope: Scope, fn: object) -> tuple[list[str], list[str]]:
    """The names and types of the values the function returns (arguments, allocations made
    at the start, pure values of them such as views)."""
    f = fn.op  # type: ignore[attr-defined]
    term = f.body.block.last_op
    if not isinstance(term, func.ReturnOp) or not term.operands:
        return [], []
    e = StatementEmission(scope, None, [])
    names = [e.value(v) for v in term.operands]
    types = [str(v.type) for v in term.operands]
    for v in term.operands:
        if not isinstance(v.type, MemRefType):
            raise unsupported(
                f"@{fn.name} returns a {v.type}: the MLIR target returns memrefs only",  # type: ignore[attr-defined]
                fn.location(term),  # type: ignore[attr-defined]
            )
    return names, types
