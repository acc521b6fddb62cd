"""Ops of MLIR's standard dialects that xDSL lacks, defined here with MLIR's meaning.

They join xDSL's own ops in polykrnl's parsing context
(:func:`polykrnl.reader.parser.context`), so they parse, print and verify like
their siblings (each borrows the syntax and checks of a sibling xDSL has);
each stage gives them meaning in its module of their dialect.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects import affine, arith, memref
from xdsl.dialects.arith import (
    FastMathFlagsAttr,
    FloatingPointLikeBinaryOperation,
    floatingPointLike,
)
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    VectorType,
    container_of,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    base,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

# ------------------------------------------------------------------ arith


@irdl_op_definition
class RemFOp(FloatingPointLikeBinaryOperation):
    """`arith.remf`: the remainder of a float division, with the sign of the dividend (C fmod)."""

    name = "arith.remf"

    traits = traits_def(Pure())


@irdl_op_definition
class IndexCastUIOp(IRDLOperation):
    """`arith.index_castui`: like index_cast, but the integer side is read as unsigned."""

    name = "arith.index_castui"

    input = operand_def(base(IntegerType) | base(IndexType))
    result = result_def(base(IntegerType) | base(IndexType))

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    verify_ = arith.IndexCastOp.verify_


@irdl_op_definition
class SelectOp(IRDLOperation):
    """`arith.select %c, %a, %b : T` or, with a vector of conditions (one per lane),
    `... : vector<Nxi1>, vector<NxT>`: xDSL's class reads only the first form; this one
    replaces it when parsing."""

    name = "arith.select"

    cond = operand_def(base(IntegerType) | base(VectorType))
    lhs = operand_def()
    rhs = operand_def()
    result = result_def()

    traits = traits_def(Pure())

    def __init__(self, cond: SSAValue, lhs: SSAValue, rhs: SSAValue) -> None:
        super().__init__(operands=[cond, lhs, rhs], result_types=[lhs.type])

    @classmethod
    def parse(cls, parser: Parser) -> SelectOp:
        names = [parser.parse_unresolved_operand()]
        for _ in range(2):
            parser.parse_punctuation(",")
            names.append(parser.parse_unresolved_operand())
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = [parser.parse_type()]
        if parser.parse_optional_punctuation(",") is not None:
            types.append(parser.parse_type())
        cond_t: Attribute = types[0] if len(types) == 2 else IntegerType(1)
        t = types[-1]
        c, a, b = (
            parser.resolve_operand(n, ty) for n, ty in zip(names, (cond_t, t, t), strict=True)
        )
        op = cls(c, a, b)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        if isinstance(self.cond.type, VectorType):
            printer.print_attribute(self.cond.type)
            printer.print_string(", ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        c, a, b, r = self.cond.type, self.lhs.type, self.rhs.type, self.result.type
        if not (a == b == r):
            raise VerifyException(f"arith.select of {a} and {b} into {r}: one type for all")
        if isinstance(c, VectorType):
            if c.element_type != IntegerType(1) or not (
                isinstance(r, VectorType) and c.get_shape() == r.get_shape()
            ):
                raise VerifyException(f"arith.select's condition {c} must match {r}, lane for lane")
        elif c != IntegerType(1):
            raise VerifyException(f"arith.select's condition must be i1, got {c}")


class _LaneCast(IRDLOperation):
    """An arith cast of a scalar, or of a vector lane by lane (`arith.sitofp %v :
    vector<8xi32> to vector<8xf32>`), as MLIR defines it. xDSL's classes of the integer
    casts take scalars only; these replace them when parsing (same syntax and generic
    form), and the stages give both the same meaning."""

    #: the element kinds converted from and to ("int" or "float"), and the result's
    #: width against the operand's (1 wider, -1 narrower, 0 any)
    KINDS: ClassVar[tuple[str, str, int]]

    traits = traits_def(Pure())

    assembly_format: ClassVar[str | None] = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(self, value: SSAValue, target_type: Attribute) -> None:
        super().__init__(operands=[value], result_types=[target_type])

    def verify_(self) -> None:
        a, b = self.operands[0].type, self.results[0].type
        if isinstance(a, VectorType) != isinstance(b, VectorType) or (
            isinstance(a, VectorType)
            and isinstance(b, VectorType)
            and a.get_shape() != b.get_shape()
        ):
            raise VerifyException(f"{self.name} keeps the shape: {a} to {b}")
        ea, eb = _lane(a), _lane(b)
        src, dst, width = self.KINDS
        for t, kind in ((ea, src), (eb, dst)):
            if not (isinstance(t, IntegerType) if kind == "int" else isinstance(t, AnyFloat)):
                raise VerifyException(f"{self.name} converts {src} to {dst}, got {t}")
        if (
            width
            and isinstance(ea, IntegerType)
            and isinstance(eb, IntegerType)
            and (eb.width.data - ea.width.data) * width <= 0
        ):
            side = "wider" if width > 0 else "narrower"
            raise VerifyException(f"{self.name} of {ea} to {eb}: the result must be {side}")


def _lane(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, VectorType) else t


_INT_LIKE = container_of(IntegerType)


@irdl_op_definition
class SIToFPOp(_LaneCast):
    """`arith.sitofp`: a signed integer to the nearest float."""

    name = "arith.sitofp"
    KINDS: ClassVar[tuple[str, str, int]] = ("int", "float", 0)
    input = operand_def(_INT_LIKE)
    result = result_def(floatingPointLike)


@irdl_op_definition
class UIToFPOp(_LaneCast):
    """`arith.uitofp`: an unsigned integer to the nearest float."""

    name = "arith.uitofp"
    KINDS: ClassVar[tuple[str, str, int]] = ("int", "float", 0)
    input = operand_def(_INT_LIKE)
    result = result_def(floatingPointLike)


@irdl_op_definition
class FPToSIOp(_LaneCast):
    """`arith.fptosi`: a float truncated toward zero to a signed integer."""

    name = "arith.fptosi"
    KINDS: ClassVar[tuple[str, str, int]] = ("float", "int", 0)
    input = operand_def(floatingPointLike)
    result = result_def(_INT_LIKE)


@irdl_op_definition
class FPToUIOp(_LaneCast):
    """`arith.fptoui`: a float truncated toward zero to an unsigned integer."""

    name = "arith.fptoui"
    KINDS: ClassVar[tuple[str, str, int]] = ("float", "int", 0)
    input = operand_def(floatingPointLike)
    result = result_def(_INT_LIKE)


@irdl_op_definition
class ExtSIOp(_LaneCast):
    """`arith.extsi`: an integer widened, its sign bit copied."""

    name = "arith.extsi"
    KINDS: ClassVar[tuple[str, str, int]] = ("int", "int", 1)
    input = operand_def(_INT_LIKE)
    result = result_def(_INT_LIKE)


@irdl_op_definition
class ExtUIOp(_LaneCast):
    """`arith.extui`: an integer widened with zeros."""

    name = "arith.extui"
    KINDS: ClassVar[tuple[str, str, int]] = ("int", "int", 1)
    input = operand_def(_INT_LIKE)
    result = result_def(_INT_LIKE)


@irdl_op_definition
class TruncIOp(_LaneCast):
    """`arith.trunci`: an integer's low bits."""

    name = "arith.trunci"
    KINDS: ClassVar[tuple[str, str, int]] = ("int", "int", -1)
    input = operand_def(_INT_LIKE)
    result = result_def(_INT_LIKE)


#: polykrnl's casts, each with the xDSL class it replaces (the stages register both)
LANE_CASTS: dict[type[IRDLOperation], type[Operation]] = {
    SIToFPOp: arith.SIToFPOp,
    UIToFPOp: arith.UIToFPOp,
    FPToSIOp: arith.FPToSIOp,
    FPToUIOp: arith.FPToUIOp,
    ExtSIOp: arith.ExtSIOp,
    ExtUIOp: arith.ExtUIOp,
    TruncIOp: arith.TruncIOp,
}


def _i1_like(t: Attribute) -> Attribute:
    """i1, or a vector of i1 of `t`'s shape: what a comparison of `t` values gives."""
    return (
        VectorType(IntegerType(1), t.get_shape()) if isinstance(t, VectorType) else IntegerType(1)
    )


class _Compare(IRDLOperation):
    """arith.cmpf / arith.cmpi with MLIR's result type: i1, or vector<...xi1> for vectors
    (xDSL's classes give i1 for every operand type; these replace them when parsing)."""

    PREDICATES: ClassVar[list[str]]

    lhs = operand_def()
    rhs = operand_def()
    result = result_def()
    predicate = prop_def(IntegerAttr)

    traits = traits_def(Pure())

    def __init__(self, lhs: SSAValue, rhs: SSAValue, predicate: int) -> None:
        super().__init__(
            operands=[lhs, rhs],
            result_types=[_i1_like(lhs.type)],
            properties={"predicate": IntegerAttr(predicate, 64)},
        )

    @classmethod
    def parse(cls, parser: Parser) -> _Compare:
        at = parser.pos
        word = parser.parse_identifier()
        if word not in cls.PREDICATES:
            parser.raise_error(
                f"unknown predicate {word} (one of {', '.join(cls.PREDICATES)})", at_position=at
            )
        parser.parse_punctuation(",")
        a = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        b = parser.parse_unresolved_operand()
        fastmath = None
        if parser.parse_optional_keyword("fastmath"):
            fastmath = FastMathFlagsAttr(FastMathFlagsAttr.parse_parameter(parser))
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        op = cls(
            parser.resolve_operand(a, t), parser.resolve_operand(b, t), cls.PREDICATES.index(word)
        )
        if fastmath is not None and fastmath != FastMathFlagsAttr("none"):
            op.properties["fastmath"] = fastmath
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.PREDICATES[self.predicate.value.data]}, ")
        printer.print_operand(self.lhs)
        printer.print_string(", ")
        printer.print_operand(self.rhs)
        fastmath = self.properties.get("fastmath")
        if isinstance(fastmath, FastMathFlagsAttr) and fastmath != FastMathFlagsAttr("none"):
            printer.print_string(" fastmath")
            fastmath.print_parameter(printer)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.lhs.type)

    def verify_(self) -> None:
        a, b, r = self.lhs.type, self.rhs.type, self.result.type
        if a != b:
            raise VerifyException(f"{self.name} compares values of one type, got {a} and {b}")
        if r != _i1_like(a):
            raise VerifyException(f"{self.name} of {a} gives {_i1_like(a)}, not {r}")
        if not 0 <= self.predicate.value.data < len(self.PREDICATES):
            raise VerifyException(f"{self.name} predicate {self.predicate.value.data} is unknown")


@irdl_op_definition
class CmpfOp(_Compare):
    name = "arith.cmpf"
    PREDICATES: ClassVar[list[str]] = list(arith.CMPF_COMPARISON_OPERATIONS)
    fastmath = opt_prop_def(FastMathFlagsAttr)

    def __init__(self, lhs: SSAValue, rhs: SSAValue, predicate: int) -> None:
        super().__init__(lhs, rhs, predicate)
        # As MLIR's (and xDSL's) generic form shows it: the property is always there.
        self.properties["fastmath"] = FastMathFlagsAttr("none")


@irdl_op_definition
class CmpiOp(_Compare):
    name = "arith.cmpi"
    PREDICATES: ClassVar[list[str]] = list(arith.CMPI_COMPARISON_OPERATIONS)


# ------------------------------------------------------------------ math


class _FloatPredicate(IRDLOperation):
    """A test on a float: `math.isnan %x : f32` gives an i1."""

    operand = operand_def(AnyFloat)
    result = result_def(IntegerType(1))

    traits = traits_def(Pure())

    assembly_format: ClassVar[str | None] = "$operand attr-dict `:` type($operand)"


@irdl_op_definition
class IsNaNOp(_FloatPredicate):
    """`math.isnan`: whether the operand is a NaN."""

    name = "math.isnan"


@irdl_op_definition
class IsInfOp(_FloatPredicate):
    """`math.isinf`: whether the operand is +inf or -inf."""

    name = "math.isinf"


@irdl_op_definition
class IsFiniteOp(_FloatPredicate):
    """`math.isfinite`: whether the operand is neither a NaN nor infinite."""

    name = "math.isfinite"


# ------------------------------------------------------------------ affine


@irdl_op_definition
class MaxOp(IRDLOperation):
    """`affine.max map(dims)[symbols]`: the largest result of the map (affine.min's syntax)."""

    name = "affine.max"

    arguments = var_operand_def(IndexType())
    result = result_def(IndexType())
    map = prop_def(AffineMapAttr)

    def __init__(self, map_operands: Sequence[SSAValue | Operation], affine_map: AffineMapAttr):
        super().__init__(
            operands=[map_operands], properties={"map": affine_map}, result_types=[IndexType()]
        )

    verify_ = affine.MinOp.verify_
    print = affine.MinOp.print

    @classmethod
    def parse(cls, parser: Parser) -> MaxOp:
        at = parser.pos
        m = parser.parse_attribute()
        if not isinstance(m, AffineMapAttr):
            parser.raise_error("expected an affine map", at_position=at)
        index = IndexType()
        delimiter = parser.Delimiter
        dims = parser.parse_optional_comma_separated_list(
            delimiter.PAREN, lambda: parser.parse_operand(index)
        )
        syms = parser.parse_optional_comma_separated_list(
            delimiter.SQUARE, lambda: parser.parse_operand(index)
        )
        return cls([*(dims or []), *(syms or [])], m)


# ------------------------------------------------------------------ memref


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """`memref.reshape %src(%shape)`: `src`'s elements, in row-major order, in a new shape.

    `shape` is a 1-D memref of index (or integer) values, one per result dimension;
    the result is a view of the same buffer (the source must be contiguous).
    """

    name = "memref.reshape"

    source = operand_def(MemRefType)
    shape = operand_def(MemRefType)
    result = result_def(MemRefType)

    assembly_format = "$source `(` $shape `)` attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        src, shape, res = self.source.type, self.shape.type, self.result.type
        assert isinstance(src, MemRefType) and isinstance(shape, MemRefType)
        assert isinstance(res, MemRefType)
        if src.element_type != res.element_type:
            raise VerifyException(
                f"memref.reshape keeps the element type: {src.element_type} became "
                f"{res.element_type}"
            )
        dims = shape.get_shape()
        if len(dims) != 1:
            raise VerifyException(f"memref.reshape takes a 1-D shape operand, got {shape}")
        if dims[0] >= 0 and dims[0] != len(res.get_shape()):
            raise VerifyException(
                f"memref.reshape to rank {len(res.get_shape())} needs a shape of "
                f"{len(res.get_shape())} values, got {shape}"
            )
        known = [*src.get_shape(), *res.get_shape()]
        if all(d >= 0 for d in known):
            n_src, n_res = math.prod(src.get_shape()), math.prod(res.get_shape())
            if n_src != n_res:
                raise VerifyException(
                    f"memref.reshape of {n_src} elements into {n_res} elements ({src} to {res})"
                )


@irdl_op_definition
class CastOp(IRDLOperation):
    """`memref.cast %x : memref<...> to memref<...>`: the same buffer with a more or less
    static type (xDSL's class has no custom syntax; this one replaces it when parsing)."""

    name = "memref.cast"

    source = operand_def(MemRefType)
    dest = result_def(MemRefType)

    traits = traits_def(Pure())

    assembly_format = "$source attr-dict `:` type($source) `to` type($dest)"

    def verify_(self) -> None:
        src, dst = self.source.type, self.dest.type
        assert isinstance(src, MemRefType) and isinstance(dst, MemRefType)
        if src.element_type != dst.element_type:
            raise VerifyException(f"memref.cast keeps the element type: {src} to {dst}")
        a, b = src.get_shape(), dst.get_shape()
        if len(a) != len(b) or any(x >= 0 and y >= 0 and x != y for x, y in zip(a, b, strict=True)):
            raise VerifyException(f"memref.cast between incompatible shapes: {src} to {dst}")


STD_EXT_OPS: tuple[type[IRDLOperation], ...] = (
    RemFOp,
    IndexCastUIOp,
    SelectOp,
    CmpfOp,
    CmpiOp,
    *LANE_CASTS,
    IsNaNOp,
    IsInfOp,
    IsFiniteOp,
    MaxOp,
    ReshapeOp,
    CastOp,
)

#: xDSL ops that polykrnl's own class of the same name replaces when parsing
REPLACED = frozenset(
    {memref.CastOp, arith.SelectOp, arith.CmpfOp, arith.CmpiOp, *LANE_CASTS.values()}
)
