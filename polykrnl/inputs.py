"""The inputs `polykrnl run` (and tests, tools, benchmarks) give a function: random arrays
and scalars sized by `--param` and `--size`, or exact data from .npy files.

Inputs are drawn from a NumPy Generator seeded with ``--seed``: floats
uniform in [-1, 1), signed integers in [-10, 10], unsigned integers in
[0, 10], booleans fair coins, strings 1 to 5 random lowercase letters.
Integer arrays whose elements end up in memory subscripts (a gather's indices,
data-given axes; see :mod:`polykrnl.index_inputs`) are drawn in ``[0, n)``, ``n``
the smallest dimension they index, so random runs of such programs stay in
bounds. Integer arrays whose elements bound a loop that subscripts memory (TopK's k)
are drawn in ``[1, n]``, ``n`` the smallest dimension that loop subscripts; an index or
integer scalar that subscripts memory or a sequence takes at most ``n - 1`` when no
``--param`` sets it. ``--input NAME=FILE.npy`` gives a memref argument exact data instead
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

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType, Signedness
from xdsl.ir import Attribute, SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.errors import ArgumentError, UnsupportedError
from polykrnl.index_inputs import index_limits, scalar_limits, size_limits
from polykrnl.interpreter import memref_dtype, memref_shape
from polykrnl.interpreter.memory import memory_limit
from polykrnl.ir import Function

DEFAULT_SIZE = 16


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
    checked against the argument's type (:func:`check_input`)."""
    arrays: dict[str, np.ndarray[Any, Any]] = {}
    for name, path in files.items():
        _array_argument(fn, name, f"--input {name}")
        try:
            data = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise ArgumentError(
                f"--input {name}: cannot read {path} as a NumPy .npy file ({e})",
                hint="write it with numpy.save(path, array)",
            ) from None
        arrays[name] = check_input(fn, name, data, f"--input {name}: {path}")
    return arrays


def _array_argument(fn: Function, name: str, what: str) -> MemRefType:
    names = {a.name: a.type for a in fn.arguments}
    t = names.get(name)
    if not isinstance(t, MemRefType) or isinstance(t.element_type, MemRefType | k.StringType):
        raise ArgumentError(
            f"{what}: @{fn.name} has no array argument %{name}",
            hint="this gives the data of a memref argument of numbers; "
            + ("set a scalar with --param" if name in names else "arguments: " + ", ".join(names)),
        )
    return t


def check_input(
    fn: Function, name: str, data: np.ndarray[Any, Any], what: str
) -> np.ndarray[Any, Any]:
    """`data` for memref argument `name` of `fn`, contiguous in the argument's element
    type, after checking the rank, every static dimension, and that NumPy casts its
    element type to the argument's without loss (`what` says where it came from)."""
    t = _array_argument(fn, name, what)
    want = memref_dtype(t)
    shape = memref_shape(t)
    fits = data.ndim == len(shape) and all(
        n is None or n == m for n, m in zip(shape, data.shape, strict=False)
    )
    if not fits:
        raise ArgumentError(
            f"{what} holds a {'x'.join(map(str, data.shape)) or 'scalar'} array, %{name} is {t}",
            hint="give an array of the argument's shape (any size where the type has ?)",
        )
    if not np.can_cast(data.dtype, want, casting="safe"):
        raise ArgumentError(
            f"{what} holds {data.dtype}, which does not convert to {want} (%{name} is {t}) "
            "without loss",
            hint=f"save the array as {want}",
        )
    return np.ascontiguousarray(data.astype(want))


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
    subscripts = scalar_limits(fn, _dim_sizes(fn, params, size))
    sizes = size_limits(fn, _dim_sizes(fn, params, size))
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
            elif a.name in sizes:
                high = sizes[a.name]
                inputs[a.name] = rng.integers(1, high + 1, size=shape).astype(memref_dtype(t))
            else:
                inputs[a.name] = _random_array(rng, t, shape, a.name)
        elif isinstance(t, IndexType | IntegerType):
            value = int(params.get(a.name, size))
            if a.name not in params and a.name in subscripts:
                # The last position of what it subscripts, rather than one past it.
                value = min(value, subscripts[a.name] - 1)
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
