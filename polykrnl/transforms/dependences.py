"""Exact dependences between statement instances, from isl's dataflow analysis.

* RAW: value-based flow dependences (``UnionAccessInfo.compute_flow``: each read
  depends on the last write of its element before it; may-writes do not kill);
  memory-based where isl's dataflow analysis fails (some tiled orders);
* WAR and WAW: memory-based (every earlier read / write of the same element).

Together they are what a new order must respect (a write moved across an
earlier write or read of the same element changes values). Reads with no
writer before them are *live-in*.

A dependence is marked ``reduction`` when both ends are instances of one
reduction statement ``X[f] = X[f] op e`` (op in +, *, max, min) on that
array, or of the update of an ``iter_args`` value (``acc = acc op e``): such a
loop can run in parallel only as a reduction.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import islpy as isl
from xdsl.dialects import affine, memref
from xdsl.ir import OpResult, SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.poly import CTX, Access, PolyProgram, Statement

DepKind = Literal["RAW", "WAR", "WAW"]

_REDUCTION_OPS = frozenset(
    {
        "arith.addf",
        "arith.addi",
        "arith.mulf",
        "arith.muli",
        "arith.maximumf",
        "arith.minimumf",
        "arith.maxnumf",
        "arith.minnumf",
        "arith.maxsi",
        "arith.minsi",
        "arith.maxui",
        "arith.minui",
    }
)
# `old - e`: the sum of the -e, reordered like any sum (not `e - old`, which
# alternates signs).
_SUBTRACTIONS = frozenset({"arith.subf", "arith.subi"})


@dataclass(frozen=True)
class Dependence:
    """Instances of `source` that must run before instances of `sink` (one array)."""

    kind: DepKind
    array: str
    source: str
    sink: str
    relation: isl.Map  # source instance -> sink instance
    reduction: bool = False

    def __str__(self) -> str:
        red = " (reduction)" if self.reduction else ""
        return f"{self.kind} on {self.array}{red}: {self.relation}"


@dataclass(frozen=True, eq=False)
class Dependences:
    # No reference to the program: the cache below is keyed by it (weakly).
    deps: tuple[Dependence, ...]
    live_in: isl.UnionMap  # reads with no write before them

    def union(self) -> isl.UnionMap:
        u = isl.UnionMap.empty(isl.Space.params_alloc(CTX, 0))
        for d in self.deps:
            u = u.union(isl.UnionMap.from_map(d.relation))
        return u


_CACHE: weakref.WeakKeyDictionary[PolyProgram, Dependences] = weakref.WeakKeyDictionary()
_NEST_CACHE: weakref.WeakKeyDictionary[PolyProgram, Dependences] = weakref.WeakKeyDictionary()


def dependences(program: PolyProgram) -> Dependences:
    """The dependences of `program` in its original order (cached per program)."""
    found = _CACHE.get(program)
    if found is None:
        everything = frozenset(s.name for s in program.statements)
        found = _CACHE[program] = _compute(program, [(everything, program.order_schedule)])
    return found


def nest_dependences(program: PolyProgram) -> Dependences:
    """The dependences between instances of one top-level node of `program`.

    A Krnl recipe reorders loops inside one nest only: a schedule that keeps the
    top-level nests in their order keeps every dependence between two of them, so
    legality needs only these. Computed nest by nest, in time linear in the number
    of nests (all pairs of a function with hundreds of nests are quadratic);
    `live_in` holds the reads with no write before them in their own nest.
    """
    found = _NEST_CACHE.get(program)
    if found is None:
        found = _NEST_CACHE[program] = _compute(program, program.nest_orders)
    return found


def kept_dependences(program: PolyProgram, nests: Sequence[frozenset[str]]) -> Dependences:
    """The dependences a schedule of `program` whose top-level nodes hold the statements
    `nests` (in that order) must keep: the nest dependences when those are the
    program's own nests in its order (no primitive moves a nest), else all."""
    own = [names for names, _ in program.nest_orders if names]
    if [n for n in nests if n] == own:
        return nest_dependences(program)
    return dependences(program)


def related(program: PolyProgram, a: str, b: str) -> bool:
    """Whether a dependence orders an instance of statement `a` against one of `b` (either
    way), in the program's order. Computed on the two statements alone: a write of
    another statement between them cannot hide a flow (more dependences, never fewer)."""
    order = program.order_schedule
    found = _compute(program, [(frozenset({a, b}), order)])
    return any({d.source, d.sink} == {a, b} for d in found.deps)


def _compute(
    program: PolyProgram, groups: Sequence[tuple[frozenset[str], isl.Schedule]]
) -> Dependences:
    """The dependences inside each group of statements, ordered by the group's tree."""
    reductions = _reductions(program)
    deps: list[Dependence] = []
    live_in: list[isl.UnionMap] = []
    rank = {name: i for i, name in enumerate(program.arrays)}
    for names, tree in groups:
        order = tree.get_map()
        # isl's dataflow analysis runs about 3x faster on the tree than on the map,
        # but crashed (a segfault, found by the differential campaign) on trees with
        # quasi-affine tile dimensions: those go as a map.
        flow_tree = None if _quasi_affine(order) else tree
        # array -> [reads, must writes, writes] of the group's statements
        by_array: dict[str, tuple[list[isl.Map], list[isl.Map], list[isl.Map]]] = {}
        for st in program.statements:
            if st.name not in names:
                continue
            for a in st.accesses:
                lists = by_array.setdefault(a.array, ([], [], []))
                if not a.write:
                    lists[0].append(a.relation)
                    continue
                if not a.may:
                    lists[1].append(a.relation)
                lists[2].append(a.relation)
        for array in sorted((x for x in by_array if x in rank), key=rank.__getitem__):
            read_maps, must_maps, write_maps = by_array[array]
            if not write_maps:
                continue
            reads, must, writes = (union_of(m) for m in (read_maps, must_maps, write_maps))
            # Only the statements that touch the array: smaller sets for isl.
            order_a = order.intersect_domain(reads.domain().union(writes.domain()))
            _array_dependences(
                deps, live_in, array, order_a, flow_tree, reads, must, writes, reductions
            )
    return Dependences(tuple(deps), union_of(live_in))


def _quasi_affine(order: isl.UnionMap) -> bool:
    """Whether some statement's time uses an integer division (a tile dimension)."""
    maps: list[isl.Map] = []
    order.foreach_map(maps.append)
    for m in maps:
        basics: list[isl.BasicMap] = []
        m.foreach_basic_map(basics.append)
        if any(b.dim(isl.dim_type.div) for b in basics):
            return True
    return False


def union_of(maps: Sequence[isl.Map | isl.UnionMap]) -> isl.UnionMap:
    """The union of `maps`, merged pairwise (one long chain of unions is quadratic)."""
    parts = [x if isinstance(x, isl.UnionMap) else isl.UnionMap.from_map(x) for x in maps]
    if not parts:
        return isl.UnionMap.empty(isl.Space.params_alloc(CTX, 0))
    while len(parts) > 1:
        merged = [a.union(b) for a, b in zip(parts[::2], parts[1::2], strict=False)]
        parts = merged + ([parts[-1]] if len(parts) % 2 else [])
    return parts[0]


def _array_dependences(
    deps: list[Dependence],
    live_in: list[isl.UnionMap],
    array: str,
    order_a: isl.UnionMap,
    flow_tree: isl.Schedule | None,
    reads: isl.UnionMap,
    must: isl.UnionMap,
    writes: isl.UnionMap,
    reductions: dict[str, dict[str, isl.Map]],
) -> None:
    before = order_a.lex_lt_union_map(order_a)  # a runs before b
    if not reads.is_empty():
        info = isl.UnionAccessInfo.from_sink(reads).set_must_source(must).set_may_source(writes)
        if flow_tree is not None:
            info = info.set_schedule(flow_tree)
        else:
            info = info.set_schedule_map(order_a)
        try:
            flow = info.compute_flow()
            raw = flow.get_may_dependence()
            no_source = flow.get_may_no_source()
        except isl.Error:
            # isl's dataflow analysis fails on some tiled orders (quasi-affine
            # schedules with several pieces). Memory-based dependences are a sound
            # superset: every earlier write of the element read, every read live-in.
            raw = writes.apply_range(reads.reverse()).intersect(before)
            no_source = reads
        _add(deps, "RAW", array, raw, reductions)
        live_in.append(no_source)
        war = reads.apply_range(writes.reverse()).intersect(before)
        _add(deps, "WAR", array, war, reductions)
    waw = writes.apply_range(writes.reverse()).intersect(before)
    _add(deps, "WAW", array, waw, reductions)


def _add(
    deps: list[Dependence],
    kind: DepKind,
    array: str,
    rel: isl.UnionMap,
    reductions: dict[str, dict[str, isl.Map]],
) -> None:
    rel = rel.coalesce()
    maps: list[isl.Map] = []
    rel.foreach_map(maps.append)
    for m in maps:
        if m.is_empty():
            continue
        src = m.get_tuple_name(isl.dim_type.in_)
        snk = m.get_tuple_name(isl.dim_type.out)
        through = reductions.get(src, {}).get(array) if src == snk else None
        if through is None:
            deps.append(Dependence(kind, array, src, snk, m, False))
            continue
        # Only the pairs linked by the update of one element are a reduction; a
        # pair also linked through another access of the array is not.
        red = m.intersect(through)
        rest = m.subtract(red)
        for part, is_red in ((red, True), (rest, False)):
            if not part.is_empty():
                deps.append(Dependence(kind, array, src, snk, part.coalesce(), is_red))


def _reductions(program: PolyProgram) -> dict[str, dict[str, isl.Map]]:
    """Statement -> array it updates as `X[f] = X[f] op e` (or an iter_args update) ->
    the pairs of its instances linked only through that update (same element)."""
    out: dict[str, dict[str, isl.Map]] = {}
    for s in program.statements:
        found = _reduction_array(program, s)
        if found is not None:
            array, update, others = found
            through = update.apply_range(update.reverse())
            for o in others:
                through = through.subtract(update.apply_range(o.reverse()))
                through = through.subtract(o.apply_range(update.reverse()))
            out.setdefault(s.name, {})[array] = through
    return out


def _reduction_array(
    program: PolyProgram, s: Statement
) -> tuple[str, isl.Map, list[isl.Map]] | None:
    """(array, update relation, the statement's other accesses of the array) when `s`
    stores `old op e` (or `old - e`) into the element `old` was read from."""
    writes = [a for a in s.accesses if a.write]
    reads = [a for a in s.accesses if not a.write]
    if len(writes) != 1:
        return None
    w = writes[0]
    same = [r for r in reads if r.array == w.array and r.relation.is_equal(w.relation)]
    if len(same) != 1:
        return None
    old = same[0]
    others = [r.relation for r in reads if r.array == w.array and r is not old]
    if others and (w.may or old.may):
        return None
    value = _stored_value(s)
    if value is None or not isinstance(value, OpResult):
        return None
    op = value.op
    if op.name not in _REDUCTION_OPS | _SUBTRACTIONS:
        return None
    # One operand is the old value of the element, the other does not read it.
    olds = [x for x in op.operands if _reads_old(x, s, old, w.array)]
    if len(olds) != 1 or (op.name in _SUBTRACTIONS and olds[0] is not op.operands[0]):
        return None
    return w.array, w.relation, others


def _stored_value(s: Statement) -> SSAValue | None:
    a = s.anchor
    if isinstance(a, k.StoreOp | memref.StoreOp | affine.StoreOp):
        return a.operands[0]
    if isinstance(a, k.YieldOp) and len(a.operands) == 1:
        return a.operands[0]
    return None


def _reads_old(v: SSAValue, s: Statement, old: Access, array: str) -> bool:
    """Whether `v` is the value of the element the statement updates."""
    if isinstance(v, OpResult) and isinstance(v.op, k.LoadOp | memref.LoadOp | affine.LoadOp):
        return v.op is old.op
    # An iter_args value read from its virtual array.
    return any(v is x and arr == array for x, arr in s.imports)
