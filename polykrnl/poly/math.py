"""The math dialect in the polyhedral model: every op computes a pure value."""

from __future__ import annotations

from xdsl.dialects import math

from polykrnl.dialect.std_ext import STD_EXT_OPS
from polykrnl.poly.table import POLY, OpModel, may_read_memrefs

for _op in (*math.Math.operations, *(o for o in STD_EXT_OPS if o.name.startswith("math."))):
    POLY.add(OpModel(pure=True, accesses=may_read_memrefs), _op)
