"""Krnl -> PolyProgram: statements, isl iteration domains, access relations, schedule.

A *statement* is one memory op (a store, krnl.memset, a tile copy, ...) with
the pure ops that compute its operands. Its iteration domain is an
``isl.Set`` named after it (``S3[i, j]``) over the values of the loops that
enclose it in the loop nest of :mod:`polykrnl.nest.loops` (the nest the
function's recipe describes), one dimension per original loop:

* the original induction variable (named as in the source, ``i``) when the
  statement sits inside the loop that carries it;
* otherwise the innermost loop of that original loop that encloses the
  statement (a tile loop, for statements that the recipe places between a
  tile loop and its point loops), named after the loop (``ib``).

The domain is the exact projection of the loop bounds (steps, ``max``/``min``
bounds, tile and point loops, bounds on enclosing induction variables) on
those dimensions. Parameters are the function's index arguments, the dynamic
sizes of its memref arguments (``A_d0``, shown to users as ``A.0``), and other
values fixed for the whole call that bounds depend on.

Values that cross statements (a loaded value used in a nested loop, the
``iter_args`` of an iterate, the results of an iterate) become *virtual
arrays*, indexed by the iteration of the loops around their definition, so
that the dependences between statements stay exact. Accesses the model cannot
pin down are may-accesses that cover at least what they touch: a subscript
read from memory ranges over its dimension (the affine subscripts still bind),
an access inside an ``scf`` region keeps its subscripts but may not happen, an
opaque op may touch any element of the memrefs it uses. Each such access
carries its reason (``Access.approximation``); ``check`` lists them.

The original schedule is an isl schedule tree: one band (under a mark named
after the loop) per concrete loop of the nest, sequence nodes for textual
order. It is the program as written, recipe included.

Layout: :mod:`.program` holds the values (PolyProgram, Statement, Access);
:mod:`.builder` cuts a function into statements; :mod:`.domains` turns loop
bounds and index values into isl; :mod:`.table` is the `POLY` op table that
each dialect's module (:mod:`.arith`, :mod:`.math`, :mod:`.memref`,
:mod:`.affine`, :mod:`.scf`, :mod:`.func`, :mod:`.krnl`) fills.
"""

from polykrnl.poly import (  # noqa: F401
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
from polykrnl.poly.builder import poly_program
from polykrnl.poly.domains import map_results
from polykrnl.poly.program import (
    CTX,
    Access,
    ArrayInfo,
    DimParam,
    ParamSource,
    PLoop,
    PNode,
    PolyProgram,
    PStmt,
    Statement,
    ValueParam,
    build_tree,
    isl_name,
    sequence_of,
)
from polykrnl.poly.table import POLY, is_pure

__all__ = [
    "CTX",
    "POLY",
    "Access",
    "ArrayInfo",
    "DimParam",
    "PLoop",
    "PNode",
    "PStmt",
    "ParamSource",
    "PolyProgram",
    "Statement",
    "ValueParam",
    "build_tree",
    "is_pure",
    "isl_name",
    "map_results",
    "poly_program",
    "sequence_of",
]
