"""`polykrnl run`: run a function on random inputs and summarize what it wrote.

By default the function runs as its generated NumPy kernel (``pk.schedule(fn)``,
the function's Krnl recipe, then ``.to_numpy()``); the compile time (schedule
and code generation) is printed apart from the run time. ``--reference`` runs
the reference interpreter instead. ``--verify`` runs both on copies of the same
inputs and compares every array argument that either run changed, and every
result: it prints the max absolute error, the max relative error (to the
largest magnitude of the reference's array) and whether the two are exactly
equal, and exits with 1 when they differ beyond the tolerance. A kernel marked
exact (``kernel.exact``: every op in the reference's order) must match exactly;
one that reassociates reductions (contractions as ``np.einsum``) must match
within ``np.allclose`` with the tolerance of ``reassociation_tolerance``.

Inputs are drawn from a NumPy Generator seeded with ``--seed``: floats
uniform in [-1, 1), signed integers in [-10, 10], unsigned integers in
[0, 10], booleans fair coins, strings 1 to 5 random lowercase letters.
Integer arrays whose elements end up in memory subscripts (a gather's indices,
data-given axes; see :mod:`polykrnl.index_inputs`) are drawn in ``[0, n)``, ``n``
the smallest dimension they index, so random runs of such programs stay in
bounds. ``--input NAME=FILE.npy`` gives a memref argument exact data instead
(checked against its type; it also sizes the argument's dynamic dimensions).

Sizes come from ``--param``:

- ``--param N=64`` sets the scalar argument ``%N`` (index, integer or float);
- ``--param A.0=64`` sets dimension 0 of the memref argument ``%A`` when the
  type leaves it dynamic (``?``);
- every dynamic dimension and every index or integer scalar that no
  ``--param`` sets takes the value of ``--size`` (default 16); float scalars
  not set are drawn like array elements.
"""

from __future__ import annotations

import contextlib
import copy
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

import islpy as isl
import numpy as np
from xdsl.dialects import affine, func
from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType, Signedness
from xdsl.ir import Attribute, Operation, SSAValue

from polykrnl.errors import ArgumentError, InterpretError, PolykrnlError, UnsupportedError
from polykrnl.index_inputs import index_limits
from polykrnl.model import dialect as k
from polykrnl.model.interpreter import Interpreter, memref_dtype, memref_shape
from polykrnl.model.interpreter.core import Frame
from polykrnl.model.interpreter.memory import memory_limit
from polykrnl.model.ir import Function, Module
from polykrnl.model.poly import DimParam, poly_program

if TYPE_CHECKING:
    from polykrnl.codegen.kernel import NumpyKernel
    from polykrnl.codegen.numba_kernel import NumbaKernel
    from polykrnl.targets.mlir import MlirKernel

DEFAULT_SIZE = 16


def choose_function(
    module: Module, name: str | None, *, question: str = "which one should run?"
) -> Function:
    """The function called `name`, or the module's only function when `name` is None.

    `question` ends the error message when the module has several (or no) functions.
    """
    if name is not None:
        return module[name]
    functions = [f for f in module.functions if f.op.body.blocks]
    if len(functions) == 1:
        return functions[0]
    names = ", ".join(f.name for f in functions) or "none"
    raise ArgumentError(
        f"{module.filename} defines {len(functions)} functions; {question}",
        hint=f"choose one with --func NAME (the module defines: {names})",
    )


def _check_params(fn: Function, params: Mapping[str, float]) -> None:
    """Refuse --param names that set nothing, so that a typo does not go unnoticed."""
    args = {a.name: a.type for a in fn.arguments}
    accepted: list[str] = []
    for a in fn.arguments:
        if isinstance(a.type, MemRefType):
            accepted += [f"{a.name}.{d}" for d, n in enumerate(a.type.get_shape()) if n < 0]
        else:
            accepted.append(a.name)
    for key, value in params.items():
        name, dot, dim = key.partition(".")
        t = args.get(name)
        if t is None:
            raise ArgumentError(
                f"--param {key}: @{fn.name} has no argument '{name}'",
                hint="accepted: " + (", ".join(accepted) or "nothing (no sizes to set)"),
            )
        if dot:
            if not isinstance(t, MemRefType):
                raise ArgumentError(
                    f"--param {key}: argument '{name}' is not a memref, it has no dimensions",
                    hint=f"set it with --param {name}=VALUE",
                )
            shape = t.get_shape()
            if not dim.isdigit() or int(dim) >= len(shape):
                raise ArgumentError(
                    f"--param {key}: '{name}' ({t}) has no dimension {dim}",
                    hint=f"dimensions are numbered 0 to {len(shape) - 1}",
                )
            if shape[int(dim)] >= 0:
                raise ArgumentError(
                    f"--param {key}: dimension {dim} of '{name}' is static ({t})",
                    hint="only `?` dimensions take a size from --param",
                )
        elif isinstance(t, MemRefType):
            raise ArgumentError(
                f"--param {key}: '{name}' is a memref ({t}); set its dimensions instead",
                hint=f"e.g. --param {name}.0=64",
            )
        if (dot or isinstance(t, IndexType | IntegerType)) and value != int(value):
            raise ArgumentError(f"--param {key} needs an integer, got {value}")
        if dot and value < 0:
            raise ArgumentError(f"--param {key}: a size cannot be negative ({int(value)})")


def _random_word(rng: np.random.Generator) -> str:
    return "".join(
        chr(ord("a") + int(c)) for c in rng.integers(0, 26, size=int(rng.integers(1, 6)))
    )


def _random_array(
    rng: np.random.Generator, t: MemRefType, shape: tuple[int, ...], name: str
) -> np.ndarray[Any, Any]:
    dtype = memref_dtype(t)
    if dtype.kind == "f":
        return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
    if dtype.kind == "b":
        return np.asarray(rng.random(size=shape) < 0.5)  # a 0-d array for rank 0, not a bool
    if dtype.kind == "i":
        return rng.integers(-10, 11, size=shape).astype(dtype)
    if dtype.kind == "u":
        return rng.integers(0, 11, size=shape).astype(dtype)
    if isinstance(t.element_type, k.StringType):
        words = np.empty(shape, dtype=object)
        for i in np.ndindex(*shape):
            words[i] = _random_word(rng)
        return words
    raise UnsupportedError(
        f"cannot make random inputs for argument '{name}' of type {t}",
        hint="run this function from Python with pk.run_reference(fn, ...) instead",
    )


def _random_sequence(
    rng: np.random.Generator, t: MemRefType, shape: tuple[int, ...], size: int, name: str
) -> np.ndarray[Any, Any]:
    """A memref of memrefs (an ONNX sequence): every element a random array, its dynamic
    sizes `size`."""
    elem = t.element_type
    assert isinstance(elem, MemRefType)
    elem_shape = tuple(size if n is None else n for n in memref_shape(elem))
    seq = np.empty(shape, dtype=object)
    for i in np.ndindex(*shape):
        seq[i] = _random_array(rng, elem, elem_shape, name)
    return seq


def _dim_sizes(
    fn: Function, params: Mapping[str, float], size: int
) -> Callable[[SSAValue, int], int | None]:
    """The size of dimension `d` of a memref in a run: static, else, for an argument, its
    `--param A.0` or `size`; None for a dynamic dimension of anything else (an
    allocation's size is not known before the run)."""
    names: dict[SSAValue, str] = (
        dict(zip(fn.op.body.block.args, (a.name for a in fn.arguments), strict=True))
        if fn.op.body.blocks
        else {}
    )

    def dim_size(value: SSAValue, d: int) -> int | None:
        t = value.type
        if not isinstance(t, MemRefType) or d >= len(t.get_shape()):
            return None
        n = memref_shape(t)[d]
        if n is not None:
            return n
        name = names.get(value)
        return int(params.get(f"{name}.{d}", size)) if name is not None else None

    return dim_size


def load_inputs(fn: Function, files: Mapping[str, str]) -> dict[str, np.ndarray[Any, Any]]:
    """Arrays for memref arguments of `fn` from .npy files (`run --input NAME=FILE`),
    checked against the argument's type: the rank, every static dimension, and an element
    type NumPy casts to the argument's without loss."""
    names = {a.name: a.type for a in fn.arguments}
    arrays: dict[str, np.ndarray[Any, Any]] = {}
    for name, path in files.items():
        t = names.get(name)
        if not isinstance(t, MemRefType) or isinstance(t.element_type, MemRefType | k.StringType):
            raise ArgumentError(
                f"--input {name}: @{fn.name} has no array argument %{name}",
                hint="--input gives the data of a memref argument of numbers; "
                + (
                    "set a scalar with --param"
                    if name in names
                    else "arguments: " + ", ".join(names)
                ),
            )
        try:
            data = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise ArgumentError(
                f"--input {name}: cannot read {path} as a NumPy .npy file ({e})",
                hint="write it with numpy.save(path, array)",
            ) from None
        want = memref_dtype(t)
        shape = memref_shape(t)
        fits = data.ndim == len(shape) and all(
            n is None or n == m for n, m in zip(shape, data.shape, strict=False)
        )
        if not fits:
            raise ArgumentError(
                f"--input {name}: {path} holds a {'x'.join(map(str, data.shape)) or 'scalar'} "
                f"array, %{name} is {t}",
                hint="give an array of the argument's shape (any size where the type has ?)",
            )
        if not np.can_cast(data.dtype, want, casting="safe"):
            raise ArgumentError(
                f"--input {name}: {path} holds {data.dtype}, which does not convert to "
                f"{want} (%{name} is {t}) without loss",
                hint=f"save the array as {want}",
            )
        arrays[name] = np.ascontiguousarray(data.astype(want))
    return arrays


def _run_shape(name: str, t: MemRefType, params: Mapping[str, float], size: int) -> tuple[int, ...]:
    """The shape of memref argument `name` in a run: static dims, else `--param
    name.d`, else `size`."""
    return tuple(
        int(params.get(f"{name}.{d}", size)) if n is None else n
        for d, n in enumerate(memref_shape(t))
    )


def _check_input_bytes(fn: Function, params: Mapping[str, float], size: int) -> None:
    """Refuse, before allocating anything, arguments that together exceed the memory a
    run may use (a `memref<100000x100000xf32>` argument is 37 GiB)."""
    total = 0
    for a in fn.arguments:
        t = a.type
        if isinstance(t, MemRefType) and not isinstance(t.element_type, MemRefType):
            shape = _run_shape(a.name, t, params, size)
            total += math.prod(max(0, n) for n in shape) * memref_dtype(t).itemsize
    if total > memory_limit():
        raise ArgumentError(
            f"the arguments of @{fn.name} need {total / 2**30:.3g} GiB, beyond the "
            f"{memory_limit() / 2**30:.3g} GiB a run may allocate",
            location=fn.location(fn.op),
            hint="give smaller sizes (--size, --param A.0=64), or run the kernel from Python "
            "on arrays of your own",
        )


def make_inputs(
    fn: Function,
    params: Mapping[str, float],
    *,
    seed: int,
    size: int = DEFAULT_SIZE,
    given: Mapping[str, np.ndarray[Any, Any]] | None = None,
) -> dict[str, Any]:
    """Random arguments for `fn`, sized by `params` and `size` (see the module docstring);
    `given` arrays (from `load_inputs`) are used as they are, and their sizes size the
    dynamic dimensions they fill."""
    given = given or {}
    params = dict(params)
    types = {a.name: a.type for a in fn.arguments}
    for name, data in given.items():
        mt = types[name]
        assert isinstance(mt, MemRefType)
        for d, n in enumerate(memref_shape(mt)):
            if n is None:
                params.setdefault(f"{name}.{d}", data.shape[d])
    _check_params(fn, params)
    _check_input_bytes(fn, params, size)
    rng = np.random.default_rng(seed)
    inputs: dict[str, Any] = {}
    limits = index_limits(fn, _dim_sizes(fn, params, size))
    for a in fn.arguments:
        t: Attribute = a.type
        if isinstance(t, MemRefType):
            shape = _run_shape(a.name, t, params, size)
            if a.name in given:
                inputs[a.name] = given[a.name].copy()
            elif isinstance(t.element_type, MemRefType):
                inputs[a.name] = _random_sequence(rng, t, shape, size, a.name)
            elif a.name in limits:
                high = limits[a.name]
                inputs[a.name] = rng.integers(0, high, size=shape).astype(memref_dtype(t))
            else:
                inputs[a.name] = _random_array(rng, t, shape, a.name)
        elif isinstance(t, IndexType | IntegerType):
            value = int(params.get(a.name, size))
            if isinstance(t, IntegerType):
                w = t.width.data
                unsigned = w == 1 or t.signedness.data == Signedness.UNSIGNED
                lo = 0 if unsigned else -(1 << (w - 1))
                hi = (1 << w) - 1 if unsigned else (1 << (w - 1)) - 1
                if not lo <= value <= hi:
                    raise ArgumentError(
                        f"argument '{a.name}' ({t}) cannot hold {value}",
                        hint=f"set it with --param {a.name}=VALUE in [{lo}, {hi}]",
                    )
            inputs[a.name] = value
        elif isinstance(t, k.StringType):
            inputs[a.name] = _random_word(rng)
        elif a.name in params:
            inputs[a.name] = float(params[a.name])
        else:
            inputs[a.name] = float(rng.uniform(-1.0, 1.0))
    return inputs


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        shape = "x".join(map(str, value.shape)) or "scalar"
        return f"{shape} {value.dtype}"
    return repr(value)


def _summary(value: Any) -> str:
    if not isinstance(value, np.ndarray):
        return f"{type(value).__name__} {value}"
    text = _describe(value)
    if value.dtype.kind in "fiub" and value.size:
        data = value.astype(np.float64)
        finite = data[np.isfinite(data)]
        with np.errstate(all="ignore"):  # inf + -inf is a NaN checksum, not a warning
            checksum = float(np.sum(data))
        text += f"  checksum={checksum:.6e}"
        if finite.size:
            text += f"  min={float(finite.min()):.6g}  max={float(finite.max()):.6g}"
        nan = int(np.count_nonzero(np.isnan(data)))
        if nan:
            text += f"  nan={nan}"
    return text


def _changed(before: np.ndarray[Any, Any], after: np.ndarray[Any, Any]) -> bool:
    if after.dtype.kind == "O":
        return any(x is not y for x, y in zip(before.flat, after.flat, strict=True))
    return not np.array_equal(before, after, equal_nan=after.dtype.kind == "f")


def _seconds(t: float) -> str:
    return f"{t * 1e3:.2f} ms" if t < 0.1 else f"{t:.3f} s"


def _results(result: Any) -> tuple[Any, ...]:
    return () if result is None else result if isinstance(result, tuple) else (result,)


def reassociation_tolerance(dtype: np.dtype[Any], n: int) -> float:
    """The rtol (and atol, relative to the array's magnitude) of a reassociated kernel.

    `n` bounds the number of terms of every reduction: a reduction loop indexes
    an array dimension, so it runs at most over the largest dimension of the
    arguments. Summed in any order, n terms are within (n - 1) * eps * sum|term|
    of their exact sum (Higham, Accuracy and Stability of Numerical Algorithms,
    section 4.2), so the reference's order and np.einsum's differ by at most
    2 * n * eps * sum|term|. With inputs uniform in [-1, 1) the terms have no
    larger magnitude than the sums they make, and the errors of a sum grow like
    sqrt(n), not n, in practice: 2 * n * eps of the reference's values (with an
    absolute part scaled by the largest of them, for sums that cancel to about
    zero) leaves a wide margin, while a kernel that drops or repeats one term is
    off by a whole term, far above it.
    """
    return 2.0 * max(n, 1) * float(np.finfo(dtype).eps)


@dataclass(frozen=True)
class Difference:
    """The kernel's value against the reference's (one array argument or result)."""

    max_abs: float | None  # None: not numbers (strings, sequences)
    max_rel: float | None  # max_abs / the largest magnitude of the reference's value
    equal: bool  # exactly equal (NaN where NaN)
    ok: bool  # equal, or within the tolerance when it applies
    rtol: float | None  # the tolerance applied (None: exact equality required)
    atol: float | None
    mismatch: str | None = None  # not comparable: a different shape or dtype


def _same_object(x: Any, y: Any) -> bool:
    """Elements of object arrays (strings, the arrays of a sequence) compared exactly."""
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        return (
            isinstance(x, np.ndarray)
            and isinstance(y, np.ndarray)
            and x.dtype == y.dtype
            and np.array_equal(x, y, equal_nan=x.dtype.kind in "fc")
        )
    return type(x) is type(y) and bool(x == y)


def compare(reference: Any, got: Any, *, exact: bool, n: int) -> Difference:
    """Compare a kernel's value with the reference's; `n` bounds reduction lengths."""
    ref, val = np.asarray(reference), np.asarray(got)
    if ref.shape != val.shape or ref.dtype != val.dtype:
        shape = "x".join(map(str, ref.shape)) or "scalar"
        got_shape = "x".join(map(str, val.shape)) or "scalar"
        mismatch = f"{got_shape} {val.dtype} instead of {shape} {ref.dtype}"
        return Difference(None, None, False, False, None, None, mismatch)
    if ref.dtype.kind not in "fciub":
        equal = all(_same_object(x, y) for x, y in zip(ref.flat, val.flat, strict=True))
        return Difference(None, None, equal, equal, None, None)
    wide = np.complex128 if ref.dtype.kind == "c" else np.float64
    a, b = ref.astype(wide), val.astype(wide)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(same, 0.0, np.abs(a - b))
    diff = np.where(np.isnan(diff), np.inf, diff)  # a NaN on one side only
    max_abs = float(diff.max()) if diff.size else 0.0
    finite = np.abs(a[np.isfinite(a)])
    scale = float(finite.max()) if finite.size else 0.0
    max_rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else float("inf"))
    equal = max_abs == 0.0
    if exact or ref.dtype.kind not in "fc":
        return Difference(max_abs, max_rel, equal, equal, None, None)
    rtol = reassociation_tolerance(ref.dtype, n)
    atol = rtol * max(1.0, scale)
    ok = bool(np.allclose(val, ref, rtol=rtol, atol=atol, equal_nan=True))
    return Difference(max_abs, max_rel, equal, ok, rtol, atol)


def _describe_difference(d: Difference) -> str:
    if d.mismatch is not None:
        return f"DIFFERENT: {d.mismatch}"
    if d.max_abs is None:
        return "exactly equal" if d.equal else "DIFFERENT"
    text = f"max abs error {d.max_abs:.3g}, max rel error {d.max_rel:.3g}: "
    if d.equal:
        return text + "exactly equal"
    if d.rtol is None:
        return text + "NOT exactly equal"
    verdict = "within" if d.ok else "BEYOND"
    return text + f"not exactly equal, {verdict} rtol={d.rtol:.3g} atol={d.atol:.3g}"


#: op executions the reference interpreter runs a second, typically (2.3e5 to 2.8e5
#: on most programs of a 2-core machine, up to 2e6 where it runs vectors as arrays)
REFERENCE_RATE = 250_000
#: op executions (`reference_work`), and loop iterations, the reference interpreter is
#: asked to run at most (about two minutes); beyond NOTICE_REFERENCE_STEPS (about 20 s)
#: `run` says how long it may take before it starts
MAX_REFERENCE_STEPS = 30_000_000
MAX_REFERENCE_ITERATIONS = 50_000_000
NOTICE_REFERENCE_STEPS = 5_000_000


def reference_work(fn: Function, inputs: Mapping[str, Any]) -> int | None:
    """About how many ops the interpreter executes to run `fn` on `inputs`, at most
    (None: unknown).

    Each statement's domain, with the parameters fixed to the inputs (sizes computed
    before the loops are computed from the arguments), is bounded by its box, and each
    instance costs its ops (`_steps`); a function the polyhedral model cannot represent
    has no estimate.
    """
    try:
        program = poly_program(fn)
    except PolykrnlError:
        return None
    values: dict[str, int] = {}
    for name, src in program.param_sources.items():
        if isinstance(src, DimParam):
            arr = inputs.get(src.array_name)
            if isinstance(arr, np.ndarray) and src.dim < arr.ndim:
                values[name] = arr.shape[src.dim]
        else:
            v = inputs.get(str(src))
            if not isinstance(v, int | np.integer):
                v = _fixed_value(fn, inputs, src.value)
            if isinstance(v, int | np.integer):
                values[name] = int(v)
    total = 0
    for st in program.statements:
        dom = st.domain
        for pos in range(dom.dim(isl.dim_type.param)):
            pname = dom.get_dim_name(isl.dim_type.param, pos)
            if pname not in values:
                return None
            dom = dom.fix_val(isl.dim_type.param, pos, isl.Val(values[pname]))
        if dom.is_empty():
            continue
        count = _steps(st.ops)
        for d in range(dom.dim(isl.dim_type.set)):
            lo, hi = dom.dim_min_val(d), dom.dim_max_val(d)
            if not (lo.is_int() and hi.is_int()):
                return None
            count *= max(0, hi.to_python() - lo.to_python() + 1)
        total += count
    return total


def _fixed_value(fn: Function, inputs: Mapping[str, Any], value: SSAValue) -> Any:
    """The value of `value`, computed before the loops from the arguments (a size that is
    the max of two dimensions), by the interpreter's own ops; None when it takes more
    than ops without regions, calls or memory results."""
    interpreter = Interpreter(fn.module)
    try:
        args, _ = interpreter.bind_arguments(fn, inputs)
    except PolykrnlError:
        return None
    frame = Frame(fn, interpreter.nest_of(fn))
    for a, v in zip(fn.op.body.block.args, args, strict=True):
        frame.env[a] = v

    def compute(v: SSAValue) -> bool:
        if v in frame.env:
            return True
        op = v.owner
        if (
            not isinstance(op, Operation)
            or op.parent_op() is not fn.op
            or op.regions
            or isinstance(op, func.CallOp | k.CallOp)
            or any(isinstance(r.type, MemRefType) for r in op.results)
        ):
            return False
        if not all(compute(x) for x in op.operands):
            return False
        try:
            interpreter.exec_op(op, frame)
        except PolykrnlError:
            return False
        return True

    return frame.env[value] if compute(value) else None


def _steps(ops: Sequence[Operation]) -> int:
    """What one instance of a statement made of `ops` costs the interpreter, in op
    executions: each op once, the ops inside an affine.for with constant bounds
    (onnx-mlir's inner SIMD reductions) once per iteration, the ops of other regions
    once. (Vector ops mostly run as NumPy arrays, so lanes do not count.)"""
    total = 0
    for op in ops:
        inner = sum(_steps(list(b.ops)) for r in op.regions for b in r.blocks)
        total += 1 + inner * _trips(op)
    return total


def _trips(op: Operation) -> int:
    """The trip count of an affine.for with constant bounds; 1 for any other op."""
    if not isinstance(op, affine.ForOp) or op.lowerBoundOperands or op.upperBoundOperands:
        return 1
    lb, ub = op.lowerBoundMap.data, op.upperBoundMap.data
    if len(lb.results) != 1 or len(ub.results) != 1:
        return 1
    lo, hi = lb.eval([], [])[0], ub.eval([], [])[0]
    return max(1, -(-(hi - lo) // op.step.value.data))


def _run_reference(
    module: Module, fn: Function, inputs: dict[str, Any], out: TextIO
) -> tuple[tuple[Any, ...], float]:
    work = reference_work(fn, inputs)
    if work is not None and work > MAX_REFERENCE_STEPS:
        raise ArgumentError(
            f"the reference interpreter would run up to {work:.3g} ops of @{fn.name} on "
            f"these inputs (about {work / REFERENCE_RATE / 60:.0f} minutes): refused",
            location=fn.location(fn.op),
            hint="give smaller sizes (--size, --param NAME=VALUE), or run the NumPy kernel "
            "alone (without --verify or --reference)",
        )
    if work is not None and work > NOTICE_REFERENCE_STEPS:
        out.write(
            f"  the reference interpreter runs up to {work:.3g} ops: up to about "
            f"{work / REFERENCE_RATE:.0f} s (smaller --size or --param run faster)\n"
        )
        out.flush()
    interpreter = Interpreter(module, stdout=out, max_iterations=MAX_REFERENCE_ITERATIONS)
    start = time.perf_counter()
    result = interpreter.call(fn, inputs)
    return _results(result), time.perf_counter() - start


def _run_kernel(
    kernel: NumpyKernel | NumbaKernel | MlirKernel,
    fn: Function,
    inputs: dict[str, Any],
    out: TextIO,
    target: str = "generated",
) -> tuple[tuple[Any, ...], float]:
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out):
            result = kernel(**inputs)
    except PolykrnlError:
        raise
    except Exception as e:  # the generated code failed: say so without a traceback
        raise InterpretError(
            f"the {target} kernel of @{fn.name} raised {type(e).__name__}: {e}",
            location=fn.location(fn.op),
            hint="run it with --reference: the reference interpreter points at the op that "
            "fails (with --verify, a kernel that fails where the reference does not is a "
            "verification failure)",
        ) from None
    return _results(result), time.perf_counter() - start


def _compile(
    fn: Function, parallel: bool = False, target: str = "numpy"
) -> tuple[NumpyKernel | NumbaKernel | MlirKernel, float, float]:
    """The kernel of `fn` after its recipe; the schedule and codegen times."""
    from polykrnl.pipeline import schedule

    try:
        start = time.perf_counter()
        sched = schedule(fn)
        middle = time.perf_counter()
        # Threads only when asked: NumPy's default is none, Numba's already prange.
        kernel: NumpyKernel | NumbaKernel | MlirKernel = sched.kernel(
            target, **({"parallel": True} if parallel else {})
        )
    except UnsupportedError as e:  # the interpreter runs more than the generator translates
        raise UnsupportedError(
            e.message,
            location=e.location,
            hint="add --reference to run the reference interpreter instead",
        ) from None
    return kernel, middle - start, time.perf_counter() - middle


def _write_outputs(
    out: TextIO, before: Mapping[str, Any], after: Mapping[str, Any], results: tuple[Any, ...]
) -> None:
    shown = False
    for name, old in before.items():
        if _changed(old, after[name]):
            out.write(f"  output {name}: {_summary(after[name])}\n")
            shown = True
    for i, r in enumerate(results):
        out.write(f"  result {i}: {_summary(r)}\n")
        shown = True
    if not shown:
        out.write("  no output: no memref argument changed and nothing was returned\n")


def run_cli(
    module: Module,
    *,
    func: str | None,
    params: Mapping[str, float],
    reference: bool,
    verify: bool,
    seed: int,
    out: TextIO,
    size: int = DEFAULT_SIZE,
    parallel: bool = False,
    input_files: Mapping[str, str] | None = None,
    target: str = "numpy",
) -> int:
    """`polykrnl run`: returns the exit status (errors raise PolykrnlError).

    0: ran (and, with `verify`, the kernel matches the reference); 1: with
    `verify`, the kernel differs from the reference beyond the tolerance.
    """
    fn = choose_function(module, func)
    if reference and verify:
        raise ArgumentError(
            "--reference and --verify do not combine: --verify runs the reference "
            "interpreter too, and compares the NumPy kernel with it",
            hint="drop --reference",
        )
    if size < 0:
        raise ArgumentError(f"--size cannot be negative ({size})")
    given = load_inputs(fn, input_files or {})
    inputs = make_inputs(fn, params, seed=seed, size=size, given=given)
    before = {n: v.copy() for n, v in inputs.items() if isinstance(v, np.ndarray)}
    # Everything that can refuse the program (an illegal recipe, an op without a
    # NumPy translation) does so before anything is printed.
    compiled = None if reference else _compile(fn, parallel, target)
    from polykrnl.targets import target as target_named

    label = target_named(target).label
    what = (
        "reference interpreter"
        if compiled is None
        else f"{label} kernel vs reference interpreter"
        if verify
        else f"{label} kernel"
    )
    out.write(f"@{fn.name}: {what}, seed {seed}\n")
    out.write(
        "  inputs: "
        + (", ".join(f"{n} {_describe(v)}" for n, v in inputs.items()) or "none")
        + "\n"
    )
    if compiled is None:
        results, elapsed = _run_reference(module, fn, inputs, out)
        out.write(f"  ran in {_seconds(elapsed)}\n")
        _write_outputs(out, before, inputs, results)
        return 0
    kernel, t_schedule, t_codegen = compiled
    jit = ""
    compile_for = getattr(kernel, "compile", None)
    if compile_for is not None:
        # A kernel compiled for its arguments' types (Numba's): timed here, apart from
        # the run.
        jit = f", {label} compilation {_seconds(compile_for(**inputs))}"
    for note in getattr(kernel, "notes", ()):
        out.write(f"  note: {note}\n")
    out.write(
        f"  compiled in {_seconds(t_schedule + t_codegen)} (schedule {_seconds(t_schedule)}, "
        f"{label} code generation {_seconds(t_codegen)}{jit})"
        + (
            ""
            if kernel.exact
            else "; reductions reassociated (float sums or products in another order)"
        )
        + "\n"
    )
    if not verify:
        results, elapsed = _run_kernel(kernel, fn, inputs, out, label)
        out.write(f"  ran in {_seconds(elapsed)}\n")
        _write_outputs(out, before, inputs, results)
        return 0
    expected = copy.deepcopy(inputs)
    ref_results, ref_elapsed = _run_reference(module, fn, expected, out)
    try:
        results, elapsed = _run_kernel(kernel, fn, inputs, out, label)
    except InterpretError as e:
        out.write(f"  reference interpreter ran in {_seconds(ref_elapsed)}\n")
        out.write(f"  verify: FAILED: {e.message}\n")
        return 1
    out.write(
        f"  kernel ran in {_seconds(elapsed)}, reference interpreter in {_seconds(ref_elapsed)}\n"
    )
    return _verify(out, kernel.exact, before, expected, inputs, ref_results, results)


def _verify(
    out: TextIO,
    exact: bool,
    before: Mapping[str, Any],
    expected: Mapping[str, Any],
    got: Mapping[str, Any],
    ref_results: tuple[Any, ...],
    results: tuple[Any, ...],
) -> int:
    """Print the kernel's outputs against the reference's; the exit status."""
    n = max((max(v.shape, default=1) for v in before.values()), default=1)
    compared: list[tuple[str, Any, Any]] = [
        (f"output {name}", expected[name], got[name])
        for name, old in before.items()
        if _changed(old, expected[name]) or _changed(old, got[name])
    ]
    if len(ref_results) != len(results):
        out.write(
            f"  verify: FAILED: the kernel returned {len(results)} values, "
            f"the reference {len(ref_results)}\n"
        )
        return 1
    compared += [
        (f"result {i}", r, g) for i, (r, g) in enumerate(zip(ref_results, results, strict=True))
    ]
    if not compared:
        out.write("  no output: no memref argument changed and nothing was returned\n")
    failed: list[str] = []
    for label, ref, value in compared:
        d = compare(ref, value, exact=exact, n=n)
        out.write(f"  {label}: {_summary(value)}\n    vs reference: {_describe_difference(d)}\n")
        if not d.ok:
            failed.append(label)
    if failed:
        out.write(
            f"  verify: FAILED: {', '.join(failed)} differ{'s' if len(failed) == 1 else ''} "
            "from the reference\n"
        )
        return 1
    if exact:
        out.write("  verify: ok, exactly equal to the reference (the kernel keeps its order)\n")
    else:
        out.write(
            "  verify: ok, equal to the reference within the tolerance of reassociated reductions\n"
        )
    return 0
