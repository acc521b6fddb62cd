"""The schedule value: an immutable loop tree over a PolyProgram's statements.

A :class:`Schedule` holds the statements of a :class:`~polykrnl.poly.PolyProgram`,
the loop structure (which loop encloses which, in which order), and for every
loop its Krnl-style bounds and its value for every statement instance (the
band's partial schedule). ``schedule.tree`` is the isl schedule tree: one
single-member band per loop under a mark node named after the loop, sequence
nodes for textual order, coincident bands for parallel loops and the `unroll`
AST loop type for unrolled loops.

Loop names: an unblocked loop is named by its induction variable (``i``);
``block("i", 4)`` names the tile loop ``i_t`` and the point loop keeps ``i``
(it carries the original induction variable); ``names=("ib", "il")`` chooses
them. From Krnl text the names of the handles are used (``%ib, %il =
krnl.block ...``), else the same defaults. A name already in use gets
``_2``, ``_3``, ...

This module holds the value and its queries only; the primitives that make new
schedules are in :mod:`polykrnl.transforms.primitives`, and the user-facing
class with methods for all of it is ``polykrnl.Schedule``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType
from typing import Any, Literal, Self, TypeVar, Union

import islpy as isl

from polykrnl.dialect.semi_affine import fold_operands
from polykrnl.errors import ScheduleError, SourceLocation, UnsupportedError
from polykrnl.ir import Function
from polykrnl.poly import (
    CTX,
    PLoop,
    PNode,
    PolyProgram,
    PStmt,
    Statement,
    build_tree,
    poly_program,
    sequence_of,
)
from polykrnl.transforms.bounds import (
    Bound,
    const_on,
    eval_affine,
    format_affine,
    linear,
    param_on,
    tile_relative,
)
from polykrnl.transforms.full_tiles import isolate_full_tiles

LoopKind = Literal["loop", "tile", "point"]


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
    # Parallel in parts (`parallel_parts`): the loop runs before its split point, at it,
    # after it, the first and last parts in parallel. Not `parallel`: every reader of
    # that flag (krnl.parallel, isl's coincident bands, the other targets) would run the
    # whole loop in parallel, and the loop carries dependences through its split point.
    parts: bool = False
    unroll: bool = False
    # After skew: this loop runs over vid's value + sum(factor * value of v), in the
    # original values (a skew by a loop that is skewed itself adds its terms too).
    skew: tuple[tuple[str, int], ...] = ()
    # The tile loop of a skewed loop: its range is shown as isl computes it.
    isl_bounds: bool = False
    # After fuse: the values of other loops this loop also carries, each with its shift
    # (that value is this loop's unskewed value minus the shift, for its statements).
    fused: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))


def refuse_marked(info: LoopInfo, op: str) -> None:
    """Refuse `op` (a primitive's name) on a loop already marked parallel, parallel in
    parts or unrolled: the marks come last, in Krnl and in polykrnl."""
    if info.parallel or info.parts or info.unroll:
        raise ScheduleError(
            f"loop '{info.name}' is parallel or unrolled: {op} it first",
            hint="Krnl applies parallel and unroll last; so does polykrnl",
        )


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

    op: Literal[
        "block",
        "permute",
        "parallel",
        "parts",
        "unroll",
        "trivial",
        "skew",
        "fuse",
        "surround",
        "distribute",
    ]
    loops: tuple[str, ...]
    size: int = 0  # block: the tile size; skew: the factor; fuse: the shift; surround: value
    perm: tuple[int, ...] = ()
    names: tuple[str, ...] = ()
    # The Krnl recipe op it comes from, if any.
    location: SourceLocation | None = None
    # Applied with force=True over a legality refusal.
    forced: bool = False


def step_call(st: Step) -> str:
    """The call that replays a step exactly (tile names and force included)."""
    text = step_text(st)
    extra = []
    if st.op in ("block", "distribute") and st.names:
        extra.append(f"names={st.names!r}")
    if st.forced:
        extra.append("force=True")
    return text[:-1] + "".join(f", {x}" for x in extra) + ")" if extra else text


def step_text(st: Step) -> str:
    """How a step reads as the Python call that made it."""
    if st.op == "block":
        return f"block({st.loops[0]!r}, {st.size})"
    if st.op == "permute":
        return f"permute({list(st.loops)}, {list(st.perm)})"
    if st.op == "skew":
        return f"skew({st.loops[0]!r}, {st.loops[1]!r}, {st.size})"
    if st.op == "fuse":
        return f"fuse({st.loops[0]!r}, {st.loops[1]!r}, {st.size})"
    if st.op == "surround":
        return f"surround({st.loops[0]!r}, {st.loops[1]!r}, {st.size})"
    if st.op == "trivial":
        return f"trivialize({st.loops[0]!r})"
    if st.op == "parts":
        return f"parallel_parts({st.loops[0]!r})"
    if st.op == "distribute":
        return f"distribute({st.loops[0]!r})"
    return f"{st.op}({', '.join(repr(x) for x in st.loops)})"


# ------------------------------------------------------------------ schedule


@dataclass(frozen=True, eq=False)
class UnpermutedOrder:
    """A function's order without its krnl.permute ops, built when legality needs it."""

    function: Function
    # The function's program with its whole recipe (the one the schedule orders).
    recipe_program: PolyProgram | None = None

    @cached_property
    def _resolved(self) -> tuple[PolyProgram | None, str]:
        fn = self.function
        # Blocking without permuting keeps the order. When every statement is at
        # point level (same instances as without the recipe), the order of the
        # loops as written is the same order without the tile loops' integer
        # divisions, which make the dependence analysis slow.
        recipe = self.recipe_program
        # The recipe's program checked the function's recipe: its nest is not built again.
        checked = recipe.nest if recipe is not None else None
        try:
            plain: PolyProgram | None = poly_program(fn, recipe=False, checked=checked)
        except UnsupportedError:
            plain = None
        if plain is not None and recipe is not None and _same_statements(plain, recipe):
            return plain, ""  # no need to build the blocked, unpermuted program
        try:
            blocked = poly_program(fn, recipe=True, reorder=False, checked=checked)
        except UnsupportedError as e:
            return None, (
                f"the order of @{fn.name} before its krnl.permute is not defined ({e.message}); "
                "the recipe as written is the reference, so only its parallel loops are judged"
            )
        if plain is not None and _same_statements(plain, blocked):
            return plain, ""
        return blocked, ""

    @property
    def program(self) -> PolyProgram | None:
        return self._resolved[0]

    @property
    def note(self) -> str:
        return self._resolved[1]


@dataclass(frozen=True, eq=False)
class Schedule:
    """An immutable schedule of a PolyProgram: the value (polykrnl.Schedule adds methods)."""

    program: PolyProgram
    nodes: tuple[SNode, ...]
    loop_info: Mapping[str, LoopInfo]
    steps: tuple[Step, ...] = ()
    # For a schedule made from a Krnl recipe with krnl.permute ops: the order
    # legality is judged against (None: `program`'s own order).
    reference: UnpermutedOrder | None = None
    # The schedule the primitives started from (None: this one).
    base: Schedule | None = None
    # How many of `steps` the function's Krnl recipe made (the others were applied
    # after it; a replay starts from the recipe's schedule); None: made without it.
    recipe_steps: int | None = None

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

    # -- lookup
    @property
    def statements(self) -> Mapping[str, Statement]:
        return self.program.statement_map

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

    def carrier(self, vid: str, stmt: str | None = None) -> LoopInfo:
        """The loop that carries value `vid` now (for the instances of `stmt`: the copies
        of a distributed loop carry one value, each for its own statements)."""
        info = self._carriers[vid]
        if stmt is None or stmt in info.values:
            return info
        copies = (i for i in self.loop_info.values() if stmt in i.values)
        return next((i for i in copies if vid in (i.vid, *(v for v, _ in i.fused))), info)

    def vid_value(self, vid: str, stmt: str) -> isl.PwAff:
        """The value `vid` has for the instances of `stmt` (a skewed loop runs shifted)."""
        info = self.carrier(vid, stmt)
        v = info.values.get(stmt)
        assert v is not None, f"{vid} has no value for {stmt}"
        for by, factor in info.skew:
            f = isl.Val.int_from_si(v.get_ctx(), factor)
            v = v.sub(self.vid_value(by, stmt).scale_val(f))
        shift = dict(info.fused).get(vid, 0)
        if shift:
            v = v.add_constant_val(isl.Val.int_from_si(v.get_ctx(), -shift))
        return v

    def vid_text(self, vid: str, stmt: str | None = None) -> str:
        """How the value `vid` is written with the loop names (`%j`, `(%j - %t)`), for
        the instances of `stmt` when given."""
        info = self.carrier(vid, stmt)
        text = f"%{info.name}"
        for by, factor in info.skew:
            by_text = self.vid_text(by, stmt)
            term = by_text if abs(factor) == 1 else f"{by_text} * {abs(factor)}"
            text += f" - {term}" if factor > 0 else f" + {term}"
        shift = dict(info.fused).get(vid, 0)
        if shift:
            text += f" - {shift}" if shift > 0 else f" + {-shift}"
        return f"({text})" if info.skew or shift else text

    def vid_loops(self, vid: str) -> list[str]:
        """The loops whose values the value `vid` is computed from."""
        info = self.carrier(vid)
        out = [info.name]
        for by, _ in info.skew:
            out += self.vid_loops(by)
        return out

    def tile_of(self, loop: str) -> str | None:
        """The tile loop that point loop `loop` was strip-mined from (None: not a point
        loop): the loop whose value is the point loop's lower bound."""
        info = self.loop_info.get(loop)
        if info is None or info.kind != "point" or not info.lbs:
            return None
        return self._tile_starts.get(info.lbs[0])

    @cached_property
    def _tile_starts(self) -> dict[Bound, str]:
        """The lower bound of a tile's point loop (the tile loop's value) -> the tile loop.
        A tile loop blocked again is the point loop of its own tile loop, but it still
        carries its value, so every loop counts."""
        out: dict[Bound, str] = {}
        for tile in self.loop_info.values():
            out.setdefault(Bound.value_plus(tile.vid, 0), tile.name)
        return out

    def carries(self, vid: str) -> bool:
        """Whether a loop carries the value `vid` now."""
        return vid in self._carriers

    @cached_property
    def _carriers(self) -> dict[str, LoopInfo]:
        # The first of the copies of a distributed loop stands for them (`carrier`).
        out: dict[str, LoopInfo] = {}
        for info in self.loop_info.values():
            out.setdefault(info.vid, info)
        fused: dict[str, LoopInfo] = {}
        for info in self.loop_info.values():
            fused.update({vid: info for vid, _ in info.fused if vid not in fused})
        return {**out, **fused}

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

    def node(self, name: str) -> SLoop:
        """The loop named `name` in the tree."""
        node: SNode | None = None
        nodes: Sequence[SNode] = self.nodes
        for i in self._paths[name]:
            node = nodes[i]
            assert isinstance(node, SLoop)
            nodes = node.body
        assert isinstance(node, SLoop)
        return node

    def parent(self, name: str) -> str | None:
        """The loop right around loop `name` (None at the top)."""
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

    def encloses(self, outer: str, inner: str) -> bool:
        """Whether loop `outer` is around loop `inner` (and is not it)."""
        path = self._paths[outer]
        return outer != inner and self._paths[inner][: len(path)] == path

    def loop_paths(self) -> Mapping[str, tuple[str, ...]]:
        """Loop -> the loops from the outermost down to it, in program order."""
        return MappingProxyType(self._loop_paths)

    @cached_property
    def _loop_paths(self) -> dict[str, tuple[str, ...]]:
        out: dict[str, tuple[str, ...]] = {}

        def go(nodes: Sequence[SNode], prefix: tuple[str, ...]) -> None:
            for n in nodes:
                if isinstance(n, SLoop):
                    out[n.name] = (*prefix, n.name)
                    go(n.body, (*prefix, n.name))

        go(self.nodes, ())
        return out

    def statements_below(self, name: str) -> list[str]:
        """The statements inside loop `name`, in program order."""
        return [s for n in self.node(name).body for s in _statements_in(n)]

    def prefix_map(self, path: Sequence[str], stmts: Sequence[str]) -> isl.UnionMap:
        """Instances of `stmts` (inside the last loop of `path`) -> the path's loop values."""
        u: isl.UnionMap | None = None
        for s in stmts:
            um = self._statement_prefix_map(tuple(path), s)
            u = um if u is None else u.union(um)
        assert u is not None
        return u

    def _statement_prefix_map(self, path: tuple[str, ...], stmt: str) -> isl.UnionMap:
        # Legality asks for the same (loops, statement) once per dependence.
        key = (path, stmt)
        found = self._prefix_maps.get(key)
        if found is None:
            vals = [self.loop_info[x].values[stmt] for x in path]
            m = isl.Map.from_pw_aff(vals[0])
            for v in vals[1:]:
                m = m.flat_range_product(isl.Map.from_pw_aff(v))
            m = m.set_tuple_name(isl.dim_type.in_, stmt)
            found = self._prefix_maps[key] = isl.UnionMap.from_map(m)
        return found

    @cached_property
    def _prefix_maps(self) -> dict[tuple[tuple[str, ...], str], isl.UnionMap]:
        return {}

    # -- new values (what the primitives build with)
    def derive(self, **changes: Any) -> Self:
        """A new schedule from this one, which becomes its base if it has none."""
        return replace(self, base=self.base or self, **changes)

    def replaced_nodes(self, name: str, f: Callable[[SLoop], SNode]) -> tuple[SNode, ...]:
        """The nodes with loop `name` replaced by f(loop); only its ancestors are rebuilt."""

        def go(nodes: tuple[SNode, ...], path: tuple[int, ...]) -> tuple[SNode, ...]:
            i = path[0]
            n = nodes[i]
            assert isinstance(n, SLoop)
            new = f(n) if len(path) == 1 else SLoop(n.name, go(n.body, path[1:]))
            return (*nodes[:i], new, *nodes[i + 1 :])

        return go(self.nodes, self._paths[name])

    @cached_property
    def nest_statements(self) -> tuple[frozenset[str], ...]:
        """The statements of each top-level node, in order."""
        return tuple(frozenset(_statements_in(n)) for n in self.nodes)

    # -- isl
    @cached_property
    def tree(self) -> isl.Schedule:
        """The isl schedule tree (marks, coincident parallel bands, unroll loop types)."""
        if not self.nest_trees:
            return build_tree([], self.statements, _no_value)  # the empty schedule
        return sequence_of(list(self.nest_trees))

    @cached_property
    def nest_trees(self) -> tuple[isl.Schedule, ...]:
        """The isl schedule tree of each top-level node that holds a statement, in order
        (`tree` is their sequence). Code is generated nest by nest: isl's AST of one
        tree over hundreds of nests takes time quadratic in their number."""
        return self._nest_trees({})

    @cached_property
    def indexed_nest_trees(self) -> tuple[tuple[isl.Schedule, ...], Mapping[str, int]]:
        """`nest_trees` with each tile loop whose value is always a multiple of its step
        (tiles from 0) valued by its tile's index, value / step, and those loops -> step.

        The same order: isl builds the AST of these trees 1.2-2x faster (no integer
        division to resolve for the tile starts); code generation reads the loops back
        as tile starts (codegen/tile_starts.py). Tiles of a skewed loop, and tile loops
        whose full tiles are isolated for an unrolled point loop, keep their starts.
        """
        points = self.unrolled_points
        steps: dict[str, int] = {}
        indices: dict[str, dict[str, isl.PwAff]] = {}
        for name, info in self.loop_info.items():
            if info.kind != "tile" or info.step <= 1 or info.isl_bounds or name in points:
                continue
            step = isl.Val.int_from_si(CTX, info.step)
            index = {s: v.scale_down_val(step).floor() for s, v in info.values.items()}
            # Tiles from 0 only: there the start is step * index, for every statement.
            if all(index[s].scale_val(step).is_equal(v) for s, v in info.values.items()):
                steps[name], indices[name] = info.step, index
        return self._nest_trees(indices), MappingProxyType(steps)

    def _nest_trees(
        self, indexed: Mapping[str, Mapping[str, isl.PwAff]]
    ) -> tuple[isl.Schedule, ...]:
        """The nest trees, with the values of the loops in `indexed` taken from it."""
        infos = self.loop_info

        def value(loop: str, stmt: Statement) -> isl.PwAff:
            v = indexed.get(loop, infos[loop].values).get(stmt.name)
            assert v is not None, f"loop {loop} has no value for {stmt.name}"
            return v

        def marks(loop: str, sched: isl.Schedule) -> isl.Schedule:
            info = infos[loop]
            if not (info.parallel or info.unroll or info.fused):
                return sched
            band = sched.get_root().child(0).child(0)
            if info.parallel:
                band = band.band_member_set_coincident(0, True)
            if info.unroll:
                band = band.band_member_set_ast_loop_type(0, isl.ast_loop_type.unroll)
            elif info.fused:
                # The statements of a fused loop start and end at different values: its
                # range is split where the set of statements changes, so that the loops
                # inside hold no test of it (a guard in the innermost loop keeps LLVM from
                # vectorizing it).
                band = band.band_member_set_ast_loop_type(0, isl.ast_loop_type.separate)
            return band.get_schedule()

        points = self.unrolled_points
        out: list[isl.Schedule] = []
        for node in self.nodes:
            if next(_statements_in(node), None) is None:
                continue
            tree = build_tree(_as_pnodes((node,)), self.statements, value, marks)
            out.append(isolate_full_tiles(tree, points))
        return tuple(out)

    @property
    def unrolled_points(self) -> dict[str, tuple[str, int]]:
        """Tile loop -> (its unrolled point loop with a partial last tile, the offset
        of that loop's last value in a full tile)."""
        out: dict[str, tuple[str, int]] = {}
        for name, info in self.loop_info.items():
            tile = self.tile_of(name) if info.unroll else None
            if tile is not None and self.trip_info(info)[0] is None:
                out[tile] = (name, self.loop_info[tile].step - info.step)
        return out

    @cached_property
    def schedule_map(self) -> isl.UnionMap:
        """Statement instances -> their position in time (lexicographic order)."""
        return self.tree.get_map()

    # -- structure
    def chain(self, loops: Sequence[str]) -> list[str]:
        """The loops, as they are nested now; they must form a perfectly nested chain."""
        want = set(loops)
        top = [x for x in loops if self.parent(x) not in want]
        if len(top) != 1:
            raise ScheduleError(
                "loops " + ", ".join(f"'{x}'" for x in loops) + " are not one perfectly nested "
                "chain",
                hint="the current nest is:\n" + self.describe(),
            )
        node = self.node(top[0])
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

    # -- bounds
    def bound_value(self, bounds: Sequence[Bound], stmt: Statement, maximum: bool) -> isl.PwAff:
        """The max (or min) of `bounds` for the instances of `stmt`."""
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
                args.append(const_on(dom, r.value))
            elif r.kind == "param":
                args.append(param_on(dom, r.name))
            else:
                args.append(self.vid_value(r.name, stmt.name))
        # A semi-affine bound is affine once its constant operands are folded in.
        known = [r.value if r.kind == "const" else None for r in b.operands]
        return eval_affine(fold_operands(b.expr, known, len(known)), args, dom)

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

    @staticmethod
    def extent(info: LoopInfo) -> tuple[int | None, int]:
        """(UB - LB if constant, else None; the largest known divisor of UB - LB).

        As MLIR's tiling decides it: single-result bounds whose difference is
        linear; a point loop `[t, t + e)` has extent e (blocking made sure the
        tile fits), one with a `min` has none.
        """
        lbs, ubs = info.lbs, info.ubs
        rel = tile_relative(lbs, ubs) if info.kind == "point" else None
        if rel is not None:
            return (rel[1], rel[1]) if len(ubs) == 1 else (None, 1)
        lo = [linear(b) for b in lbs]
        hi = [linear(b) for b in ubs]
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

    def __repr__(self) -> str:
        return f"<Schedule @{self.program.function.name}: {' > '.join(self.loop_names())}>"


# What a primitive returns: the kind of schedule it was given (polykrnl.Schedule
# keeps its methods through every step).
ScheduleT = TypeVar("ScheduleT", bound=Schedule)


# ------------------------------------------------------------------ helpers


def _walk(nodes: Sequence[SNode]) -> Iterator[SNode]:
    for n in nodes:
        yield n
        if isinstance(n, SLoop):
            yield from _walk(n.body)


def _no_value(loop: str, stmt: Statement) -> isl.PwAff:
    raise AssertionError(f"no loop {loop} around {stmt.name}: the tree has no statement")


def _as_pnodes(nodes: Sequence[SNode]) -> list[PNode]:
    out: list[PNode] = []
    for n in nodes:
        if isinstance(n, SLoop):
            out.append(PLoop(n.name, None, tuple(_as_pnodes(n.body))))  # type: ignore[arg-type]
        else:
            out.append(PStmt(n.name))
    return out


def _statements_in(node: SNode) -> Iterator[str]:
    """The statements of `node` (itself, or those inside the loop), in program order."""
    if isinstance(node, SStmt):
        yield node.name
        return
    for b in node.body:
        yield from _statements_in(b)


def _same_statements(a: PolyProgram, b: PolyProgram) -> bool:
    """Whether two programs of one function have the same statements and instances."""
    return len(a.statements) == len(b.statements) and all(
        x.name == y.name and x.dims == y.dims and x.domain.is_equal(y.domain)
        for x, y in zip(a.statements, b.statements, strict=True)
    )
