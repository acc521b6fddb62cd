"""The reference interpreter: runs a Krnl function element by element.

This is the oracle of polykrnl: every generated kernel is compared with it, so
it favours being plainly right over being fast. It executes the concrete loop
nest that :mod:`polykrnl.model.nest` builds (the loops onnx-mlir's
Krnl-to-affine lowering would produce, after the recipe), sequentially and in
program order; `krnl.parallel` and `krnl.unroll` do not change the result of
a sequential run.

Values:

- a memref is a NumPy array, updated in place (arguments too); a memref whose
  elements are vectors (`memref<4xvector<8xf32>>`) is an array with the
  vector's dimensions appended (`(4, 8)`); a sequence (`memref<?xmemref<..>>`)
  is an object array of arrays;
- an `index` is a Python int; a fixed-width integer is a Python int kept in
  the range of its type (wrapped after every operation: signed for signless
  types, 0/1 for `i1`); a float is a NumPy scalar of its type's precision, so
  `f32` arithmetic rounds as `f32`;
- a `!krnl.string` is a Python str; a vector is a 1-D (or n-D) NumPy array.

Transcendental functions (exp, tanh, erf, ...) are evaluated in float64 and
rounded once to the result type.

Newly allocated memory (`memref.alloc`, `memref.alloca`, `krnl.seqalloc`)
holds NaN for floats and 0 for integers: a float result that depends on
memory the program never wrote shows up as NaN instead of passing unnoticed.

Run-time problems (out-of-bounds accesses, division by zero, undefined
conversions, unknown `krnl.call` targets) raise
:class:`~polykrnl.errors.InterpretError` with the op's source location; ops
the interpreter does not know raise :class:`~polykrnl.errors.UnsupportedError`.
"""

from __future__ import annotations

import inspect
import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TextIO, cast

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AffineSetAttr,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    Signedness,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.ir.affine.affine_set import AffineConstraintKind

from polykrnl.errors import ArgumentError, InterpretError, SourceLocation, UnsupportedError
from polykrnl.model import dialect as k
from polykrnl.model.ir import Function, Module, int_list, location_of
from polykrnl.model.nest import (
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

__all__ = [
    "Interpreter",
    "register_call",
    "registered_calls",
    "run_reference",
    "unregister_call",
]

# ------------------------------------------------------------------ krnl.call

_CALLS: dict[str, Callable[..., Any]] = {}


def register_call(name: str, pyfunc: Callable[..., Any]) -> Callable[..., Any]:
    """Make `krnl.call` with ``funcName = name`` call `pyfunc`.

    `pyfunc` receives the call's parameters in order (memrefs as NumPy arrays
    to update in place, scalars as Python ints / NumPy floats / str), plus the
    op's other attributes as keyword arguments when it declares parameters of
    those names (or ``**kwargs``). Its return value becomes the op's results
    (a tuple for several). Returns `pyfunc`, so it can serve as a decorator
    body: ``register_call("f", lambda x: ...)``.
    """
    if not name:
        raise ArgumentError("register_call needs a non-empty function name")
    if not callable(pyfunc):
        raise ArgumentError(
            f"register_call('{name}', ...) needs a callable, got {type(pyfunc).__name__}"
        )
    _CALLS[name] = pyfunc
    return pyfunc


def unregister_call(name: str) -> None:
    """Forget a function registered with :func:`register_call` (no error if absent)."""
    _CALLS.pop(name, None)


def registered_calls() -> dict[str, Callable[..., Any]]:
    """A copy of the registry of `krnl.call` targets."""
    return dict(_CALLS)


# ------------------------------------------------------------------ entry point


def run_reference(fn: Function, /, schedule: Any = None, **arrays_and_params: Any) -> Any:
    """Run `fn` with the reference interpreter; arguments are passed by name.

    Memref arguments are NumPy arrays of the exact dtype (``f32`` ->
    ``float32``, ``index`` -> ``int64``, ...) and shape (``?`` accepts any
    size); they are updated in place. Scalars are Python or NumPy numbers,
    strings are str. Returns None, the single result, or a tuple of results.

    With ``schedule=s`` (a polykrnl Schedule of `fn`), the statement instances
    run in the order of `s` instead of the program's own order.
    """
    if schedule is not None:
        from polykrnl.model.poly_exec import run_schedule

        return run_schedule(fn, schedule, arrays_and_params)
    return Interpreter(fn.module).call(fn, arrays_and_params)


# ------------------------------------------------------------------ types


def _int_dtype(t: IntegerType) -> np.dtype[Any]:
    w = t.width.data
    if w == 1:
        return np.dtype(np.bool_)
    if w not in (8, 16, 32, 64):
        raise UnsupportedError(f"integers of width {w} are not supported by the interpreter")
    unsigned = t.signedness.data == Signedness.UNSIGNED
    return np.dtype(f"{'u' if unsigned else ''}int{w}")


def scalar_dtype(t: Attribute) -> np.dtype[Any]:
    """The NumPy dtype that stores elements of MLIR type `t`."""
    if isinstance(t, Float32Type):
        return np.dtype(np.float32)
    if isinstance(t, Float64Type):
        return np.dtype(np.float64)
    if isinstance(t, Float16Type):
        return np.dtype(np.float16)
    if isinstance(t, IntegerType):
        return _int_dtype(t)
    if isinstance(t, IndexType):
        return np.dtype(np.int64)
    if isinstance(t, k.StringType | MemRefType):
        return np.dtype(object)
    if isinstance(t, VectorType):
        return scalar_dtype(t.element_type)
    raise UnsupportedError(f"the interpreter has no NumPy representation for the type {t}")


def memref_dtype(t: MemRefType) -> np.dtype[Any]:
    return scalar_dtype(t.element_type)


def _vector_shape(t: Attribute) -> tuple[int, ...]:
    return tuple(t.get_shape()) if isinstance(t, VectorType) else ()


def memref_shape(t: MemRefType) -> tuple[int | None, ...]:
    """The array shape of a memref type: None for `?`, vector dims appended."""
    dims = tuple(None if d < 0 else d for d in t.get_shape())
    return dims + _vector_shape(t.element_type)


def _width(t: Attribute) -> int:
    if isinstance(t, IntegerType):
        return t.width.data
    if isinstance(t, IndexType):
        return 64
    raise UnsupportedError(f"expected an integer or index type, got {t}")


def _signed(x: int, w: int) -> int:
    """`x` read as a signed w-bit integer."""
    x &= (1 << w) - 1
    return x - (1 << w) if x >> (w - 1) else x


def _unsigned(x: int, w: int) -> int:
    return x & ((1 << w) - 1)


def _wrap(x: int, t: Attribute) -> int:
    """Canonical value of integer `x` in type `t` (index: unbounded Python int)."""
    if isinstance(t, IndexType):
        return x
    assert isinstance(t, IntegerType)
    w = t.width.data
    if w == 1 or t.signedness.data == Signedness.UNSIGNED:
        return _unsigned(x, w)
    return _signed(x, w)


def _is_float(t: Attribute) -> bool:
    return isinstance(t, Float16Type | Float32Type | Float64Type)


_FLOAT_SCALARS: dict[type[Attribute], type[np.floating[Any]]] = {
    Float16Type: np.float16,
    Float32Type: np.float32,
    Float64Type: np.float64,
}


def make_value(x: Any, t: Attribute) -> Any:
    """`x` as the interpreter's canonical value of MLIR type `t`."""
    ctor = _FLOAT_SCALARS.get(type(t))
    if ctor is not None:  # the most frequent case first
        return ctor(x)
    if isinstance(t, IndexType):
        return int(x)
    if isinstance(t, IntegerType):
        return _wrap(int(x), t)
    if isinstance(t, VectorType):
        return np.array(x, dtype=scalar_dtype(t)).reshape(tuple(t.get_shape()))
    if isinstance(t, k.StringType):
        return str(x)
    return x


def _from_memory(x: Any, t: Attribute) -> Any:
    """A value read from an array element of MLIR type `t`."""
    if isinstance(t, VectorType):
        return x.copy()  # a vector is a value; a memref element (sequences) stays a reference
    if isinstance(t, IndexType | IntegerType):
        return _wrap(int(x), t)
    if isinstance(t, k.StringType):
        return str(x)
    return x


def _user_value(x: Any, t: Attribute) -> Any:
    """How a result is handed back to Python: fixed-width ints as NumPy scalars."""
    if isinstance(t, IntegerType):
        return scalar_dtype(t).type(x)
    return x


def handed_back(
    fn: Function,
    results: Sequence[Any],
    writeback: Sequence[tuple[list[Any], np.ndarray[Any, Any]]],
) -> Any:
    """Copy list arguments back and hand the results over: None, one value or a tuple."""
    for lst, arr in writeback:
        lst[:] = list(arr)
    out = tuple(_user_value(r, t) for r, t in zip(results, fn.result_types, strict=True))
    if not out:
        return None
    return out[0] if len(out) == 1 else out


def _name(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else "an unnamed value"


class _Fail(Exception):
    """A run-time problem of the op being executed (located by the caller)."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


# ------------------------------------------------------------------ frames


class _Frame:
    """The state of one function activation.

    `env` maps every SSA value computed so far to its value, including the
    original induction variables of the running loops and the iter_args of
    the running iterates (removed again when their loop or iterate ends, so
    that a use outside them is caught).
    """

    def __init__(self, fn: Function, nest: _NestInfo) -> None:
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
            raise _Fail(
                f"induction variable {_name(v)} is used where its loop is not running",
                "after the recipe, this statement sits outside the loop that carries "
                f"{_name(v)}; read the tile start with krnl.get_induction_var_value "
                "or move the statement into the innermost loop",
            )
        raise _Fail(
            f"{_name(v)} is used before it was computed",
            "the op that defines it did not run before this use (a value defined in a "
            "loop or branch that did not execute, or a statement the recipe moved)",
        )

    def index(self, v: SSAValue) -> int:
        return int(self.get(v))


class _NestInfo:
    """A function's loop nest, and for each concrete loop the original IVs it carries."""

    def __init__(self, fn: Function) -> None:
        self.nest = checked_nest(fn)
        carried: dict[Loop, list[SSAValue]] = {}
        for origin in self.nest.origins.values():
            if origin.carrier is not None:
                carried.setdefault(origin.carrier, []).append(origin.entry.iv)
        self.carried = {loop: tuple(vs) for loop, vs in carried.items()}


# ------------------------------------------------------------------ handlers

Handler = Callable[["Interpreter", Operation, _Frame], Sequence[Any] | None]
_HANDLERS: dict[str, Handler] = {}


def _handles(*names: str) -> Callable[[Handler], Handler]:
    def deco(f: Handler) -> Handler:
        for n in names:
            _HANDLERS[n] = f
        return f

    return deco


_TERMINATORS = frozenset(
    {"func.return", "scf.yield", "affine.yield", "scf.condition", "krnl.terminate", "krnl.yield"}
)


def supported_ops() -> tuple[str, ...]:
    """Names of the ops the interpreter executes (besides their terminators)."""
    return tuple(sorted(_HANDLERS))


class Interpreter:
    """Runs the functions of one module; keeps module-level state (globals) across calls."""

    def __init__(
        self,
        module: Module,
        *,
        calls: Mapping[str, Callable[..., Any]] | None = None,
        stdout: TextIO | None = None,
    ) -> None:
        self.module = module
        self.calls = dict(calls or {})
        self._stdout = stdout
        self._nests: dict[func.FuncOp, _NestInfo] = {}
        self._globals: dict[Operation, np.ndarray[Any, Any]] = {}
        self._work: dict[Loop, bool] = {}

    @property
    def stdout(self) -> TextIO:
        # Looked up at print time so that redirect_stdout and pytest's capsys work.
        return self._stdout if self._stdout is not None else sys.stdout

    # -- public entry
    def call(self, fn: Function, arguments: Mapping[str, Any]) -> Any:
        """Run `fn` on arguments given by name; see :func:`run_reference`."""
        values, writeback = self._bind_arguments(fn, arguments)
        with np.errstate(all="ignore"):
            results = self.run_function(fn, values)
        return handed_back(fn, results, writeback)

    # -- arguments
    def _bind_arguments(
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
    def _nest(self, fn: Function) -> _NestInfo:
        info = self._nests.get(fn.op)
        if info is None:
            info = self._nests[fn.op] = _NestInfo(fn)
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
        frame = _Frame(fn, self._nest(fn))
        block = fn.op.body.block
        for a, v in zip(block.args, args, strict=True):
            frame.env[a] = v
        return self.exec_block(block, frame)

    def location(self, op: Operation) -> SourceLocation | None:
        return location_of(op, self.module)

    # -- blocks and ops
    def exec_block(self, block: Block, fr: _Frame) -> list[Any]:
        """Run the ops of `block`; the operand values of its terminator, if any."""
        for op in block.ops:
            if op.name in _TERMINATORS:
                try:
                    return [fr.get(v) for v in op.operands]
                except _Fail as e:
                    raise InterpretError(
                        e.message, location=self.location(op), hint=e.hint
                    ) from None
            self._exec_op(op, fr)
        return []

    def _exec_op(self, op: Operation, fr: _Frame) -> None:
        handler = _HANDLERS.get(op.name)
        if handler is None:
            raise UnsupportedError(
                f"the reference interpreter does not support {op.name}",
                location=self.location(op),
                hint="rewrite it with supported ops (see "
                "polykrnl.model.interpreter.supported_ops()), or report the need",
            )
        try:
            results = handler(self, op, fr)
        except _Fail as e:
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

    def _bound_values(self, b: MapBound | IVBound, fr: _Frame) -> list[int]:
        if isinstance(b, IVBound):
            if b.current not in fr.ivs:
                raise _Fail(
                    f"the bound of a loop uses the induction variable of loop "
                    f"{_loop_name(b.current)}, which is not running",
                    "a point loop must stay inside its tile loop",
                )
            return [fr.ivs[b.current] + b.offset]
        return _eval_map(b.map, [fr.index(v) for v in b.operands])

    def _run_loop(self, loop: Loop, fr: _Frame) -> None:
        if not self._has_work(loop):
            return
        if loop.trivial:
            # onnx-mlir gives an unused point loop the bounds 0 to 1.
            ivs: Iterable[int] = range(1)
        else:
            try:
                lb = max(x for b in loop.lbs for x in self._bound_values(b, fr))
                ub = min(x for b in loop.ubs for x in self._bound_values(b, fr))
            except _Fail as e:
                raise InterpretError(
                    e.message, location=self.location(loop.origin.iterate), hint=e.hint
                ) from None
            ivs = range(lb, ub, loop.step)
        env = fr.env
        originals = fr.info.carried.get(loop, ())
        for iv in ivs:
            fr.ivs[loop] = iv
            for v in originals:
                env[v] = iv
            for item in loop.body():
                self._run_item(item, fr)
        fr.ivs.pop(loop, None)
        for v in originals:
            env.pop(v, None)

    def _run_item(self, item: Item | Loop, fr: _Frame) -> None:
        if isinstance(item, Loop):
            self._run_loop(item, fr)
        elif isinstance(item, Stmt):
            for op in item.ops:
                self._exec_op(op, fr)
        elif isinstance(item, Chain):
            self._exec_op(item.iterate, fr)
        elif isinstance(item, YieldPoint):
            term = item.iterate.body.block.last_op
            assert isinstance(term, k.YieldOp)
            try:
                values = [fr.get(v) for v in term.values]
            except _Fail as e:
                raise InterpretError(e.message, location=self.location(term), hint=e.hint) from None
            for a, v in zip(item.iterate.iter_args, values, strict=True):
                fr.env[a] = v
        # ChildAnchor items only mark where Loop.body() puts the child loop.

    def run_iterate(self, op: k.IterateOp, fr: _Frame) -> list[Any]:
        nest = fr.nest
        for a, v in zip(op.iter_args, [fr.get(v) for v in op.iter_inits], strict=True):
            fr.env[a] = v
        if op in nest.roots:
            self._run_loop(nest.roots[op], fr)
        elif op in nest.inline:
            for item in nest.inline[op]:
                self._run_item(item, fr)
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


def _eval_map(m: AffineMap, operands: Sequence[int]) -> list[int]:
    dims, syms = operands[: m.num_dims], operands[m.num_dims :]
    return list(m.eval(dims, syms))


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
    if _is_float(t):
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


# ------------------------------------------------------------------ memory helpers


def _array(fr: _Frame, v: SSAValue) -> np.ndarray[Any, Any]:
    a = fr.get(v)
    if not isinstance(a, np.ndarray):
        raise _Fail(f"{_name(v)} is not a memref value here (got {type(a).__name__})")
    return a


def _logical_shape(v: SSAValue, a: np.ndarray[Any, Any]) -> tuple[int, ...]:
    """The memref shape of `a` (without the trailing vector dimensions)."""
    t = v.type
    nvec = len(_vector_shape(t.element_type)) if isinstance(t, MemRefType) else 0
    return tuple(a.shape[: a.ndim - nvec])


def _checked_index(
    v: SSAValue, a: np.ndarray[Any, Any], idx: Sequence[int], what: str
) -> tuple[int, ...]:
    shape = a.shape
    if a.ndim != len(idx) or isinstance(_elem_type(v), VectorType):
        shape = _logical_shape(v, a)
    if len(idx) != len(shape):
        raise _Fail(
            f"{what} uses {len(idx)} indices for the rank-{len(shape)} memref {_name(v)}",
            "give one index per dimension",
        )
    for d, (i, n) in enumerate(zip(idx, shape, strict=True)):
        if not 0 <= i < n:
            raise _Fail(
                f"{what} out of bounds: index {i} in dimension {d} of {_name(v)} "
                f"(size {n}); indices [{', '.join(map(str, idx))}] on shape "
                f"{'x'.join(map(str, shape))}",
                "check the loop bounds and index expressions against the memref's shape",
            )
    return tuple(idx)


def _elem_type(v: SSAValue) -> Attribute:
    t = v.type
    assert isinstance(t, MemRefType)
    return t.element_type


def _load(fr: _Frame, mem: SSAValue, idx: Sequence[int], what: str) -> Any:
    a = _array(fr, mem)
    i = _checked_index(mem, a, idx, what)
    return _from_memory(a[i], _elem_type(mem))


def _store(fr: _Frame, value: Any, mem: SSAValue, idx: Sequence[int], what: str) -> None:
    a = _array(fr, mem)
    i = _checked_index(mem, a, idx, what)
    if not a.flags.writeable:
        raise _Fail(
            f"{what} writes into {_name(mem)}, which is read-only (a constant global "
            "or a read-only argument array)",
            "copy the data into a buffer before changing it",
        )
    a[i] = value


def _new_array(t: MemRefType, dyn: Sequence[int]) -> np.ndarray[Any, Any]:
    dims = list(dyn)
    shape: list[int] = []
    for d in t.get_shape():
        if d < 0:
            if not dims:
                raise _Fail(f"no size given for a dynamic dimension of {t}")
            shape.append(dims.pop(0))
        else:
            shape.append(d)
    if any(s < 0 for s in shape):
        raise _Fail(f"negative size in {shape} for {t}", "sizes must be >= 0")
    shape += _vector_shape(t.element_type)
    dt = memref_dtype(t)
    a = np.empty(shape, dtype=dt)
    if dt.kind == "f":
        a.fill(np.nan)
    elif dt.kind == "O":
        a.fill(None)
    else:
        a.fill(0)
    return a


def _dense_array(attr: Attribute, dtype: np.dtype[Any], shape: Sequence[int]) -> Any:
    if not isinstance(attr, DenseIntOrFPElementsAttr):
        raise UnsupportedError(
            f"the interpreter reads constant data only from dense<...> attributes, got "
            f"{type(attr).__name__}",
            hint="write the value as dense<[...]> : tensor<...>",
        )
    vals = list(attr.get_values())
    if dtype.kind == "b":
        vals = [v != 0 for v in vals]
    arr = np.array(vals, dtype=dtype)
    n = math.prod(shape)
    if arr.size == 1 and n != 1:
        arr = np.full(n, arr[0], dtype=dtype)
    if arr.size != n:
        raise _Fail(f"constant data has {arr.size} elements, its type needs {n}")
    return arr.reshape(tuple(shape))


# ------------------------------------------------------------------ krnl ops


@_handles(
    "krnl.define_loops",
    "krnl.block",
    "krnl.permute",
    "krnl.parallel",
    "krnl.unroll",
    "krnl.entry_point",
    "krnl.runtime_instrument",
    "krnl.specialized_kernel",
    "memref.dealloc",
    "krnl.seqdealloc",
)
def _noop(it: Interpreter, op: Operation, fr: _Frame) -> None:
    # Recipe ops are already applied by the loop nest; the others have no effect
    # on values (memory is garbage collected).
    return None


@_handles("memref.assume_alignment")
def _assume_alignment(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    return [fr.get(op.operands[0])] if op.results else []


@_handles("krnl.iterate")
def _iterate(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    assert isinstance(op, k.IterateOp)
    return it.run_iterate(op, fr)


@_handles("krnl.region", "krnl.movable")
def _region(it: Interpreter, op: Operation, fr: _Frame) -> None:
    # A region is only an affine scope; a movable's statements run where it stands
    # (it is what the lowering leaves at the statements' final place).
    for block in op.regions[0].blocks:
        it.exec_block(block, fr)


@_handles("krnl.get_induction_var_value")
def _get_iv(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    out: list[int] = []
    for h in op.operands:
        loop = fr.nest.loop_of.get(h)
        if loop is None:
            raise _Fail(
                f"loop handle {_name(h)} has no loop of its own at the end of the recipe",
                "it was blocked (use its tile or point handle) or never bound by a `with` entry",
            )
        if loop not in fr.ivs:
            raise _Fail(
                f"krnl.get_induction_var_value({_name(h)}) is read outside the loop of {_name(h)}",
                "place the op in the body of the krnl.iterate whose loops include it",
            )
        out.append(fr.ivs[loop])
    return out


@_handles("krnl.load", "memref.load")
def _indexed_load(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    mem, *idx = op.operands
    return [_load(fr, mem, [fr.index(i) for i in idx], op.name)]


@_handles("krnl.store", "memref.store")
def _indexed_store(it: Interpreter, op: Operation, fr: _Frame) -> None:
    val, mem, *idx = op.operands
    _store(fr, fr.get(val), mem, [fr.index(i) for i in idx], op.name)


@_handles("affine.load")
def _affine_load(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    mem, *ops = op.operands
    m = cast(AffineMapAttr, op.properties["map"]).data
    return [_load(fr, mem, _eval_map(m, [fr.index(v) for v in ops]), "affine.load")]


@_handles("affine.store")
def _affine_store(it: Interpreter, op: Operation, fr: _Frame) -> None:
    val, mem, *ops = op.operands
    m = cast(AffineMapAttr, op.properties["map"]).data
    _store(fr, fr.get(val), mem, _eval_map(m, [fr.index(v) for v in ops]), "affine.store")


def _writable(fr: _Frame, v: SSAValue, what: str) -> np.ndarray[Any, Any]:
    a = _array(fr, v)
    if not a.flags.writeable:
        raise _Fail(f"{what} writes into {_name(v)}, which is read-only")
    return a


@_handles("krnl.memset")
def _memset(it: Interpreter, op: Operation, fr: _Frame) -> None:
    assert isinstance(op, k.MemsetOp)
    _writable(fr, op.dest, "krnl.memset")[...] = fr.get(op.value)


@_handles("krnl.memcpy")
def _memcpy(it: Interpreter, op: Operation, fr: _Frame) -> None:
    assert isinstance(op, k.MemcpyOp)
    dest = _writable(fr, op.dest, "krnl.memcpy")
    src = _array(fr, op.src)
    n, d0, s0 = fr.index(op.num_elems), fr.index(op.dest_offset), fr.index(op.src_offset)
    if n < 0 or d0 < 0 or s0 < 0:
        raise _Fail(f"krnl.memcpy with a negative count or offset ({n}, {d0}, {s0})")
    if s0 + n > src.size:
        raise _Fail(
            f"krnl.memcpy out of bounds: reads elements [{s0}, {s0 + n}) of {_name(op.src)}, "
            f"which has {src.size}",
            "num_elems + src_offset must not exceed the number of elements of src",
        )
    if d0 + n > dest.size:
        raise _Fail(
            f"krnl.memcpy out of bounds: writes elements [{d0}, {d0 + n}) of "
            f"{_name(op.dest)}, which has {dest.size}",
            "num_elems + dest_offset must not exceed the number of elements of dest",
        )
    if dest.dtype != src.dtype:
        raise _Fail(f"krnl.memcpy between {src.dtype} and {dest.dtype}", "use the same type")
    # `.flat` reads and writes in row-major order even for strided views; the
    # slice read is a copy, so overlapping ranges behave like memmove.
    dest.flat[d0 : d0 + n] = src.flat[s0 : s0 + n]


def _tile_extent(
    tile: int, buf_size: int, d: int, start: int, size: int, s: int, mem: SSAValue
) -> int:
    """How many elements of dimension `s` of `mem` a tile copy moves: min(size - start, tile)."""
    if tile > buf_size:
        raise _Fail(f"tileSize {tile} exceeds the buffer size {buf_size} in dimension {d}")
    if start < 0:
        raise _Fail(f"negative start {start} in dimension {s} of {_name(mem)}")
    return max(0, min(size - start, tile))


@_handles("krnl.copy_to_tile_buffer")
def _copy_to_buffer(it: Interpreter, op: Operation, fr: _Frame) -> None:
    """buf[b] = src[start + b] inside the source, padValue up to padToNext.

    Buffer dimension d covers source dimension off + d (off = source rank -
    buffer rank), the last two swapped when `transpose` is set; prefix source
    dimensions take the start index as is. In dimension d, min(source size -
    start, T_d) elements are read, T_d being tileSize[d] (default: the buffer
    size); the box of the read elements is then extended, in each dimension, to
    the next multiple of padToNext[d] (default 1, capped at T_d), and the
    extension is filled with padValue. Elements outside that box keep their
    values.
    """
    assert isinstance(op, k.CopyToTileBufferOp)
    buf = _writable(fr, op.buffer, "krnl.copy_to_tile_buffer")
    src = _array(fr, op.source)
    starts = [fr.index(v) for v in op.starts]
    pad_value = fr.get(op.padValue)
    b_rank, s_rank = buf.ndim, src.ndim
    off = s_rank - b_rank
    if off < 0 or len(starts) != s_rank:
        raise _Fail("krnl.copy_to_tile_buffer needs one start per source dimension")
    tile = int_list(op.tileSize) or list(buf.shape)
    pads = int_list(op.padToNext) or [1] * b_rank
    transpose = op.transpose is not None and bool(op.transpose.value.data)
    if transpose and b_rank < 2:
        raise _Fail("transpose needs a buffer of rank 2 or more")
    src_dim = list(range(s_rank))
    if transpose:
        src_dim[-2], src_dim[-1] = src_dim[-1], src_dim[-2]
    for s in range(off):
        if not 0 <= starts[s] < src.shape[s]:
            raise _Fail(
                f"start {starts[s]} is out of bounds for dimension {s} of "
                f"{_name(op.source)} (size {src.shape[s]})"
            )
    read: list[int] = []
    ext: list[int] = []
    for d in range(b_rank):
        s = src_dim[off + d]
        r = _tile_extent(tile[d], buf.shape[d], d, starts[s], src.shape[s], s, op.source)
        p = pads[d]
        if p < 1:
            raise _Fail(f"padToNext must be >= 1, got {p}")
        read.append(r)
        # Padding to the tile size fills the whole tile, as onnx-mlir's lowering does.
        ext.append(tile[d] if p == tile[d] else min(-(-r // p) * p, tile[d]))
    buf[tuple(slice(0, e) for e in ext)] = pad_value
    index: list[int | slice] = [starts[s] for s in range(off)]
    for s in range(off, s_rank):
        d = src_dim.index(s) - off
        index.append(slice(starts[s], starts[s] + read[d]))
    block = src[tuple(index)]
    if transpose:
        block = np.swapaxes(block, -1, -2)
    buf[tuple(slice(0, r) for r in read)] = block


@_handles("krnl.copy_from_tile_buffer")
def _copy_from_buffer(it: Interpreter, op: Operation, fr: _Frame) -> None:
    """dest[start + b] = buf[b] for b < min(dest size - start, tileSize) per dimension."""
    assert isinstance(op, k.CopyFromTileBufferOp)
    buf = _array(fr, op.buffer)
    dest = _writable(fr, op.dest, "krnl.copy_from_tile_buffer")
    starts = [fr.index(v) for v in op.starts]
    b_rank, d_rank = buf.ndim, dest.ndim
    off = d_rank - b_rank
    if off < 0 or len(starts) != d_rank:
        raise _Fail("krnl.copy_from_tile_buffer needs one start per destination dimension")
    tile = int_list(op.tileSize) or list(buf.shape)
    index: list[int | slice] = []
    sizes: list[int] = []
    for s in range(d_rank):
        if s < off:
            if not 0 <= starts[s] < dest.shape[s]:
                raise _Fail(
                    f"start {starts[s]} is out of bounds for dimension {s} of "
                    f"{_name(op.dest)} (size {dest.shape[s]})"
                )
            index.append(starts[s])
            continue
        d = s - off
        w = _tile_extent(tile[d], buf.shape[d], d, starts[s], dest.shape[s], s, op.dest)
        sizes.append(w)
        index.append(slice(starts[s], starts[s] + w))
    dest[tuple(index)] = buf[tuple(slice(0, w) for w in sizes)]


@_handles("krnl.matmul")
def _matmul(it: Interpreter, op: Operation, fr: _Frame) -> None:
    """C[i, j] += sum_k A[i, k] * B[k, j] over one compute tile (scalar lowering).

    The tile starts at the global compute starts (i0, j0, k0); its sizes are
    computeTileSize (default: C's tile, then A's column tile) clipped by the
    global upper bounds. Buffers hold the data starting at their global memory
    starts; dimensions before the last two take the memory start as a fixed
    index. Each C element accumulates in k order: acc = a * b + acc, rounded
    in the element type after each operation, like onnx-mlir's scalar code.
    """
    assert isinstance(op, k.MatMulOp)
    A, B, C = _array(fr, op.A), _array(fr, op.B), _writable(fr, op.C, "krnl.matmul")
    a_mem = [fr.index(v) for v in op.aGlobalIndexMemStart]
    b_mem = [fr.index(v) for v in op.bGlobalIndexMemStart]
    c_mem = [fr.index(v) for v in op.cGlobalIndexMemStart]
    for name, arr, mem in (("A", A, a_mem), ("B", B, b_mem), ("C", C, c_mem)):
        if arr.ndim < 2 or len(mem) != arr.ndim:
            raise _Fail(
                f"krnl.matmul needs a memref {name} of rank >= 2 and one memory start per "
                f"dimension, got rank {arr.ndim} with {len(mem)} starts"
            )
    i0, j0, k0 = (
        fr.index(v)
        for v in (
            op.iGlobalIndexComputeStart,
            op.jGlobalIndexComputeStart,
            op.kGlobalIndexComputeStart,
        )
    )
    i_ub, j_ub, k_ub = (fr.index(v) for v in (op.iGlobalUB, op.jGlobalUB, op.kGlobalUB))
    a_tile = int_list(op.aTileSize) or list(A.shape[-2:])
    c_tile = int_list(op.cTileSize) or list(C.shape[-2:])
    compute = int_list(op.computeTileSize) or [c_tile[0], c_tile[1], a_tile[1]]
    ni = max(0, min(i_ub - i0, compute[0]))
    nj = max(0, min(j_ub - j0, compute[1]))
    nk = max(0, min(k_ub - k0, compute[2]))
    if ni == 0 or nj == 0:
        return

    def block(
        name: str,
        v: SSAValue,
        arr: np.ndarray[Any, Any],
        mem: list[int],
        r0: int,
        c0: int,
        nr: int,
        nc: int,
    ) -> np.ndarray[Any, Any]:
        idx: list[int | slice] = []
        for d, start in enumerate(mem[:-2]):
            if not 0 <= start < arr.shape[d]:
                raise _Fail(
                    f"krnl.matmul out of bounds: index {start} in dimension {d} of "
                    f"{_name(v)} (size {arr.shape[d]})"
                )
            idx.append(start)
        for d, (lo, n) in zip((arr.ndim - 2, arr.ndim - 1), ((r0, nr), (c0, nc)), strict=True):
            if n and not (lo >= 0 and lo + n <= arr.shape[d]):
                raise _Fail(
                    f"krnl.matmul out of bounds: the tile reads indices [{lo}, {lo + n}) in "
                    f"dimension {d} of {_name(v)} ({name}, size {arr.shape[d]})",
                    "the compute starts minus the memory starts must stay inside the buffer",
                )
            idx.append(slice(lo, lo + n))
        return arr[tuple(idx)]

    a = block("A", op.A, A, a_mem, i0 - a_mem[-2], k0 - a_mem[-1], ni, nk)
    b = block("B", op.B, B, b_mem, k0 - b_mem[-2], j0 - b_mem[-1], nk, nj)
    c = block("C", op.C, C, c_mem, i0 - c_mem[-2], j0 - c_mem[-1], ni, nj)
    acc = c.copy()
    for kk in range(nk):
        # One elementwise multiply and one add per k, in C's dtype: the same
        # roundings as the scalar loop, vectorized over (i, j).
        acc = np.multiply(a[:, kk : kk + 1], b[kk : kk + 1, :], dtype=C.dtype) + acc
    c[...] = acc


@_handles("krnl.dim")
def _krnl_dim(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    assert isinstance(op, k.DimOp)
    return [_dim(fr, op.alloc, fr.index(op.index), "krnl.dim")]


def _dim(fr: _Frame, v: SSAValue, d: int, what: str) -> int:
    shape = _logical_shape(v, _array(fr, v))
    if not 0 <= d < len(shape):
        raise _Fail(f"{what} asks for dimension {d} of the rank-{len(shape)} memref {_name(v)}")
    return shape[d]


@_handles("krnl.shape")
def _krnl_shape(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    assert isinstance(op, k.ShapeOp)
    shape = _logical_shape(op.alloc, _array(fr, op.alloc))
    t = op.shape.type
    assert isinstance(t, MemRefType)
    return [np.array(shape, dtype=memref_dtype(t))]


@_handles("krnl.getref")
def _getref(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    assert isinstance(op, k.GetRefOp)
    pool = _array(fr, op.mempool)
    offset = int(fr.get(op.offset))
    t = op.output.type
    assert isinstance(t, MemRefType)
    if pool.ndim != 1 or pool.dtype.itemsize != 1 or not pool.flags.c_contiguous:
        raise _Fail(
            f"krnl.getref needs a contiguous 1-D byte memref as memory pool, got "
            f"{pool.dtype} of shape {pool.shape}"
        )
    dyn = [fr.index(v) for v in op.value]
    shape = list(_new_shape(t, dyn))
    dt = memref_dtype(t)
    nbytes = math.prod(shape) * dt.itemsize
    if not 0 <= offset <= pool.size - nbytes:
        raise _Fail(
            f"krnl.getref out of bounds: bytes [{offset}, {offset + nbytes}) of the "
            f"{pool.size}-byte pool {_name(op.mempool)}"
        )
    return [pool[offset : offset + nbytes].view(dt).reshape(shape)]


def _new_shape(t: MemRefType, dyn: Sequence[int]) -> tuple[int, ...]:
    it = iter(dyn)
    try:
        shape = [next(it) if d < 0 else d for d in t.get_shape()]
    except StopIteration:
        raise _Fail(f"missing sizes for the dynamic dimensions of {t}") from None
    return (*shape, *_vector_shape(t.element_type))


@_handles("krnl.vector_type_cast")
def _vector_cast(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    assert isinstance(op, k.VectorTypeCastOp)
    a = _array(fr, op.source)
    t = op.result.type
    assert isinstance(t, MemRefType)
    vshape = _vector_shape(t.element_type)
    if len(vshape) != 1 or isinstance(cast(MemRefType, op.source.type).element_type, VectorType):
        raise UnsupportedError("krnl.vector_type_cast from a scalar memref to 1-D vectors only")
    vl = vshape[0]
    n = a.shape[-1] // vl
    view = a[..., : n * vl].reshape(*a.shape[:-1], n, vl)
    if not np.shares_memory(view, a) and view.size:
        raise _Fail("krnl.vector_type_cast needs a memref whose last dimension is contiguous")
    return [view]


@_handles("krnl.global")
def _krnl_global(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    assert isinstance(op, k.GlobalOp)
    arr = it._globals.get(op)
    if arr is None:
        t = op.output.type
        assert isinstance(t, MemRefType)
        if op.value is None:
            raise UnsupportedError(
                "krnl.global without a value attribute (data in an external file)",
                location=it.location(op),
                hint="give the data as value = dense<...> : tensor<...>",
            )
        arr = _dense_array(op.value, memref_dtype(t), _new_shape(t, []))
        arr.flags.writeable = False  # a global is constant data
        it._globals[op] = arr
    return [arr]


@_handles("memref.get_global")
def _get_global(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    sym = cast(SymbolRefAttr, op.properties["name"]).root_reference.data
    glob = next(
        (
            g
            for g in it.module.op.walk()
            if g.name == "memref.global" and cast(StringAttr, g.properties["sym_name"]).data == sym
        ),
        None,
    )
    if glob is None:
        raise _Fail(f"no memref.global named @{sym} in the module")
    arr = it._globals.get(glob)
    if arr is None:
        t = cast(MemRefType, glob.properties["type"])
        init = glob.properties["initial_value"]
        if isinstance(init, UnitAttr):
            arr = _new_array(t, [])
        else:
            arr = _dense_array(init, memref_dtype(t), _new_shape(t, []))
        if "constant" in glob.properties:
            arr.flags.writeable = False
        it._globals[glob] = arr
    return [arr]


# -- scalar math of the krnl dialect and the math dialect (float64, rounded once)


def _f64(x: Any) -> Any:
    return x.astype(np.float64) if isinstance(x, np.ndarray) else np.float64(x)


def _unary_float(fn: Callable[[Any], Any]) -> Handler:
    def h(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
        x = fr.get(op.operands[0])
        return [make_value(fn(_f64(x)), op.results[0].type)]

    return h


def _erf(x: Any) -> Any:
    return np.vectorize(math.erf)(x) if isinstance(x, np.ndarray) else math.erf(float(x))


def _round_half_away(x: Any) -> Any:
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


_UNARY_FLOAT: dict[str, Callable[[Any], Any]] = {
    "acos": np.arccos,
    "acosh": np.arccosh,
    "asin": np.arcsin,
    "asinh": np.arcsinh,
    "atan": np.arctan,
    "atanh": np.arctanh,
    "tan": np.tan,
    "erf": _erf,
    "exp": np.exp,
    "exp2": np.exp2,
    "expm1": np.expm1,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "cbrt": np.cbrt,
    "tanh": np.tanh,
    "sin": np.sin,
    "cos": np.cos,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "absf": np.abs,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "round": _round_half_away,
    "roundeven": np.rint,
}
for _n, _f in _UNARY_FLOAT.items():
    for _prefix in ("krnl.", "math."):
        _HANDLERS.setdefault(_prefix + _n, _unary_float(_f))


def _float_predicate(fn: Callable[[Any], Any]) -> Handler:
    def h(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
        r = fn(fr.get(op.operands[0]))
        return [r.astype(np.bool_) if isinstance(r, np.ndarray) else int(bool(r))]

    return h


for _prefix in ("krnl.", "math."):
    _HANDLERS[_prefix + "isinf"] = _float_predicate(np.isinf)
    _HANDLERS[_prefix + "isnan"] = _float_predicate(np.isnan)
_HANDLERS["math.isfinite"] = _float_predicate(np.isfinite)


def _binary_float(fn: Callable[[Any, Any], Any]) -> Handler:
    def h(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
        a, b = (_f64(fr.get(v)) for v in op.operands)
        return [make_value(fn(a, b), op.results[0].type)]

    return h


_HANDLERS["math.powf"] = _binary_float(np.power)
_HANDLERS["math.atan2"] = _binary_float(np.arctan2)
_HANDLERS["math.copysign"] = _binary_float(np.copysign)


@_handles("math.fpowi")
def _fpowi(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    x, n = fr.get(op.operands[0]), fr.get(op.operands[1])
    return [make_value(np.power(_f64(x), float(n)), op.results[0].type)]


@_handles("math.fma")
def _fma(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    a, b, c = (np.longdouble(fr.get(v)) for v in op.operands)
    return [make_value(a * b + c, op.results[0].type)]


@_handles("math.absi")
def _absi(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    t = op.results[0].type
    return [_wrap(abs(_signed(fr.get(op.operands[0]), _width(t))), t)]


@_handles("math.ipowi")
def _ipowi(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    t = op.results[0].type
    w = _width(t)
    base, exp = (_signed(fr.get(v), w) for v in op.operands)
    if exp < 0:
        # MLIR defines x ** -n as 1 / x ** n in integers.
        r = 1 if base == 1 else (-1 if exp % 2 else 1) if base == -1 else 0
        if base == 0:
            raise _Fail("math.ipowi: 0 raised to a negative power")
        return [_wrap(r, t)]
    return [_wrap(pow(base, exp, 1 << w), t)]


@_handles("math.ctlz", "math.cttz", "math.ctpop")
def _bitcount(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    t = op.results[0].type
    w = _width(t)
    x = _unsigned(fr.get(op.operands[0]), w)
    if op.name == "math.ctpop":
        r = bin(x).count("1")
    elif op.name == "math.ctlz":
        r = w - x.bit_length()
    else:
        r = w if x == 0 else (x & -x).bit_length() - 1
    return [_wrap(r, t)]


# -- random_normal, strings, find_index, print, call


@_handles("krnl.random_normal")
def _random_normal(it: Interpreter, op: Operation, fr: _Frame) -> None:
    """Fill the first numberOfValues elements with mean + scale * N(0, 1).

    The generator is NumPy's PCG64 seeded from the seed operand (its integer
    value, or its float64 bit pattern when it is not integral): the same seed
    gives the same values. onnx-mlir's runtime uses the C library's rand(),
    whose sequence differs between platforms, so no bit-exact match is sought.
    """
    assert isinstance(op, k.RandomNormalOp)
    out = _writable(fr, op.output, "krnl.random_normal")
    n = fr.index(op.numberOfValues)
    if not 0 <= n <= out.size:
        raise _Fail(
            f"krnl.random_normal of {n} values into {_name(op.output)}, which has {out.size}"
        )
    seed = float(fr.get(op.seed))
    key = int(seed) if seed.is_integer() else int(np.float64(seed).view(np.uint64))
    rng = np.random.Generator(np.random.PCG64(abs(key)))
    mean, scale = float(fr.get(op.mean)), float(fr.get(op.scale))
    vals = rng.standard_normal(n) * scale + mean
    out.flat[:n] = vals.astype(out.dtype)


def _c_bytes(s: Any) -> bytes:
    if not isinstance(s, str):
        raise _Fail(f"expected a string value, got {type(s).__name__}")
    b = s.encode("utf-8")
    return b.split(b"\0", 1)[0]  # C strings end at the first NUL


@_handles("krnl.strlen")
def _strlen(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    return [len(_c_bytes(fr.get(op.operands[0])))]


@_handles("krnl.strncmp")
def _strncmp(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    a, b = _c_bytes(fr.get(op.operands[0])), _c_bytes(fr.get(op.operands[1]))
    n = int(fr.get(op.operands[2]))
    a, b = a[: max(n, 0)], b[: max(n, 0)]
    return [(a > b) - (a < b)]  # bytes compare as unsigned chars, like strncmp


def _fnv(hval: int, data: bytes) -> int:
    """onnx-mlir's 32-bit FNV variant of src/Runtime/OMIndexLookup.c."""
    prime = 0x01000193
    hval = prime if hval == 0 else hval & 0xFFFFFFFF
    for byte in data:
        c = byte - 256 if byte >= 128 else byte  # `char` is signed there
        hval = (hval * prime) & 0xFFFFFFFF
        hval ^= c & 0xFFFFFFFF
    return hval


@_handles("krnl.find_index")
def _find_index(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    """The value of `input` in the perfect hash table (G, V) of onnx-mlir's runtime."""
    assert isinstance(op, k.FindIndexOp)
    x = fr.get(op.input)
    data = _c_bytes(x) if isinstance(op.input.type, k.StringType) else str(int(x)).encode()
    G, V = _array(fr, op.G), _array(fr, op.V)
    size = int(fr.get(op.len))
    if size <= 0 or size > G.size or size > V.size:
        raise _Fail(
            f"krnl.find_index with a dictionary size {size} for G of {G.size} and V of "
            f"{V.size} elements"
        )
    d = int(G.flat[_fnv(0, data) % size])
    slot = -d - 1 if d < 0 else _fnv(d, data) % size
    if not 0 <= slot < V.size:
        raise _Fail(f"krnl.find_index: G leads to slot {slot} outside V")
    index = int(V.flat[slot])
    if not 0 <= index < size:
        raise _Fail(
            f"krnl.find_index: the table gives {index}, outside [0, {size})",
            "the input is not in the dictionary described by G and V",
        )
    return [index]


_C_LENGTH = re.compile(r"%([-+ #0]*\d*(?:\.\d+)?)(?:hh|h|ll|l|L|z|j|t|q)?([diouxXeEfFgGcsp%])")


def _c_format(fmt: str, value: Any) -> str:
    """printf-style formatting for one optional value (length modifiers ignored)."""
    pyfmt = _C_LENGTH.sub(lambda m: "%" + m.group(1) + m.group(2).replace("p", "s"), fmt)
    if value is None:
        return pyfmt % ()
    if isinstance(value, np.floating):
        value = float(value)
    return pyfmt % (value,)


@_handles("krnl.print")
def _print(it: Interpreter, op: Operation, fr: _Frame) -> None:
    assert isinstance(op, k.PrintOp)
    value = fr.get(op.input) if op.input is not None else None
    try:
        text = _c_format(op.format.data, value)
    except (TypeError, ValueError) as e:
        raise _Fail(
            f"krnl.print cannot format {op.format.data!r} with this value: {e}",
            "use one printf conversion (%d, %f, %e, %g, %s, ...) matching the value",
        ) from None
    it.write(text)


_OM_TYPE_NAMES = {
    "float16": "_Float16",
    "float32": "float",
    "float64": "double",
    "bool": "_Bool",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int64": "int64_t",
    "uint8": "uint8_t",
    "uint16": "uint16_t",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "object": "const char *",
}


def _om_elem(x: Any) -> str:
    if isinstance(x, np.floating):
        return f"{float(x):f}"
    if isinstance(x, np.bool_ | bool):
        return str(int(x))
    return str(x)


def _om_data(a: np.ndarray[Any, Any]) -> str:
    if a.ndim == 0:
        return _om_elem(a[()])
    return "[" + ", ".join(_om_data(a[i]) for i in range(a.shape[0])) + "]"


@_handles("krnl.print_tensor")
def _print_tensor(it: Interpreter, op: Operation, fr: _Frame) -> None:
    """Print like onnx-mlir's omTensorPrint: %s signature, %t type, %d data, %e end."""
    assert isinstance(op, k.PrintTensorOp)
    a = _array(fr, op.input)
    dtype_name = _OM_TYPE_NAMES.get(a.dtype.name, a.dtype.name)
    type_text = "".join(f"{d}x" for d in a.shape) + dtype_name
    strides = [s // a.itemsize for s in a.strides]
    signature = (
        f"\trank = {a.ndim}\n\tdataType = {dtype_name}\n\tnumElems = {a.size}\n"
        f"\tshape: {''.join(f'[{d}]' for d in a.shape)}\n"
        f"\tstrides: {''.join(f'[{s}]' for s in strides)}\n\ttype: {type_text}\n"
    )
    data = f"\tdata: ({_om_data(a)})\n"
    msg = op.msg.data
    out: list[str] = []
    had_format = False
    i = 0
    while i < len(msg):
        if msg[i] == "%" and i + 1 < len(msg):
            f = msg[i + 1]
            if f == "e":
                break
            if f in "dst":
                out.append({"d": data, "s": signature, "t": type_text}[f])
                had_format = True
            i += 2
            continue
        out.append(msg[i])
        i += 1
    if not had_format:
        out.append("\n" + signature + data + "\n")
    it.write("".join(out))


def _attr_to_py(a: Attribute) -> Any:
    if isinstance(a, IntegerAttr):
        if a.type == IntegerType(1):
            return bool(a.value.data)
        return a.value.data
    if isinstance(a, FloatAttr):
        return a.value.data
    if isinstance(a, StringAttr):
        return a.data
    if isinstance(a, ArrayAttr):
        return [_attr_to_py(x) for x in a.data]
    if isinstance(a, DenseArrayBase):
        return list(a.get_values())
    if isinstance(a, DenseIntOrFPElementsAttr):
        return np.array(a.get_values())
    return a


@_handles("krnl.call")
def _krnl_call(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any] | None:
    assert isinstance(op, k.CallOp)
    name = op.funcName.data
    target = it.calls.get(name) or _CALLS.get(name)
    if target is None:
        known = sorted({*it.calls, *_CALLS})
        raise _Fail(
            f"krnl.call to '{name}', which is not registered",
            f"register a Python function with polykrnl.register_call('{name}', pyfunc); "
            f"registered: {', '.join(known) if known else 'none'}",
        )
    args = [_user_value(fr.get(v), v.type) for v in op.parameters]
    attrs = {
        n: _attr_to_py(a)
        for n, a in {**op.attributes, **op.properties}.items()
        if n not in ("funcName", "numOfOutput")
    }
    kwargs: dict[str, Any] = {}
    if attrs:
        try:
            params = dict(inspect.signature(target).parameters)
        except (TypeError, ValueError):
            params = {}
        takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        kwargs = {n: v for n, v in attrs.items() if takes_all or n in params}
    try:
        result = target(*args, **kwargs)
    except Exception as e:
        raise _Fail(
            f"the function registered for krnl.call '{name}' raised {type(e).__name__}: {e}",
            "the error comes from the registered Python function, not from the program",
        ) from e
    if not op.results:
        return None
    values = list(result) if len(op.results) > 1 else [result]
    if len(values) != len(op.results):
        raise _Fail(f"'{name}' returned {len(values)} values, krnl.call expects {len(op.results)}")
    return [make_value(v, r.type) for v, r in zip(values, op.results, strict=True)]


# -- sequences


@_handles("krnl.seqalloc")
def _seqalloc(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    assert isinstance(op, k.SeqAllocOp)
    t = op.output.type
    assert isinstance(t, MemRefType)
    return [_new_array(t, [fr.index(v) for v in op.length])]


@_handles("krnl.seqstore")
def _seqstore(it: Interpreter, op: Operation, fr: _Frame) -> None:
    assert isinstance(op, k.SeqStoreOp)
    value = fr.get(op.input)
    # The sequence owns a copy of the element, like onnx-mlir's lowering.
    value = value.copy() if isinstance(value, np.ndarray) else value
    _store(fr, value, op.seq, [fr.index(op.index)], "krnl.seqstore")


@_handles("krnl.seqextract")
def _seqextract(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    assert isinstance(op, k.SeqExtractOp)
    seq = _array(fr, op.seq)
    i = _checked_index(op.seq, seq, [fr.index(op.index)], "krnl.seqextract")
    x = seq[i]
    if x is None:
        raise _Fail(f"krnl.seqextract reads element {i[0]} of {_name(op.seq)}, never stored")
    copy = op.copy is None or op.copy.value.data != 0
    return [x.copy() if copy and isinstance(x, np.ndarray) else x]


# ------------------------------------------------------------------ memref


@_handles("memref.alloc", "memref.alloca")
def _alloc(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    t = op.results[0].type
    assert isinstance(t, MemRefType)
    n_dyn = sum(1 for d in t.get_shape() if d < 0)
    return [_new_array(t, [fr.index(v) for v in op.operands[:n_dyn]])]


@_handles("memref.dim")
def _memref_dim(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    src, index = op.operands
    return [_dim(fr, src, fr.index(index), "memref.dim")]


@_handles("memref.rank")
def _memref_rank(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    src = op.operands[0]
    return [len(_logical_shape(src, _array(fr, src)))]


@_handles("memref.copy")
def _memref_copy(it: Interpreter, op: Operation, fr: _Frame) -> None:
    src, dst = op.operands
    a, b = _array(fr, src), _writable(fr, dst, "memref.copy")
    if a.shape != b.shape:
        raise _Fail(f"memref.copy from shape {a.shape} into shape {b.shape}")
    b[...] = a


@_handles("memref.cast")
def _memref_cast(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    a = _array(fr, op.operands[0])
    t = op.results[0].type
    assert isinstance(t, MemRefType)
    want = memref_shape(t)
    if len(want) != a.ndim or any(
        w is not None and w != g for w, g in zip(want, a.shape, strict=True)
    ):
        raise _Fail(f"memref.cast of an array of shape {a.shape} to {t}")
    return [a]


@_handles("memref.subview")
def _subview(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    a = _array(fr, op.operands[0])
    dyn = iter(fr.index(v) for v in op.operands[1:])

    def values(prop: str) -> list[int]:
        static = cast(DenseArrayBase[Any], op.properties[prop]).get_values()
        return [next(dyn) if x == -(2**63) else int(x) for x in static]

    offsets, sizes, strides = (
        values("static_offsets"),
        values("static_sizes"),
        values("static_strides"),
    )
    t = op.results[0].type
    assert isinstance(t, MemRefType)
    if len(t.get_shape()) != a.ndim:
        raise UnsupportedError("rank-reducing memref.subview is not supported by the interpreter")
    idx: list[slice] = []
    for d, (o, n, s) in enumerate(zip(offsets, sizes, strides, strict=True)):
        if n and not (o >= 0 and o + (n - 1) * s < a.shape[d] and s > 0):
            raise _Fail(f"memref.subview out of bounds in dimension {d} (size {a.shape[d]})")
        idx.append(slice(o, o + n * s, s))
    return [a[tuple(idx)]]


# ------------------------------------------------------------------ affine


@_handles("affine.apply")
def _affine_apply(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    m = cast(AffineMapAttr, op.properties["map"]).data
    return _eval_map(m, [fr.index(v) for v in op.operands])[:1]


@_handles("affine.min")
def _affine_min(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    m = cast(AffineMapAttr, op.properties["map"]).data
    return [min(_eval_map(m, [fr.index(v) for v in op.operands]))]


@_handles("affine.max")
def _affine_max(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    m = cast(AffineMapAttr, op.properties["map"]).data
    return [max(_eval_map(m, [fr.index(v) for v in op.operands]))]


@_handles("affine.for")
def _affine_for(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    lbm = cast(AffineMapAttr, op.properties["lowerBoundMap"]).data
    ubm = cast(AffineMapAttr, op.properties["upperBoundMap"]).data
    step = cast(IntegerAttr[Any], op.properties["step"]).value.data
    nl = lbm.num_dims + lbm.num_symbols
    nu = ubm.num_dims + ubm.num_symbols
    operands = op.operands
    lb = max(_eval_map(lbm, [fr.index(v) for v in operands[:nl]]))
    ub = min(_eval_map(ubm, [fr.index(v) for v in operands[nl : nl + nu]]))
    state = [fr.get(v) for v in operands[nl + nu :]]
    return _loop(it, op, fr, range(lb, ub, step), state)


def _loop(
    it: Interpreter, op: Operation, fr: _Frame, ivs: Iterable[int], state: list[Any]
) -> list[Any]:
    block = op.regions[0].block
    iv, *carried = block.args
    for i in ivs:
        fr.env[iv] = i
        for a, v in zip(carried, state, strict=True):
            fr.env[a] = v
        state = it.exec_block(block, fr)
    return state


_AFFINE_TESTS: dict[AffineConstraintKind, Callable[[int], bool]] = {
    AffineConstraintKind.eq: lambda x: x == 0,
    AffineConstraintKind.ge: lambda x: x >= 0,
    AffineConstraintKind.le: lambda x: x <= 0,
}


@_handles("affine.if")
def _affine_if(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    s = cast(AffineSetAttr, op.properties["condition"]).data
    vals = [fr.index(v) for v in op.operands]
    dims, syms = vals[: s.num_dims], vals[s.num_dims :]
    ok = all(
        _AFFINE_TESTS[c.kind](c.lhs.eval(dims, syms) - c.rhs.eval(dims, syms))
        for c in s.constraints
    )
    return _branch(it, op, fr, ok)


def _branch(it: Interpreter, op: Operation, fr: _Frame, taken: bool) -> Sequence[Any]:
    """Run the then-region (or the else-region, possibly empty) of an if op."""
    region = op.regions[0] if taken else op.regions[1]
    if not region.blocks:
        return []
    return it.exec_block(region.block, fr)


# ------------------------------------------------------------------ scf


@_handles("scf.for")
def _scf_for(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    lb, ub, step, *inits = op.operands
    s = fr.index(step)
    if s <= 0:
        raise _Fail(f"scf.for with step {s}", "the step must be positive")
    t = lb.type
    ivs: Iterable[int] = range(fr.index(lb), fr.index(ub), s)
    if isinstance(t, IntegerType):
        ivs = (_wrap(i, t) for i in ivs)
    return _loop(it, op, fr, ivs, [fr.get(v) for v in inits])


@_handles("scf.if")
def _scf_if(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    return _branch(it, op, fr, bool(fr.get(op.operands[0])))


@_handles("scf.while")
def _scf_while(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    before, after = op.regions[0].block, op.regions[1].block
    state = [fr.get(v) for v in op.operands]
    while True:
        for a, v in zip(before.args, state, strict=True):
            fr.env[a] = v
        cond, *args = it.exec_block(before, fr)
        if not cond:
            return args
        for a, v in zip(after.args, args, strict=True):
            fr.env[a] = v
        state = it.exec_block(after, fr)


@_handles("scf.execute_region")
def _execute_region(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    return it.exec_block(op.regions[0].block, fr)


# ------------------------------------------------------------------ func


@_handles("func.call")
def _func_call(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    callee = cast(SymbolRefAttr, op.properties["callee"]).root_reference.data
    target = next((f for f in it.module.functions if f.name == callee), None)
    if target is None:
        raise _Fail(
            f"func.call to @{callee}, which the module does not define",
            "the interpreter calls functions of the same module",
        )
    return it.run_function(target, [fr.get(v) for v in op.operands])


# ------------------------------------------------------------------ arith


@_handles("arith.constant")
def _constant(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    attr = op.properties["value"]
    t = op.results[0].type
    if isinstance(attr, IntegerAttr | FloatAttr):
        return [make_value(attr.value.data, t)]
    if isinstance(t, VectorType):
        return [_dense_array(attr, scalar_dtype(t), tuple(t.get_shape()))]
    raise UnsupportedError(f"arith.constant of {t}", location=it.location(op))


def _int_binary(fn: Callable[[int, int, int], int]) -> Handler:
    """An integer op on canonical values; `fn(a, b, width)` may read them signed/unsigned."""

    def h(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
        a, b = (fr.get(v) for v in op.operands)
        t = op.results[0].type
        return [_wrap(fn(a, b, _width(t)), t)]

    return h


def _check_divisor(b: int) -> int:
    if b == 0:
        raise _Fail("integer division by zero", "division by zero is undefined in MLIR")
    return b


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(_check_divisor(b))
    return q if (a >= 0) == (b > 0) else -q


def _sdiv(a: int, b: int, w: int) -> int:
    a, b = _signed(a, w), _signed(b, w)
    if b == -1 and a == -(1 << (w - 1)):
        raise _Fail("signed division overflow (INT_MIN / -1)", "the result is undefined in MLIR")
    return _tdiv(a, b)


def _shift_amount(b: int, w: int) -> int:
    s = _unsigned(b, w)
    if s >= w:
        raise _Fail(f"shift by {s} bits of a {w}-bit integer", "the result is poison in MLIR")
    return s


_INT_BINARY: dict[str, Callable[[int, int, int], int]] = {
    "addi": lambda a, b, w: a + b,
    "subi": lambda a, b, w: a - b,
    "muli": lambda a, b, w: a * b,
    "divsi": _sdiv,
    "divui": lambda a, b, w: _unsigned(a, w) // _check_divisor(_unsigned(b, w)),
    "remsi": lambda a, b, w: _signed(a, w) - _signed(b, w) * _sdiv(a, b, w),
    "remui": lambda a, b, w: _unsigned(a, w) % _check_divisor(_unsigned(b, w)),
    "floordivsi": lambda a, b, w: _signed(a, w) // _check_divisor(_signed(b, w)),
    "ceildivsi": lambda a, b, w: -(-_signed(a, w) // _check_divisor(_signed(b, w))),
    "ceildivui": lambda a, b, w: -(-_unsigned(a, w) // _check_divisor(_unsigned(b, w))),
    "maxsi": lambda a, b, w: max(_signed(a, w), _signed(b, w)),
    "minsi": lambda a, b, w: min(_signed(a, w), _signed(b, w)),
    "maxui": lambda a, b, w: max(_unsigned(a, w), _unsigned(b, w)),
    "minui": lambda a, b, w: min(_unsigned(a, w), _unsigned(b, w)),
    "andi": lambda a, b, w: a & b,
    "ori": lambda a, b, w: a | b,
    "xori": lambda a, b, w: a ^ b,
    "shli": lambda a, b, w: a << _shift_amount(b, w),
    "shrui": lambda a, b, w: _unsigned(a, w) >> _shift_amount(b, w),
    "shrsi": lambda a, b, w: _signed(a, w) >> _shift_amount(b, w),
}
for _n, _g in _INT_BINARY.items():
    _HANDLERS["arith." + _n] = _int_binary(_g)


def _float_binary(fn: Callable[[Any, Any], Any]) -> Handler:
    def h(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
        a, b = (fr.get(v) for v in op.operands)
        return [make_value(fn(a, b), op.results[0].type)]

    return h


_FLOAT_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "addf": lambda a, b: a + b,
    "subf": lambda a, b: a - b,
    "mulf": lambda a, b: a * b,
    "divf": lambda a, b: a / b,
    "remf": np.fmod,
    "maximumf": np.maximum,
    "minimumf": np.minimum,
    "maxnumf": np.fmax,
    "minnumf": np.fmin,
}
for _n, _h in _FLOAT_BINARY.items():
    _HANDLERS["arith." + _n] = _float_binary(_h)


@_handles("arith.negf")
def _negf(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    return [make_value(-fr.get(op.operands[0]), op.results[0].type)]


_CMPI: tuple[Callable[[int, int, int], bool], ...] = (
    lambda a, b, w: a == b,
    lambda a, b, w: a != b,
    lambda a, b, w: _signed(a, w) < _signed(b, w),
    lambda a, b, w: _signed(a, w) <= _signed(b, w),
    lambda a, b, w: _signed(a, w) > _signed(b, w),
    lambda a, b, w: _signed(a, w) >= _signed(b, w),
    lambda a, b, w: _unsigned(a, w) < _unsigned(b, w),
    lambda a, b, w: _unsigned(a, w) <= _unsigned(b, w),
    lambda a, b, w: _unsigned(a, w) > _unsigned(b, w),
    lambda a, b, w: _unsigned(a, w) >= _unsigned(b, w),
)


@_handles("arith.cmpi")
def _cmpi(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    pred = cast(IntegerAttr[Any], op.properties["predicate"]).value.data
    a, b = (fr.get(v) for v in op.operands)
    w = _width(op.operands[0].type)
    if isinstance(op.operands[0].type, IndexType):
        a, b = _wrap(a, IntegerType(64)), _wrap(b, IntegerType(64))
    return [int(_CMPI[pred](a, b, w))]


@_handles("arith.cmpf")
def _cmpf(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    pred = cast(IntegerAttr[Any], op.properties["predicate"]).value.data
    a, b = (fr.get(v) for v in op.operands)
    unordered = np.isnan(a) | np.isnan(b)
    rel = [
        None,
        a == b,
        a > b,
        a >= b,
        a < b,
        a <= b,
        a != b,
        None,
    ]
    if pred == 0:
        r: Any = np.zeros_like(unordered)
    elif pred == 15:
        r = np.ones_like(unordered)
    elif pred == 7:
        r = ~unordered
    elif pred == 14:
        r = unordered
    elif pred < 7:
        r = ~unordered & rel[pred]
    else:  # ueq ... une: unordered or the relation
        r = unordered | rel[pred - 7]
    return [r.astype(np.bool_) if isinstance(r, np.ndarray) else int(bool(r))]


@_handles("arith.select")
def _select(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    c, a, b = (fr.get(v) for v in op.operands)
    if isinstance(c, np.ndarray):
        return [np.where(c, a, b)]
    return [a if c else b]


@_handles("arith.index_cast", "arith.extsi", "arith.trunci")
def _int_cast_signed(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    src = op.operands[0]
    x = fr.get(src)
    if isinstance(src.type, IntegerType):
        x = _signed(x, src.type.width.data)
    return [_wrap(int(x), op.results[0].type)]


@_handles("arith.index_castui", "arith.extui")
def _int_cast_unsigned(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    src = op.operands[0]
    x = _unsigned(fr.get(src), _width(src.type))
    return [_wrap(x, op.results[0].type)]


@_handles("arith.sitofp", "arith.uitofp")
def _int_to_float(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    src = op.operands[0]
    w = _width(src.type)
    x = fr.get(src)
    x = _signed(x, w) if op.name == "arith.sitofp" else _unsigned(x, w)
    return [make_value(float(x), op.results[0].type)]


@_handles("arith.fptosi", "arith.fptoui")
def _float_to_int(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    x = fr.get(op.operands[0])
    t = op.results[0].type
    if not np.isfinite(x):
        raise _Fail(f"{op.name} of {x}", "converting nan or inf to an integer is undefined")
    v = int(np.trunc(np.float64(x)))
    w = _width(t)
    lo, hi = (
        (-(1 << (w - 1)), (1 << (w - 1)) - 1) if op.name == "arith.fptosi" else (0, (1 << w) - 1)
    )
    if not lo <= v <= hi:
        raise _Fail(f"{op.name} of {x} does not fit in {t}", "the result is poison in MLIR")
    return [_wrap(v, t)]


@_handles("arith.extf", "arith.truncf")
def _float_cast(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    return [make_value(fr.get(op.operands[0]), op.results[0].type)]


@_handles("arith.bitcast")
def _bitcast(it: Interpreter, op: Operation, fr: _Frame) -> Sequence[Any]:
    src, t = op.operands[0], op.results[0].type
    x = fr.get(src)
    raw = scalar_dtype(src.type).type(x if _is_float(src.type) else _wrap(x, src.type))
    out = np.array(raw).view(scalar_dtype(t))[()]
    return [make_value(out, t)]
