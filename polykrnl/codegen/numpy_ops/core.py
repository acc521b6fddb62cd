"""What every dialect's NumPy emitters share: the table, value types, AST building, entry points.

An emitter (:data:`Emitter`) turns one op into one expression per result,
given the expressions of its operands and a :class:`Ctx` that records the
helpers (:mod:`polykrnl.codegen.numpy_ops.prelude`) the expressions call. It
raises, through :func:`require`, when the op's types or attributes have no
translation. Each dialect module of this package adds its emitters to
:data:`NUMPY` by op class.
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import copy
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
    VectorType,
)
from xdsl.ir import Attribute, Operation

from polykrnl.codegen.numpy_ops.prelude import PRELUDE
from polykrnl.codegen.python_form import NUMPY_FORM, PythonForm
from polykrnl.codegen.scalar_prelude import SCALAR_HELPERS
from polykrnl.dialect import krnl as k
from polykrnl.dialect.registry import OpTable
from polykrnl.errors import UnsupportedError

# ------------------------------------------------------------------ types


@dataclass(frozen=True)
class NpType:
    """How values of one MLIR type are represented in generated code.

    kind: "f" float, "i" fixed-width integer (N >= 8), "b" i1, "x" index, "s" string.
    """

    kind: str
    dtype: np.dtype[Any]

    @property
    def width(self) -> int:
        return 1 if self.kind == "b" else 8 * self.dtype.itemsize

    @property
    def unsigned(self) -> bool:
        return self.dtype.kind == "u"

    @property
    def signed_dtype(self) -> np.dtype[Any]:
        """The signed dtype of the same width (what the integer ops compute in)."""
        return np.dtype(f"i{self.dtype.itemsize}")


_FLOATS: dict[type[Attribute], np.dtype[Any]] = {
    Float16Type: np.dtype(np.float16),
    Float32Type: np.dtype(np.float32),
    Float64Type: np.dtype(np.float64),
}


#: whether vector types are represented (by 1-D NumPy arrays of lanes): only while
#: emitting for a scalar loop body (see supported_lanes / emit_lanes)
_LANES: contextvars.ContextVar[bool] = contextvars.ContextVar("numpy_lanes", default=False)


#: the form of Python being written (python_form.py): the few emitters whose NumPy form
#: compiled code computes differently write another one (see codegen/scalar_prelude.py)
_FORM: contextvars.ContextVar[PythonForm] = contextvars.ContextVar(
    "python_form", default=NUMPY_FORM
)


@contextlib.contextmanager
def writing(form: PythonForm) -> Iterator[None]:
    """Emit in `form` inside this block (write_kernel sets it for its kernel)."""
    token = _FORM.set(form)
    try:
        yield
    finally:
        _FORM.reset(token)


#: None: math functions of float32 (float16) values are computed in float64 and rounded
#: once, as the interpreter does (bit for bit); a set: computed by NumPy's loops of the
#: operand's own type (several times faster, within a few ulp), recording the functions
#: so computed (the kernel is then not exact)
_NATIVE_MATH: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar(
    "native_math", default=None
)


@contextlib.contextmanager
def math_precision(native: bool) -> Iterator[set[str]]:
    """Inside this block, math functions of narrow floats are computed in their own type
    when `native` (the set yielded collects the functions so computed)."""
    outer = _NATIVE_MATH.get()
    # a callee written inside a kernel reports into the caller's set
    used: set[str] = outer if native and outer is not None else set()
    token = _NATIVE_MATH.set(used if native else None)
    try:
        yield used
    finally:
        _NATIVE_MATH.reset(token)


def compiled_form() -> bool:
    """Whether the emitters are writing compiled code (scalars, typed values: Numba)."""
    return _FORM.get().compiled


def _np_type(t: Attribute) -> NpType | None:
    if isinstance(t, VectorType):
        # A vector is an array of its elements; element ops apply lane by lane.
        return _np_type(t.element_type) if _LANES.get() else None
    f = _FLOATS.get(type(t))
    if f is not None:
        return NpType("f", f)
    if isinstance(t, IndexType):
        return NpType("x", np.dtype(np.int64))
    if isinstance(t, IntegerType):
        w = t.width.data
        if w == 1:
            return NpType("b", np.dtype(np.bool_))
        if w not in (8, 16, 32, 64):
            return None
        u = "u" if t.signedness.data == Signedness.UNSIGNED else ""
        return NpType("i", np.dtype(f"{u}int{w}"))
    if isinstance(t, k.StringType):
        return NpType("s", np.dtype(object))
    return None


class _Unsupported(Exception):
    """The op (or its types) has no translation here."""


# ------------------------------------------------------------------ AST building

Expr = ast.expr


def _name(n: str) -> Expr:
    return ast.Name(n, ast.Load())


def np_attr(attr: str) -> Expr:
    """`np.<attr>`."""
    return ast.Attribute(_name("np"), attr, ast.Load())


def call(f: Expr, *args: Expr, **kwargs: Expr) -> Expr:
    return ast.Call(f, list(args), [ast.keyword(n, v) for n, v in kwargs.items()])


def npcall(fn: str, *args: Expr, **kwargs: Expr) -> Expr:
    return call(np_attr(fn), *args, **kwargs)


def method(obj: Expr, name: str, *args: Expr) -> Expr:
    return call(ast.Attribute(obj, name, ast.Load()), *args)


def dt(dtype: np.dtype[Any]) -> Expr:
    """The NumPy scalar type of `dtype` (`np.float32`, `np.bool_`, ...)."""
    return np_attr("bool_" if dtype.kind == "b" else dtype.name)


def astype(e: Expr, dtype: np.dtype[Any]) -> Expr:
    return method(e, "astype", dt(dtype))


def binop(a: Expr, op: ast.operator, b: Expr) -> Expr:
    return ast.BinOp(a, op, b)


def compare(a: Expr, op: ast.cmpop, b: Expr) -> Expr:
    return ast.Compare(a, [op], [b])


def neg(e: Expr) -> Expr:
    return ast.UnaryOp(ast.USub(), e)


def inv(e: Expr) -> Expr:
    return ast.UnaryOp(ast.Invert(), e)


def int_const(v: int) -> Expr:
    """An int literal; negative ones as -(literal), which unparses right in any context."""
    return neg(ast.Constant(-v)) if v < 0 else ast.Constant(v)


def int_value(e: Expr) -> int | None:
    """The value of an int literal expression (as `int_const` or ast.parse writes it)."""
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        inner = int_value(e.operand)
        return None if inner is None else -inner
    return None


def float_const(v: float, dtype: np.dtype[Any]) -> Expr:
    """A literal that `dtype.type(literal)` turns into exactly `v` (a value of dtype)."""
    if math.isnan(v):
        return np_attr("nan")
    if math.isinf(v):
        return np_attr("inf") if v > 0 else neg(np_attr("inf"))
    x = abs(v)
    short = float(str(dtype.type(x)))  # NumPy's shortest repr in dtype: 0.1, not 0.100000001
    if len(repr(short)) < len(repr(x)) and dtype.type(short).tobytes() == dtype.type(x).tobytes():
        x = short
    return neg(ast.Constant(x)) if math.copysign(1.0, v) < 0 else ast.Constant(x)


def offset(a: Expr, b: Expr, add: bool) -> Expr:
    """a + b (or a - b) on index values, written `i - 1` rather than `i + -1`."""
    c = int_value(b)
    if c is not None and c < 0:
        add, b = not add, ast.Constant(-c)
    return binop(a, ast.Add() if add else ast.Sub(), b)


class Ctx:
    """One emit: the helpers the expressions call."""

    def __init__(self, helpers: set[str]) -> None:
        self.helpers = helpers

    def helper(self, name: str, *args: Expr) -> Expr:
        assert name in PRELUDE or (compiled_form() and name in SCALAR_HELPERS), name
        self.helpers.add(name)
        return call(_name(name), *args)

    def index(self, e: Expr) -> Expr:
        """A NumPy integer expression as an index value (Python int for scalars)."""
        return self.helper("_index", e)


# ------------------------------------------------------------------ the table

Emitter = Callable[[Operation, list[Expr], Ctx], list[Expr]]

#: the NumPy emitter of each op class (filled by this package's dialect modules)
NUMPY: OpTable[Emitter] = OpTable(
    "numpy",
    "NumPy code generation",
    "run it with pk.run_reference, or report the need",
)


def op_names() -> tuple[str, ...]:
    """Names of the ops this package translates (for supported types)."""
    return tuple(sorted(c.name for c in NUMPY))


def operand_types(op: Operation) -> tuple[list[NpType], list[NpType]]:
    """The representations of the operand and result types; unsupported if one has none."""
    ins = [_np_type(v.type) for v in op.operands]
    outs = [_np_type(r.type) for r in op.results]
    if any(t is None for t in ins) or any(t is None for t in outs):
        raise _Unsupported
    return cast(list[NpType], ins), cast(list[NpType], outs)


def require(cond: bool) -> None:
    """Give up on the op (emit() reports it unsupported) unless `cond` holds."""
    if not cond:
        raise _Unsupported


def same_kind(op: Operation, kinds: str, n_in: int, n_out: int = 1) -> NpType:
    """Check `op` has n_in operands and n_out results, all of one type of a kind in `kinds`."""
    ins, outs = operand_types(op)
    require(len(ins) == n_in and len(outs) == n_out)
    t = (ins + outs)[0]
    require(t.kind in kinds and all(x == t for x in ins + outs))
    return t


# ------------------------------------------------------------------ families

#: the kinds of integer values: fixed-width, i1 and index
INT_KINDS = "ibx"


def int_op(body: Callable[[Operation, list[Expr], Ctx, NpType], Expr]) -> Emitter:
    """An integer op whose operands and result share one type.

    Values of unsigned storage (uiN) are computed as the signed type of the same
    width (the bits are the same) and converted back.
    """

    def emitter(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
        t = same_kind(op, INT_KINDS, len(op.operands))
        if t.unsigned:
            st = NpType("i", t.signed_dtype)
            e = body(op, [astype(a, st.dtype) for a in args], cx, st)
            return [astype(e, t.dtype)]
        return [body(op, args, cx, t)]

    return emitter


def float_binary(fn: Callable[[Expr, Expr, Ctx], Expr]) -> Emitter:
    """A float op of two operands and a result of one type, computed by `fn`."""

    def emitter(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
        same_kind(op, "f", 2)
        return [fn(args[0], args[1], cx)]

    return emitter


def in_f64(t: NpType, fn: Callable[[Expr | None], Expr], what: str = "") -> Expr:
    """fn evaluated in float64, rounded once to t (fn(None): the float64 keyword form),
    or in t itself where math_precision allows it (`what` names the function)."""
    if t.dtype == np.dtype(np.float64):
        return fn(None)
    native = _NATIVE_MATH.get()
    if native is not None:
        native.add(what or "math")
        return fn(None)
    return astype(fn(np_attr("float64")), t.dtype)


def ufunc64(name: str, *args: Expr) -> Callable[[Expr | None], Expr]:
    """NumPy's ufunc `name` on `args`, for :func:`in_f64`."""

    def fn(dtype: Expr | None) -> Expr:
        return npcall(name, *args) if dtype is None else npcall(name, *args, dtype=dtype)

    return fn


# math functions evaluated in float64 and rounded once (as the interpreter does)
_F64_UNARY = {
    "acos": "arccos",
    "acosh": "arccosh",
    "asin": "arcsin",
    "asinh": "arcsinh",
    "atan": "arctan",
    "atanh": "arctanh",
    "tan": "tan",
    "exp": "exp",
    "exp2": "exp2",
    "expm1": "expm1",
    "log": "log",
    "log2": "log2",
    "log10": "log10",
    "log1p": "log1p",
    "cbrt": "cbrt",
    "tanh": "tanh",
    "sin": "sin",
    "cos": "cos",
    "sinh": "sinh",
    "cosh": "cosh",
}
# exact in the operand's own type (the float64 result rounds back to the same value)
_EXACT_UNARY = {
    "absf": "abs",
    "floor": "floor",
    "ceil": "ceil",
    "trunc": "trunc",
    "roundeven": "rint",
    "sqrt": "sqrt",  # correctly rounded both ways (float64 has more than 2p + 2 bits)
}
#: the functions :func:`unary_float` computes, by the name math and krnl give them
UNARY_FLOAT_FUNCTIONS = (*_F64_UNARY, *_EXACT_UNARY, "rsqrt", "round", "erf")


def unary_float(fn: str) -> Emitter:
    """The float function `fn` (one of UNARY_FLOAT_FUNCTIONS) of one operand."""
    assert fn in UNARY_FLOAT_FUNCTIONS, fn

    def emitter(op: Operation, args: list[Expr], cx: Ctx) -> list[Expr]:
        t = same_kind(op, "f", 1)
        (a,) = args
        if fn in _EXACT_UNARY:
            return [npcall(_EXACT_UNARY[fn], a)]
        if fn == "round":
            return [cx.helper("_round", a)]
        if fn == "erf":
            e = cx.helper("_erf", a)
            return [e if t.dtype == np.dtype(np.float64) else astype(e, t.dtype)]
        if fn == "rsqrt":
            # a Python 1.0 keeps the operand's type (NumPy 2's weak scalars)
            sqrt = ufunc64("sqrt", a)
            return [in_f64(t, lambda d: binop(ast.Constant(1.0), ast.Div(), sqrt(d)), fn)]
        return [in_f64(t, ufunc64(_F64_UNARY[fn], a), fn)]

    return emitter


# ------------------------------------------------------------------ entry points


def _emit(op: Operation, args: list[Expr], helpers: set[str]) -> list[Expr] | None:
    emitter = NUMPY.get(op)
    if emitter is None or len(args) != len(op.operands) or op.regions:
        return None
    try:
        out = emitter(op, list(args), Ctx(helpers))
    except _Unsupported:
        return None
    assert len(out) == len(op.results)
    return [_unshared(e) for e in out]


def _unshared(e: Expr) -> Expr:
    """`e` with a copy for every repeated use of an AST node (an operand used twice)."""
    seen: set[int] = set()

    class Copier(ast.NodeTransformer):
        def visit(self, node: ast.AST) -> ast.AST:
            if id(node) in seen:
                return copy.deepcopy(node)
            seen.add(id(node))
            return self.generic_visit(node)

    return cast(Expr, Copier().visit(e))


def supported_lanes(op: Operation) -> bool:
    """Whether emit_lanes() can translate op: vector values as arrays, in a scalar loop."""
    token = _LANES.set(True)
    try:
        return supported(op)
    finally:
        _LANES.reset(token)


def emit_lanes(op: Operation, args: list[ast.expr], helpers: set[str]) -> list[ast.expr]:
    """emit(), where a vector value is a NumPy array of its lanes (in scalar loops only:
    under vectorized loops a value is already an array over those loops)."""
    token = _LANES.set(True)
    try:
        return emit(op, args, helpers)
    finally:
        _LANES.reset(token)


def supported(op: Operation) -> bool:
    """Whether emit() can translate op (a pure op with scalar operands/results)."""
    dummies: list[Expr] = [_name(f"_{i}") for i in range(len(op.operands))]
    return _emit(op, dummies, set()) is not None


def emit(op: Operation, args: list[ast.expr], helpers: set[str]) -> list[ast.expr]:
    """One Python expression per result of `op`, computing it from the operand expressions.

    Adds to `helpers` the names of PRELUDE helpers the expressions call.
    """
    added: set[str] = set()
    out = _emit(op, args, added)
    if out is None:
        types = ", ".join(str(v.type) for v in (*op.operands, *op.results))
        raise UnsupportedError(
            f"{op.name} ({types}) has no NumPy expression",
            hint="check numpy_ops.supported(op) first; vector types, types without a "
            "NumPy dtype and ops on memory or loops are not pure value ops",
        )
    helpers |= added
    return out
