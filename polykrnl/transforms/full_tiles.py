"""Full/partial tile separation for unrolled point loops.

`krnl.unroll` of a point loop whose last tile is partial (its upper bound is
`min(UB, t + size)`) has no constant trip count. isl still unrolls such a loop,
guarding every copy but the first with `if UB >= t + k`; those guards sit
inside every loop between the tile loop and the point loop. Isolating the full
tiles on the tile loop's band (isl's `isolate` AST build option, as Polly and
PPCG separate full tiles) makes isl write the tile loop twice: over the full
tiles, where the AST build knows `t + size <= UB` and the point loop has a
constant trip count (no guards), then over the partial tile. The instances and
their order are unchanged: this is code layout only.
"""

from __future__ import annotations

from collections.abc import Mapping

import islpy as isl


def isolate_full_tiles(tree: isl.Schedule, points: Mapping[str, tuple[str, int]]) -> isl.Schedule:
    """`tree` with the full tiles of each tile loop in `points` isolated.

    `points` maps a tile loop's name to (its unrolled point loop's name, the
    offset of the point loop's last value in a full tile: tile step - point
    step). Loops are found through the marks that name their bands.
    """
    if not points:
        return tree
    point_names = {p: t for t, (p, _) in points.items()}
    full: dict[str, isl.Set] = {}

    def collect(node: isl.ScheduleNode) -> bool:
        if node.get_type() == isl.schedule_node_type.mark:
            name = node.mark_get_id().get_name()
            tile = point_names.get(name)
            if tile is not None:
                part = _full_prefixes(node.child(0), tile, points[tile][1], tree)
                if part is not None:
                    full[tile] = full[tile].union(part) if tile in full else part
        return True

    tree.get_root().foreach_descendant_top_down(collect)
    if not full:
        return tree

    def isolate(node: isl.ScheduleNode) -> isl.ScheduleNode:
        if node.get_type() != isl.schedule_node_type.mark:
            return node
        part = full.get(node.mark_get_id().get_name())
        band = node.child(0)
        if part is None or band.get_type() != isl.schedule_node_type.band:
            return node
        outer = band.get_schedule_depth()
        rel = isl.Map.from_domain(part).move_dims(isl.dim_type.out, 0, isl.dim_type.in_, outer, 1)
        option = rel.wrap().set_tuple_name("isolate")
        return band.band_set_ast_build_options(isl.UnionSet.from_set(option)).parent()

    return tree.get_root().map_descendant_bottom_up(isolate).get_schedule()


def _full_prefixes(
    point_band: isl.ScheduleNode, tile: str, last: int, tree: isl.Schedule
) -> isl.Set | None:
    """The values of (outer loops, tile loop) whose tile runs its point loop to `last`.

    None when the tile loop is not found above the point loop's band.
    """
    depth = _tile_depth(point_band, tile)
    if depth is None:
        return None
    # Every schedule dim down to and including the point loop, over the instances.
    prefix = point_band.get_prefix_schedule_union_map()
    sched = prefix.flat_range_product(point_band.band_get_partial_schedule_union_map())
    reached = sched.intersect_domain(tree.get_domain()).range()
    if reached.is_empty():
        return None
    values = isl.Set.from_union_set(reached)
    n = values.dim(isl.dim_type.set)
    # Keep (outer, tile) and the point value; the loops between are existential.
    values = values.project_out(isl.dim_type.set, depth + 1, n - depth - 2)
    dims = ", ".join(f"p{i}" for i in range(depth + 1))
    # (outer, tile) whose image (outer, tile, tile + last) is reached.
    shift = isl.Map(f"{{ [{dims}] -> [{dims}, p{depth} + {last}] }}", context=values.get_ctx())
    return values.apply(shift.reverse()).coalesce()


def _tile_depth(node: isl.ScheduleNode, tile: str) -> int | None:
    """The schedule dim of the band under the mark `tile`, an ancestor of `node`."""
    while node.has_parent():
        node = node.parent()
        if node.get_type() == isl.schedule_node_type.mark and node.mark_get_id().get_name() == tile:
            return node.child(0).get_schedule_depth()
    return None
