"""NumpyKernel: a Schedule as a Python function over NumPy arrays.

``sched.to_numpy()`` builds isl's AST of the schedule, writes it as Python
(loops named after the Krnl loops, statements with the interpreter's op
semantics), and compiles it once. Calling the kernel checks the arguments
like ``pk.run_reference`` does (names, shapes, dtypes), updates memref
arguments in place and returns the function's results.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, IndexType, MemRefType
from xdsl.ir import OpResult, SSAValue

from polykrnl import display
from polykrnl.codegen import numpy_ops
from polykrnl.codegen.fuse import fuse_temporaries
from polykrnl.codegen.isl_ast import Translator, build_ast, python_name
from polykrnl.codegen.memory_ops import HELPERS
from polykrnl.codegen.pyast import assign, name
from polykrnl.codegen.statements import KernelState, Names, StatementWriter
from polykrnl.codegen.vectorize import COMMENT, Vectorizer, copied_statements
from polykrnl.errors import UnsupportedError
from polykrnl.model import dialect as k
from polykrnl.model.interpreter import (
    Interpreter,
    handed_back,
    memref_dtype,
    memref_shape,
    registered_calls,
    scalar_dtype,
)
from polykrnl.model.poly import DimParam, PolyProgram, is_pure
from polykrnl.transforms import legality
from polykrnl.transforms.looptree import loop_tree
from polykrnl.transforms.recipe import schedule

if TYPE_CHECKING:
    from polykrnl.transforms.core import Schedule


@dataclass(frozen=True, eq=False)
class NumpyKernel:
    """A compiled kernel: `.source` (Python text) and `__call__(**arrays_and_params)`."""

    schedule: Schedule = field(repr=False)
    source: str
    entry: str  # the name of the generated function in `source`
    # False when a reduction was reassociated (a contraction as np.einsum): floating-
    # point results then differ from the reference in the last bits.
    exact: bool = True
    helpers: frozenset[str] = frozenset()  # the helper functions the source defines
    function_source: str = ""  # the generated functions alone (for a caller's module)

    @cached_property
    def _function(self) -> Any:
        namespace: dict[str, Any] = {}
        exec(compile(self.source, f"<polykrnl kernel {self.entry}>", "exec"), namespace)
        if "_pk_calls" in namespace:
            # In-process, krnl.call reaches the functions of polykrnl.register_call.
            namespace["_pk_calls"] = _RegisteredCalls()
        return namespace[self.entry]

    @cached_property
    def _signature(self) -> list[tuple[str, Any, Any]]:
        """Per argument: its name, the dtype and shape of a memref (or the scalar's type
        constructor), for the fast path of __call__."""
        out: list[tuple[str, Any, Any]] = []
        for a in self.schedule.program.function.arguments:
            t = a.type
            if isinstance(t, MemRefType) and not isinstance(t.element_type, MemRefType):
                out.append((a.name, memref_dtype(t), memref_shape(t)))
            elif isinstance(t, IndexType):
                out.append((a.name, int, None))
            elif isinstance(t, Float16Type | Float32Type | Float64Type):
                out.append((a.name, scalar_dtype(t).type, None))
            else:
                out.append((a.name, None, None))  # checked by the interpreter's rules
        return out

    def _fast_values(self, given: dict[str, Any]) -> list[Any] | None:
        """The arguments when they are exactly what the kernel takes (else None)."""
        if len(given) != len(self._signature):
            return None
        values: list[Any] = []
        for arg, kind, shape in self._signature:
            v = given.get(arg, given)  # `given` itself: missing
            if shape is not None:
                if (
                    type(v) is not np.ndarray
                    or v.dtype != kind
                    or v.ndim != len(shape)
                    or any(w is not None and w != g for w, g in zip(shape, v.shape, strict=True))
                ):
                    return None
                values.append(v)
            elif kind is int and type(v) is int:
                values.append(v)
            elif kind not in (None, int) and type(v) in (float, int, kind):
                values.append(kind(v))
            else:
                return None
        return values

    def __call__(self, **arrays_and_params: Any) -> Any:
        fn = self.schedule.program.function
        fast = self._fast_values(arrays_and_params)
        writeback: list[tuple[list[Any], np.ndarray[Any, Any]]] = []
        if fast is not None:
            values = fast
        else:
            # Lists, conversions and every error message: the interpreter's rules.
            values, writeback = Interpreter(fn.module).bind_arguments(fn, arrays_and_params)
        with np.errstate(all="ignore"):
            results = self._function(*values)
        if results is None:
            results = ()
        elif not isinstance(results, tuple):
            results = (results,)
        return handed_back(fn, list(results), writeback)

    def __repr__(self) -> str:
        lines = self.source.count("\n")
        return f"<NumpyKernel @{self.schedule.program.function.name}: {lines} lines>"

    def _repr_html_(self) -> str:
        """Jupyter: the call signature, what the kernel guarantees, the highlighted source."""
        fn = self.schedule.program.function
        rows = [(a.name, str(a.type)) for a in fn.arguments]
        exact = (
            "exact: bit for bit the reference interpreter's results"
            if self.exact
            else "reassociated: float sums or products in another order than the reference"
        )
        body = (
            display.section(
                f"{self.entry}(**arrays_and_params)", display.html_table(("argument", "type"), rows)
            )
            + f'<div style="margin: 4px 0;">{display.escape(exact)}</div>'
            + display.section("source", display.highlight(self.source, "python"))
        )
        return display.display_box("numpy-kernel", f"NumpyKernel @{fn.name}", body)


def to_numpy(
    sched: Schedule, vectorize: bool = True, reassociate: bool = True, parallel: bool = False
) -> NumpyKernel:
    """The NumPy kernel of a schedule.

    `vectorize=False` keeps every loop a Python loop; `reassociate=False` keeps
    reductions in their order (bit-exact results, slower contractions);
    `parallel=True` runs the krnl.parallel loops that stay Python loops around
    array code on a thread pool (scalar bodies hold the GIL and would not gain).
    """
    program = sched.program
    fn = program.function
    names = Names()
    # Builtins and the helpers a kernel may define: no generated local shadows them.
    names.taken.update({"np", "range", "min", "max", "_pk_calls", "_pk_pool"})
    names.taken.update(numpy_ops.PRELUDE, HELPERS)
    names.taken.update(f"kernel_{f.name}" for f in fn.module.functions if f.name != fn.name)
    args: dict[SSAValue, str] = {}
    params: list[str] = []
    for a, arg in zip(fn.arguments, fn.op.body.block.args, strict=True):
        args[arg] = names.fresh(a.name)
        params.append(args[arg])
    state = KernelState(program, names, args)
    callees: dict[str, NumpyKernel] = {}

    def call_target(callee: str) -> str:
        if callee not in callees:
            target = next((f for f in fn.module.functions if f.name == callee), None)
            if target is None or callee == fn.name:
                raise UnsupportedError(
                    f"NumPy code generation: func.call to @{callee}"
                    + (" (recursion)" if target is not None else ", which the module lacks"),
                    location=fn.location(fn.op),
                    hint="run it with pk.run_reference",
                )
            callees[callee] = to_numpy(schedule(target), vectorize, reassociate, parallel)
            names.taken.add(callees[callee].entry)
        return callees[callee].entry

    state.call_target = call_target
    prologue: list[ast.stmt] = []
    by_value = {p: v for v, p in program.symbols.items()}
    for p in program.params:
        py = python_name(p)
        v = by_value.get(p)
        if v is not None and v in args:
            if args[v] != py:
                prologue.append(assign(names.fresh(py), name(args[v])))
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
        raise UnsupportedError(
            f"NumPy code generation: the parameter {src} of @{fn.name} is computed "
            "inside the function from memory it writes (or by ops without a NumPy form)",
            location=fn.location(fn.op),
            hint="pass the size as an index argument",
        )
    stmts = {s.name: s for s in program.statements}
    translator = Translator(
        lambda s, dims: StatementWriter(state, stmts[s], dims).write(),
        taken=names.taken,
        threaded=frozenset(x for x in sched.loop_names() if parallel and sched.loop(x).parallel),
    )
    report = legality.check(sched) if vectorize else None
    # An illegal schedule (made with force=True) runs as written: scalar loops.
    vectorizer: Vectorizer | None = None
    if report is not None and report.legal:
        vectorizer = Vectorizer(
            state,
            stmts,
            {lv.loop: lv.status for lv in report.loops},
            {p: t for p in sched.loop_names() if (t := sched.tile_of(p)) is not None},
            {lv.loop: lv.why_not_vectorizable for lv in report.loops},
            reassociate=reassociate,
            carried={lv.loop: list(lv.pairs) for lv in report.loops},
        )
        translator.replace_loop = vectorizer
    root = build_ast(sched.tree)
    if vectorizer is not None:
        vectorizer.copied = copied_statements(root)
    body = translator.node(root)
    if any(isinstance(x, ast.Name) and x.id == "_pk_parallel" for st in body for x in ast.walk(st)):
        state.helpers.add("_pk_parallel")
    returns = _returns(state, fn)
    inits = [assign(d, ast.Dict([], [])) for d in state.dicts.values()]
    # Sizes the loops, the subscripts and the results do not use go.
    used = {n.id for st in [*body, *returns] for n in ast.walk(st) if isinstance(n, ast.Name)}
    kept: list[ast.stmt] = []
    for line in reversed(prologue):  # later sizes may be computed from earlier ones
        if isinstance(line, ast.Assign) and isinstance(line.targets[0], ast.Name):
            if line.targets[0].id not in used:
                continue
            used |= {n.id for n in ast.walk(line.value) if isinstance(n, ast.Name)}
        kept.append(line)
    prologue = kept[::-1]
    entry = names.fresh(f"kernel_{fn.name}")
    func = ast.FunctionDef(
        entry,
        ast.arguments([], [ast.arg(p) for p in params], None, [], [], None, []),
        fuse_temporaries([*prologue, *inits, *body, *returns]) or [ast.Pass()],
        [],
        None,
    )
    for c in callees.values():
        state.helpers |= c.helpers
    helpers = _with_deps(state.helpers)
    module = ast.Module([func], [])
    ast.fix_missing_locations(module)
    header = "\n".join(
        [
            f"# polykrnl NumPy kernel of @{fn.name}",
            "# schedule:",
            *(f"#   {line}" for line in str(loop_tree(sched)).splitlines()),
            "import numpy as np",
            "",
            *(numpy_ops.PRELUDE.get(h) or HELPERS[h] for h in helpers),
            "",
            *(c.function_source for c in callees.values()),
        ]
    )
    function_source = _with_comments(ast.unparse(module)) + "\n"
    exact = vectorizer is None or not vectorizer.reassociated
    exact = exact and all(c.exact for c in callees.values())
    return NumpyKernel(
        sched,
        header + "\n" + function_source,
        entry,
        exact,
        frozenset(state.helpers),
        "".join(c.function_source for c in callees.values()) + function_source,
    )


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
            out.append(f"{line[: len(line) - len(stripped)]}# {text}")
    return "\n".join(out)


def _comment_text(stripped: str) -> str | None:
    try:
        value = ast.literal_eval(stripped)
    except (ValueError, SyntaxError):
        return None
    if isinstance(value, str) and value.startswith(COMMENT):
        return value[len(COMMENT) :]
    return None


def _with_deps(helpers: set[str]) -> list[str]:
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
            e: ast.expr = ast.Subscript(name(state.dict_of(v)), ast.Tuple([], ast.Load()))
        elif v in state.args:
            e = name(state.args[v])
        elif v in state.dicts:
            e = ast.Subscript(name(state.dicts[v]), ast.Tuple([], ast.Load()))
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
        else:
            raise UnsupportedError(
                "NumPy code generation: cannot return a value computed outside the loops",
                location=fn.location(term),
                hint="return arguments, allocated buffers, iterate results, or views of them",
            )
        env[v] = e
        return e

    results = [value(v) for v in term.operands]
    out.append(ast.Return(results[0] if len(results) == 1 else ast.Tuple(results, ast.Load())))
    return out


class _RegisteredCalls(dict[str, Any]):
    """krnl.call targets as the interpreter finds them (looked up at each call)."""

    def __missing__(self, name: str) -> Any:
        target = registered_calls().get(name)
        if target is None:
            raise UnsupportedError(
                f"krnl.call to '{name}', which is not registered",
                hint=f"register a Python function with polykrnl.register_call('{name}', f)",
            )
        return _keywords_it_takes(target)


def _keywords_it_takes(target: Any) -> Any:
    """`target` called with the op's attributes it declares (all of them with **kwargs)."""
    try:
        params = dict(inspect.signature(target).parameters)
    except (TypeError, ValueError):
        params = {}
    takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())

    def call(*args: Any, **kwargs: Any) -> Any:
        return target(*args, **{n: v for n, v in kwargs.items() if takes_all or n in params})

    return call
