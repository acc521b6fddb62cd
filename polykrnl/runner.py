"""`polykrnl run`: run a function on random inputs and summarize what it wrote.

Inputs are drawn from a NumPy Generator seeded with ``--seed``: floats
uniform in [-1, 1), signed integers in [-10, 10], unsigned integers in
[0, 10], booleans fair coins, strings 1 to 5 random lowercase letters.

Sizes come from ``--param``:

- ``--param N=64`` sets the scalar argument ``%N`` (index, integer or float);
- ``--param A.0=64`` sets dimension 0 of the memref argument ``%A`` when the
  type leaves it dynamic (``?``);
- every dynamic dimension and every index or integer scalar that no
  ``--param`` sets takes the value of ``--size`` (default 16); float scalars
  not set are drawn like array elements.

Only the reference interpreter runs for now (``--reference``); the NumPy
backend, and ``--verify`` which compares it with the reference, come later.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, TextIO

import numpy as np
from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType, Signedness
from xdsl.ir import Attribute

from polykrnl.errors import ArgumentError, UnsupportedError
from polykrnl.model import dialect as k
from polykrnl.model.interpreter import Interpreter, memref_dtype, memref_shape
from polykrnl.model.ir import Function, Module

DEFAULT_SIZE = 16


def choose_function(
    module: Module, name: str | None, *, question: str = "which one should run?"
) -> Function:
    """The function called `name`, or the module's only function when `name` is None.

    `question` ends the error message when the module has several (or no) functions.
    """
    if name is not None:
        return module[name]
    functions = module.functions
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
        return rng.random(size=shape) < 0.5
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


def make_inputs(
    fn: Function, params: Mapping[str, float], *, seed: int, size: int = DEFAULT_SIZE
) -> dict[str, Any]:
    """Random arguments for `fn`, sized by `params` and `size` (see the module docstring)."""
    _check_params(fn, params)
    rng = np.random.default_rng(seed)
    inputs: dict[str, Any] = {}
    for a in fn.arguments:
        t: Attribute = a.type
        if isinstance(t, MemRefType):
            shape = tuple(
                int(params.get(f"{a.name}.{d}", size)) if n is None else n
                for d, n in enumerate(memref_shape(t))
            )
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
        text += f"  checksum={float(np.sum(data)):.6e}"
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
) -> int:
    """`polykrnl run`: returns the exit status (errors raise PolykrnlError)."""
    fn = choose_function(module, func)
    if verify:
        raise UnsupportedError(
            "--verify compares the NumPy backend with the reference interpreter; the NumPy "
            "backend arrives with a later version of polykrnl",
            hint="run the reference interpreter alone with --reference",
        )
    if not reference:
        raise UnsupportedError(
            "running the generated NumPy kernel is not available yet: the NumPy backend "
            "arrives with a later version of polykrnl",
            hint="add --reference to run the reference interpreter",
        )
    if size < 0:
        raise ArgumentError(f"--size cannot be negative ({size})")
    inputs = make_inputs(fn, params, seed=seed, size=size)
    before = {n: v.copy() for n, v in inputs.items() if isinstance(v, np.ndarray)}
    out.write(f"@{fn.name}: reference interpreter, seed {seed}\n")
    out.write(
        "  inputs: "
        + (", ".join(f"{n} {_describe(v)}" for n, v in inputs.items()) or "none")
        + "\n"
    )
    interpreter = Interpreter(module, stdout=out)
    start = time.perf_counter()
    result = interpreter.call(fn, inputs)
    elapsed = time.perf_counter() - start
    out.write(f"  ran in {elapsed:.3f} s\n")
    shown = False
    for name, old in before.items():
        if _changed(old, inputs[name]):
            out.write(f"  output {name}: {_summary(inputs[name])}\n")
            shown = True
    results = () if result is None else result if isinstance(result, tuple) else (result,)
    for i, r in enumerate(results):
        out.write(f"  result {i}: {_summary(r)}\n")
        shown = True
    if not shown:
        out.write("  no output: no memref argument changed and nothing was returned\n")
    return 0
