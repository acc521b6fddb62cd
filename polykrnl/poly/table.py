"""What the polyhedral model needs to know of each op: the `POLY` op table.

The model (:mod:`polykrnl.poly.builder`) cuts a loop body into
statements, follows values between them and gives each statement its
accesses. For that it asks, per op class, the questions an :class:`OpModel`
answers; each dialect's module of this package registers its ops' answers.
An op without an entry makes the model refuse the function with one located
error (:class:`polykrnl.errors.UnsupportedError`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, Operation, OpResult, SSAValue

from polykrnl.dialect.registry import OpTable


class Exprs(Protocol):
    """The isl expressions of the values a statement uses (domains.Expr): what an op's
    model reads, named here so that this table, which domains.py reads, imports nothing
    of it."""

    def of(self, v: SSAValue) -> str | None:
        """`v` as an isl expression of the statement's loops and parameters (None: not
        affine)."""
        ...


class Accessor(Protocol):
    """Records one access of the statement being built: `array` at `subs` (None: the
    whole array), read or write, must or may, optionally only the points of `region`;
    `why` says why a may-access covers more elements than it touches."""

    def __call__(
        self,
        array: SSAValue,
        subs: Sequence[str | None] | None,
        write: bool,
        may: bool,
        op: Operation,
        region: Sequence[tuple[str, str]] | None = None,
        why: str | None = None,
        /,
    ) -> None: ...


#: the accesses of one op, given the isl expressions of its index operands
AccessFn = Callable[[Operation, Exprs, Accessor], None]
#: the isl expression of an index value an op computes (None: not affine)
IndexFn = Callable[[Operation, Exprs], str | None]
#: for a view op: the subscripts of the element of its source that the element
#: at the given subscripts of its result is (isl expressions); None: not known
ViewFn = Callable[[Operation, Sequence[str], Exprs], list[str] | None]


@dataclass(frozen=True)
class OpModel:
    """The role of one op class in the polyhedral model."""

    #: computes a value from its operands (and memory it reads) without changing
    #: memory: it joins the statement of each op that uses it
    pure: bool = False
    #: its accesses; None: none
    accesses: AccessFn | None = None
    #: what it may write, for ordering pure loads against it: the index of the memref
    #: operand it writes, True (anything) or False (nothing)
    writes: int | bool = True
    #: its value depends on memory (a load, a string read)
    reads_memory: bool = False
    #: loads one element of its first operand
    load: bool = False
    #: a view of its first operand (a cast, a subview): accesses through it touch that
    alias: bool = False
    #: for an alias, where its elements are in its source (None: anywhere in it)
    view: ViewFn | None = None
    #: allocates a buffer of its own (its result is an array of the model)
    allocates: bool = False
    #: names constant storage of the module (a global): an array of the model
    storage: bool = False
    #: has no part in the model (recipe ops, define_loops, entry points)
    skip: bool = False
    #: ends a block (its operands leave it)
    terminator: bool = False
    #: a scope whose body runs in place (krnl.region, krnl.movable)
    inline: bool = False
    #: writes to the output stream: its statements keep their order
    io: bool = False
    #: its region accesses touch only elements inside the memref, by the op's own
    #: semantics (a vector transfer skips lanes outside, a tile copy pads): memory
    #: safety has nothing to prove for them
    clips: bool = False
    #: the index value it computes as an isl expression, when it is affine
    index: IndexFn | None = None
    #: when `index` gives None, the value is not affine; otherwise a value fixed for
    #: the whole call still becomes a parameter
    index_final: bool = False


POLY: OpTable[OpModel] = OpTable(
    "poly",
    "the polyhedral model",
    "rewrite it with supported ops, or report the need",
)

#: pure, no accesses of its own (an index value, a float, a view)
PURE = OpModel(pure=True, writes=False)


def model_of(op: Operation) -> OpModel | None:
    return POLY.get(op)


def is_pure(op: Operation) -> bool:
    m = POLY.get(op)
    return m is not None and m.pure


def is_terminator(op: Operation) -> bool:
    m = POLY.get(op)
    return m is not None and m.terminator


def base(v: SSAValue) -> SSAValue:
    """The memref behind alias ops (casts, views)."""
    while isinstance(v, OpResult) and (m := POLY.get(v.op)) is not None and m.alias:
        v = v.op.operands[0]
    return v


def operands_deep(op: Operation) -> Iterator[SSAValue]:
    """The operands of `op` and of the ops nested in its regions, defined outside `op`."""
    yield from op.operands
    if op.regions:
        inner = set(op.walk())
        for o in op.walk():
            if o is op:
                continue
            for v in o.operands:
                d = v.owner
                if isinstance(d, Operation) and d in inner:
                    continue
                if isinstance(d, Block) and d.parent_op() in inner:
                    continue
                yield v


def memref_operands_deep(op: Operation) -> list[SSAValue]:
    out: list[SSAValue] = []
    for v in operands_deep(op):
        if isinstance(v.type, MemRefType) and v not in out:
            out.append(v)
    return out


# -- access functions several dialects share


def no_accesses(op: Operation, expr: Exprs, access: Accessor) -> None:
    """Touches no element (a view, a size query, a terminator)."""


def may_read_memrefs(op: Operation, expr: Exprs, access: Accessor) -> None:
    """May read any element of each memref operand (which, polykrnl cannot tell)."""
    for v in op.operands:
        if isinstance(v.type, MemRefType):
            access(v, None, False, True, op)


def may_write_memrefs(op: Operation, expr: Exprs, access: Accessor) -> None:
    """May write any element of each memref operand."""
    for v in op.operands:
        if isinstance(v.type, MemRefType):
            access(v, None, True, True, op)


def opaque(op: Operation, expr: Exprs, access: Accessor) -> None:
    """A call or an op with regions: may read and write every memref it can see."""
    why = (
        f"{op.name} is opaque to the model: it may read and write any element of each "
        "memref it uses"
    )
    for v in memref_operands_deep(op):
        access(v, None, False, True, op, None, why)
        access(v, None, True, True, op, None, why)


def writes_result(op: Operation, expr: Exprs, access: Accessor) -> None:
    """Allocates (or frees) a buffer: a write of the whole buffer orders its uses."""
    target = op.results[0] if op.results else op.operands[0]
    access(target, None, True, False, op)


def indexed(first_index: int, write: bool) -> AccessFn:
    """`op %mem[%i, ...]` with the memref at operand `first_index - 1`."""

    def fn(op: Operation, expr: Exprs, access: Accessor) -> None:
        subs = [expr.of(i) for i in op.operands[first_index:]]
        access(op.operands[first_index - 1], subs, write, False, op)

    return fn
