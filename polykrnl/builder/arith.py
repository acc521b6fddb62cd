"""arith dialect ops: constants, integer and float arithmetic, comparisons, casts."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, IntegerAttr, IntegerType, i1
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.utils.exceptions import VerifyException

from polykrnl.builder.core import (
    FunctionCore,
    TypeLike,
    Value,
    builder_error,
    describe,
    parse_type,
)

_CMPI = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
_CMPF = (
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
)  # fmt: skip


class ArithOps(FunctionCore):
    """``arith.constant`` and the other arith ops, one method each."""

    def constant(
        self, value: int | float | bool, type: TypeLike | None = None, *, name: str | None = None
    ) -> Value:
        """``arith.constant``; the type defaults to i1 for bool, index for int, f32 for float."""
        if type is None:
            type = (
                i1 if isinstance(value, bool) else IndexType() if isinstance(value, int) else "f32"
            )
        t = parse_type(type)
        attr: Attribute
        try:
            if isinstance(value, bool) and t != i1:
                raise ValueError
            if isinstance(t, AnyFloat) and isinstance(value, int | float):
                attr = FloatAttr(float(value), t)
            elif isinstance(t, IntegerType | IndexType) and isinstance(value, int):
                attr = IntegerAttr(int(value), t)
            else:
                raise ValueError
        except (ValueError, VerifyException, OverflowError):
            raise builder_error(
                f"arith.constant cannot hold {value!r} as {t}",
                "use True/False for i1, an integer for integer and index types, a number "
                "for float types, and a value that fits the type's width",
            ) from None
        return self._insert(arith.ConstantOp(attr, t), names=[name]).results[0]

    def addf(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.AddfOp, a, b, name)

    def subf(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.SubfOp, a, b, name)

    def mulf(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.MulfOp, a, b, name)

    def divf(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.DivfOp, a, b, name)

    def maxnumf(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.MaxnumfOp, a, b, name)

    def minnumf(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.MinnumfOp, a, b, name)

    def maximumf(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.MaximumfOp, a, b, name)

    def minimumf(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.MinimumfOp, a, b, name)

    def negf(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(arith.NegfOp, a, name)

    def addi(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.AddiOp, a, b, name)

    def subi(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.SubiOp, a, b, name)

    def muli(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.MuliOp, a, b, name)

    def divsi(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.DivSIOp, a, b, name)

    def divui(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.DivUIOp, a, b, name)

    def remsi(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.RemSIOp, a, b, name)

    def remui(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.RemUIOp, a, b, name)

    def floordivsi(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.FloorDivSIOp, a, b, name)

    def ceildivsi(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.CeilDivSIOp, a, b, name)

    def minsi(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.MinSIOp, a, b, name)

    def maxsi(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.MaxSIOp, a, b, name)

    def andi(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.AndIOp, a, b, name)

    def ori(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.OrIOp, a, b, name)

    def xori(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.XOrIOp, a, b, name)

    def cmpf(self, predicate: str, a: Value, b: Value, *, name: str | None = None) -> Value:
        """``arith.cmpf <predicate>, %a, %b`` (``olt``, ``oge``, ``une``, ...)."""
        return self._compare(arith.CmpfOp, _CMPF, predicate, a, b, name)

    def cmpi(self, predicate: str, a: Value, b: Value, *, name: str | None = None) -> Value:
        """``arith.cmpi <predicate>, %a, %b`` (``slt``, ``eq``, ``uge``, ...)."""
        return self._compare(arith.CmpiOp, _CMPI, predicate, a, b, name)

    def select(self, cond: Value, a: Value, b: Value, *, name: str | None = None) -> Value:
        """``arith.select %cond, %a, %b``."""
        c = self._value(cond, "the select condition")
        x, y = self._same_type("arith.select", a, b)
        if c.type != i1:
            raise builder_error(
                f"the arith.select condition must be i1, got {describe(c)}",
                "compare with f.cmpf / f.cmpi to get an i1",
            )
        return self._insert(arith.SelectOp(c, x, y), names=[name]).results[0]

    def index_cast(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.IndexCastOp, a, type, name)

    def sitofp(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.SIToFPOp, a, type, name)

    def uitofp(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.UIToFPOp, a, type, name)

    def fptosi(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.FPToSIOp, a, type, name)

    def fptoui(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.FPToUIOp, a, type, name)

    def extf(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.ExtFOp, a, type, name)

    def truncf(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.TruncFOp, a, type, name)

    def extsi(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.ExtSIOp, a, type, name)

    def extui(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.ExtUIOp, a, type, name)

    def trunci(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.TruncIOp, a, type, name)

    def bitcast(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.BitcastOp, a, type, name)

    def _cast(
        self, cls: type[IRDLOperation], a: object, type: TypeLike, name: str | None
    ) -> SSAValue:
        x = self._value(a, f"the operand of {cls.name}")
        op = cls.build(operands=[x], result_types=[parse_type(type)])
        return self._insert(op, names=[name]).results[0]

    def _compare(
        self,
        cls: type[arith.CmpfOp] | type[arith.CmpiOp],
        valid: tuple[str, ...],
        predicate: str,
        a: object,
        b: object,
        name: str | None,
    ) -> SSAValue:
        if predicate not in valid:
            raise builder_error(
                f"unknown {cls.name} predicate {predicate!r}",
                f"use one of {', '.join(valid)}",
            )
        x, y = self._same_type(cls.name, a, b)
        return self._insert(cls(x, y, predicate), names=[name]).results[0]
