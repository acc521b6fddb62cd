"""Any registered op, built from its generic form."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xdsl.ir import Attribute, Operation

from polykrnl.builder.core import (
    FunctionCore,
    Names,
    TypeLike,
    Value,
    builder_error,
    parse_attribute,
    parse_type,
)
from polykrnl.reader.parser import context


class GenericOps(FunctionCore):
    """``f.op(...)``: ops without a dedicated method."""

    def op(
        self,
        op: str | type[Operation],
        operands: Sequence[Value] = (),
        result_types: Sequence[TypeLike] = (),
        *,
        properties: Mapping[str, Attribute | str] | None = None,
        attributes: Mapping[str, Attribute | str] | None = None,
        names: Names = (),
    ) -> Operation:
        """Any registered op, as its generic form says it.

        ``f.op("krnl.erf", [x], ["f32"])`` is ``"krnl.erf"(%x) : (f32) -> f32``.
        Operands are the flat list of the generic form (for ops with operand
        segments give ``operandSegmentSizes`` in ``properties``); string
        attributes are parsed as MLIR attributes. Returns the op (its values
        are ``.results``).
        """
        if isinstance(op, str):
            cls = context().get_optional_op(op)
            if cls is None:
                raise builder_error(
                    f"the op '{op}' is not registered",
                    "polykrnl knows the builtin, func, arith, math, memref, affine, scf and "
                    "krnl dialects: check the op name",
                )
        else:
            cls = op
        vals = [self._value(v, f"an operand of {cls.name}") for v in operands]
        types = [parse_type(t) for t in result_types]
        props = {k: parse_attribute(v, k) for k, v in (properties or {}).items()}
        attrs = {k: parse_attribute(v, k) for k, v in (attributes or {}).items()}
        created = cls.create(operands=vals, result_types=types, properties=props, attributes=attrs)
        return self._insert(created, names=names)
