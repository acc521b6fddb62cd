"""Build Krnl programs from Python, without writing MLIR text.

The builder makes the same xDSL IR as parsing the equivalent hand-written
text: ``mb.module().print() == pk.parse(text).print()``. Each op it creates is
located at the Python line that asked for it, so later errors (verifier,
schedules, interpreter) point at the user's code.

Example::

    from polykrnl.builder import ModuleBuilder

    mb = ModuleBuilder()
    with mb.function("copy", [("A", "memref<40xf32>"), ("B", "memref<40xf32>")]) as f:
        A, B = f.args
        (ii,) = f.define_loops(1, names=("ii",))
        with f.iterate([ii], [(ii, "i", 0, 40)]) as (i,):
            f.store(f.load(A, [i], name="a"), B, [i])
    mod = mb.module()

Values are plain xDSL ``SSAValue`` objects; loop handles are values of type
``!krnl.loop``. Scoped ops (``iterate``, ``movable``, ``region``) are context
managers: the ops made inside the ``with`` block go into their body.

Misuse raises :class:`polykrnl.errors.BuilderError` located at the offending
Python line. The checks run before the IR changes, so a caught error leaves
the builder usable; an exception that leaves a function's ``with`` block drops
that half-built function from the module.
"""

from polykrnl.builder.core import (
    AffineBound,
    Bound,
    Entry,
    IterArg,
    Loop,
    Scope,
    TypeLike,
    Value,
)
from polykrnl.builder.module import FunctionBuilder, ModuleBuilder

__all__ = [
    "AffineBound",
    "Bound",
    "Entry",
    "FunctionBuilder",
    "IterArg",
    "Loop",
    "ModuleBuilder",
    "Scope",
    "TypeLike",
    "Value",
]
