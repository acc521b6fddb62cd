"""The concrete loop nest that a Krnl function describes.

This follows onnx-mlir's Krnl-to-affine lowering, step by step, without
mutating the IR (what each recipe op makes and when it is refused comes from
:mod:`polykrnl.dialect.krnl.recipe`, which the schedule primitives follow too;
this is the one application of a function's recipe, which ``pk.schedule``
reads too):

1. every `krnl.iterate` with a `with` list creates one concrete loop per
   entry, nested in `with`-list order, at the place of the iterate;
2. the recipe ops are applied in program order: `krnl.block` splits a loop
   into a tile loop (same bounds, step times T) with a point loop directly
   inside it (from the tile IV to `min(tile + step*T, UB...)`; a point loop
   whose handle is never used runs once, from 0 to 1), `krnl.permute` reorders
   a perfectly nested chain (loop of operand k goes to position map[k]),
   `krnl.parallel` and `krnl.unroll` mark loops;
3. the statements of an iterate body go into the loop of the *last* handle
   of its optimized-loop list, before the loops nested in it; a nested
   `krnl.iterate(%h) with ()` marks where the loop of `%h` goes among them.
   An empty list puts them in the innermost loop, or, when the body holds such
   a marker, outside the loops (run in place: `LoopNest.inline_body`).

The result is a tree of :class:`Loop` and :class:`Stmt` items that the
reference interpreter executes and that the polyhedral model reads. Misuse of
handles is reported as :class:`~polykrnl.errors.Diagnostic` objects (the
verifier shows them); :func:`build_nest` raises only when it cannot build a
tree at all.
"""

from __future__ import annotations

import itertools

from xdsl.ir import Block, Operation, OpResult, SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.dialect.krnl import recipe as rules
from polykrnl.errors import Diagnostic, VerifyError
from polykrnl.ir import Function, location_of, value_name
from polykrnl.nest.trip_counts import (
    constant_trip_count,
    linear_form,
    trip_count_divisor,
)
from polykrnl.nest.values import (
    Bound,
    Chain,
    ChildAnchor,
    Item,
    IVBound,
    Loop,
    LoopKind,
    LoopNest,
    MapBound,
    Origin,
    Stmt,
    YieldPoint,
)

# The nest's values live in nest_values and trip counts in trip_counts; users see them here.
__all__ = [
    "Bound",
    "Chain",
    "ChildAnchor",
    "IVBound",
    "Item",
    "Loop",
    "LoopKind",
    "LoopNest",
    "MapBound",
    "Origin",
    "Stmt",
    "YieldPoint",
    "build_nest",
    "checked_nest",
    "constant_trip_count",
    "linear_form",
    "trip_count_divisor",
]

# ---------------------------------------------------------------- building


class _Builder:
    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self.diags: list[Diagnostic] = []
        self.loop_of: dict[SSAValue, Loop] = {}
        self.consumed: dict[SSAValue, Operation] = {}  # handle -> op that consumed it
        self.origins: dict[SSAValue, Origin] = {}
        self.origin_of_iv: dict[SSAValue, Origin] = {}
        self.roots: dict[k.IterateOp, Loop] = {}
        self.destination: dict[k.IterateOp, Loop | None] = {}
        self.parallel_by: dict[SSAValue, Operation] = {}
        self.inline: dict[k.IterateOp, list[Item]] = {}
        self.diag_ops: list[Operation] = []  # the op of each diagnostic, for ordering
        self.recipe = True
        self.reorder = True

    def error(self, op: Operation, message: str, hint: str) -> None:
        self.diags.append(Diagnostic(message, location_of(op, self.fn.module), hint))
        self.diag_ops.append(op)

    def n(self, v: SSAValue) -> str:
        return value_name(v, self.fn.module)

    # -- step 1: the with lists
    def create_chains(self) -> None:
        for op in self.fn.op.walk():
            if not isinstance(op, k.IterateOp) or not op.entries:
                continue
            prev: Loop | None = None
            for e in op.entries:
                origin = Origin(op, e)
                if not isinstance(e.handle.owner, k.DefineLoopsOp):
                    what = (
                        "a handle made by krnl.block"
                        if isinstance(e.handle.owner, k.BlockOp)
                        else "not a handle of krnl.define_loops"
                    )
                    self.error(
                        op,
                        f"`with` entry {self.n(e.handle)} -> {self.n(e.iv)} binds "
                        f"{self.n(e.handle)}, {what}",
                        "a `with` entry binds an original loop of krnl.define_loops; list "
                        "tile and point handles in the first parenthesized list instead",
                    )
                    continue
                if e.handle in self.origins:
                    other = self.origins[e.handle].iterate
                    self.error(
                        op,
                        f"loop handle {self.n(e.handle)} is bound by more than one `with` entry",
                        f"it is already bound by the krnl.iterate at {_where(other, self.fn)}; "
                        "define a new handle with krnl.define_loops",
                    )
                    continue
                self.origins[e.handle] = origin
                self.origin_of_iv[e.iv] = origin
                loop = Loop(
                    origin,
                    "loop",
                    e.handle,
                    (MapBound(e.lb_map, e.lb_operands),),
                    (MapBound(e.ub_map, e.ub_operands),),
                    1,
                )
                origin.carrier = loop
                self.loop_of[e.handle] = loop
                if prev is None:
                    self.roots[op] = loop
                else:
                    prev.child, loop.parent = loop, prev
                prev = loop

    # -- step 2: the recipe, in program order
    def apply_recipe(self) -> None:
        for op in self.fn.op.walk():
            if isinstance(op, k.BlockOp):
                self.block(op)
            elif isinstance(op, k.PermuteOp):
                if self.reorder:
                    self.permute(op)
            elif isinstance(op, k.ParallelOp):
                for h in op.loops:
                    if (loop := self.live(h, op)) is not None:
                        loop.parallel = True
                        self.parallel_by[h] = op
            elif isinstance(op, k.UnrollOp) and (loop := self.live(op.loop, op)) is not None:
                self.check_not_parallel(op.loop, op)
                loop.unroll = True

    def consume_kernel_loops(self) -> None:
        """Kernel ops consume their loops after the whole recipe, as in the lowering."""
        for op in self.fn.op.walk():
            if isinstance(op, k.MatMulOp | k.SpecializedKernelOp):
                for h in op.loops:
                    if (loop := self.loop_of.get(h)) is not None:
                        loop.consumed_by = op

    def check_kernels_inside_their_loops(self) -> None:
        """A kernel op must not sit inside a loop it consumes: it would erase itself."""
        for op in self.fn.op.walk():
            if not isinstance(op, k.MatMulOp | k.SpecializedKernelOp):
                continue
            it = op.parent_op()
            while it is not None and not isinstance(it, k.IterateOp):
                it = it.parent_op()
            loop = self.destination.get(it) if it is not None else None
            while loop is not None:
                if loop.consumed_by is op:
                    self.error(
                        op,
                        f"{op.name} computes loop {self.n(loop.handle)} itself, but that loop "
                        "encloses the op (the krnl.iterate holding it runs inside it), so "
                        "lowering it would erase the op",
                        "the loops a kernel op consumes must be innermost: move them inside "
                        "the iterated loops with krnl.permute",
                    )
                    break
                loop = loop.parent

    def live(self, h: SSAValue, op: Operation) -> Loop | None:
        """The loop of handle `h`, or None (with a diagnostic) if it has none."""
        if (loop := self.loop_of.get(h)) is not None:
            return loop
        if h in self.consumed:
            by = self.consumed[h]
            self.error(
                op,
                f"loop handle {self.n(h)} is used after it was blocked",
                f"{self.n(h)} was replaced by the two handles of the krnl.block at "
                f"{_where(by, self.fn)}: use the tile or point handle instead",
            )
        elif not isinstance(h.owner, k.DefineLoopsOp | k.BlockOp):
            self.error(
                op,
                f"{self.n(h)} is not a loop handle from krnl.define_loops or krnl.block",
                "loop handles come from krnl.define_loops (or krnl.block)",
            )
        else:
            self.error(
                op,
                f"loop handle {self.n(h)} is never bound to bounds by a krnl.iterate `with` entry",
                f"add `{self.n(h)} -> %iv = LB to UB` to the `with` list of a krnl.iterate",
            )
        return None

    def check_not_parallel(self, h: SSAValue, op: Operation) -> None:
        if h in self.parallel_by:
            self.refuse(
                op,
                rules.parallel_first_refusal(op.name, self.n(h), self.where(self.parallel_by[h])),
            )

    def refuse(self, op: Operation, refusal: rules.Refusal) -> None:
        self.error(op, refusal.message, refusal.hint)

    def where(self, op: Operation) -> str:
        return _where(op, self.fn)

    def block(self, op: k.BlockOp) -> None:
        h = op.loop
        size = op.size
        if (refusal := rules.block_size_refusal(size, self.n(h))) is not None:
            self.refuse(op, refusal)
            return
        loop = self.live(h, op)
        if loop is None:
            return
        self.check_not_parallel(h, op)
        tile_h, point_h = op.loop_block, op.loop_local
        stride = rules.tile_stride(loop.step, size)
        tile = Loop(
            loop.origin,
            "tile",
            tile_h,
            loop.lbs,
            loop.ubs,
            stride,
            tile_size=size,
            block_op=op,
            split_from=loop,
        )
        trivial = not point_h.uses
        lbs, ubs = rules.point_range(tile, stride, loop.ubs, IVBound)
        point = Loop(
            loop.origin,
            "point",
            point_h,
            lbs,
            ubs,
            loop.step,
            trivial=trivial,
            block_op=op,
            split_from=loop,
        )
        # The tile loop takes the place of the blocked loop; the point loop
        # takes over its contents.
        tile.parent, tile.child, point.parent = loop.parent, point, tile
        point.child, point.items = loop.child, loop.items
        if loop.child is not None:
            loop.child.parent = point
        if loop.parent is not None:
            loop.parent.child = tile
        # Only a root loop (no parent) can be the root of an iterate.
        if loop.parent is None and self.roots.get(loop.origin.iterate) is loop:
            self.roots[loop.origin.iterate] = tile
        if loop.origin.carrier is loop:
            loop.origin.carrier = point
        # The blocked loop's value is now the point loop's (bounds that use it follow).
        loop.moved_to = point
        del self.loop_of[h]
        self.consumed[h] = op
        self.loop_of[tile_h] = tile
        self.loop_of[point_h] = point

    def permute(self, op: k.PermuteOp) -> None:
        perm = op.perm
        n = len(op.loops)
        refusal = rules.permutation_refusal(perm, n) or rules.listed_twice(
            [self.n(h) for h in op.loops], "krnl.permute"
        )
        if refusal is not None:
            self.refuse(op, refusal)
            return
        loops: list[Loop] = []
        for h in op.loops:
            loop = self.live(h, op)
            if loop is None:
                return
            self.check_not_parallel(h, op)
            loops.append(loop)
        for outer, inner in itertools.pairwise(loops):
            if outer.child is not inner:
                order = [self.n(lp.handle) for lp in _chain_of(outer)]
                self.refuse(
                    op, rules.not_a_chain_refusal(self.n(outer.handle), self.n(inner.handle), order)
                )
                return
        new = rules.scattered(loops, perm)
        top_parent, bottom_child = loops[0].parent, loops[-1].child
        # Items placed in the band's loops stay with their depth: permuting a
        # perfectly nested band moves only the loop headers.
        items = [lp.items for lp in loops]
        for depth, lp in enumerate(new):
            lp.items = items[depth]
            lp.parent = top_parent if depth == 0 else new[depth - 1]
            lp.child = bottom_child if depth == n - 1 else new[depth + 1]
        if bottom_child is not None:
            bottom_child.parent = new[-1]
        if top_parent is not None:
            top_parent.child = new[0]
        it = loops[0].origin.iterate
        if self.roots.get(it) is loops[0]:
            self.roots[it] = new[0]
        bad = rules.misplaced_bound(new, _iv_bounds_used)
        if bad is not None:
            lp, used = bad
            self.refuse(
                op,
                rules.misplaced_refusal(
                    self.n(lp.handle), self.n(used.handle), point=lp.kind == "point"
                ),
            )

    # -- step 3: where statements go
    def place_bodies(self) -> None:
        self.place_block(self.fn.op.body.block)

    def place_block(self, block: Block) -> None:
        """Place the iterates found directly in `block` (and recursively inside them).

        `block` is not the body of a krnl.iterate (those are chunked by
        place_iterate), so an iterate with an empty `with` list here cannot mark
        a place among the statements of the iterate that binds its loops: its
        body would run in that loop whatever the control flow around it says.
        """
        for op in block.ops:
            if isinstance(op, k.IterateOp):
                if not op.entries and op.optimized_loops:
                    self.error(
                        op,
                        f"krnl.iterate({', '.join(value_name(h) for h in op.optimized_loops)}) "
                        "with () is not directly in the body of the krnl.iterate that binds "
                        "its loops",
                        "an iterate with an empty `with` list marks where its loops go among "
                        "the statements of the enclosing krnl.iterate: put it directly in that "
                        "body, not inside another op's region",
                    )
                self.place_iterate(op)
            else:
                for region in op.regions:
                    for b in region.blocks:
                        self.place_block(b)

    def place_iterate(self, op: k.IterateOp) -> None:
        dest: Loop | None = None
        if op.optimized_loops and not (self.recipe and self.reorder):
            # Without the recipe (or its permutes) the loops keep their `with` order,
            # whatever order the list gives them (it follows the permutation): the
            # body goes into the deepest of them. Without the recipe, tile and point
            # handles stand for the loop they were blocked from.
            originals = [h if self.recipe else _unblocked(h) for h in op.optimized_loops]
            listed = [self.loop_of[h] for h in originals if h in self.loop_of]
            dest = max(listed, key=_depth) if listed else None
            for h in originals:
                if h not in self.loop_of:
                    self.live(h, op)
        elif op.optimized_loops:
            dest = self.loop_of.get(op.optimized_loops[-1])
            for h in op.optimized_loops:
                if h not in self.loop_of:
                    self.live(h, op)
        elif op.entries and not _holds_marker(op):
            # No optimized list: onnx-mlir leaves the body in the innermost
            # loop of the with list (inside its point loops once blocked).
            last = self.origins.get(op.entries[-1].handle)
            dest = last.carrier if last is not None else None
        # An empty optimized list whose body holds a `with ()` marker binds the body
        # to no loop: it sits outside the loops, which go where the marker is
        # (onnx-mlir's 1-D x 1-D MatMul: the sum's loop, then the store of the sum).
        self.destination[op] = dest
        chunk: list[Operation] = []
        items: list[Item] = []

        def flush() -> None:
            if chunk:
                items.append(Stmt(list(chunk), op))
                chunk.clear()

        for inner in op.body.block.ops:
            if isinstance(inner, k.YieldOp):
                continue
            if isinstance(inner, k.IterateOp):
                flush()
                self.place_iterate(inner)
                if inner.entries:
                    items.append(Chain(inner))
                elif inner.optimized_loops:
                    items.append(ChildAnchor(inner))
                    self.check_anchor(inner, dest, op)
                else:
                    items.append(Chain(inner))
            else:
                chunk.append(inner)
                for region in inner.regions:
                    for b in region.blocks:
                        self.place_block(b)
        flush()
        if op.results:
            items.append(YieldPoint(op))
        if dest is not None:
            dest.items.extend(items)
        elif op.optimized_loops:
            pass  # already reported by live()
        else:
            self.inline[op] = items

    def check_anchor(self, anchor: k.IterateOp, dest: Loop | None, outer: k.IterateOp) -> None:
        first = self.loop_of.get(anchor.optimized_loops[0])
        if first is None:
            return
        if dest is None and not outer.optimized_loops and outer in self.roots:
            root = self.roots[outer]
            if first is not root:
                self.error(
                    anchor,
                    f"krnl.iterate({self.n(anchor.optimized_loops[0])}) with () must name the "
                    f"outermost loop {self.n(root.handle)} of the enclosing krnl.iterate: "
                    "its body binds no loop (an empty first list), so it sits outside them",
                    "the loop order is "
                    + " > ".join(self.n(lp.handle) for lp in root.chain())
                    + f"; name {self.n(root.handle)} in the marker, or list the loops the "
                    "body belongs to in the first list of the enclosing krnl.iterate",
                )
            return
        if dest is None:
            return
        if dest.child is not first:
            self.error(
                anchor,
                f"krnl.iterate({self.n(anchor.optimized_loops[0])}) with () must name the loop "
                f"directly inside the loop of {self.n(dest.handle)}, where the enclosing body sits",
                "the loop order is "
                + " > ".join(self.n(lp.handle) for lp in _chain_of(_root(dest)))
                + "; permute the loops or name the next one",
            )


def _holds_marker(op: k.IterateOp) -> bool:
    """Whether `op`'s body holds a `krnl.iterate(%h) with ()` marker directly."""
    return any(
        isinstance(inner, k.IterateOp) and not inner.entries and inner.optimized_loops
        for inner in op.body.block.ops
    )


def _unblocked(h: SSAValue) -> SSAValue:
    """The handle of the loop that `h` (a krnl.block result, maybe) was made from."""
    while isinstance(h, OpResult) and isinstance(h.op, k.BlockOp):
        h = h.op.loop
    return h


def _iv_bounds_used(loop: Loop) -> list[Loop]:
    """The loops whose values the bounds of `loop` read."""
    return [b.current for b in (*loop.lbs, *loop.ubs) if isinstance(b, IVBound)]


def _depth(loop: Loop) -> int:
    n = 0
    while loop.parent is not None:
        loop, n = loop.parent, n + 1
    return n


def _root(loop: Loop) -> Loop:
    while loop.parent is not None:
        loop = loop.parent
    return loop


def _chain_of(loop: Loop) -> list[Loop]:
    return list(_root(loop).chain())


def _where(op: Operation, fn: Function) -> str:
    loc = location_of(op, fn.module)
    return f"line {loc.line}" if loc else "another place"


def build_nest(fn: Function, recipe: bool = True, reorder: bool = True) -> LoopNest:
    """The concrete loop nest of `fn`, with diagnostics for every misuse found.

    With `recipe=False` the krnl.block / permute / parallel / unroll ops are
    ignored: the loops of the `with` lists in their original order. With
    `reorder=False` only the krnl.permute ops are: the order of the program
    before its loops were permuted, which legality is judged against.
    """
    b = _Builder(fn)
    b.recipe = recipe
    b.reorder = reorder
    b.create_chains()
    if recipe:
        b.apply_recipe()
    b.consume_kernel_loops()
    b.place_bodies()
    b.check_kernels_inside_their_loops()
    return LoopNest(
        fn,
        b.roots,
        b.loop_of,
        b.origins,
        b.origin_of_iv,
        b.destination,
        b.inline,
        b.diags,
        b.diag_ops,
    )


def checked_nest(fn: Function) -> LoopNest:
    """Like :func:`build_nest`, raising VerifyError if any misuse was found."""
    nest = build_nest(fn)
    if nest.diagnostics:
        raise VerifyError(nest.diagnostics)
    return nest
