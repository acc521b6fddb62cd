"""Affine maps and sets in MLIR's text, semi-affine ones included.

xDSL's reader builds every binary expression with its operators, which refuse a
product, division or modulo by a symbol (`affine_map<(d0)[s0] -> (d0 ceildiv s0)>`,
onnx-mlir's pooling windows). `SemiAffineParser` builds them with
`dialect/semi_affine.py: combine`, which keeps MLIR's rules; the parsers of polykrnl
use it for every `affine_map<...>` and `affine_set<...>` they read.
"""

from __future__ import annotations

from xdsl.ir.affine import AffineBinaryOpKind, AffineExpr, AffineMap, AffineSet
from xdsl.parser import Parser
from xdsl.parser.affine_parser import AffineParser
from xdsl.utils.exceptions import ParseError
from xdsl.utils.mlir_lexer import MLIRToken

from polykrnl.dialect.semi_affine import SemiAffineError, combine

_KINDS = {
    "*": AffineBinaryOpKind.Mul,
    "floordiv": AffineBinaryOpKind.FloorDiv,
    "ceildiv": AffineBinaryOpKind.CeilDiv,
    "mod": AffineBinaryOpKind.Mod,
}


class SemiAffineParser(AffineParser):
    """xDSL's affine reader, with MLIR's semi-affine products, divisions and modulos."""

    def _create_binop_expr(self, lhs: AffineExpr, rhs: AffineExpr, binop: MLIRToken) -> AffineExpr:
        kind = _KINDS.get(binop.text)
        if kind is None:
            return super()._create_binop_expr(lhs, rhs, binop)
        try:
            return combine(kind, lhs, rhs)
        except SemiAffineError as e:
            raise ParseError(binop.span, str(e)) from None


class SemiAffineReading(Parser):
    """A parser whose `affine_map<...>` and `affine_set<...>` may be semi-affine."""

    def parse_affine_map(self) -> AffineMap:
        return SemiAffineParser(self._parser_state).parse_affine_map()

    def parse_affine_set(self) -> AffineSet:
        return SemiAffineParser(self._parser_state).parse_affine_set()
