"""Every PTO instruction polykrnl knows, in one table: :data:`TABLE`.

One :class:`Instruction` per instruction says how the program IR checks it (``kind``: its
operand signature; ``tmp``), which pipe runs it, what the NumPy model computes (``semantics``,
``float_only``), which MLIR op classes lower to it (``implements``) and how the lowering
reaches its related forms (the scalar, per-row and per-column forms of a binary op, the
binary op that combines two partial row reductions). Everything else reads this table:
:mod:`.program` (operand checks, pipes), :mod:`.sim` (the functions), :mod:`.krnl_ops`
(the op-class -> instruction maps, derived by :func:`by_op_class`), :mod:`.elementwise` and
:mod:`.row_reduction` (the forms).

Adding an instruction: one entry here (a binary op with its three forms is one
:func:`_binary` call); a lowering pattern if Krnl ops should reach it (``implements`` is
enough for a new unary, binary or row-reducing op); a test of its NumPy model in
tests/targets/pto/test_sim.py. tests/targets/pto/test_instructions.py runs every entry on a
small tile.

Tmp sizes are kept apart, in :mod:`.tmp_rules` and :data:`.types.TMP_INSTRUCTIONS`: they
cover every instruction of the ISA that takes a tmp, including those polykrnl never emits.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, get_args

import numpy as np
from xdsl.dialects import arith, math
from xdsl.ir import Operation

from polykrnl.errors import TileConstraintError

__all__ = [
    "BY_CLASS_KINDS",
    "COMPUTE_KINDS",
    "INSTRUCTIONS",
    "TABLE",
    "Instruction",
    "Kind",
    "Pipe",
    "Tmp",
    "by_op_class",
    "n_sources",
]

Array: TypeAlias = np.ndarray[Any, Any]
#: The NumPy function of an instruction on the valid regions of its operands (unary: one
#: array; binary forms: two arrays of one shape; row reductions: one array -> one value
#: per row). Integers arrive as int64, floats in the tile's own type (sim._compute).
Semantics: TypeAlias = Callable[..., Array]

Kind: TypeAlias = Literal[
    "load", "store", "unary", "binary", "scalar", "rowreduce", "rowexpand", "rowexpand_bin",
    "colexpand_bin", "trans", "mov", "matmul", "matmul_acc", "fillpad", "expands",
]  # fmt: skip
#: "required": the C++ signature has a tmp tile; "optional": it may be passed.
Tmp: TypeAlias = Literal["none", "required", "optional"]

#: The kinds whose instructions compute values elementwise or per row: their NumPy model is
#: the entry's ``semantics`` (the other kinds move data, and sim.py has one function each).
COMPUTE_KINDS: frozenset[Kind] = frozenset(
    {"unary", "binary", "scalar", "rowreduce", "rowexpand_bin", "colexpand_bin"}
)

#: The kinds whose op classes some lowering pattern looks up (krnl_ops: UNARY_INSTR,
#: BINARY_INSTR, ROW_REDUCE_INSTR); ``implements`` elsewhere would reach no pattern.
BY_CLASS_KINDS: frozenset[Kind] = frozenset({"unary", "binary", "rowreduce"})

_SOURCES: Mapping[Kind, int] = {
    "load": 1, "store": 1, "unary": 1, "binary": 2, "scalar": 2, "rowreduce": 1,
    "rowexpand": 1, "rowexpand_bin": 2, "colexpand_bin": 2, "trans": 1, "mov": 1,
    "matmul": 2, "matmul_acc": 2, "fillpad": 1, "expands": 1,
}  # fmt: skip


def n_sources(kind: Kind) -> int:
    """How many source operands an instruction of `kind` takes (the destination apart)."""
    return _SOURCES[kind]


class Pipe(enum.Enum):
    """A hardware pipe (C++ ``PIPE_V`` ...)."""

    S = "S"
    V = "V"
    MTE1 = "MTE1"
    MTE2 = "MTE2"
    MTE3 = "MTE3"
    M = "M"
    FIX = "FIX"
    ALL = "ALL"

    @property
    def cpp(self) -> str:
        return f"PIPE_{self.value}"


@dataclass(frozen=True)
class Instruction:
    """One PTO instruction (the fields are described in the module docstring).

    ``pipe`` is None where the tiles decide (TSTORE: FIX from an Acc tile, MTE3 otherwise;
    TMOV: MTE1 from Mat to L0, FIX from Acc, V otherwise; see Program.pipe_of).
    The form fields name other entries of the table: ``scalar_form`` (tile op scalar),
    ``rowexpand_form`` (tile op per-row value), ``colexpand_form`` (tile op per-column
    value), ``zero_form`` (the unary instruction ``op(x, 0)`` is), ``combine`` (the binary
    op that merges a row reduction with a value before it); ``commutes`` allows the
    operands swapped in those forms; ``scalar_first`` marks the one scalar form that also
    takes the scalar first (``TDIVS``: scalar / tile); ``identity`` is a row reduction's
    neutral start value (no combine needed).
    """

    name: str
    kind: Kind
    tmp: Tmp = "none"
    pipe: Pipe | None = Pipe.V
    semantics: Semantics | None = None
    float_only: bool = False
    implements: tuple[type[Operation], ...] = ()
    commutes: bool = False
    scalar_form: str | None = None
    rowexpand_form: str | None = None
    colexpand_form: str | None = None
    zero_form: str | None = None
    scalar_first: bool = False
    identity: float | None = None
    combine: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in get_args(Kind):
            raise ValueError(f"{self.name}: unknown kind {self.kind!r}")
        if (self.semantics is not None) != (self.kind in COMPUTE_KINDS):
            # a computing entry without a NumPy model would only fail when simulated
            raise ValueError(
                f"{self.name}: kind {self.kind} "
                + ("needs semantics" if self.semantics is None else "takes no semantics")
            )
        if self.implements and self.kind not in BY_CLASS_KINDS:
            raise ValueError(f"{self.name}: no lowering pattern looks up {self.kind} by op class")

    @property
    def n_sources(self) -> int:
        return n_sources(self.kind)


# --------------------------------------------------------------------------- semantics


def _int_div(a: Array, b: Array) -> Array:
    if np.any(b == 0):
        raise TileConstraintError("TDIV: integer division by zero")
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)  # C++ truncates toward zero


def _div(a: Array, b: Array) -> Array:
    # integer tiles arrive as int64 (sim._compute), where / would give floats
    return _int_div(a, b) if a.dtype.kind in "iu" else a / b


def _add(a: Array, b: Array) -> Array:
    return a + b


def _sub(a: Array, b: Array) -> Array:
    return a - b


def _mul(a: Array, b: Array) -> Array:
    return a * b


def _relu(a: Array) -> Array:
    return np.maximum(a, np.zeros_like(a))


def _recip(a: Array) -> Array:
    return np.ones_like(a) / a


def _rsqrt(a: Array) -> Array:
    return np.ones_like(a) / np.sqrt(a)


def _expdif(a: Array, b: Array) -> Array:
    return np.exp(a - b)


def _row_sum(x: Array) -> Array:
    return x.sum(axis=1)


def _row_max(x: Array) -> Array:
    return x.max(axis=1)


def _row_min(x: Array) -> Array:
    return x.min(axis=1)


# --------------------------------------------------------------------------- the table


def _binary(
    names: tuple[str, str, str, str],
    fn: Semantics,
    implements: tuple[type[Operation], ...],
    *,
    commutes: bool,
    scalar_first: bool = False,
    zero_form: str | None = None,
) -> tuple[Instruction, ...]:
    """A binary op and its forms (tile op scalar, op per-row value, op per-column value),
    which compute the same function on other operands."""
    tile, scalar, rowexpand, colexpand = names
    return (
        Instruction(
            tile, "binary", semantics=fn, implements=implements, commutes=commutes,
            scalar_form=scalar, rowexpand_form=rowexpand, colexpand_form=colexpand,
            zero_form=zero_form,
        ),
        Instruction(scalar, "scalar", semantics=fn, scalar_first=scalar_first),
        Instruction(rowexpand, "rowexpand_bin", "optional", semantics=fn),
        Instruction(colexpand, "colexpand_bin", semantics=fn),
    )  # fmt: skip


_MOVES = (
    Instruction("TLOAD", "load", pipe=Pipe.MTE2),
    Instruction("TSTORE", "store", pipe=None),
    Instruction("TTRANS", "trans", "required"),
    Instruction("TMOV", "mov", pipe=None),
    Instruction("TMATMUL", "matmul", pipe=Pipe.M),
    Instruction("TMATMUL_ACC", "matmul_acc", pipe=Pipe.M),
    Instruction("TFILLPAD", "fillpad"),
    Instruction("TEXPANDS", "expands"),
    Instruction("TROWEXPAND", "rowexpand"),
)

_UNARY = (
    Instruction("TEXP", "unary", semantics=np.exp, float_only=True, implements=(math.ExpOp,)),
    Instruction("TSQRT", "unary", semantics=np.sqrt, float_only=True, implements=(math.SqrtOp,)),
    Instruction("TABS", "unary", semantics=np.abs, implements=(math.AbsFOp,)),
    Instruction("TRELU", "unary", semantics=_relu),
    Instruction("TNEG", "unary", semantics=np.negative, implements=(arith.NegfOp,)),
    Instruction("TLOG", "unary", semantics=np.log, float_only=True, implements=(math.LogOp,)),
    Instruction("TRECIP", "unary", semantics=_recip, float_only=True),
    Instruction("TRSQRT", "unary", semantics=_rsqrt, float_only=True, implements=(math.RsqrtOp,)),
)

# maximumf/minimumf (NaN wins) and maxnumf/minnumf (the number wins, what onnx-mlir
# writes for max reductions) differ only on NaN, which PTO leaves undefined: both
# become the one instruction (docs/pto.md, "NaN and max/min").
_MAX = (arith.MaximumfOp, arith.MaxnumfOp)
_MIN = (arith.MinimumfOp, arith.MinnumfOp)

_BINARY = (
    *_binary(("TADD", "TADDS", "TROWEXPANDADD", "TCOLEXPANDADD"), _add, (arith.AddfOp,),
             commutes=True),
    *_binary(("TSUB", "TSUBS", "TROWEXPANDSUB", "TCOLEXPANDSUB"), _sub, (arith.SubfOp,),
             commutes=False),
    *_binary(("TMUL", "TMULS", "TROWEXPANDMUL", "TCOLEXPANDMUL"), _mul, (arith.MulfOp,),
             commutes=True),
    # only TDIVS has the scalar-first form (c / tile)
    *_binary(("TDIV", "TDIVS", "TROWEXPANDDIV", "TCOLEXPANDDIV"), _div, (arith.DivfOp,),
             commutes=False, scalar_first=True),
    *_binary(("TMAX", "TMAXS", "TROWEXPANDMAX", "TCOLEXPANDMAX"), np.maximum, _MAX,
             commutes=True, zero_form="TRELU"),
    *_binary(("TMIN", "TMINS", "TROWEXPANDMIN", "TCOLEXPANDMIN"), np.minimum, _MIN,
             commutes=True),
    Instruction("TROWEXPANDEXPDIF", "rowexpand_bin", "optional", semantics=_expdif),
)  # fmt: skip

# The combining op of a ``krnl.yield old op e`` (or ``T[r] = T[r] op e``) -> its row
# reduction. The model reduces in float64/int64; the max/min NaN note above holds here too.
_ROW_REDUCE = (
    Instruction("TROWSUM", "rowreduce", "required", semantics=_row_sum,
                implements=(arith.AddfOp,), identity=0.0, combine="TADD"),
    Instruction("TROWMAX", "rowreduce", "required", semantics=_row_max, implements=_MAX,
                identity=float("-inf"), combine="TMAX"),
    Instruction("TROWMIN", "rowreduce", "required", semantics=_row_min, implements=_MIN,
                identity=float("inf"), combine="TMIN"),
)  # fmt: skip

#: Every instruction polykrnl emits, checks and simulates.
TABLE: tuple[Instruction, ...] = (*_MOVES, *_UNARY, *_BINARY, *_ROW_REDUCE)
#: The table by instruction name.
INSTRUCTIONS: Mapping[str, Instruction] = {i.name: i for i in TABLE}


def by_op_class(kind: Kind, table: Iterable[Instruction] = TABLE) -> dict[type[Operation], str]:
    """Op class -> the instruction of `kind` that implements it (what a lowering pattern
    looks up); raises ValueError when two instructions of the kind claim one class (the
    pattern could not choose)."""
    out: dict[type[Operation], str] = {}
    for i in table:
        if i.kind != kind:
            continue
        for cls in i.implements:
            if cls in out:
                raise ValueError(f"{cls.__name__} is implemented by {out[cls]} and {i.name}")
            out[cls] = i.name
    return out


def _check_references(table: Iterable[Instruction]) -> None:
    """Each form a table entry names exists with the kind that form has (a typo would
    otherwise show only when a Krnl op first reaches it)."""
    by_name = {i.name: i for i in table}
    for i in by_name.values():
        refs: tuple[tuple[str | None, Kind], ...] = (
            (i.scalar_form, "scalar"),
            (i.rowexpand_form, "rowexpand_bin"),
            (i.colexpand_form, "colexpand_bin"),
            (i.zero_form, "unary"),
            (i.combine, "binary"),
        )
        for name, kind in refs:
            if name is not None and (name not in by_name or by_name[name].kind != kind):
                raise ValueError(f"{i.name}: {name!r} is not a {kind} instruction of the table")


_check_references(TABLE)
if len(INSTRUCTIONS) != len(TABLE):
    raise ValueError("an instruction name appears twice in the table")
