"""Krnl scalar ops, prefixed ``krnl_`` because math has ops of the same names."""

from __future__ import annotations

from xdsl.dialects.builtin import i1
from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation

from polykrnl.builder.core import FunctionCore, Value
from polykrnl.dialect import krnl as krnl


class KrnlScalarOps(FunctionCore):
    """``krnl.acos`` ... ``krnl.isnan`` as ``krnl_acos`` ... ``krnl_isnan``."""

    def krnl_acos(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(krnl.AcosOp, a, name)

    def krnl_acosh(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(krnl.AcoshOp, a, name)

    def krnl_asin(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(krnl.AsinOp, a, name)

    def krnl_asinh(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(krnl.AsinhOp, a, name)

    def krnl_atan(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(krnl.AtanOp, a, name)

    def krnl_atanh(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(krnl.AtanhOp, a, name)

    def krnl_tan(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(krnl.TanOp, a, name)

    def krnl_erf(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(krnl.ErfOp, a, name)

    def krnl_isinf(self, a: Value, *, name: str | None = None) -> Value:
        return self._predicate(krnl.IsInfOp, a, name)

    def krnl_isnan(self, a: Value, *, name: str | None = None) -> Value:
        return self._predicate(krnl.IsNaNOp, a, name)

    def _predicate(self, cls: type[IRDLOperation], a: object, name: str | None) -> SSAValue:
        x = self._value(a, f"the operand of {cls.name}")
        op = cls.build(operands=[x], result_types=[i1])
        return self._insert(op, names=[name]).results[0]
