"""Loop bounds in MLIR's affine-for syntax, as krnl.iterate writes them.

A bound is an integer (`0`), an SSA index value (`%N`, a one-symbol map), or
an affine map applied to dims and symbols (`affine_map<(d0)[s0] -> (d0 + s0)>(%i)[%N]`).
A map with several results needs `max` before a lower bound and `min` before an
upper one: the bound is the largest (smallest) result.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import AffineMapAttr, IndexType
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineExpr, AffineMap, AffineSymExpr
from xdsl.parser import Parser
from xdsl.printer import Printer


def parse_bound(parser: Parser, keyword: str) -> tuple[AffineMapAttr, tuple[SSAValue, ...]]:
    """One bound; `keyword` is the combinator it may start with (`max` or `min`)."""
    combined = parser.parse_optional_keyword(keyword) is not None
    index = IndexType()
    if (value := parser.parse_optional_operand(index)) is not None:
        return AffineMapAttr(AffineMap(0, 1, (AffineExpr.symbol(0),))), (value,)
    at = parser.pos
    if (constant := parser.parse_optional_integer()) is not None:
        return AffineMapAttr(AffineMap.constant_map(constant)), ()
    attr = parser.parse_attribute()
    if not isinstance(attr, AffineMapAttr):
        parser.raise_error("expected an affine map or an integer for loop bound", at)
    m = attr.data
    dims = parser.parse_comma_separated_list(
        Parser.Delimiter.PAREN, lambda: parser.parse_operand(index)
    )
    symbols = (
        parser.parse_optional_comma_separated_list(
            Parser.Delimiter.SQUARE, lambda: parser.parse_operand(index)
        )
        or []
    )
    if len(dims) != m.num_dims:
        parser.raise_error("dim operand count and affine map dim count must match", at)
    if len(symbols) != m.num_symbols:
        parser.raise_error("symbol operand count and affine map symbol count must match", at)
    if len(m.results) > 1 and not combined:
        parser.raise_error(
            f"loop bound affine map with multiple results requires '{keyword}' prefix", at
        )
    return attr, (*dims, *symbols)


def print_bound(
    printer: Printer, bound: AffineMapAttr, operands: Sequence[SSAValue], keyword: str
) -> None:
    """One bound in its shortest form: an integer, a value, or the map and its operands."""
    m = bound.data
    if len(m.results) == 1:
        (e,) = m.results
        if m.num_dims == 0 and m.num_symbols == 0 and isinstance(e, AffineConstantExpr):
            printer.print_string(str(e.value))
            return
        if m.num_dims == 0 and m.num_symbols == 1 and isinstance(e, AffineSymExpr):
            printer.print_ssa_value(operands[0])
            return
    else:
        printer.print_string(f"{keyword} ")
    printer.print_attribute(bound)
    with printer.in_parens():
        printer.print_list(operands[: m.num_dims], printer.print_ssa_value)
    if m.num_symbols:
        with printer.in_square_brackets():
            printer.print_list(operands[m.num_dims :], printer.print_ssa_value)
