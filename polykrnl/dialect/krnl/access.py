"""Krnl's ops that name one element through an affine map of SSA values, as affine.load
does: `krnl.get_linear_offset_index` (the element's linear offset) and `krnl.prefetch`
(a cache hint).

Their syntax is the hand-written one of onnx-mlir's Krnl dialect: the index list is an
affine map of SSA values (`[%i, 0, %j + 1]`), and the inherent attributes, the map among
them, are properties.

`parse_access_map` reads such a list for every op that has one (affine.load and
affine.store too): unlike xDSL's own reader it takes the results of multi-result ops
(`%l#0`) and MLIR's `symbol(%n)`, which marks a value used as a symbol.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from xdsl.dialects.builtin import (
    I32,
    AffineMapAttr,
    BoolAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
    AffineSymExpr,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer

from polykrnl.dialect.krnl.checks import Namer, SelfChecks
from polykrnl.dialect.semi_affine import SemiAffineError, combine
from polykrnl.ir import value_name

# Binding strength of each operator, for the fewest parentheses that keep the meaning.
_PRECEDENCE = {
    AffineBinaryOpKind.Add: 10,
    AffineBinaryOpKind.Mul: 20,
    AffineBinaryOpKind.Mod: 20,
    AffineBinaryOpKind.FloorDiv: 20,
    AffineBinaryOpKind.CeilDiv: 20,
}
_DIVIDES = {
    "floordiv": AffineBinaryOpKind.FloorDiv,
    "ceildiv": AffineBinaryOpKind.CeilDiv,
    "mod": AffineBinaryOpKind.Mod,
}
_SPELLING = {
    AffineBinaryOpKind.Add: "+",
    AffineBinaryOpKind.Mul: "*",
    AffineBinaryOpKind.Mod: "mod",
    AffineBinaryOpKind.FloorDiv: "floordiv",
    AffineBinaryOpKind.CeilDiv: "ceildiv",
}


def _print_expr(
    printer: Printer, e: AffineExpr, m: AffineMap, operands: Sequence[SSAValue], least: int = 0
) -> None:
    if isinstance(e, AffineConstantExpr):
        printer.print_string(str(e.value))
    elif isinstance(e, AffineDimExpr):
        printer.print_ssa_value(operands[e.position])
    elif isinstance(e, AffineSymExpr):
        printer.print_ssa_value(operands[m.num_dims + e.position])
    elif (
        isinstance(e, AffineBinaryOpExpr)
        and e.kind == AffineBinaryOpKind.Mul
        and isinstance(e.rhs, AffineConstantExpr)
        and e.rhs.value == -1
    ):
        printer.print_string("-")  # `-%j`, as MLIR writes `%j * -1`
        _print_expr(printer, e.lhs, m, operands, _PRECEDENCE[AffineBinaryOpKind.Mul] + 1)
    else:
        assert isinstance(e, AffineBinaryOpExpr)
        prec = _PRECEDENCE[e.kind]
        if prec < least:
            printer.print_string("(")
        _print_expr(printer, e.lhs, m, operands, prec)
        rhs, spelling = e.rhs, _SPELLING[e.kind]
        if e.kind == AffineBinaryOpKind.Add:
            # `a + b * -c` and `a + -c` are written `a - b * c` and `a - c`, as MLIR does.
            if isinstance(rhs, AffineConstantExpr) and rhs.value < 0:
                rhs, spelling = AffineConstantExpr(-rhs.value), "-"
            elif (
                isinstance(rhs, AffineBinaryOpExpr)
                and rhs.kind == AffineBinaryOpKind.Mul
                and isinstance(rhs.rhs, AffineConstantExpr)
                and rhs.rhs.value < 0
            ):
                c = -rhs.rhs.value
                rhs = rhs.lhs if c == 1 else rhs.lhs * c
                spelling = "-"
        printer.print_string(f" {spelling} ")
        # The right operand keeps its parentheses (`a - (b + c)`, `a mod (b * c)`, and
        # `a + (b + c)`, which read back as written).
        _print_expr(printer, rhs, m, operands, prec + 1)
        if prec < least:
            printer.print_string(")")


def print_access_map(printer: Printer, m: AffineMap, operands: Sequence[SSAValue]) -> None:
    """`[%i, %j + 1]`: the results of `m`, each operand written where the map uses it."""
    printer.print_string("[")
    for n, e in enumerate(m.results):
        if n:
            printer.print_string(", ")
        _print_expr(printer, e, m, operands)
    printer.print_string("]")


def parse_access_map(parser: Parser) -> tuple[AffineMap, list[SSAValue]]:
    """`[expr, ...]` over SSA index values: the map (one symbol per distinct value, in
    order of first use) and the values."""
    slots: dict[tuple[str, int], int] = {}
    values: list[SSAValue] = []

    def value() -> AffineExpr | None:
        marked = parser.parse_optional_keyword("symbol") is not None
        if marked:
            parser.parse_punctuation("(")
        operand = parser.parse_optional_unresolved_operand()
        if operand is None:
            if marked:
                parser.raise_error("expected an SSA value in symbol(...)")
            return None
        if marked:
            parser.parse_punctuation(")")
        key = (operand.span.text, operand.index)
        if key not in slots:
            slots[key] = len(values)
            values.append(parser.resolve_operand(operand, IndexType()))
        return AffineExpr.symbol(slots[key])

    def primary() -> AffineExpr:
        if parser.parse_optional_punctuation("-") is not None:
            return -primary()
        if parser.parse_optional_punctuation("(") is not None:
            e = sum_()
            parser.parse_punctuation(")")
            return e
        if (c := parser.parse_optional_integer(allow_boolean=False)) is not None:
            return AffineExpr.constant(c)
        if (v := value()) is not None:
            return v
        parser.raise_error("expected an index value, an integer or `(` in an affine index")

    def operator() -> AffineBinaryOpKind | None:
        if parser.parse_optional_punctuation("*") is not None:
            return AffineBinaryOpKind.Mul
        for word, kind in _DIVIDES.items():
            if parser.parse_optional_keyword(word) is not None:
                return kind
        return None

    def product() -> AffineExpr:
        e = primary()
        while True:
            at = parser.pos
            if (kind := operator()) is None:
                return e
            try:
                e = combine(kind, e, primary())
            except SemiAffineError as err:
                parser.raise_error(str(err), at)

    def sum_() -> AffineExpr:
        e = product()
        while True:
            if parser.parse_optional_punctuation("+") is not None:
                e = e + product()
            elif parser.parse_optional_punctuation("-") is not None:
                e = e - product()
            else:
                return e

    results = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, sum_)
    return AffineMap(0, len(values), tuple(results)), values


def _parse_memref_type(parser: Parser) -> MemRefType:
    parser.parse_punctuation(":")
    at = parser.pos
    t = parser.parse_type()
    if not isinstance(t, MemRefType):
        parser.raise_error(f"expected a memref type, got {t}", at)
    return t


def has_identity_layout(t: MemRefType) -> bool:
    """The elements of `t` lie in row-major order from its start (no layout map)."""
    layout = t.layout
    if isinstance(layout, NoneAttr):
        return True
    if isinstance(layout, AffineMapAttr):
        return layout.data == AffineMap.identity(len(t.get_shape()))
    return False


def _access_problems(
    op: Operation, memref: SSAValue, m: AffineMap, indices: Sequence[SSAValue], name: Namer
) -> Iterator[tuple[str, str]]:
    t = memref.type
    if m.num_dims + m.num_symbols != len(indices):
        yield (
            f"{op.name}: its map takes {m.num_dims + m.num_symbols} values, given {len(indices)}",
            "give one index value for each dim and symbol of the map",
        )
    if isinstance(t, MemRefType) and len(m.results) != len(t.get_shape()):
        yield (
            f"{op.name}: {len(m.results)} indices for {name(memref)}, of rank {len(t.get_shape())}",
            "give one index per dimension of the memref",
        )


@irdl_op_definition
class GetLinearOffsetIndexOp(SelfChecks, IRDLOperation):
    """`%o = krnl.get_linear_offset_index %m at [%i, 0, %j] : memref<...>`: the
    row-major offset of an element in its memref (of identity layout)."""

    name = "krnl.get_linear_offset_index"

    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    result = result_def(IndexType)
    map = prop_def(AffineMapAttr)

    def __init__(
        self,
        memref: SSAValue | Operation,
        indices: Sequence[SSAValue | Operation],
        map: AffineMapAttr | None = None,
    ) -> None:
        m = SSAValue.get(memref)
        if map is None:
            rank = len(m.type.get_shape()) if isinstance(m.type, MemRefType) else 0
            map = AffineMapAttr(AffineMap.identity(rank))
        super().__init__(
            operands=[m, list(indices)], result_types=[IndexType()], properties={"map": map}
        )

    @classmethod
    def parse(cls, parser: Parser) -> GetLinearOffsetIndexOp:
        memref = parser.parse_unresolved_operand()
        parser.parse_keyword("at")
        m, indices = parse_access_map(parser)
        attrs = parser.parse_optional_attr_dict()
        t = _parse_memref_type(parser)
        op = cls(parser.resolve_operand(memref, t), indices, AffineMapAttr(m))
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.memref)
        printer.print_string(" at ")
        print_access_map(printer, self.map.data, self.indices)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.memref.type)

    def problems(self, name: Namer = value_name) -> Iterator[tuple[str, str]]:
        return _access_problems(self, self.memref, self.map.data, self.indices, name)


@irdl_op_definition
class PrefetchOp(SelfChecks, IRDLOperation):
    """`krnl.prefetch %m[%i, %j + 64], read, locality<3>, data : memref<...>`: a hint
    that the element will be read (or written) soon; it changes no value."""

    name = "krnl.prefetch"

    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    isWrite = prop_def(BoolAttr)
    localityHint = prop_def(IntegerAttr[I32])
    isDataCache = prop_def(BoolAttr)
    map = prop_def(AffineMapAttr)

    def __init__(
        self,
        memref: SSAValue | Operation,
        indices: Sequence[SSAValue | Operation],
        map: AffineMapAttr,
        write: bool = False,
        locality: int = 3,
        data: bool = True,
    ) -> None:
        props: dict[str, Attribute] = {
            "map": map,
            "isWrite": BoolAttr.from_bool(write),
            "localityHint": IntegerAttr(locality, i32),
            "isDataCache": BoolAttr.from_bool(data),
        }
        super().__init__(operands=[memref, list(indices)], properties=props)

    @classmethod
    def parse(cls, parser: Parser) -> PrefetchOp:
        memref = parser.parse_unresolved_operand()
        m, indices = parse_access_map(parser)
        parser.parse_punctuation(",")
        at = parser.pos
        rw = parser.parse_identifier()
        if rw not in ("read", "write"):
            parser.raise_error("krnl.prefetch: the rw specifier is `read` or `write`", at)
        parser.parse_punctuation(",")
        parser.parse_keyword("locality")
        parser.parse_punctuation("<")
        locality = parser.parse_integer(allow_boolean=False)
        parser.parse_punctuation(">")
        parser.parse_punctuation(",")
        at = parser.pos
        cache = parser.parse_identifier()
        if cache not in ("data", "instr"):
            parser.raise_error("krnl.prefetch: the cache type is `data` or `instr`", at)
        attrs = parser.parse_optional_attr_dict()
        t = _parse_memref_type(parser)
        op = cls(
            parser.resolve_operand(memref, t),
            indices,
            AffineMapAttr(m),
            rw == "write",
            locality,
            cache == "data",
        )
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.memref)
        print_access_map(printer, self.map.data, self.indices)
        rw = "write" if self.isWrite.value.data else "read"
        cache = "data" if self.isDataCache.value.data else "instr"
        printer.print_string(f", {rw}, locality<{self.localityHint.value.data}>, {cache}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.memref.type)

    def problems(self, name: Namer = value_name) -> Iterator[tuple[str, str]]:
        yield from _access_problems(self, self.memref, self.map.data, self.indices, name)
        if not 0 <= self.localityHint.value.data <= 3:
            yield (
                f"krnl.prefetch: locality<{self.localityHint.value.data}> is out of range",
                "the locality hint is 0 (none) to 3 (keep in cache)",
            )
