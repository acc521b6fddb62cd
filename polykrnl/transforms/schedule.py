"""Schedule: an immutable isl schedule tree with named loops, and the Krnl primitives.

A :class:`Schedule` holds the statements of a :class:`~polykrnl.model.poly.PolyProgram`,
the loop structure (which loop encloses which, in which order), and for every
loop its Krnl-style bounds and its value for every statement instance (the
band's partial schedule). ``schedule.tree`` is the isl schedule tree: one
single-member band per loop under a mark node named after the loop, sequence
nodes for textual order, coincident bands for parallel loops and the `unroll`
AST loop type for unrolled loops.

The primitives follow Krnl exactly (see krnl-semantics):

* ``block(loop, T)`` strip-mines: the tile loop keeps the bounds and steps by
  ``T`` (times the loop's step); its value for an instance whose loop value
  is ``v`` is ``lb + S*floor((v - lb)/S)`` (tiles start at the lower bound,
  not at multiples of ``T`` as isl's ``band_tile`` would have it); the point
  loop runs from the tile value to ``tile + T``, ``tile + count`` or
  ``min(tile + T, UB...)`` as the divisibility rules say.
* ``permute(loops, map)`` scatters (loop k goes to position map[k]) a
  perfectly nested chain; ``reorder(order)`` gathers.
* ``parallel(*loops)`` marks loops parallel (coincident bands);
  ``unroll(loop)`` needs a constant trip count.

Loop names: an unblocked loop is named by its induction variable (``i``);
``block("i", 4)`` names the tile loop ``i_t`` and the point loop keeps ``i``
(it carries the original induction variable); ``names=("ib", "il")`` chooses
them. From Krnl text the names of the handles are used (``%ib, %il =
krnl.block ...``), else the same defaults. A name already in use gets
``_2``, ``_3``, ...

Every primitive takes ``force``: legality checking arrives with the
dependence analysis; ``force=True`` will skip its refusal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Protocol, Union

import islpy as isl
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineSymExpr,
)

from polykrnl.display import code, display_box, highlight, preformatted, section, side_by_side
from polykrnl.errors import ScheduleError, SourceLocation, UnsupportedError
from polykrnl.model.ir import Function
from polykrnl.model.nest import linear_form
from polykrnl.model.poly import (
    PLoop,
    PNode,
    PolyProgram,
    PStmt,
    Statement,
    build_tree,
    isl_name,
    poly_program,
)

if TYPE_CHECKING:
    from polykrnl.transforms.legality import LegalityReport
    from polykrnl.transforms.looptree import LoopTree

LoopKind = Literal["loop", "tile", "point"]


# ------------------------------------------------------------------ bounds


@dataclass(frozen=True)
class Ref:
    """An operand of a bound: a loop value (by id), a parameter, or a constant."""

    kind: Literal["value", "param", "const"]
    name: str = ""
    value: int = 0


@dataclass(frozen=True)
class Bound:
    """One affine expression (xDSL AffineExpr over d0, d1, ...) of `operands`."""

    expr: AffineExpr
    operands: tuple[Ref, ...]

    @staticmethod
    def value_plus(vid: str, offset: int) -> Bound:
        e: AffineExpr = AffineDimExpr(0)
        if offset:
            e = e + offset
        return Bound(e, (Ref("value", vid),))

    @staticmethod
    def const(c: int) -> Bound:
        return Bound(AffineConstantExpr(c), ())


@dataclass(frozen=True)
class LoopInfo:
    """One loop of a schedule (see the module docstring)."""

    name: str
    kind: LoopKind
    vid: str  # the loop value it carries (kept by the point loop when blocked)
    origin: str  # the original loop it comes from
    lbs: tuple[Bound, ...]
    ubs: tuple[Bound, ...]
    step: int
    values: Mapping[str, isl.PwAff] = field(compare=False)
    tile_size: int | None = None
    trivial: bool = False
    parallel: bool = False
    unroll: bool = False
    # After skew: this loop runs over vid's value + sum(factor * value of v).
    skew: tuple[tuple[str, int], ...] = ()
    # The tile loop of a skewed loop: its range is shown as isl computes it.
    isl_bounds: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))


@dataclass(frozen=True)
class SLoop:
    name: str
    body: tuple[SNode, ...]


@dataclass(frozen=True)
class SStmt:
    name: str


SNode = Union[SLoop, SStmt]  # noqa: UP007


@dataclass(frozen=True)
class Step:
    """One applied primitive, replayable (and printable as a Krnl recipe op)."""

    op: Literal["block", "permute", "parallel", "unroll", "trivial", "skew"]
    loops: tuple[str, ...]
    size: int = 0  # block: the tile size; skew: the factor
    perm: tuple[int, ...] = ()
    names: tuple[str, ...] = ()
    # The Krnl recipe op it comes from, if any.
    location: SourceLocation | None = None


# ------------------------------------------------------------------ schedule


class Kernel(Protocol):
    """What a code generator makes of a schedule (polykrnl.codegen.NumpyKernel)."""

    @property
    def source(self) -> str: ...

    @property
    def exact(self) -> bool: ...

    def __call__(self, **arrays_and_params: Any) -> Any: ...


# Code generators come after transforms in the pipeline: the codegen package
# registers its NumPy backend here when it is imported (by `import polykrnl`).
NUMPY_BACKEND: list[Callable[[Schedule, bool, bool, bool], Kernel]] = []
# The PTO backend (polykrnl.tiles) registers itself the same way.
PTO_BACKEND: list[Callable[..., Any]] = []


@dataclass(frozen=True, eq=False)
class UnpermutedOrder:
    """A function's order without its krnl.permute ops, built when legality needs it."""

    function: Function

    @cached_property
    def _resolved(self) -> tuple[PolyProgram | None, str]:
        fn = self.function
        try:
            blocked = poly_program(fn, recipe=True, reorder=False)
        except UnsupportedError as e:
            return None, (
                f"the order of @{fn.name} before its krnl.permute is not defined ({e.message}); "
                "the recipe as written is the reference, so only its parallel loops are judged"
            )
        # Blocking without permuting keeps the order. When every statement is at
        # point level (same instances as without the recipe), the order of the
        # loops as written is the same order without the tile loops' integer
        # divisions, which make the dependence analysis slow.
        try:
            plain = poly_program(fn, recipe=False)
        except UnsupportedError:
            return blocked, ""
        same = len(plain.statements) == len(blocked.statements) and all(
            a.name == b.name and a.dims == b.dims and a.domain.is_equal(b.domain)
            for a, b in zip(plain.statements, blocked.statements, strict=True)
        )
        return (plain if same else blocked), ""

    @property
    def program(self) -> PolyProgram | None:
        return self._resolved[0]

    @property
    def note(self) -> str:
        return self._resolved[1]


@dataclass(frozen=True, eq=False)
class Schedule:
    """An immutable schedule of a PolyProgram; every primitive returns a new one."""

    program: PolyProgram
    nodes: tuple[SNode, ...]
    loop_info: Mapping[str, LoopInfo]
    steps: tuple[Step, ...] = ()
    # For a schedule made from a Krnl recipe with krnl.permute ops: the order
    # legality is judged against (None: `program`'s own order).
    reference: UnpermutedOrder | None = None
    # The schedule the primitives started from (None: this one).
    base: Schedule | None = None

    def __post_init__(self) -> None:
        # Values, not mutation: the tables are read-only views.
        object.__setattr__(self, "loop_info", MappingProxyType(dict(self.loop_info)))

    @property
    def reference_program(self) -> PolyProgram:
        """The program whose order legality is judged against."""
        found = self.reference.program if self.reference is not None else None
        return found or self.program

    @property
    def reference_note(self) -> str:
        """Why the recipe as written is the reference, when it had to be."""
        return self.reference.note if self.reference is not None else ""

    # -- construction
    @staticmethod
    def from_function(fn: object, recipe: bool = True) -> Schedule:
        """The schedule of `fn`: after its Krnl recipe, or in original order (recipe=False)."""
        from polykrnl.transforms.recipe import schedule_of

        return schedule_of(fn, recipe=recipe)

    # -- lookup
    @cached_property
    def statements(self) -> dict[str, Statement]:
        return {s.name: s for s in self.program.statements}

    def loop(self, name: str) -> LoopInfo:
        try:
            return self.loop_info[name]
        except KeyError:
            raise ScheduleError(
                f"no loop named '{name}' in the schedule of @{self.program.function.name}",
                hint="its loops are: " + (", ".join(self.loop_names()) or "none"),
            ) from None

    def loop_names(self) -> list[str]:
        """Loop names, outermost first, in program order."""
        return [n.name for n in _walk(self.nodes) if isinstance(n, SLoop)]

    def carrier(self, vid: str) -> LoopInfo:
        """The loop that carries value `vid` now."""
        return self._carriers[vid]

    def vid_value(self, vid: str, stmt: str) -> isl.PwAff:
        """The value `vid` has for the instances of `stmt` (a skewed loop runs shifted)."""
        info = self.carrier(vid)
        v = info.values.get(stmt)
        assert v is not None, f"{vid} has no value for {stmt}"
        for by, factor in info.skew:
            f = isl.Val.int_from_si(v.get_ctx(), factor)
            v = v.sub(self.vid_value(by, stmt).scale_val(f))
        return v

    def vid_text(self, vid: str) -> str:
        """How the value `vid` is written with the loop names (`%j`, `(%j - %t)`)."""
        info = self.carrier(vid)
        text = f"%{info.name}"
        for by, factor in info.skew:
            term = self.vid_text(by) if factor == 1 else f"{self.vid_text(by)} * {factor}"
            text += f" - {term}"
        return f"({text})" if info.skew else text

    def vid_loops(self, vid: str) -> list[str]:
        """The loops whose values the value `vid` is computed from."""
        info = self.carrier(vid)
        out = [info.name]
        for by, _ in info.skew:
            out += self.vid_loops(by)
        return out

    @cached_property
    def _carriers(self) -> dict[str, LoopInfo]:
        return {info.vid: info for info in self.loop_info.values()}

    @cached_property
    def _paths(self) -> dict[str, tuple[int, ...]]:
        """Where each loop is: child indices from the top-level nodes."""
        out: dict[str, tuple[int, ...]] = {}

        def go(nodes: Sequence[SNode], prefix: tuple[int, ...]) -> None:
            for i, n in enumerate(nodes):
                if isinstance(n, SLoop):
                    out[n.name] = (*prefix, i)
                    go(n.body, (*prefix, i))

        go(self.nodes, ())
        return out

    def _node(self, name: str) -> SLoop:
        node: SNode | None = None
        nodes: Sequence[SNode] = self.nodes
        for i in self._paths[name]:
            node = nodes[i]
            assert isinstance(node, SLoop)
            nodes = node.body
        assert isinstance(node, SLoop)
        return node

    def _parent(self, name: str) -> str | None:
        path = self._paths[name]
        if len(path) == 1:
            return None
        nodes: Sequence[SNode] = self.nodes
        node: SNode | None = None
        for i in path[:-1]:
            node = nodes[i]
            assert isinstance(node, SLoop)
            nodes = node.body
        assert isinstance(node, SLoop)
        return node.name

    def _replaced(self, name: str, f: Callable[[SLoop], SNode]) -> tuple[SNode, ...]:
        """The nodes with loop `name` replaced by f(loop); only its ancestors are rebuilt."""

        def go(nodes: tuple[SNode, ...], path: tuple[int, ...]) -> tuple[SNode, ...]:
            i = path[0]
            n = nodes[i]
            assert isinstance(n, SLoop)
            new = f(n) if len(path) == 1 else SLoop(n.name, go(n.body, path[1:]))
            return (*nodes[:i], new, *nodes[i + 1 :])

        return go(self.nodes, self._paths[name])

    # -- isl
    @cached_property
    def tree(self) -> isl.Schedule:
        """The isl schedule tree (marks, coincident parallel bands, unroll loop types)."""
        infos = self.loop_info

        def value(loop: str, stmt: Statement) -> isl.PwAff:
            v = infos[loop].values.get(stmt.name)
            assert v is not None, f"loop {loop} has no value for {stmt.name}"
            return v

        def marks(loop: str, sched: isl.Schedule) -> isl.Schedule:
            info = infos[loop]
            if not (info.parallel or info.unroll):
                return sched
            band = sched.get_root().child(0).child(0)
            if info.parallel:
                band = band.band_member_set_coincident(0, True)
            if info.unroll:
                band = band.band_member_set_ast_loop_type(0, isl.ast_loop_type.unroll)
            return band.get_schedule()

        return build_tree(_as_pnodes(self.nodes), self.statements, value, marks)

    @cached_property
    def schedule_map(self) -> isl.UnionMap:
        """Statement instances -> their position in time (lexicographic order)."""
        return self.tree.get_map()

    # -- primitives
    def block(
        self,
        loop: str,
        size: int,
        *,
        names: tuple[str, str] | None = None,
        force: bool = False,
    ) -> Schedule:
        """Strip-mine `loop` by `size`: a tile loop and a point loop directly inside it."""
        info = self.loop(loop)
        if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            raise ScheduleError(
                f"tile size {size!r} for loop '{loop}' must be a positive integer",
                hint="krnl.block takes a constant tile size >= 1",
            )
        if info.parallel or info.unroll:
            what = "parallel" if info.parallel else "unrolled"
            raise ScheduleError(
                f"loop '{loop}' is {what}: it cannot be blocked any more",
                hint="block first, then mark the tile or point loop "
                + ("parallel" if info.parallel else "unrolled")
                + " (Krnl applies krnl.parallel and krnl.unroll last)",
            )
        taken = set(self.loop_info) - {loop}
        # A default tile name is also new to the earlier steps: to_krnl() writes a
        # handle for every loop the steps made, so the names stay those handles' names.
        used = taken | {x for st in self.steps for x in (*st.loops, *st.names)}
        tile_name, point_name = names or (_fresh(f"{loop}_t", used), loop)
        tile_name, point_name = isl_name(tile_name), isl_name(point_name)
        if tile_name == point_name or tile_name in taken or point_name in taken:
            raise ScheduleError(
                f"cannot name the loops of block('{loop}') {tile_name!r} and {point_name!r}: "
                "names must be new and different",
                hint="loops in use: " + ", ".join(sorted(taken)),
            )
        stride = info.step * size
        stmts = self.statements
        tile_values: dict[str, isl.PwAff] = {}
        for s, v in info.values.items():
            lb = self._bound_value(info.lbs, stmts[s], maximum=True)
            for by, factor in info.skew:
                # A skewed loop is tiled from its unskewed origin, so that its tiles
                # line up across the loop it is skewed by (rectangular tiles).
                f = isl.Val.int_from_si(v.get_ctx(), factor)
                lb = lb.sub(self.vid_value(by, s).scale_val(f))
            tile_values[s] = _strip(v, lb, stride)
        vids = {i.vid for i in self.loop_info.values()}
        tile_vid = _fresh(tile_name, vids) if tile_name in vids else tile_name
        extent, divisor = (1, 1) if info.trivial else self.extent(info)
        if info.skew:
            point_lbs: tuple[Bound, ...] = (Bound.value_plus(tile_vid, 0), *info.lbs)
            point_ubs: tuple[Bound, ...] = (Bound.value_plus(tile_vid, stride), *info.ubs)
        elif extent is not None and 0 < extent < stride:
            point_lbs = (Bound.value_plus(tile_vid, 0),)
            point_ubs = (Bound.value_plus(tile_vid, extent),)
        elif divisor % stride == 0 and (extent is None or extent > 0):
            point_lbs = (Bound.value_plus(tile_vid, 0),)
            point_ubs = (Bound.value_plus(tile_vid, stride),)
        else:
            point_lbs = (Bound.value_plus(tile_vid, 0),)
            point_ubs = (Bound.value_plus(tile_vid, stride), *info.ubs)
        tile = LoopInfo(
            tile_name,
            "tile",
            tile_vid,
            info.origin,
            info.lbs,
            info.ubs,
            stride,
            tile_values,
            tile_size=size,
            isl_bounds=bool(info.skew),
        )
        point = replace(
            info,
            name=point_name,
            kind="point",
            lbs=point_lbs,
            ubs=point_ubs,
            tile_size=None,
        )
        infos = {n: i for n, i in self.loop_info.items() if n != loop}
        infos[tile_name] = tile
        infos[point_name] = point

        def split(node: SLoop) -> SNode:
            return SLoop(tile_name, (SLoop(point_name, node.body),))

        nodes = self._replaced(loop, split)
        step = Step("block", (loop,), size=size, names=(tile_name, point_name))
        # Strip-mining keeps the order of every instance: never illegal.
        return self._derive(nodes=nodes, loop_info=infos, steps=(*self.steps, step))

    def permute(
        self, loops: Sequence[str], krnl_map: Sequence[int], *, force: bool = False
    ) -> Schedule:
        """Krnl's scatter: the loop of `loops[k]` goes to position `krnl_map[k]` of the chain."""
        loops = list(loops)
        perm = list(krnl_map)
        n = len(loops)
        if len(perm) != n:
            raise ScheduleError(
                f"permute of {n} loop{'s' * (n != 1)} got a map of {len(perm)} "
                f"position{'s' * (len(perm) != 1)}",
                hint="give one position per loop: the loop of operand k goes to position map[k]",
            )
        if sorted(perm) != list(range(n)):
            raise ScheduleError(
                f"permute map {perm} is not a permutation of 0..{n - 1}",
                hint=f"give each position 0..{n - 1} exactly once",
            )
        for name in loops:
            self.loop(name)
        dup = [x for i, x in enumerate(loops) if x in loops[:i]]
        if dup:
            raise ScheduleError(
                f"loop '{dup[0]}' appears twice in permute",
                hint="list each loop of the chain once",
            )
        chain = self._chain(loops)
        new = [""] * n
        for k, name in enumerate(loops):
            new[perm[k]] = name
        # Recorded as Krnl writes it: operands in their current nesting order.
        step = Step("permute", tuple(chain), perm=tuple(new.index(x) for x in chain))
        return self._checked(self._reordered(chain, new, step), force, step)

    def reorder(self, order: Sequence[str], *, force: bool = False) -> Schedule:
        """Gather: `order` lists the loops of a perfectly nested chain, outermost first."""
        order = list(order)
        for name in order:
            self.loop(name)
        dup = [x for i, x in enumerate(order) if x in order[:i]]
        if dup:
            raise ScheduleError(
                f"loop '{dup[0]}' appears twice in reorder",
                hint="list each loop of the chain once",
            )
        chain = self._chain(order)
        perm = [order.index(name) for name in chain]
        step = Step("permute", tuple(chain), perm=tuple(perm))
        return self._checked(self._reordered(chain, order, step), force, step)

    def parallel(self, *loops: str, force: bool = False) -> Schedule:
        """Mark loops parallel (their band members become coincident)."""
        if not loops:
            raise ScheduleError("parallel() needs at least one loop name", hint="parallel('i')")
        infos = dict(self.loop_info)
        twice = [x for i, x in enumerate(loops) if x in loops[:i]]
        if twice:
            raise ScheduleError(
                f"loop '{twice[0]}' is listed twice in parallel()",
                hint="list each loop once",
            )
        for name in loops:
            info = self.loop(name)
            if info.parallel:
                raise ScheduleError(
                    f"loop '{name}' is already parallel", hint="mark each loop parallel once"
                )
            infos[name] = replace(info, parallel=True)
        step = Step("parallel", loops)
        new = self._derive(loop_info=infos, steps=(*self.steps, step))
        return self._checked(new, force, step)

    def skew(self, loop: str, by: str, factor: int = 1, *, force: bool = False) -> Schedule:
        """Run `loop` over `loop + factor * by` (`by` encloses it): makes bands tilable.

        The loop's bounds shift by `factor * by`; statements still see the
        original values. Krnl has no skew op: `to_krnl()` refuses skewed schedules.
        """
        info, outer = self.loop(loop), self.loop(by)
        if not isinstance(factor, int) or isinstance(factor, bool) or factor == 0:
            raise ScheduleError(
                f"skew factor {factor!r} must be a non-zero integer",
                hint="skew('j', 'i', 1) runs j over j + i",
            )
        path = self._paths[loop]
        if self._paths[by] != path[: len(self._paths[by])] or by == loop:
            raise ScheduleError(
                f"loop '{by}' does not enclose loop '{loop}': a loop is skewed by an outer one",
                hint="the current nest is:\n" + self.describe(),
            )
        if info.parallel or info.unroll:
            raise ScheduleError(
                f"loop '{loop}' is parallel or unrolled: skew it first",
                hint="Krnl applies parallel and unroll last; so does polykrnl",
            )
        f = isl.Val.int_from_si(isl.DEFAULT_CONTEXT, factor)
        values = {}
        for s_name, v in info.values.items():
            values[s_name] = v.add(self.loop_info[by].values[s_name].scale_val(f))

        def shifted(b: Bound) -> Bound:
            n = len(b.operands)
            return Bound(b.expr + AffineDimExpr(n) * factor, (*b.operands, Ref("value", outer.vid)))

        infos = dict(self.loop_info)
        infos[loop] = replace(
            info,
            lbs=tuple(shifted(b) for b in info.lbs),
            ubs=tuple(shifted(b) for b in info.ubs),
            values=values,
            skew=(*info.skew, (outer.vid, factor)),
        )
        step = Step("skew", (loop, by), size=factor)
        return self._checked(self._derive(loop_info=infos, steps=(*self.steps, step)), force, step)

    def unroll(self, loop: str, *, force: bool = False) -> Schedule:
        """Fully unroll `loop`; it needs a constant trip count (never illegal)."""
        del force  # unrolling keeps the order
        info = self.loop(loop)
        if info.unroll:
            raise ScheduleError(f"loop '{loop}' is already unrolled", hint="unroll it once")
        if info.parallel:
            raise ScheduleError(
                f"loop '{loop}' is parallel: Krnl does not unroll a parallel loop",
                hint="unroll another loop, or do not mark this one parallel",
            )
        count = 1 if info.trivial else self.trip_info(info)[0]
        if count is None:
            raise ScheduleError(
                f"loop '{loop}' has no constant trip count, so it cannot be unrolled "
                f"(for %{loop} = {self.format_bounds(info)})",
                hint="unroll a loop whose bounds differ by a constant: block by a size that "
                "divides the trip count, or unroll the point loop of a full tile",
            )
        infos = dict(self.loop_info)
        infos[loop] = replace(info, unroll=True)
        step = Step("unroll", (loop,))
        return self._derive(loop_info=infos, steps=(*self.steps, step))

    def trivialize(self, loop: str) -> Schedule:
        """Make `loop` run once (0 to 1): Krnl's point loop whose handle is never used."""
        info = self.loop(loop)
        zero = {s: _const_on(v.domain(), 0) for s, v in info.values.items()}
        infos = dict(self.loop_info)
        infos[loop] = replace(
            info, lbs=(Bound.const(0),), ubs=(Bound.const(1),), values=zero, trivial=True
        )
        return self._derive(loop_info=infos, steps=(*self.steps, Step("trivial", (loop,))))

    # -- helpers
    def _derive(self, **changes: Any) -> Schedule:
        """A new schedule from this one (the primitives' results)."""
        return replace(self, base=self.base or self, **changes)

    def _checked(self, new: Schedule, force: bool, step: Step) -> Schedule:
        """Refuse a result that breaks a dependence this schedule kept, unless forced."""
        if force or not self.legal:
            return new
        from polykrnl.transforms.legality import refuse_if_illegal, step_text

        return refuse_if_illegal(new, step_text(step))

    @cached_property
    def legal(self) -> bool:
        """Whether every dependence is kept and no parallel loop carries one."""
        from polykrnl.transforms.legality import is_legal

        return is_legal(self)

    def _chain(self, loops: Sequence[str]) -> list[str]:
        """The loops, as they are nested now; they must form a perfectly nested chain."""
        want = set(loops)
        top = [x for x in loops if self._parent(x) not in want]
        if len(top) != 1:
            raise ScheduleError(
                "loops " + ", ".join(f"'{x}'" for x in loops) + " are not one perfectly nested "
                "chain",
                hint="the current nest is:\n" + self.describe(),
            )
        node = self._node(top[0])
        chain: list[str] = []
        while True:
            chain.append(node.name)
            if len(chain) == len(loops):
                break
            inner = [b for b in node.body if isinstance(b, SLoop)]
            if len(node.body) != 1 or not inner or inner[0].name not in want:
                others = [
                    b.name for b in node.body if not (isinstance(b, SLoop) and b.name in want)
                ]
                raise ScheduleError(
                    "loops " + ", ".join(f"'{x}'" for x in loops) + " are not perfectly nested: "
                    f"loop '{node.name}' also contains " + ", ".join(others),
                    hint="permute loops whose bodies hold only the next loop of the chain "
                    "(statements between them pin the order); the current nest is:\n"
                    + self.describe(),
                )
            node = inner[0]
        return chain

    def _reordered(self, chain: list[str], new: list[str], step: Step) -> Schedule:
        pos = {name: i for i, name in enumerate(new)}
        for name in new:
            info = self.loop_info[name]
            if info.skew or info.isl_bounds:
                # A skewed band (polykrnl's extension, not Krnl): bounds that use a
                # loop now inside are shown as isl computes them.
                continue
            for b in (*info.lbs, *info.ubs):
                for r in b.operands:
                    if r.kind != "value":
                        continue
                    for carrier in self.vid_loops(r.name):
                        if carrier in pos and pos[carrier] > pos[name]:
                            raise ScheduleError(
                                f"the new order puts loop '{name}' outside loop '{carrier}', "
                                f"but the bounds of '{name}' use the value of '{carrier}'",
                                hint="a point loop must stay inside its tile loop"
                                if info.kind == "point"
                                else "as in Krnl, a loop must stay inside the loops its bounds use",
                            )
        top = self._node(chain[0])
        inner = top
        for _ in chain[1:]:
            inner = next(b for b in inner.body if isinstance(b, SLoop))
        body = inner.body
        rebuilt: SLoop = SLoop(new[-1], body)
        for name in reversed(new[:-1]):
            rebuilt = SLoop(name, (rebuilt,))
        nodes = self._replaced(chain[0], lambda _: rebuilt)
        return self._derive(nodes=nodes, steps=(*self.steps, step))

    def _bound_value(self, bounds: Sequence[Bound], stmt: Statement, maximum: bool) -> isl.PwAff:
        vals = [self.bound_pwaff(b, stmt) for b in bounds]
        out = vals[0]
        for v in vals[1:]:
            out = out.max(v) if maximum else out.min(v)
        return out

    def bound_pwaff(self, b: Bound, stmt: Statement) -> isl.PwAff:
        """The value of bound `b` for the instances of `stmt`."""
        dom = stmt.domain
        args: list[isl.PwAff] = []
        for r in b.operands:
            if r.kind == "const":
                args.append(_const_on(dom, r.value))
            elif r.kind == "param":
                args.append(_param_on(dom, r.name))
            else:
                args.append(self.vid_value(r.name, stmt.name))
        return _eval_affine(b.expr, args, dom)

    # -- trip counts (the divisibility rules of Krnl's blocking)
    def trip_info(self, info: LoopInfo) -> tuple[int | None, int]:
        """(constant trip count or None, largest known divisor of the trip count)."""
        if info.trivial:
            return 1, 1
        extent, div = self.extent(info)
        if extent is not None:
            n = max(0, -(-extent // info.step))
            return n, n
        return None, (div // info.step if div % info.step == 0 else 1)

    def extent(self, info: LoopInfo) -> tuple[int | None, int]:
        """(UB - LB if constant, else None; the largest known divisor of UB - LB).

        As MLIR's tiling decides it: single-result bounds whose difference is
        linear; a point loop `[t, t + e)` has extent e (blocking made sure the
        tile fits), one with a `min` has none.
        """
        lbs, ubs = info.lbs, info.ubs
        rel = _tile_relative(lbs, ubs) if info.kind == "point" else None
        if rel is not None:
            return (rel[1], rel[1]) if len(ubs) == 1 else (None, 1)
        lo = [_linear(b) for b in lbs]
        hi = [_linear(b) for b in ubs]
        los = [x for x in lo if x is not None]
        his = [x for x in hi if x is not None]
        if len(los) != len(lo) or len(his) != len(hi):
            return None, 1
        if len(los) != 1:
            if not any(x[0] for x in (*los, *his)):
                e = min(x[1] for x in his) - max(x[1] for x in los)
                return e, abs(e) or 1
            return None, 1
        # As MLIR's trip count of a multi-result upper bound: the minimum of the
        # per-result extents when all are constant, else the gcd of their divisors.
        low_terms, low_const = los[0]
        extents: list[int] = []
        divisors: list[int] = []
        for terms0, const in his:
            terms = dict(terms0)
            for key, c in low_terms.items():
                terms[key] = terms.get(key, 0) - c
            coefs = [c for c in terms.values() if c]
            e = const - low_const
            if coefs:
                divisors.append(math.gcd(e, *coefs))
            else:
                extents.append(e)
                divisors.append(abs(e) or 1)
        if len(extents) == len(his):
            e = min(extents)
            return e, abs(e) or 1
        return None, math.gcd(*divisors)

    # -- text
    def format_bounds(self, info: LoopInfo) -> str:
        lb = self.format_bound_list(info.lbs, "max")
        ub = self.format_bound_list(info.ubs, "min")
        return f"{lb} to {ub}" + (f" step {info.step}" if info.step != 1 else "")

    def format_bound_list(self, bounds: Sequence[Bound], combine: str) -> str:
        parts = [self.format_bound(b) for b in bounds]
        return parts[0] if len(parts) == 1 else f"{combine}({', '.join(parts)})"

    def format_bound(self, b: Bound) -> str:
        names = []
        for r in b.operands:
            if r.kind == "const":
                names.append(str(r.value))
            elif r.kind == "param":
                names.append("%" + self.program.param_display.get(r.name, r.name))
            else:
                names.append(self.vid_text(r.name))
        return format_affine(b.expr, names)

    def describe(self) -> str:
        """The loop structure as indented headers (for error messages)."""
        lines: list[str] = []

        def go(nodes: Sequence[SNode], depth: int) -> None:
            for n in nodes:
                if isinstance(n, SLoop):
                    info = self.loop_info[n.name]
                    lines.append("  " * depth + f"for %{n.name} = {self.format_bounds(info)}")
                    go(n.body, depth + 1)
                else:
                    lines.append("  " * depth + n.name)

        go(self.nodes, 1)
        return "\n".join(lines)

    def loops(self) -> LoopTree:
        """The final loop nest (str() reads like onnx-mlir's affine loops; .to_json())."""
        from polykrnl.transforms.looptree import loop_tree

        return loop_tree(self)

    def check(self) -> LegalityReport:
        """The legality report: dependences kept, parallel loops, permutable bands."""
        from polykrnl.transforms.legality import check

        return check(self)

    def to_numpy(
        self, *, vectorize: bool = True, reassociate: bool = True, parallel: bool = False
    ) -> Kernel:
        """This schedule as a NumPy kernel (built and compiled once per schedule and options).

        `reassociate=False` keeps every reduction in its order (bit-exact with the
        reference; contractions then run as sequential loops of array updates).
        `parallel=True` runs krnl.parallel loops that stay Python loops around array
        code on threads (see benchmarks/README.md for when that pays off).
        """
        key = (vectorize, reassociate, parallel)
        found = self._numpy_kernels.get(key)
        if found is None:
            if not NUMPY_BACKEND:
                import polykrnl  # noqa: F401  (the package registers its code generator)
            found = self._numpy_kernels[key] = NUMPY_BACKEND[0](self, *key)
        return found

    @cached_property
    def _numpy_kernels(self) -> dict[tuple[bool, bool, bool], Kernel]:
        return {}

    def to_pto(self, arch: str = "a2a3", *, params: Mapping[str, int] | None = None) -> Any:
        """This schedule as a PTO tile kernel (C++ for Ascend, tmp sizes, NumPy simulation):
        a PtoKernel (polykrnl.tiles.kernel). `arch` is "a2a3" or "a5"; `params` fixes problem
        sizes that static tile shapes need (a loop that is not blocked over a symbolic range).
        Raises PtoError naming the statement when no PTO pattern matches."""
        if not PTO_BACKEND:
            import polykrnl  # noqa: F401  (the package registers its code generators)
        return PTO_BACKEND[0](self, arch, params)

    def to_krnl(self) -> str:
        """Krnl MLIR text (the whole module) whose recipe reproduces this schedule."""
        from polykrnl.transforms.to_krnl import to_krnl

        return to_krnl(self)

    def trace(self, **params: int) -> list[tuple[str, dict[str, int]]]:
        """Statement instances in execution order: [("S0", {"i": 0, "j": 1}), ...].

        The keys are the statement's dimensions: the original induction
        variables (a tile loop's name for a statement placed at tile level).
        Pass every parameter: index arguments by name, dynamic sizes as
        ``**{"A.0": 64}`` (or ``A_d0=64``).
        """
        from polykrnl.transforms.trace import trace

        return trace(self, params)

    def __repr__(self) -> str:
        return f"<Schedule @{self.program.function.name}: {' > '.join(self.loop_names())}>"

    def _repr_html_(self) -> str:
        from polykrnl.transforms.legality import step_text

        steps = " \u2192 ".join(step_text(st) for st in self.steps) or "none (original order)"
        printer = isl.Printer.to_str(self.tree.get_ctx()).set_yaml_style(isl.yaml_style.BLOCK)
        tree = str(printer.print_schedule(self.tree).get_str())
        body = f'<div style="margin: 2px 0;">steps: {code(steps)}</div>' + side_by_side(
            section("loop nest", highlight(str(self.loops()), "mlir")),
            section("isl schedule tree", preformatted(tree)),
        )
        title = f"Schedule @{self.program.function.name}: {' > '.join(self.loop_names())}"
        return display_box("schedule", title, body)


# ------------------------------------------------------------------ helpers


def _fresh(base: str, taken: set[str]) -> str:
    name, n = isl_name(base), 2
    while name in taken:
        name, n = f"{isl_name(base)}_{n}", n + 1
    return name


def _walk(nodes: Sequence[SNode]) -> Iterator[SNode]:
    for n in nodes:
        yield n
        if isinstance(n, SLoop):
            yield from _walk(n.body)


def _as_pnodes(nodes: Sequence[SNode]) -> list[PNode]:
    out: list[PNode] = []
    for n in nodes:
        if isinstance(n, SLoop):
            out.append(PLoop(n.name, None, tuple(_as_pnodes(n.body))))  # type: ignore[arg-type]
        else:
            out.append(PStmt(n.name))
    return out


def _const_on(dom: isl.Set, c: int) -> isl.PwAff:
    return isl.PwAff.val_on_domain(dom, isl.Val.int_from_si(dom.get_ctx(), c))


def _param_on(dom: isl.Set, name: str) -> isl.PwAff:
    sp = isl.Space.create_from_names(dom.get_ctx(), set=[], params=[name])
    dom = dom.align_params(sp)
    pos = dom.find_dim_by_name(isl.dim_type.param, name)
    ident = dom.get_space().get_dim_id(isl.dim_type.param, pos)
    return isl.PwAff.param_on_domain_id(dom, ident)


def _strip(v: isl.PwAff, lb: isl.PwAff, stride: int) -> isl.PwAff:
    """lb + stride * floor((v - lb) / stride): the start of v's tile."""
    if stride == 1:
        return v
    ctx = v.get_ctx()
    s = isl.Val.int_from_si(ctx, stride)
    return v.sub(lb).scale_down_val(s).floor().scale_val(s).add(lb)


def _eval_affine(e: AffineExpr, args: Sequence[isl.PwAff], dom: isl.Set) -> isl.PwAff:
    """`e` with d_k replaced by args[k] (symbols follow the dims)."""
    if isinstance(e, AffineConstantExpr):
        return _const_on(dom, e.value)
    if isinstance(e, AffineDimExpr):
        return args[e.position]
    if isinstance(e, AffineSymExpr):
        raise AssertionError("bounds are stored with symbols turned into dims")
    assert isinstance(e, AffineBinaryOpExpr)
    lhs = _eval_affine(e.lhs, args, dom)
    if e.kind == AffineBinaryOpKind.Add:
        return lhs.add(_eval_affine(e.rhs, args, dom))
    if e.kind == AffineBinaryOpKind.Mul:
        if isinstance(e.rhs, AffineConstantExpr):
            return lhs.scale_val(isl.Val.int_from_si(dom.get_ctx(), e.rhs.value))
        if isinstance(e.lhs, AffineConstantExpr):
            rhs = _eval_affine(e.rhs, args, dom)
            return rhs.scale_val(isl.Val.int_from_si(dom.get_ctx(), e.lhs.value))
        raise AssertionError("non-affine bound")
    assert isinstance(e.rhs, AffineConstantExpr)
    c = isl.Val.int_from_si(dom.get_ctx(), e.rhs.value)
    if e.kind == AffineBinaryOpKind.FloorDiv:
        return lhs.scale_down_val(c).floor()
    if e.kind == AffineBinaryOpKind.CeilDiv:
        return lhs.scale_down_val(c).ceil()
    return lhs.mod_val(c)


_Linear = tuple[dict[Ref, int], int]


def _linear(b: Bound) -> _Linear | None:
    return _linear_expr(b.expr, b.operands)


def _linear_expr(e: AffineExpr, ops: Sequence[Ref]) -> _Linear | None:
    def leaf(x: AffineDimExpr | AffineSymExpr) -> tuple[dict[Any, int], int]:
        r = ops[x.position]
        return ({}, r.value) if r.kind == "const" else ({r: 1}, 0)

    return linear_form(e, leaf)


def _tile_relative(lbs: Sequence[Bound], ubs: Sequence[Bound]) -> tuple[str, int] | None:
    """(tile value id, extent) when the loop runs from a tile value to tile + extent (min ...)."""
    if len(lbs) != 1:
        return None
    lo = _linear(lbs[0])
    if lo is None or lo[1] != 0 or len(lo[0]) != 1:
        return None
    ((ref, c),) = lo[0].items()
    if ref.kind != "value" or c != 1:
        return None
    first = _linear(ubs[0])
    if first is None or first[0] != {ref: 1}:
        return None
    return ref.name, first[1]


def format_affine(e: AffineExpr, names: Sequence[str]) -> str:
    """`e` in MLIR affine syntax with dims named by `names` (`%i_t + 4`, `%N * 8`)."""
    return _fmt(e, names, 0)


def _fmt(e: AffineExpr, names: Sequence[str], prec: int) -> str:
    if isinstance(e, AffineConstantExpr):
        return str(e.value) if e.value >= 0 or prec == 0 else f"({e.value})"
    if isinstance(e, AffineDimExpr):
        return names[e.position]
    if isinstance(e, AffineSymExpr):
        return f"s{e.position}"
    assert isinstance(e, AffineBinaryOpExpr)
    if e.kind == AffineBinaryOpKind.Add:
        rhs = e.rhs
        # x + (-c) and x + y * -1 read as subtractions
        if isinstance(rhs, AffineConstantExpr) and rhs.value < 0:
            out = f"{_fmt(e.lhs, names, 1)} - {-rhs.value}"
        elif (
            isinstance(rhs, AffineBinaryOpExpr)
            and rhs.kind == AffineBinaryOpKind.Mul
            and isinstance(rhs.rhs, AffineConstantExpr)
            and rhs.rhs.value == -1
        ):
            out = f"{_fmt(e.lhs, names, 1)} - {_fmt(rhs.lhs, names, 2)}"
        else:
            out = f"{_fmt(e.lhs, names, 1)} + {_fmt(rhs, names, 1)}"
        return f"({out})" if prec > 1 else out
    op = {
        AffineBinaryOpKind.Mul: "*",
        AffineBinaryOpKind.FloorDiv: "floordiv",
        AffineBinaryOpKind.CeilDiv: "ceildiv",
        AffineBinaryOpKind.Mod: "mod",
    }[e.kind]
    out = f"{_fmt(e.lhs, names, 2)} {op} {_fmt(e.rhs, names, 3)}"
    return f"({out})" if prec > 2 else out
