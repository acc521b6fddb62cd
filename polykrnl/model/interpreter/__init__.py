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

Layout: :mod:`.core` runs functions, blocks and loop nests and holds the op
table `INTERPRET`; each dialect's module (:mod:`.arith`, :mod:`.math`,
:mod:`.memref`, :mod:`.affine`, :mod:`.scf`, :mod:`.func`, :mod:`.krnl`) says
what its ops do, registered by op class; :mod:`.scheduled` runs statement
instances in the order of a schedule.
"""

from __future__ import annotations

from typing import Any

from polykrnl.model.interpreter import (  # noqa: F401
    affine,
    arith,
    builtin,
    func,
    krnl,
    math,
    memref,
    scf,
    vector,
)
from polykrnl.model.interpreter.core import (
    INTERPRET,
    Interpreter,
    register_call,
    registered_calls,
    supported_ops,
    unregister_call,
)
from polykrnl.model.interpreter.scheduled import run_schedule
from polykrnl.model.interpreter.values import (
    handed_back,
    make_value,
    memref_dtype,
    memref_shape,
    scalar_dtype,
)
from polykrnl.model.ir import Function

__all__ = [
    "INTERPRET",
    "Interpreter",
    "handed_back",
    "make_value",
    "memref_dtype",
    "memref_shape",
    "register_call",
    "registered_calls",
    "run_reference",
    "scalar_dtype",
    "supported_ops",
    "unregister_call",
]


def run_reference(fn: Function, /, schedule: Any = None, **arrays_and_params: Any) -> Any:
    """Run `fn` with the reference interpreter; arguments are passed by name.

    Memref arguments are NumPy arrays of the exact dtype (``f32`` ->
    ``float32``, ``index`` -> ``int64``, ...) and shape (``?`` accepts any
    size); they are updated in place. Scalars are Python or NumPy numbers,
    strings are str. Returns None, the single result, or a tuple of results.

    With ``schedule=s`` (a polykrnl Schedule of `fn`), the statement instances
    run in the order of `s` instead of the program's own order.

    Raises `ArgumentError` for missing or mismatched arguments and `InterpretError`
    for a run-time problem (an access out of bounds, an unknown call).

    Examples
    --------
    >>> import numpy as np

    >>> import polykrnl as pk
    >>> fn = pk.parse('''
    ... func.func @scale(%X: memref<?xf32>, %N: index) {
    ...   %ii = krnl.define_loops 1
    ...   krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    ...     %x = krnl.load %X[%i] : memref<?xf32>
    ...     %y = arith.addf %x, %x : f32
    ...     krnl.store %y, %X[%i] : memref<?xf32>
    ...   }
    ...   return
    ... }''')["scale"]
    >>> X = np.arange(4, dtype=np.float32)
    >>> pk.run_reference(fn, X=X, N=4)
    >>> X
    array([0., 2., 4., 6.], dtype=float32)
    """
    if schedule is not None:
        return run_schedule(fn, schedule, arrays_and_params)
    return Interpreter(fn.module).call(fn, arrays_and_params)
