"""Pure value ops as NumPy expressions: arith, math, affine maps and Krnl's scalar ops.

``emit(op, args, helpers)`` turns one op into one Python expression per result,
built with :mod:`ast`, computing it from the expressions of its operands. The
same expression works on NumPy scalars (scalar loops) and on NumPy arrays
(vectorized loops, operands broadcast against each other).

The emitter of each op is found by the op's class in :data:`NUMPY`, which one
module per dialect fills (:mod:`.arith`, :mod:`.math`, :mod:`.affine`,
:mod:`.krnl`); what they share is in :mod:`.core`, the helper functions
generated code calls in :mod:`.prelude`.

Values in generated code (the contract with the kernel generator):

- ``f16``/``f32``/``f64``: NumPy scalar or array of float16/float32/float64;
- ``iN`` (N in 8..64; signless and signed types): intN; ``uiN``: uintN;
- ``i1``: ``np.bool_`` scalar or bool array;
- ``index``: a Python int, or an int64 array;
- ``!krnl.string``: a Python str, or an object array of str.

Results are bit for bit those of the reference interpreter
(:mod:`polykrnl.interpreter`): integer ops wrap, every float op rounds in
its own type (transcendental functions are computed in float64 and rounded
once), signed and unsigned readings are the op's own. That includes what the
interpreter inherits from NumPy and Python rather than from MLIR:
``math.powf``/``fpowi`` take NumPy's shortcuts for a scalar exponent (x ** 0.5
is sqrt(x), so (-0.0) ** 0.5 = -0.0 and (-inf) ** 0.5 = NaN; x ** 2 is x * x;
x ** -1 is 1 / x), ``arith.sitofp``/``uitofp`` of 64-bit integers round twice
(to float64, then to f32/f16), ``math.fma`` rounds a * b + c computed in
``np.longdouble``. The exceptions, where the interpreter's result cannot be
reproduced on arrays or is not what MLIR defines, are:

- ``arith.maximumf``/``minimumf``/``maxnumf``/``minnumf`` of +0.0 and -0.0:
  +0.0 is the larger (the interpreter returns whichever zero NumPy's scalar
  loop picks, which depends on the dtype, and NumPy's array loops pick
  differently);
- ``index`` values beyond the int64 range: the interpreter keeps unbounded
  Python ints, generated code wraps at 64 bits (equal modulo 2**64);
- ``krnl.erf``/``math.erf``: the interpreter calls the C library's erf
  through ``math.erf``; ``_erf`` (:mod:`.prelude`) is glibc's (before 2.41) algorithm in
  NumPy, bit for bit equal where the C library is that glibc and NumPy's
  float64 ``np.exp`` is the C library's (x86-64 without AVX-512, where NumPy
  has no SIMD exp of its own).

Where the interpreter raises (undefined behaviour), generated code returns
some value and never hangs: integer division or remainder by zero gives 0
(``arith.remsi``/``remui`` through ``np.fmod``: 0 and a NumPy "divide by zero"
warning unless errors are ignored), ``INT_MIN / -1`` gives INT_MIN, shifts by
the bit width or more give 0 (or -1 for ``shrsi`` of a negative value;
``index`` ``shrsi`` by a negative amount raises ValueError), ``fptosi``/``fptoui``
of NaN, infinities and out-of-range values give NumPy's cast result (usually
INT_MIN) with an "invalid value" warning, ``math.ipowi`` of 0 to a negative
power gives 0. Float ops may warn on overflow or invalid operations like any
NumPy code; kernels run under ``np.errstate(all="ignore")`` as the interpreter
does.

Ops with operands or results of vector type, of types the interpreter has no
NumPy representation for (bf16, i4, ...), and ops that touch memory or loops
(loads, ``memref.dim``, ``krnl.get_induction_var_value``, ...) are not handled
here: :func:`supported` returns False for them.
"""

from __future__ import annotations

# The dialect modules are imported for their registrations in NUMPY.
from polykrnl.codegen.numpy_ops import affine, arith, krnl, math, memref, vector
from polykrnl.codegen.numpy_ops.core import (
    NUMPY,
    compiled_form,
    emit,
    emit_lanes,
    float_const,
    math_precision,
    op_names,
    supported,
    supported_lanes,
    writing,
)
from polykrnl.codegen.numpy_ops.prelude import HELPER_DEPS, PRELUDE

__all__ = [
    "HELPER_DEPS",
    "NUMPY",
    "PRELUDE",
    "affine",
    "arith",
    "compiled_form",
    "emit",
    "emit_lanes",
    "float_const",
    "krnl",
    "math",
    "math_precision",
    "memref",
    "op_names",
    "supported",
    "supported_lanes",
    "vector",
    "writing",
]
