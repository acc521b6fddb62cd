"""The reference interpreter: runs a Krnl function element by element.

This is the oracle of polykrnl: every generated kernel is compared with it, so
it favours being plainly right over being fast. It executes the concrete loop
nest that :mod:`polykrnl.nest.loops` builds (the loops onnx-mlir's
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
what its ops do, registered by op class. It imports no isl: running statement instances in a
schedule's order (`pk.run_reference(fn, schedule=s)`) needs the polyhedral model and
lives after it, in :mod:`polykrnl.transforms.scheduled_run`.
"""

from __future__ import annotations

from polykrnl.interpreter import (  # noqa: F401
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
from polykrnl.interpreter.core import (
    INTERPRET,
    Interpreter,
    register_call,
    registered_calls,
    supported_ops,
    unregister_call,
)
from polykrnl.interpreter.values import (
    handed_back,
    make_value,
    memref_dtype,
    memref_shape,
    scalar_dtype,
)

__all__ = [
    "INTERPRET",
    "Interpreter",
    "handed_back",
    "make_value",
    "memref_dtype",
    "memref_shape",
    "register_call",
    "registered_calls",
    "scalar_dtype",
    "supported_ops",
    "unregister_call",
]
