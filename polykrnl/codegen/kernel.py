"""NumpyKernel: a Schedule as a Python function over NumPy arrays.

``sched.to_numpy()`` builds isl's AST of the schedule, writes it as Python
(loops named after the Krnl loops, statements with the interpreter's op
semantics), and compiles it once. Calling the kernel checks the arguments
like ``pk.run_reference`` does (names, shapes, dtypes), updates memref
arguments in place and returns the function's results.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

import islpy as isl
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import IndexType, MemRefType
from xdsl.ir import OpResult, SSAValue

from polykrnl.codegen import numpy_ops
from polykrnl.codegen.ast_loops import copied_statements
from polykrnl.codegen.bounds_guard import BOUNDS_ERROR, guard_checks, oob_raises, static_checks
from polykrnl.codegen.fuse import fuse_temporaries
from polykrnl.codegen.isl_ast import Translator, build_ast, python_name
from polykrnl.codegen.matmul import MatmulFolder
from polykrnl.codegen.memory_ops import HELPERS
from polykrnl.codegen.private_buffers import local_buffers, scalar_only
from polykrnl.codegen.pyast import COMMENT, assign, call, comment, const, name
from polykrnl.codegen.python_form import NUMPY_FORM, PythonForm
from polykrnl.codegen.safe_text import comment_text, identifier
from polykrnl.codegen.scalar_prelude import SCALAR_HELPERS
from polykrnl.codegen.statements import KernelState, Names, StatementWriter
from polykrnl.codegen.tile_starts import tile_starts
from polykrnl.codegen.vectorize import Vectorizer, forced_statements
from polykrnl.dialect import krnl as k
from polykrnl.errors import SourceLocation, UnsupportedError
from polykrnl.poly import DimParam, PolyProgram, is_pure
from polykrnl.transforms import legality
from polykrnl.transforms.dependences import related
from polykrnl.transforms.fresh_memory import FillVerdict, fill_verdicts
from polykrnl.transforms.loop_ranges import loop_range
from polykrnl.transforms.looptree import loop_tree
from polykrnl.transforms.memory_safety import call_context, extent_pw_aff, memory_report
from polykrnl.transforms.recipe import schedule
from polykrnl.transforms.splits import split_point
from polykrnl.transforms.wavefront import Wavefront, wavefronts

if TYPE_CHECKING:
    from polykrnl.ir import Function, Module
    from polykrnl.transforms.core import Schedule


@dataclass(frozen=True)
class WrittenKernel:
    """The Python functions of a schedule, before a target wraps them in a module."""

    entry: str  # the name of the function of the schedule's function
    own_source: str  # the function of the schedule's function, no imports or helpers
    callee_sources: tuple[str, ...]  # the functions it calls (each with its callees)
    helpers: frozenset[str]  # the helper functions they call (callees' included)
    exact: bool  # False when a reduction was reassociated
    # Numba: each krnl.parallel loop -> "prange", or why it stays a sequential range
    pranged: tuple[tuple[str, str], ...] = ()
    # The functions (this one's entry, its callees') whose guard at their start proves
    # every access of their own in bounds (no subscript read from data, no access the
    # model cannot follow): they need no per-access check.
    proven_in_bounds: frozenset[str] = frozenset()
    # The math functions computed in their operands' float32 (float16) rather than in
    # float64 rounded once (`math_precision`): not bit for bit the interpreter's.
    narrow_math: tuple[str, ...] = ()

    @property
    def function_source(self) -> str:
        """The generated functions, callees first."""
        return "".join(self.callee_sources) + self.own_source


def schedule_comment(sched: Schedule) -> list[str]:
    """The loop nest of the schedule as comment lines, for a kernel's header."""
    return [f"#   {comment_text(line)}" for line in str(loop_tree(sched)).splitlines()]


#: The names generated code uses besides its own: no generated name shadows them.
BUILTINS = frozenset(
    {"np", "range", "prange", "njit", "min", "max", "int", "len", "abs", "object"}
    | {"_pk_calls", "_pk_pool"}
)


def entry_names(module: Module) -> dict[str, str]:
    """Function name -> the name of its generated function, `kernel_NAME`, the same for
    every kernel of the module. A name that is not already an identifier (a quoted symbol,
    `@"a.b"`) yields to one that is, then each takes the first free of `kernel_a_b`,
    `kernel_a_b_1`, ... in the module's order."""
    names = Names()
    names.taken.update(BUILTINS, numpy_ops.PRELUDE, HELPERS, SCALAR_HELPERS)
    fns = [f.name for f in module.functions]
    plain = [n for n in fns if identifier(n) == n]
    out = {n: names.fresh(f"kernel_{n}") for n in plain}
    out.update({n: names.fresh(f"kernel_{identifier(n)}") for n in fns if n not in out})
    return out


def write_kernel(
    sched: Schedule,
    *,
    vectorize: bool = True,
    reassociate: bool = True,
    parallel: bool = False,
    form: PythonForm = NUMPY_FORM,
    check_bounds: bool = True,
) -> WrittenKernel:
    """The Python functions of `sched` (and of the functions it calls) in `form`.

    NumPy's: loops vectorized where legal, krnl.parallel loops around array code on
    threads with `parallel`. Numba's (`form.compiled`): scalar loops only, every value
    of its MLIR type, krnl.parallel loops as `prange` with `parallel` where legality
    proves them parallel. `check_bounds` makes the kernel refuse arrays that do not fit its
    accesses before touching them (``bounds_guard.py``).
    """
    # The NumPy form computes float32 math functions in float32 when it may reassociate
    # (neither is bit for bit the interpreter's); compiled code keeps float64, which
    # costs it little.
    native = reassociate and not form.compiled
    with numpy_ops.writing(form), numpy_ops.math_precision(native) as narrow:
        written = _write(
            sched,
            vectorize=vectorize,
            reassociate=reassociate,
            parallel=parallel,
            form=form,
            check_bounds=check_bounds,
        )
    return replace(written, narrow_math=tuple(sorted(narrow))) if narrow else written


def _write(
    sched: Schedule,
    *,
    vectorize: bool = True,
    reassociate: bool = True,
    parallel: bool = False,
    form: PythonForm = NUMPY_FORM,
    check_bounds: bool = True,
) -> WrittenKernel:
    """write_kernel's body, with the emitters writing in `form`."""
    program = sched.program
    fn = program.function
    entries = entry_names(fn.module)
    state = _state(sched, entries, form, check_bounds)
    args = state.args
    params = list(args.values())
    callees: dict[str, WrittenKernel] = {}

    def call_target(callee: str) -> str:
        if callee not in callees:
            found = next((f for f in fn.module.functions if f.name == callee), None)
            if found is None or callee == fn.name:
                raise UnsupportedError(
                    f"{state.stage}: func.call to @{callee}"
                    + (" (recursion)" if found is not None else ", which the module lacks"),
                    location=fn.location(fn.op),
                    hint="run it with pk.run_reference",
                )
            callees[callee] = write_kernel(
                schedule(found),
                vectorize=vectorize,
                reassociate=reassociate,
                parallel=parallel,
                form=form,
                check_bounds=check_bounds,
            )
        return callees[callee].entry

    state.call_target = call_target
    prologue, param_py, later = _parameters(program, args, state)
    checks, guards = _bounds_guard(program, args, param_py) if check_bounds else ([], [])
    guards, late_guards = _split_guards(guards, later)
    body, translator, vectorizer, folder = _loops(
        sched,
        state,
        vectorize=vectorize,
        reassociate=reassociate,
        parallel=parallel,
        later=Later(later, late_guards),
    )
    if any(isinstance(x, ast.Name) and x.id == "_pk_parallel" for st in body for x in ast.walk(st)):
        state.helpers.add("_pk_parallel")
    body = [*guards, *body]
    if checks or guards:
        state.helpers.add(BOUNDS_ERROR)
    if state.oob_sites:
        prologue.append(assign(state.oob_flag, call("np.zeros", const(3), name("np.int64"))))
        body += oob_raises(state.oob_flag, state.oob_sites)
    returns = _returns(state, fn)
    inits = [assign(d, ast.Dict([], [])) for d in state.dicts.values()]
    prologue = _used_only(prologue, [*body, *returns])
    entry = entries[fn.name]
    func = ast.FunctionDef(
        entry,
        ast.arguments([], [ast.arg(p) for p in params], None, [], [], None, []),
        [
            *checks,
            *state.destinations.rewrite(
                fuse_temporaries([*prologue, *inits, *body, *returns]), state.names.fresh
            ),
        ]
        or [ast.Pass()],
        [],
        None,
    )
    module = ast.Module([func], [])
    ast.fix_missing_locations(module)
    helpers = set(state.helpers)
    for c in callees.values():
        helpers |= c.helpers
    exact = (vectorizer is None or not vectorizer.reassociated) and not folder.reassociated
    exact = exact and all(c.exact for c in callees.values())
    return WrittenKernel(
        entry,
        _with_comments(ast.unparse(module)) + "\n",
        tuple(c.function_source for c in callees.values()),
        frozenset(helpers),
        exact,
        tuple(translator.pranged.items()) + tuple(p for c in callees.values() for p in c.pranged),
        frozenset(
            {entry} if check_bounds and memory_report(program).proven_by_guards else set()
        ).union(*(c.proven_in_bounds for c in callees.values())),
    )


def _state(
    sched: Schedule, entries: dict[str, str], form: PythonForm, check_bounds: bool
) -> KernelState:
    """What the writer keeps while it writes `sched`'s function: the names taken (builtins,
    helpers, the module's entries), the arguments' names, which buffers start empty, and
    (compiled code) the buffers kept in locals."""
    program = sched.program
    fn = program.function
    names = Names()
    # Builtins and the helpers a kernel may define: no generated local shadows them.
    names.taken.update(BUILTINS, numpy_ops.PRELUDE, HELPERS, SCALAR_HELPERS)
    names.taken.update(entries.values())
    args: dict[SSAValue, str] = {
        arg: names.fresh(a.name) for a, arg in zip(fn.arguments, fn.op.body.block.args, strict=True)
    }
    state = KernelState(program, names, args, form=form, check_bounds=check_bounds)
    state.fills = _fills(sched)
    state.oob_flag = names.fresh("_pk_oob")
    if form.compiled:
        state.local_buffers = {v: names.fresh(v.name_hint or "buf") for v in local_buffers(sched)}
        state.scalar_buffers = frozenset(v for v in state.local_buffers if scalar_only(v))
    return state


def _fills(sched: Schedule) -> dict[str, FillVerdict] | None:
    """Which allocations may start empty; None when the schedule breaks a dependence (a
    read may then come before the write that the program's order puts first)."""
    verdicts = fill_verdicts(sched.program)
    if not any(v.empty for v in verdicts.values()):
        return verdicts
    return verdicts if legality.check(sched).legal else None


@dataclass
class Later:
    """Parameters computed where the program computes them, not at the kernel's start:
    per statement, the values it computes and their Python names; the bounds guards that
    need them, each with the names it needs."""

    params: dict[str, list[tuple[SSAValue, str]]]
    guards: list[tuple[ast.stmt, frozenset[str]]]

    def after(self, statement: str, writer: StatementWriter) -> list[ast.stmt]:
        """What follows `statement`: its parameters, then the guards now computable."""
        out: list[ast.stmt] = []
        for v, py in self.params.pop(statement, ()):
            value = writer.value(v)
            out.append(assign(py, ast.Call(name("int"), [value], [])))
        pending = {py for vs in self.params.values() for _v, py in vs}
        ready = [g for g in self.guards if not g[1] & pending]
        self.guards = [g for g in self.guards if g[1] & pending]
        return out + [g for g, _ in ready]


def _split_guards(
    guards: list[ast.stmt], later: dict[str, list[tuple[SSAValue, str]]]
) -> tuple[list[ast.stmt], list[tuple[ast.stmt, frozenset[str]]]]:
    """The guards of the kernel's start, and those that read a parameter computed later."""
    late = {py for vs in later.values() for _v, py in vs}
    start: list[ast.stmt] = []
    after: list[tuple[ast.stmt, frozenset[str]]] = []
    for g in guards:
        used = frozenset(n.id for n in ast.walk(g) if isinstance(n, ast.Name)) & late
        if used:
            after.append((g, used))
        else:
            start.append(g)
    return start, after


def _defined_later(program: PolyProgram, p: str, v: SSAValue) -> str | None:
    """The statement outside every loop that computes parameter `p` (value `v`) before
    every statement that uses `p`, or None.

    Such a value (onnx-mlir's NonZero and Compress count the elements they keep, then
    allocate the result and loop up to the count) is fixed once computed: a kernel
    computes it after the statement, not at its start.
    """
    if not isinstance(v, OpResult):
        return None
    order = list(program.statements)
    at = next((n for n, st in enumerate(order) if v.op in st.ops and not st.loops), None)
    if at is None:
        return None
    # The statement itself may use it: its ops after the one computing it.
    for st in order[:at]:
        maps: list[isl.Set | isl.Map] = [st.domain, *(a.relation for a in st.accesses)]
        if any(_involves(m, p) for m in maps):
            return None
    return order[at].name


def _involves(m: isl.Set | isl.Map, p: str) -> bool:
    pos = m.find_dim_by_name(isl.dim_type.param, p)
    return pos >= 0 and bool(m.involves_dims(isl.dim_type.param, pos, 1))


def _parameters(
    program: PolyProgram, args: dict[SSAValue, str], state: KernelState
) -> tuple[list[ast.stmt], dict[str, str], dict[str, list[tuple[SSAValue, str]]]]:
    """The statements computing the kernel's parameters (sizes, index values fixed for the
    call), each isl parameter's Python name, and the parameters computed after a
    statement (by its name) instead; `args` learns the values they name."""
    fn = program.function
    names = state.names
    prologue: list[ast.stmt] = []
    later: dict[str, list[tuple[SSAValue, str]]] = {}
    by_value = {p: v for v, p in program.symbols.items()}
    param_py: dict[str, str] = {}  # isl parameter -> its Python name in the kernel
    for p in program.params:
        py = param_py[p] = python_name(p)
        v = by_value.get(p)
        if v is not None and v in args:
            if args[v] != py:
                param_py[p] = names.fresh(py)
                prologue.append(assign(param_py[p], name(args[v])))
            continue
        src = program.param_sources[p]
        if isinstance(src, DimParam) and src.array in args:
            names.taken.add(py)
            shape = ast.Attribute(name(args[src.array]), "shape", ast.Load())
            prologue.append(assign(py, ast.Subscript(shape, ast.Constant(src.dim))))
            if v is not None:
                args[v] = py
            continue
        fixed = _fixed_value(v, args, program, state.helpers) if v is not None else None
        if fixed is not None:
            # Computed before every loop from arguments nothing writes: the same value
            # at the start of the kernel.
            names.taken.add(py)
            prologue.append(assign(py, fixed))
            args[v] = py  # type: ignore[index]
            continue
        where = _defined_later(program, p, v) if v is not None else None
        if where is not None:
            assert v is not None
            param_py[p] = names.fresh(py)
            later.setdefault(where, []).append((v, param_py[p]))
            continue
        raise UnsupportedError(
            f"{state.stage}: the parameter {src} of @{fn.name} is computed inside the "
            "function from memory it writes, and not outside every loop before the "
            "statements that use it (or by ops without a NumPy form)",
            location=_param_location(fn, v),
            hint="compute the value outside the loops, before the loops it bounds, or "
            "pass it as an index argument",
        )
    return prologue, param_py, later


def _param_location(fn: Function, v: SSAValue | None) -> SourceLocation | None:
    if isinstance(v, OpResult):
        return fn.location(v.op) or fn.location(fn.op)
    return fn.location(fn.op)


def _loops(
    sched: Schedule,
    state: KernelState,
    *,
    vectorize: bool,
    reassociate: bool,
    parallel: bool,
    later: Later,
) -> tuple[list[ast.stmt], Translator, Vectorizer | None, MatmulFolder]:
    """The kernel's loops from isl's AST of each top-level nest, as array code where the
    legality report proves it (NumPy) or prange where it proves a marked loop parallel
    (Numba)."""
    program = sched.program
    names = state.names
    numba = state.form.compiled
    stmts = {s.name: s for s in program.statements}
    report = legality.check(sched) if vectorize or (numba and parallel) else None
    waves: list[Wavefront] = []
    if vectorize and not numba and report is not None:
        # Array code front by front where a pair of loops would stay scalar Python.
        sched, report, waves = wavefronts(sched, report)
    proven_legal = report is not None and report.legal
    proven = (
        frozenset(lv.loop for lv in report.loops if lv.status == "parallel")
        if report is not None and proven_legal
        else frozenset()
    )
    marked = frozenset(x for x in sched.loop_names() if parallel and sched.loop(x).parallel)
    # Loops in parallel parts: prange before and after the split point (Numba only; the
    # other targets run them as written, which keeps every dependence too).
    parts = {
        x: (sp.outer, sp.point)
        for x in sched.loop_names()
        if numba and parallel and sched.loop(x).parts and (sp := split_point(sched, x))
    }

    def write(s: str, dims: list[ast.expr]) -> list[ast.stmt]:
        writer = StatementWriter(state, stmts[s], dims)
        return [*writer.write(), *later.after(s, writer)]

    translator = Translator(
        write,
        taken=names.taken,
        threaded=frozenset() if numba else marked,
        prange=(marked & proven) | frozenset(parts) if numba and proven_legal else frozenset(),
        parts=parts,
        shared=lambda body: _shared_values(body, state),
    )
    # An illegal schedule (made with force=True) runs as written: the nests of the
    # statements of a broken dependence as scalar loops (Vectorizer.forced).
    vectorizer: Vectorizer | None = None
    if vectorize and not numba and report is not None:
        vectorizer = Vectorizer(
            state,
            stmts,
            {lv.loop: lv.status for lv in report.loops},
            {p: t for p in sched.loop_names() if (t := sched.tile_of(p)) is not None},
            {lv.loop: lv.why_not_vectorizable for lv in report.loops},
            reassociate=reassociate,
            carried={lv.loop: list(lv.pairs) for lv in report.loops},
            split_of=functools.cache(functools.partial(split_point, sched)),
            box_of=functools.cache(functools.partial(loop_range, sched)),
            threaded=marked,
            forced=forced_statements(report),
            related=functools.cache(functools.partial(related, sched.reference_program)),
        )
    # The tile loops around a krnl.matmul first: as one matmul, they leave nothing for
    # the vectorizer (which would keep them as loops around a call per tile).
    folder = MatmulFolder(state, sched, reassociate)

    def replace(tr: Translator, n: isl.AstNode, mark: str | None) -> list[ast.stmt] | None:
        folded = folder(tr, n, mark)
        if folded is not None or vectorizer is None:
            return folded
        return vectorizer(tr, n, mark)

    translator.replace_loop = replace
    if vectorizer is not None:
        translator.replace_pair = vectorizer.pair
    # One isl AST per top-level nest: one over the whole function costs time quadratic
    # in the number of nests.
    trees, steps = sched.indexed_nest_trees
    roots = [tile_starts(build_ast(tree), steps) for tree in trees]
    folder.copied = frozenset().union(*(copied_statements(r) for r in roots))
    if vectorizer is not None:
        vectorizer.copied = folder.copied
    body = [*(comment(str(w)) for w in waves), *translator.nodes(roots)]
    return body, translator, vectorizer, folder


def _used_only(prologue: list[ast.stmt], rest: list[ast.stmt]) -> list[ast.stmt]:
    """`prologue` without the sizes that `rest` (the loops, the subscripts, the results)
    does not use."""
    used = {n.id for st in rest for n in ast.walk(st) if isinstance(n, ast.Name)}
    kept: list[ast.stmt] = []
    for line in reversed(prologue):  # later sizes may be computed from earlier ones
        if isinstance(line, ast.Assign) and isinstance(line.targets[0], ast.Name):
            if line.targets[0].id not in used:
                continue
            used |= {n.id for n in ast.walk(line.value) if isinstance(n, ast.Name)}
        kept.append(line)
    return kept[::-1]


def _bounds_guard(
    program: PolyProgram, args: dict[SSAValue, str], param_py: dict[str, str]
) -> tuple[list[ast.stmt], list[ast.stmt]]:
    """The checks of a kernel (bounds_guard.py): the rank and static dimensions of each
    array argument, at its start; the sizes for which an access would leave its array,
    once the parameters are computed."""
    fn = program.function
    arrays: list[tuple[str, str, tuple[int | None, ...]]] = []
    extent_of: dict[tuple[str, int], ast.expr] = {}
    for a, arg in zip(fn.arguments, fn.op.body.block.args, strict=True):
        t = a.type
        if not isinstance(t, MemRefType) or isinstance(t.element_type, MemRefType):
            continue
        shape = tuple(None if n < 0 else n for n in t.get_shape())
        arrays.append((a.name, args[arg], shape))
        array = program.array_names.get(arg)
        if array is not None:
            for d in range(len(shape)):
                extent_of[(array, d)] = ast.Subscript(
                    ast.Attribute(name(args[arg]), "shape", ast.Load()), const(d), ast.Load()
                )
    report = memory_report(program)
    tr = Translator(lambda _s, _a: [])
    tr.names.update(param_py)
    for info in program.arrays.values():
        if info.virtual or info.value in fn.op.body.block.args:
            continue
        for d, size in enumerate(info.shape):
            if size is not None and any(g.array == info.name and g.dim == d for g in report.guards):
                pa = extent_pw_aff(program, size)
                build = isl.AstBuild.from_context(isl.Set.universe(pa.get_domain_space()))
                extent_of[(info.name, d)] = tr.expr(build.expr_from_pw_aff(pa))
    return static_checks(arrays), guard_checks(report, call_context(program), param_py, extent_of)


def _shared_values(body: list[ast.stmt], state: KernelState) -> str | None:
    """Why the loop of `body` cannot run its iterations on threads (None: it can).

    Values kept across statements live in dictionaries, which Numba's threads
    would update at once.
    """
    dicts = set(state.dicts.values())
    for st in body:
        for x in ast.walk(st):
            if (
                isinstance(x, ast.Subscript)
                and isinstance(x.ctx, ast.Store)
                and isinstance(x.value, ast.Name)
                and x.value.id in dicts
            ):
                return "its statements pass values through a dictionary (not thread-safe)"
    return None


def _fixed_value(
    v: SSAValue, args: dict[SSAValue, str], program: PolyProgram, helpers: set[str]
) -> ast.expr | None:
    """The expression of a value computed outside every loop, at the kernel's start.

    Constants, pure ops and loads of arguments that no statement writes (so the
    value read at the start is the value read where the program reads it);
    None for anything else.
    """
    if v in args:
        return name(args[v])
    if not isinstance(v, OpResult):
        return None
    op = v.op
    if isinstance(op, k.LoadOp | memref.LoadOp):
        mem, subs = op.operands[0], op.operands[1:]
        if mem not in args or program.array_names.get(mem) in program.written_arrays():
            return None
        idx = [_fixed_value(x, args, program, helpers) for x in subs]
        if any(x is None for x in idx):
            return None
        key = ast.Tuple(cast(list[ast.expr], idx), ast.Load())
        e: ast.expr = ast.Subscript(name(args[mem]), key, ast.Load())
    elif numpy_ops.supported(op) and not op.regions:
        operands = [_fixed_value(x, args, program, helpers) for x in op.operands]
        if any(x is None for x in operands):
            return None
        e = numpy_ops.emit(op, cast(list[ast.expr], operands), helpers)[v.index]
    else:
        return None
    return ast.Call(name("int"), [e], []) if isinstance(v.type, IndexType) else e


def _with_comments(source: str) -> str:
    """The comment statements of the vectorizer as `#` lines."""
    out = []
    for line in source.splitlines():
        stripped = line.strip()
        text = _comment_text(stripped) if COMMENT in stripped else None
        if text is None:
            out.append(line)
        else:
            out.append(f"{line[: len(line) - len(stripped)]}# {comment_text(text)}")
    return "\n".join(out)


def _comment_text(stripped: str) -> str | None:
    try:
        value = ast.literal_eval(stripped)
    except (ValueError, SyntaxError):
        return None
    if isinstance(value, str) and value.startswith(COMMENT):
        return value[len(COMMENT) :]
    return None


def helper_order(helpers: frozenset[str] | set[str]) -> list[str]:
    """The helpers, each after the helpers it calls."""
    out: list[str] = []

    def add(h: str) -> None:
        if h in out:
            return
        for d in numpy_ops.HELPER_DEPS.get(h, ()):
            add(d)
        out.append(h)

    for h in sorted(helpers):
        add(h)
    return out


def _returns(state: KernelState, fn: Any) -> list[ast.stmt]:
    """The kernel's return: the values the function returns, as its last statements.

    A result is an argument, a buffer the function allocated (the kernel
    allocates it too), a value kept by the statements (iter_args), or a pure
    value of those computed after the loops: views of them (onnx-mlir returns a
    memref.reinterpret_cast of an argument for a transpose that moves no data),
    casts, sizes.
    """
    term = fn.op.body.block.last_op
    if term is None or not isinstance(term, func.ReturnOp) or not term.operands:
        return []
    out: list[ast.stmt] = []
    env: dict[SSAValue, ast.expr] = {}

    def value(v: SSAValue) -> ast.expr:
        if v in env:
            return env[v]
        if v in state.program.virtual:
            e: ast.expr = ast.Subscript(name(state.dict_of(v)), state.empty_key())
        elif v in state.args:
            e = name(state.args[v])
        elif v in state.dicts:
            e = ast.Subscript(name(state.dicts[v]), state.empty_key())
        elif (
            isinstance(v, OpResult)
            and v.op.parent_op() is fn.op
            and is_pure(v.op)
            and numpy_ops.supported(v.op)
        ):
            exprs = numpy_ops.emit(v.op, [value(x) for x in v.op.operands], state.helpers)
            for r, x in zip(v.op.results, exprs, strict=True):
                if isinstance(x, ast.Constant | ast.Name):
                    env[r] = x  # emitters read constants (a dimension's number) inline
                    continue
                local = state.names.fresh(r.name_hint or "r")
                out.append(assign(local, x))
                env[r] = name(local)
            return env[v]
        elif isinstance(v, OpResult) and v.op.parent_op() is fn.op and is_pure(v.op):
            # A pure value outside every loop is computed here; the op's own translation
            # refused it (krnl.get_linear_offset_index of a layout the reader kept).
            raise UnsupportedError(
                f"{state.stage}: cannot return the value of `{v.op.name}`, which has no "
                f"translation for these operands ({', '.join(str(x.type) for x in v.op.operands)})",
                location=fn.location(v.op),
                hint="`polykrnl ops` lists what each stage supports",
            )
        else:
            raise UnsupportedError(
                f"{state.stage}: cannot return a value computed outside the loops",
                location=fn.location(term),
                hint="return arguments, allocated buffers, iterate results, or views of them",
            )
        env[v] = e
        return e

    results = [value(v) for v in term.operands]
    out.append(ast.Return(results[0] if len(results) == 1 else ast.Tuple(results, ast.Load())))
    return out
