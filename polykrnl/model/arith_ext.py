"""Ops of MLIR's `arith` dialect that xDSL lacks, defined here with MLIR's meaning.

They join xDSL's own arith ops in polykrnl's parsing context
(:func:`polykrnl.model.parser.context`), so they parse, print and verify like
their siblings; each stage gives them meaning in its arith module.
"""

from __future__ import annotations

from xdsl.dialects.arith import FloatingPointLikeBinaryOperation
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.traits import Pure


@irdl_op_definition
class RemFOp(FloatingPointLikeBinaryOperation):
    """`arith.remf`: the remainder of a float division, with the sign of the dividend (C fmod)."""

    name = "arith.remf"

    traits = traits_def(Pure())


ARITH_EXT_OPS = (RemFOp,)
