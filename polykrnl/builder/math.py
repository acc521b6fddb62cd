"""math dialect ops: elementary functions of floats."""

from __future__ import annotations

from xdsl.dialects import math

from polykrnl.builder.core import FunctionCore, Value


class MathOps(FunctionCore):
    """The math ops, one method each."""

    def exp(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.ExpOp, a, name)

    def exp2(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.Exp2Op, a, name)

    def log(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.LogOp, a, name)

    def log2(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.Log2Op, a, name)

    def log10(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.Log10Op, a, name)

    def log1p(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.Log1pOp, a, name)

    def sqrt(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.SqrtOp, a, name)

    def rsqrt(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.RsqrtOp, a, name)

    def tanh(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.TanhOp, a, name)

    def sin(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.SinOp, a, name)

    def cos(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.CosOp, a, name)

    def tan(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.TanOp, a, name)

    def atan(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.AtanOp, a, name)

    def erf(self, a: Value, *, name: str | None = None) -> Value:
        """``math.erf`` (for ``krnl.erf`` use :meth:`krnl_erf`)."""
        return self._unary(math.ErfOp, a, name)

    def absf(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.AbsFOp, a, name)

    def ceil(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.CeilOp, a, name)

    def floor(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.FloorOp, a, name)

    def round(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.RoundOp, a, name)

    def powf(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(math.PowFOp, a, b, name)

    def atan2(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(math.Atan2Op, a, b, name)
