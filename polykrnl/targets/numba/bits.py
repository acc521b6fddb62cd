"""Three LLVM operations Numba has no spelling for, as intrinsics of a kernel's module.

Numba kernels are Python, and Python has no fused multiply-add and no way to read a
float's bits as an integer in compiled code (`.view` is for arrays). Both are single
instructions LLVM vectorizes; the vector exp and tanh (vector_math.py) need them for
their polynomials and powers of two, the order-preserving keys of min/max reductions
(minmax_keys.py) for comparing floats as integers. :data:`SOURCE` defines them with
`numba.extending.intrinsic`, so a kernel module still imports only numpy and numba:

* `_pk_fma(a, b, c)`: a * b + c rounded once (`llvm.fma.f64`: the FMA instruction, or
  the C library's `fma` on a machine without one; the same value either way);
* `_pk_to_bits(x)`: a float32's bits as int32, a float64's as int64;
* `_pk_from_bits(n)`: the float32 whose bits are the int32 n, the float64 of an int64.
"""

from __future__ import annotations

import functools
import platform

#: the helper's name among a kernel's helpers (it defines the three intrinsics)
NAME = "_pk_bits"

SOURCE = '''
from numba import types as _pk_types
from numba.extending import intrinsic as _pk_intrinsic

_PK_BITS = {_pk_types.float32: _pk_types.int32, _pk_types.float64: _pk_types.int64}
_PK_FLOATS = {bits: real for real, bits in _PK_BITS.items()}


def _pk_bitcast(context, builder, signature, args):
    return builder.bitcast(args[0], context.get_value_type(signature.return_type))


@_pk_intrinsic
def _pk_fma(typingctx, a, b, c):
    """a * b + c rounded once (bits.py)."""
    f64 = _pk_types.float64
    return f64(f64, f64, f64), lambda context, builder, signature, args: builder.fma(*args)


@_pk_intrinsic
def _pk_to_bits(typingctx, x):
    """The bits of a float32 (int32) or a float64 (int64) (bits.py)."""
    out = _PK_BITS.get(x)
    return (out(x), _pk_bitcast) if out is not None else None


@_pk_intrinsic
def _pk_from_bits(typingctx, n):
    """The float32 of an int32's bits, the float64 of an int64's (bits.py)."""
    out = _PK_FLOATS.get(n)
    return (out(n), _pk_bitcast) if out is not None else None
'''


@functools.cache
def fma_native() -> bool:
    """Whether Numba compiles `llvm.fma` to an instruction here, not a call of the C
    library's `fma` (a loop of which LLVM does not vectorize)."""
    from numba.core import config

    if getattr(config, "CPU_NAME", None) not in (None, "host"):
        return False  # a portable target (NUMBA_CPU_NAME=generic) may lack it
    if platform.machine().lower() in ("aarch64", "arm64"):
        return True  # part of ARMv8's floating point
    import llvmlite.binding as llvm

    return bool(llvm.get_host_cpu_features().get("fma", False))
