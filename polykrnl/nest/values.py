"""The values of a concrete loop nest: loops and their bounds, statements, the nest."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import (
    AffineMap,
)

from polykrnl.dialect import krnl as k
from polykrnl.errors import Diagnostic
from polykrnl.ir import Function

LoopKind = Literal["loop", "tile", "point"]


@dataclass(frozen=True)
class MapBound:
    """An affine map applied to SSA operands (dims then symbols)."""

    map: AffineMap
    operands: tuple[SSAValue, ...]


@dataclass(frozen=True)
class IVBound:
    """The induction variable of another concrete loop, plus a constant.

    `loop` is the loop as it was when the bound was made (a tile loop, with its
    tile size); if that loop was blocked again since, its value is carried by
    `current`.
    """

    loop: Loop
    offset: int

    @property
    def current(self) -> Loop:
        lp = self.loop
        while lp.moved_to is not None:
            lp = lp.moved_to
        return lp


Bound = MapBound | IVBound


@dataclass(eq=False)
class Origin:
    """An original loop: one `%h -> %i = LB to UB` entry of a krnl.iterate."""

    iterate: k.IterateOp
    entry: k.IterateEntry
    # The concrete loop whose IV is the original IV (the innermost point loop
    # after blocking), kept up to date by block.
    carrier: Loop | None = None

    @property
    def name(self) -> str:
        return self.entry.iv.name_hint or "iv"


@dataclass(eq=False)
class Loop:
    """One concrete loop after the recipe: `for IV = max(lbs) to min(ubs) step step`."""

    origin: Origin
    kind: LoopKind
    handle: SSAValue
    lbs: tuple[Bound, ...]
    ubs: tuple[Bound, ...]
    step: int
    # The next loop of the same chain (the one a krnl.block or the with list
    # put directly inside this one), or None for the innermost.
    child: Loop | None = None
    parent: Loop | None = None
    # Statements and other chains placed in this loop, in order; `None` marks
    # where `child` goes (at the end when no anchor names it).
    items: list[Item] = field(default_factory=list)
    tile_size: int | None = None  # for tile loops: the krnl.block size
    trivial: bool = False  # a point loop whose handle is never used: runs once
    parallel: bool = False
    unroll: bool = False
    block_op: k.BlockOp | None = None
    # krnl.matmul / krnl.specialized_kernel computes this loop itself: like
    # onnx-mlir, the loop (and what it encloses) is not run as a loop.
    consumed_by: Operation | None = None
    # Set when this loop is blocked: the point loop that carries its value since.
    moved_to: Loop | None = None
    # For a tile or point loop: the loop its krnl.block split (the schedule of the
    # recipe computes each loop's values from that loop's).
    split_from: Loop | None = None

    @property
    def name(self) -> str:
        """The IV name for an unblocked loop, else the handle's name."""
        if self.kind == "loop":
            return self.origin.name
        return self.handle.name_hint or f"{self.origin.name}_{self.kind}"

    def body(self) -> Iterator[Item | Loop]:
        """Items in execution order, with the child loop right after its anchor (or last).

        The anchor itself comes first: an anchor iterate with iter_args starts
        them before the child loop runs, and its results are the values after it.
        A child loop consumed by a krnl.matmul is left out, as onnx-mlir erases it.
        """
        child = self.child if self.child is not None and self.child.consumed_by is None else None
        placed = False
        for it in self.items:
            yield it
            if isinstance(it, ChildAnchor) and child is not None and not placed:
                placed = True
                yield child
        if child is not None and not placed:
            yield child

    def chain(self) -> Iterator[Loop]:
        """This loop and the loops nested in it through `child`, outermost first."""
        loop: Loop | None = self
        while loop is not None:
            yield loop
            loop = loop.child

    def __repr__(self) -> str:
        return f"<Loop {self.kind} {self.name}>"


@dataclass(eq=False)
class Stmt:
    """A run of ops executed in sequence (one chunk of an iterate body)."""

    ops: list[Operation]
    owner: k.IterateOp | None


@dataclass(eq=False)
class Chain:
    """The loops of a nested iterate that has its own `with` entries."""

    iterate: k.IterateOp


@dataclass(eq=False)
class ChildAnchor:
    """Where a nested `krnl.iterate(%h) with ()` places the child loop."""

    iterate: k.IterateOp


@dataclass(eq=False)
class YieldPoint:
    """End of one execution of an iterate body that carries iter_args."""

    iterate: k.IterateOp


Item = Stmt | Chain | ChildAnchor | YieldPoint


@dataclass(eq=False)
class LoopNest:
    """The concrete loops of one function (treat as read-only once built)."""

    function: Function
    # The outermost loop at the place of each iterate that has a with list.
    roots: dict[k.IterateOp, Loop]
    # The current loop of every live handle.
    loop_of: dict[SSAValue, Loop]
    origins: dict[SSAValue, Origin]  # keyed by original handle
    origin_of_iv: dict[SSAValue, Origin]
    # Iterates without loops of their own (`with ()`): where their body goes.
    destination: dict[k.IterateOp, Loop | None]
    # Bodies executed in place: of iterates with no loops at all (`krnl.iterate()
    # with ()`), and of those whose empty first list puts the body outside their
    # loops (a `with ()` marker in the body places them: `inline_body`).
    inline: dict[k.IterateOp, list[Item]]
    diagnostics: list[Diagnostic]
    # The op each diagnostic is about (same order), to sort them in program order.
    diagnostic_ops: list[Operation] = field(default_factory=list)

    def inline_body(self, op: k.IterateOp) -> Iterator[Item | Loop]:
        """The body of an iterate run in place, in execution order.

        An iterate with loops but an empty first list whose body holds a `with ()`
        marker is run in place too: its root loop comes right after the marker
        (unless a kernel op consumes it, as in :meth:`Loop.body`).
        """
        root = self.roots.get(op)
        if root is not None and root.consumed_by is not None:
            root = None
        for it in self.inline.get(op, ()):
            yield it
            if isinstance(it, ChildAnchor) and root is not None:
                yield root
                root = None

    def loops(self) -> Iterator[Loop]:
        seen: set[int] = set()
        for root in self.roots.values():
            yield from _walk(root, seen)


def _walk(loop: Loop, seen: set[int]) -> Iterator[Loop]:
    if id(loop) in seen:
        return
    seen.add(id(loop))
    yield loop
    if loop.child is not None:
        yield from _walk(loop.child, seen)
