"""affine dialect ops outside loop bounds."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import affine
from xdsl.dialects.builtin import AffineMapAttr
from xdsl.ir.affine import AffineMap

from polykrnl.builder.core import AffineBound, FunctionCore, Value, builder_error


class AffineOps(FunctionCore):
    """``affine.apply``."""

    def affine_apply(
        self,
        map: str | AffineMap,
        dims: Sequence[Value] = (),
        symbols: Sequence[Value] = (),
        *,
        name: str | None = None,
    ) -> Value:
        """``affine.apply affine_map<...>(%dims)[%symbols]`` (a single-result map)."""
        bound = AffineBound(map, dims, symbols)
        if len(bound.map.results) != 1:
            raise builder_error(
                f"affine.apply needs a single-result map, got {bound.map}",
                "apply each result with its own f.affine_apply",
            )
        ops = [self._index(v, "an affine.apply operand") for v in (*bound.dims, *bound.symbols)]
        op = affine.ApplyOp(ops, AffineMapAttr(bound.map))
        return self._insert(op, names=[name]).results[0]
