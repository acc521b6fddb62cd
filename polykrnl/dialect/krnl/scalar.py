"""Krnl's scalar ops: its math functions and float predicates, strings, calls, printing,
random numbers, instrumentation."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    I1,
    I32,
    I64,
    AnyFloat,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
)
from xdsl.dialects.math import floatingPointLike
from xdsl.ir import (
    Attribute,
    Operation,
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

# --------------------------------------------------------------------------- types
from polykrnl.dialect.krnl.types import StringType


class _UnaryFloatOp(IRDLOperation):
    in_ = operand_def(AnyFloat)
    out = result_def(AnyFloat)

    def __init__(self, value: SSAValue | Operation, result_type: Attribute | None = None):
        v = SSAValue.get(value)
        super().__init__(operands=[v], result_types=[result_type or v.type])


@irdl_op_definition
class AcosOp(_UnaryFloatOp):
    name = "krnl.acos"


@irdl_op_definition
class AcoshOp(_UnaryFloatOp):
    name = "krnl.acosh"


@irdl_op_definition
class AsinOp(_UnaryFloatOp):
    name = "krnl.asin"


@irdl_op_definition
class AsinhOp(_UnaryFloatOp):
    name = "krnl.asinh"


@irdl_op_definition
class AtanOp(_UnaryFloatOp):
    name = "krnl.atan"


@irdl_op_definition
class AtanhOp(_UnaryFloatOp):
    name = "krnl.atanh"


@irdl_op_definition
class TanOp(_UnaryFloatOp):
    name = "krnl.tan"


@irdl_op_definition
class RoundEvenOp(IRDLOperation):
    """`"krnl.round_even"(%x) : (f32) -> f32`: to the nearest integer, ties to even, of a
    float or of each lane of a float vector (no custom syntax: the generic form)."""

    name = "krnl.round_even"

    T: ClassVar = VarConstraint("T", floatingPointLike)
    in_ = operand_def(T)
    out = result_def(T)

    def __init__(self, value: SSAValue | Operation) -> None:
        v = SSAValue.get(value)
        super().__init__(operands=[v], result_types=[v.type])


@irdl_op_definition
class ErfOp(_UnaryFloatOp):
    name = "krnl.erf"


class _FloatPredicateOp(IRDLOperation):
    in_ = operand_def(AnyFloat)
    out = result_def(I1)

    def __init__(self, value: SSAValue | Operation):
        super().__init__(operands=[value], result_types=[IntegerType(1)])


@irdl_op_definition
class IsInfOp(_FloatPredicateOp):
    name = "krnl.isinf"


@irdl_op_definition
class IsNaNOp(_FloatPredicateOp):
    name = "krnl.isnan"


# ------------------------------------------------------- strings, calls, misc


@irdl_op_definition
class StrlenOp(IRDLOperation):
    name = "krnl.strlen"

    str = operand_def(StringType)
    res = result_def(I64)


@irdl_op_definition
class StrncmpOp(IRDLOperation):
    name = "krnl.strncmp"

    str1 = operand_def(StringType)
    str2 = operand_def(StringType)
    len = operand_def(I64)
    res = result_def(I32)


@irdl_op_definition
class FindIndexOp(IRDLOperation):
    name = "krnl.find_index"

    input = operand_def()
    G = operand_def(MemRefType)
    V = operand_def(MemRefType)
    len = operand_def(I32)
    index = result_def(IndexType)

    def verify_(self) -> None:
        t = self.input.type
        if not (isinstance(t, StringType) or t == IntegerType(64)):
            raise VerifyException(f"krnl.find_index input must be !krnl.string or i64, got {t}")


@irdl_op_definition
class CallOp(IRDLOperation):
    """`krnl.call`: call an external (here: user-registered Python) function."""

    name = "krnl.call"

    funcName = prop_def(StringAttr)
    numOfOutput = opt_prop_def(IntegerAttr[IntegerType])
    parameters = var_operand_def()
    returnValue = var_result_def()


@irdl_op_definition
class PrintOp(IRDLOperation):
    name = "krnl.print"

    format = prop_def(StringAttr)
    input = opt_operand_def()


@irdl_op_definition
class PrintTensorOp(IRDLOperation):
    name = "krnl.print_tensor"

    msg = prop_def(StringAttr)
    input = operand_def(MemRefType)


@irdl_op_definition
class RandomNormalOp(IRDLOperation):
    name = "krnl.random_normal"

    output = operand_def(MemRefType)
    numberOfValues = operand_def(IndexType)
    mean = operand_def(AnyFloat)
    scale = operand_def(AnyFloat)
    seed = operand_def(AnyFloat)


@irdl_op_definition
class RuntimeInstrumentOp(IRDLOperation):
    name = "krnl.runtime_instrument"

    opName = prop_def(StringAttr)
    tag = prop_def(IntegerAttr[IntegerType])
    nodeName = prop_def(StringAttr)
