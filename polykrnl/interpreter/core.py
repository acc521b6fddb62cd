"""The reference interpreter's machinery: frames, the op table, loop nests, krnl.call targets."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TextIO

import numpy as np
from xdsl.dialects import affine, func, scf
from xdsl.dialects.builtin import (
    IndexType,
    IntegerType,
    MemRefType,
    Signedness,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.affine import AffineMap

from polykrnl.dialect import krnl as k
from polykrnl.dialect.registry import OpTable
from polykrnl.dialect.semi_affine import DivisorError, evaluate_map
from polykrnl.errors import ArgumentError, InterpretError, SourceLocation, UnsupportedError
from polykrnl.interpreter.values import (
    Fail,
    handed_back,
    is_float,
    make_value,
    memref_dtype,
    memref_shape,
    show_value,
)
from polykrnl.ir import Function, Module, location_of
from polykrnl.nest.loops import (
    Chain,
    ChildAnchor,
    Item,
    IVBound,
    Loop,
    MapBound,
    Stmt,
    YieldPoint,
    checked_nest,
)

# ------------------------------------------------------------------ krnl.call

CALLS: dict[str, Callable[..., Any]] = {}


def register_call(name: str, pyfunc: Callable[..., Any]) -> Callable[..., Any]:
    """Make `krnl.call` with ``funcName = name`` call `pyfunc`.

    `pyfunc` receives the call's parameters in order (memrefs as NumPy arrays
    to update in place, scalars as Python ints / NumPy floats / str), plus the
    op's other attributes as keyword arguments when it declares parameters of
    those names (or ``**kwargs``). Its return value becomes the op's results
    (a tuple for several). Returns `pyfunc`, so it can serve as a decorator
    body: ``register_call("f", lambda x: ...)``.

    Examples
    --------
    >>> import numpy as np
    >>> import polykrnl as pk
    >>> fn = pk.parse('''
    ... func.func @f(%A: memref<3xf32>) {
    ...   "krnl.call"(%A) {funcName = "fill_ones", numOfOutput = 1 : si64} : (memref<3xf32>) -> ()
    ...   return
    ... }''')["f"]
    >>> def fill_ones(a):
    ...     a[:] = 1
    >>> _ = pk.register_call("fill_ones", fill_ones)
    >>> A = np.zeros(3, dtype=np.float32)
    >>> pk.run_reference(fn, A=A)
    >>> A
    array([1., 1., 1.], dtype=float32)
    """
    if not name:
        raise ArgumentError("register_call needs a non-empty function name")
    if not callable(pyfunc):
        raise ArgumentError(
            f"register_call('{name}', ...) needs a callable, got {type(pyfunc).__name__}"
        )
    CALLS[name] = pyfunc
    return pyfunc


def unregister_call(name: str) -> None:
    """Forget a function registered with :func:`register_call` (no error if absent)."""
    CALLS.pop(name, None)


def registered_calls() -> dict[str, Callable[..., Any]]:
    """A copy of the registry of `krnl.call` targets."""
    return dict(CALLS)


# ------------------------------------------------------------------ entry point


class Frame:
    """The state of one function activation.

    `env` maps every SSA value computed so far to its value, including the
    original induction variables of the running loops and the iter_args of
    the running iterates (removed again when their loop or iterate ends, so
    that a use outside them is caught).
    """

    def __init__(self, fn: Function, nest: NestInfo) -> None:
        self.fn = fn
        self.nest = nest.nest
        self.info = nest
        self.env: dict[SSAValue, Any] = {}
        self.ivs: dict[Loop, int] = {}  # IVs of the concrete loops now running

    def get(self, v: SSAValue) -> Any:
        try:
            return self.env[v]
        except KeyError:
            pass
        if v in self.nest.origin_of_iv:
            raise Fail(
                f"induction variable {show_value(v)} is used where its loop is not running",
                "after the recipe, this statement sits outside the loop that carries "
                f"{show_value(v)}; read the tile start with krnl.get_induction_var_value "
                "or move the statement into the innermost loop",
            )
        raise Fail(
            f"{show_value(v)} is used before it was computed",
            "the op that defines it did not run before this use (a value defined in a "
            "loop or branch that did not execute, or a statement the recipe moved)",
        )

    def index(self, v: SSAValue) -> int:
        return int(self.get(v))


class NestInfo:
    """A function's loop nest, and for each concrete loop the original IVs it carries."""

    def __init__(self, fn: Function) -> None:
        self.nest = checked_nest(fn)
        carried: dict[Loop, list[SSAValue]] = {}
        for origin in self.nest.origins.values():
            if origin.carrier is not None:
                carried.setdefault(origin.carrier, []).append(origin.entry.iv)
        self.carried = {loop: tuple(vs) for loop, vs in carried.items()}


# ------------------------------------------------------------------ handlers

Handler = Callable[["Interpreter", Operation, Frame], Sequence[Any] | None]

#: what each op does when it runs; filled by this package's module of each dialect
INTERPRET: OpTable[Handler] = OpTable(
    "interpret",
    "the reference interpreter",
    "rewrite it with supported ops, or report the need",
)

# Terminators hand their operands to the op that runs the block (see exec_block).
TERMINATORS: tuple[type[Operation], ...] = (
    func.ReturnOp,
    scf.YieldOp,
    affine.YieldOp,
    scf.ConditionOp,
    k.TerminateOp,
    k.YieldOp,
)


def no_effect(it: Interpreter, op: Operation, fr: Frame) -> None:
    """The handler of ops that change no value."""
    return None


def supported_ops() -> tuple[str, ...]:
    """Names of the ops the interpreter executes (besides their terminators)."""
    return tuple(sorted(op.name for op in INTERPRET))


class Interpreter:
    """Runs the functions of one module; keeps module-level state (globals) across calls."""

    def __init__(
        self,
        module: Module,
        *,
        calls: Mapping[str, Callable[..., Any]] | None = None,
        stdout: TextIO | None = None,
        max_iterations: int | None = None,
    ) -> None:
        self.module = module
        # Loop iterations counted when each loop starts, so that a loop that would
        # pass the limit is refused before it runs (None: no limit).
        self.max_iterations = max_iterations
        self.iterations = 0
        self.calls = dict(calls or {})
        self._stdout = stdout
        self._nests: dict[func.FuncOp, NestInfo] = {}
        self.globals: dict[Operation, np.ndarray[Any, Any]] = {}
        self._work: dict[Loop, bool] = {}

    def charge(self, n: int) -> None:
        """Count a loop of `n` iterations that is about to run against max_iterations."""
        self.iterations += n
        if self.max_iterations is not None and self.iterations > self.max_iterations:
            raise Fail(
                f"this loop would run {n:,} iterations, more than the reference interpreter "
                f"is allowed in all ({self.max_iterations:,})",
                "give smaller sizes or bounds (the interpreter runs about 10^5 iterations "
                "a second)",
            )

    @property
    def stdout(self) -> TextIO:
        # Looked up at print time so that redirect_stdout and pytest's capsys work.
        return self._stdout if self._stdout is not None else sys.stdout

    # -- public entry
    def call(self, fn: Function, arguments: Mapping[str, Any]) -> Any:
        """Run `fn` on arguments given by name; see :func:`polykrnl.run_reference`."""
        values, writeback = self.bind_arguments(fn, arguments)
        with np.errstate(all="ignore"):
            results = self.run_function(fn, values)
        return handed_back(fn, results, writeback)

    # -- arguments
    def bind_arguments(
        self, fn: Function, arguments: Mapping[str, Any]
    ) -> tuple[list[Any], list[tuple[list[Any], np.ndarray[Any, Any]]]]:
        params = fn.arguments
        names = [p.name for p in params]
        signature = ", ".join(f"{p.name}: {p.type}" for p in params) or "no arguments"
        unknown = [n for n in arguments if n not in names]
        if unknown:
            raise ArgumentError(
                f"@{fn.name} has no argument named '{unknown[0]}'",
                location=fn.location(fn.op),
                hint=f"@{fn.name} takes ({signature})",
            )
        missing = [n for n in names if n not in arguments]
        if missing:
            raise ArgumentError(
                f"missing argument '{missing[0]}' of @{fn.name}"
                + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""),
                location=fn.location(fn.op),
                hint=f"@{fn.name} takes ({signature}); pass every argument by name",
            )
        values: list[Any] = []
        writeback: list[tuple[list[Any], np.ndarray[Any, Any]]] = []
        for p in params:
            v = _check_argument(fn, p.name, p.type, arguments[p.name])
            if isinstance(arguments[p.name], list):
                writeback.append((arguments[p.name], v))
            values.append(v)
        return values, writeback

    # -- functions
    def nest_of(self, fn: Function) -> NestInfo:
        info = self._nests.get(fn.op)
        if info is None:
            info = self._nests[fn.op] = NestInfo(fn)
        return info

    def run_function(self, fn: Function, args: Sequence[Any]) -> list[Any]:
        """Run `fn` on interpreter values (no checks); the values it returns."""
        if not fn.op.body.blocks:
            raise UnsupportedError(
                f"@{fn.name} is only declared: there is no body to run",
                location=self.location(fn.op),
                hint="give the function a body, or call an external function through "
                "krnl.call and polykrnl.register_call",
            )
        frame = Frame(fn, self.nest_of(fn))
        block = fn.op.body.block
        for a, v in zip(block.args, args, strict=True):
            frame.env[a] = v
        return self.exec_block(block, frame)

    def location(self, op: Operation) -> SourceLocation | None:
        return location_of(op, self.module)

    # -- blocks and ops
    def exec_block(self, block: Block, fr: Frame) -> list[Any]:
        """Run the ops of `block`; the operand values of its terminator, if any."""
        for op in block.ops:
            if isinstance(op, TERMINATORS):
                try:
                    return [fr.get(v) for v in op.operands]
                except Fail as e:
                    raise InterpretError(
                        e.message, location=self.location(op), hint=e.hint
                    ) from None
            self.exec_op(op, fr)
        return []

    def exec_op(self, op: Operation, fr: Frame) -> None:
        # The location only when the op has no handler: computing it for every op
        # executed cost a quarter of the interpreter's time.
        handler = INTERPRET.get(op) or INTERPRET.require(op, self.location(op))
        try:
            results = handler(self, op, fr)
        except Fail as e:
            raise InterpretError(e.message, location=self.location(op), hint=e.hint) from None
        except (ValueError, TypeError, OverflowError, ZeroDivisionError, IndexError) as e:
            raise InterpretError(
                f"{op.name} failed: {e}",
                location=self.location(op),
                hint="if the program is valid, this is a bug in polykrnl's interpreter",
            ) from None
        if results is not None:
            for r, v in zip(op.results, results, strict=True):
                fr.env[r] = v

    # -- Krnl loop nests
    def _has_work(self, loop: Loop) -> bool:
        """Whether any statement runs in `loop` (loops consumed by krnl.matmul have none)."""
        known = self._work.get(loop)
        if known is None:
            known = any(not isinstance(it, ChildAnchor) for it in loop.items) or (
                loop.child is not None and self._has_work(loop.child)
            )
            self._work[loop] = known
        return known

    def _bound_values(self, b: MapBound | IVBound, fr: Frame) -> list[int]:
        if isinstance(b, IVBound):
            if b.current not in fr.ivs:
                raise Fail(
                    f"the bound of a loop uses the induction variable of loop "
                    f"{_loop_name(b.current)}, which is not running",
                    "a point loop must stay inside its tile loop",
                )
            return [fr.ivs[b.current] + b.offset]
        return eval_map(b.map, [fr.index(v) for v in b.operands])

    def _run_loop(self, loop: Loop, fr: Frame) -> None:
        if not self._has_work(loop):
            return
        if loop.trivial:
            # onnx-mlir gives an unused point loop the bounds 0 to 1.
            ivs: Iterable[int] = range(1)
        else:
            try:
                lb = max(x for b in loop.lbs for x in self._bound_values(b, fr))
                ub = min(x for b in loop.ubs for x in self._bound_values(b, fr))
                ivs = range(lb, ub, loop.step)
                self.charge(len(ivs))
            except Fail as e:
                raise InterpretError(
                    e.message, location=self.location(loop.origin.iterate), hint=e.hint
                ) from None
        env = fr.env
        originals = fr.info.carried.get(loop, ())
        for iv in ivs:
            fr.ivs[loop] = iv
            for v in originals:
                env[v] = iv
            self._run_body(loop.body(), fr)
        fr.ivs.pop(loop, None)
        for v in originals:
            env.pop(v, None)

    def _run_body(self, items: Iterable[Item | Loop], fr: Frame) -> None:
        anchor: k.IterateOp | None = None
        for item in items:
            if isinstance(item, ChildAnchor) and item.iterate.iter_args:
                # The anchor's iter_args start before its loop (the next item)
                # and its results are their values after it.
                anchor = item.iterate
                self.start_iter_args(anchor, fr)
                continue
            self._run_item(item, fr)
            if isinstance(item, Loop) and anchor is not None:
                self.finish_iter_args(anchor, fr)
                anchor = None
        if anchor is not None:
            self.finish_iter_args(anchor, fr)

    def _run_item(self, item: Item | Loop, fr: Frame) -> None:
        if isinstance(item, Loop):
            self._run_loop(item, fr)
        elif isinstance(item, Stmt):
            for op in item.ops:
                self.exec_op(op, fr)
        elif isinstance(item, Chain):
            self.exec_op(item.iterate, fr)
        elif isinstance(item, YieldPoint):
            term = item.iterate.body.block.last_op
            assert isinstance(term, k.YieldOp)
            try:
                values = [fr.get(v) for v in term.values]
            except Fail as e:
                raise InterpretError(e.message, location=self.location(term), hint=e.hint) from None
            for a, v in zip(item.iterate.iter_args, values, strict=True):
                fr.env[a] = v
        # ChildAnchor items only mark where Loop.body() puts the child loop.

    def start_iter_args(self, op: k.IterateOp, fr: Frame) -> None:
        for a, v in zip(op.iter_args, [fr.get(v) for v in op.iter_inits], strict=True):
            fr.env[a] = v

    def finish_iter_args(self, op: k.IterateOp, fr: Frame) -> None:
        for r, a in zip(op.results, op.iter_args, strict=True):
            fr.env[r] = fr.env.pop(a)

    def run_iterate(self, op: k.IterateOp, fr: Frame) -> list[Any]:
        nest = fr.nest
        self.start_iter_args(op, fr)
        if op in nest.inline:
            self._run_body(nest.inline_body(op), fr)
        elif op in nest.roots:
            self._run_loop(nest.roots[op], fr)
        else:
            raise UnsupportedError(
                "krnl.iterate(...) with () outside the body of the krnl.iterate that "
                "defines its loops",
                location=self.location(op),
                hint="an iterate with an empty `with` list marks where loops go inside the "
                "body of the iterate that binds them: nest it there directly",
            )
        return [fr.env.pop(a) for a in op.iter_args]

    # -- printing
    def write(self, text: str) -> None:
        self.stdout.write(text)


def _loop_name(loop: Loop) -> str:
    return f"%{loop.handle.name_hint}" if loop.handle.name_hint else loop.name


def eval_map(m: AffineMap, operands: Sequence[int]) -> list[int]:
    """The results of `m` (semi-affine ones too, a non-positive divisor a Fail)."""
    try:
        return evaluate_map(m, operands)
    except DivisorError as e:
        raise Fail(
            f"affine map {m}: {e}",
            "the symbol a map divides by must be positive when the op runs: check the "
            "value bound to it",
        ) from None


def _check_argument(fn: Function, name: str, t: Attribute, value: Any) -> Any:
    """`value` as the interpreter value of argument `name` of type `t`, or ArgumentError."""
    loc = fn.location(fn.op)

    def bad(what: str, hint: str) -> ArgumentError:
        return ArgumentError(f"argument '{name}' of @{fn.name}: {what}", location=loc, hint=hint)

    if isinstance(t, MemRefType):
        if isinstance(t.element_type, MemRefType) and isinstance(value, list | tuple):
            seq = np.empty(len(value), dtype=object)
            for i, x in enumerate(value):
                seq[i] = x
            value = seq
        if not isinstance(value, np.ndarray):
            raise bad(
                f"expected a NumPy array for {t}, got {type(value).__name__}",
                f"pass np.asarray(...) with dtype {memref_dtype(t)}",
            )
        want_shape = memref_shape(t)
        shown = "x".join("?" if d is None else str(d) for d in want_shape) or "scalar"
        if value.ndim != len(want_shape) or any(
            w is not None and w != g for w, g in zip(want_shape, value.shape, strict=False)
        ):
            raise bad(
                f"expected shape {shown} for {t}, got {'x'.join(map(str, value.shape)) or '()'}",
                "`?` dimensions accept any size; the others must match exactly",
            )
        want = memref_dtype(t)
        if value.dtype != want:
            raise bad(
                f"expected dtype {want} for {t}, got {value.dtype}",
                f"convert it with .astype(np.{want}); the interpreter never converts "
                "arrays silently, since results are written back in place",
            )
        return value
    if isinstance(t, IndexType | IntegerType):
        if isinstance(value, bool | np.bool_) and not (
            isinstance(t, IntegerType) and t.width.data == 1
        ):
            raise bad(f"expected an integer for {t}, got a bool", "pass an int")
        if not isinstance(value, int | np.integer | bool | np.bool_):
            raise bad(f"expected an integer for {t}, got {type(value).__name__}", "pass an int")
        x = int(value)
        if isinstance(t, IntegerType):
            w = t.width.data
            lo = 0 if (w == 1 or t.signedness.data == Signedness.UNSIGNED) else -(1 << (w - 1))
            hi = (1 << w) - 1 if lo == 0 else (1 << (w - 1)) - 1
            if not lo <= x <= hi:
                raise bad(f"{x} does not fit in {t} [{lo}, {hi}]", "pass a value in range")
        return make_value(x, t)
    if is_float(t):
        if not isinstance(value, int | float | np.integer | np.floating) or isinstance(
            value, bool | np.bool_
        ):
            raise bad(f"expected a number for {t}, got {type(value).__name__}", "pass a float")
        return make_value(value, t)
    if isinstance(t, k.StringType):
        if not isinstance(value, str):
            raise bad(f"expected a str for !krnl.string, got {type(value).__name__}", "pass a str")
        return value
    raise UnsupportedError(
        f"argument '{name}' of @{fn.name} has the type {t}, which the interpreter cannot pass",
        location=loc,
        hint="arguments are memrefs, index, integers, floats or !krnl.string",
    )


# -- regions of control-flow ops (affine.for/if and scf.for/if share them)


def run_loop_body(
    it: Interpreter, op: Operation, fr: Frame, ivs: Iterable[int], state: list[Any]
) -> list[Any]:
    """Run the body of a for op once per value of `ivs`, carrying `state` through it."""
    block = op.regions[0].block
    iv, *carried = block.args
    for i in ivs:
        fr.env[iv] = i
        for a, v in zip(carried, state, strict=True):
            fr.env[a] = v
        state = it.exec_block(block, fr)
    return state


def run_branch(it: Interpreter, op: Operation, fr: Frame, taken: bool) -> Sequence[Any]:
    """Run the then-region (or the else-region, possibly empty) of an if op."""
    region = op.regions[0] if taken else op.regions[1]
    if not region.blocks:
        return []
    return it.exec_block(region.block, fr)
