"""The builtin dialect in the polyhedral model."""

from __future__ import annotations

from xdsl.dialects import builtin

from polykrnl.poly.table import POLY, OpModel, no_accesses

# A memref seen as the tensor it stands for (or back): the same buffer, an alias.
POLY.add(OpModel(pure=True, alias=True, accesses=no_accesses), builtin.UnrealizedConversionCastOp)
