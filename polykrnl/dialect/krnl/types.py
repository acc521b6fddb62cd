"""The types of the Krnl dialect: loop handles and strings."""

from __future__ import annotations

from xdsl.dialects.builtin import (
    IndexType,
)
from xdsl.ir import (
    ParametrizedAttribute,
    TypeAttribute,
)
from xdsl.irdl import (
    irdl_attr_definition,
)

# --------------------------------------------------------------------------- types


@irdl_attr_definition
class LoopType(ParametrizedAttribute, TypeAttribute):
    """`!krnl.loop`: a loop handle. It has no bounds or order of its own."""

    name = "krnl.loop"


@irdl_attr_definition
class StringType(ParametrizedAttribute, TypeAttribute):
    """`!krnl.string`: an opaque string value (strlen, strncmp, find_index)."""

    name = "krnl.string"


LOOP = LoopType()
INDEX = IndexType()

# ------------------------------------------------------------- scalar math ops
