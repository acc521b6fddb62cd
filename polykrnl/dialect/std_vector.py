"""Ops of MLIR's `vector` dialect that xDSL lacks, with MLIR's syntax and meaning.

onnx-mlir's SIMD loops use them next to the vector ops xDSL has (load, store,
broadcast, fma, reduction, shuffle, extract, insert): `vector.shape_cast`,
`vector.to_elements`, `vector.from_elements`, `vector.splat`. They join the
parsing context with :mod:`polykrnl.dialect.std_ext`'s ops.
"""

from __future__ import annotations

import math

from xdsl.dialects import vector
from xdsl.dialects.builtin import VectorType
from xdsl.ir import Attribute, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException


def _vector_type(parser: Parser) -> VectorType:
    at = parser.pos
    t = parser.parse_type()
    if not isinstance(t, VectorType):
        parser.raise_error(f"expected a vector type, got {t}", at_position=at)
    return t


def _count(t: VectorType) -> int:
    return math.prod(t.get_shape())


@irdl_op_definition
class ShapeCastOp(IRDLOperation):
    """`vector.shape_cast %v : vector<8xf32> to vector<2x4xf32>`: the same elements, row-major,
    in another shape."""

    name = "vector.shape_cast"

    source = operand_def(VectorType)
    result = result_def(VectorType)

    traits = traits_def(Pure())

    assembly_format = "$source attr-dict `:` type($source) `to` type($result)"

    def verify_(self) -> None:
        a, b = self.source.type, self.result.type
        assert isinstance(a, VectorType) and isinstance(b, VectorType)
        if a.element_type != b.element_type or _count(a) != _count(b):
            raise VerifyException(f"vector.shape_cast keeps the elements: {a} to {b}")


@irdl_op_definition
class ToElementsOp(IRDLOperation):
    """`%e:4 = vector.to_elements %v : vector<4xf32>`: one result per element, row-major."""

    name = "vector.to_elements"

    source = operand_def(VectorType)
    elements = var_result_def()

    traits = traits_def(Pure())

    def __init__(self, source: SSAValue) -> None:
        t = source.type
        assert isinstance(t, VectorType)
        super().__init__(operands=[source], result_types=[[t.element_type] * _count(t)])

    @classmethod
    def parse(cls, parser: Parser) -> ToElementsOp:
        source = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = _vector_type(parser)
        op = cls(parser.resolve_operand(source, t))
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.source)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)

    def verify_(self) -> None:
        t = self.source.type
        assert isinstance(t, VectorType)
        if len(self.elements) != _count(t) or any(r.type != t.element_type for r in self.elements):
            raise VerifyException(
                f"vector.to_elements of {t} gives {_count(t)} results of {t.element_type}"
            )


@irdl_op_definition
class FromElementsOp(IRDLOperation):
    """`%v = vector.from_elements %a, %b : vector<2xf32>`: a vector of the operands, row-major."""

    name = "vector.from_elements"

    elements = var_operand_def()
    result = result_def(VectorType)

    traits = traits_def(Pure())

    def __init__(self, elements: list[SSAValue], result_type: VectorType) -> None:
        super().__init__(operands=[elements], result_types=[result_type])

    @classmethod
    def parse(cls, parser: Parser) -> FromElementsOp:
        names = parser.parse_comma_separated_list(
            parser.Delimiter.NONE, parser.parse_unresolved_operand
        )
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = _vector_type(parser)
        op = cls([parser.resolve_operand(n, t.element_type) for n in names], t)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.elements, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        t = self.result.type
        assert isinstance(t, VectorType)
        if len(self.elements) != _count(t) or any(v.type != t.element_type for v in self.elements):
            raise VerifyException(
                f"vector.from_elements of {t} takes {_count(t)} operands of {t.element_type}"
            )


@irdl_op_definition
class SplatOp(IRDLOperation):
    """`%v = vector.splat %x : vector<4xf32>`: every element is %x."""

    name = "vector.splat"

    input = operand_def()
    aggregate = result_def(VectorType)

    traits = traits_def(Pure())

    def __init__(self, value: SSAValue, result_type: Attribute) -> None:
        super().__init__(operands=[value], result_types=[result_type])

    @classmethod
    def parse(cls, parser: Parser) -> SplatOp:
        value = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = _vector_type(parser)
        op = cls(parser.resolve_operand(value, t.element_type), t)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.aggregate.type)


STD_VECTOR_OPS: tuple[type[IRDLOperation], ...] = (
    ShapeCastOp,
    ToElementsOp,
    FromElementsOp,
    SplatOp,
)


def transfer_dims(op: vector.TransferReadOp | vector.TransferWriteOp) -> list[int | None] | None:
    """For each dimension of a transfer's vector, the memref dimension it runs along
    (None: a broadcast, constant 0 in the permutation map); None when the map is not a
    projected permutation (MLIR's verifier refuses that)."""
    out: list[int | None] = []
    for r in op.permutation_map.data.results:
        if isinstance(r, AffineDimExpr):
            out.append(r.position)
        elif isinstance(r, AffineConstantExpr) and r.value == 0:
            out.append(None)
        else:
            return None
    seen = [d for d in out if d is not None]
    return out if len(set(seen)) == len(seen) else None


def transfer_in_bounds(op: vector.TransferReadOp | vector.TransferWriteOp) -> list[bool]:
    """For each vector dimension, whether the op promises it stays inside the memref."""
    return [bool(x.value.data) for x in op.in_bounds.data]
