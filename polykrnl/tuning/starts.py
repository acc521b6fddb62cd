"""The candidates a search measures first from a start (`pk.tune(start=...)`): the
start itself and, with threads, its threaded variants.

A one-thread winner is a good threaded start, but its parallel loops are where one thread
wanted them: inner ones (a launch of the threads per outer iteration), narrow tiles (short
runs of each row per thread), few large tiles (threads unevenly loaded), tiles across time
with no parallel loop but the innermost. Each variant here changes one of these: parallel
loops marked where they are, hoisted outermost (`hoist_parallel`), in one strip per thread
with the rows summed into the strip a few at a time (`strip_parallel_tiles`; a parallel
tile's rows summed along its innermost loop, a few at a time too), in smaller
tiles (`finer_parallel_tiles`), tiles in wavefronts (`tile_wavefront`, `finer_wavefronts`).
Each is a `Candidate` like any other: legality decides, the search measures.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from polykrnl.errors import ScheduleError
from polykrnl.tuning.space import (
    Candidate,
    Move,
    Space,
    applied,
    chain_of,
    loops_at,
    nest_depth,
    outermost_parallel,
    outermost_parts,
    strip_size,
    wavefront_moves,
)

if TYPE_CHECKING:
    from polykrnl.pipeline import Schedule

#: the block size of a parallel loop hoisted outermost (`hoist_parallel`): rows of a
#: matrix-vector product in eight tiles at 2000 (a few per thread), each tile's rows long
HOIST_BLOCK = 256
#: the smallest size `finer_wavefronts` gives a tile loop of a wavefront
WAVEFRONT_MIN_BLOCK = 4
#: `finer_parallel_tiles`: the divisor of a parallel tile loop's block size, and the
#: smallest size it gives one
PARALLEL_DIVISOR = 4
PARALLEL_MIN_BLOCK = 16

#: rows of a sum into a parallel strip unrolled per step (`_jammed`)
JAM_ROWS = 8
#: the label of a result's runner-up and its variants, in place of "start"
RUNNER_UP = "runner-up"


def start_candidates(
    start: Sequence[Any], natural: Schedule, recipe: Schedule | None, space: Space
) -> list[Candidate]:
    """The candidates to measure first from `start` (candidates, or results: their
    `TuneResult.starts`, the winner and a runner-up as close as makes no difference),
    each followed, when `space` has threads and it has no parallel loop yet, by its
    threaded variants (`_threaded_starts`; a runner-up's labelled "runner-up, ...")."""
    out: list[Candidate] = []
    for given in start:
        found = given.starts() if callable(getattr(given, "starts", None)) else [given]
        for k, c in enumerate(found):
            if not isinstance(c, Candidate):
                raise ScheduleError(
                    f"a start of pk.tune is a Candidate or a TuneResult, not {type(c).__name__}"
                )
            name = "start" if k == 0 else RUNNER_UP
            made = _variants(Candidate(c.moves, c.recipe, "start"), natural, recipe, space)
            out += [Candidate(v.moves, v.recipe, v.label.replace("start", name, 1)) for v in made]
    return out


def _variants(
    c: Candidate, natural: Schedule, recipe: Schedule | None, space: Space
) -> list[Candidate]:
    """`c`, then its threaded variants when `space` has threads and `c` no parallel loop."""
    if not space.threads or any(m.op == "parallel_at" for m in c.moves):
        return [c]
    try:
        s = c.schedule(natural, recipe)
    except ScheduleError:
        return [c]  # the search will say why (pruned or refused)
    return [c, *_threaded_starts(c, s, space)]


def _threaded_starts(c: Candidate, s: Schedule, space: Space) -> list[Candidate]:
    """`c` (whose schedule is `s`) with each nest's outermost loops that may run in
    parallel made parallel; with a parallel loop below the outermost hoisted outside
    (`hoist_parallel`), and then in one strip per thread (`strip_parallel_tiles`);
    with its tiles in wavefronts where no loop above the innermost
    may run in parallel (`tile_wavefront`), and for a single nest, with smaller tiles in
    wavefronts too (`finer_wavefronts`); with smaller parallel tiles
    (`finer_parallel_tiles`). Only the variants that change something; with
    `space.krnl_only`, none that Krnl cannot write (wavefronts skew, parts)."""
    krnl_only = space.krnl_only
    kinds = {"start, parallel": list(c.moves), "start, parallel outermost": list(c.moves)}
    kinds["start, tile wavefronts"] = list(c.moves)
    finer: list[Candidate] = []
    # the candidate's own nests (blocking made them deeper than as written)
    top = [n for n in s.nodes if hasattr(n, "body")]
    for nest, depth in enumerate(nest_depth(n) for n in top):
        found = outermost_parallel(s, nest, depth)
        if not krnl_only and (found is None or found[0].size > 0):
            # the tiles in wavefronts: a stencil tiled across time has no parallel
            # loop but its innermost ones (a launch of the threads per row)
            fronts = tile_wavefront(s, nest)
            kinds["start, tile wavefronts"] += fronts or []
            if fronts and len(top) == 1:
                variants = (finer_wavefronts(c, s, nest, d) for d in (2, 4))
                finer += [v for v in variants if v is not None]
        if found is None:
            split = [] if krnl_only else [Move("parts", (x,)) for x in outermost_parts(s, nest)]
            kinds["start, parallel"] += split
            kinds["start, parallel outermost"] += split
        else:
            kinds["start, parallel"].append(found[0])
            hoisted = hoist_parallel(s, nest, found[0].size) if found[0].size > 0 else None
            kinds["start, parallel outermost"] += hoisted or [found[0]]
    out = [
        Candidate(tuple(moves), c.recipe, label)
        for label, moves in kinds.items()
        if len(moves) > len(c.moves)
        and (label != "start, parallel outermost" or moves != kinds["start, parallel"])
    ]
    balanced = finer_parallel_tiles(c, s, kinds["start, parallel"])
    strips = strip_parallel_tiles(c, s, kinds["start, parallel outermost"], space)
    return out + ([balanced] if balanced is not None else []) + strips + finer


def finer_parallel_tiles(c: Candidate, s: Schedule, moves: Sequence[Move]) -> Candidate | None:
    """`moves` (`c`'s, whose schedule is `s`, then parallel ones) with the block size of
    each tile loop they make parallel divided by `PARALLEL_DIVISOR` (down to
    `PARALLEL_MIN_BLOCK`): a few large tiles share badly between threads (two-mm at
    LARGE, 800 rows in tiles of 256: 4 tiles, 512 rows on one thread and 288 on the
    other, 1.56x on two threads at best). None when no such loop's size changes."""
    tiles: set[str] = set()
    for m in moves[len(c.moves) :]:
        if m.op == "parallel_at":
            at = loops_at(s.nodes, int(m.loops[0]), m.size)
            tiles.update(x for x in at if s.loop(x).kind == "tile")

    def smaller(size: int) -> int:
        return size // PARALLEL_DIVISOR if size // PARALLEL_DIVISOR >= PARALLEL_MIN_BLOCK else size

    out = _resized_blocks(moves, tiles, lambda _, n: smaller(n))
    if out == tuple(moves):
        return None
    return Candidate(out, c.recipe, f"start, parallel, tiles / {PARALLEL_DIVISOR}")


def strip_parallel_tiles(
    c: Candidate, s: Schedule, moves: Sequence[Move], space: Space
) -> list[Candidate]:
    """`moves` (`c`'s, whose schedule is `s`, then parallel ones) with each outermost
    parallel tile loop whose point loop is its nest's innermost loop (not unrolled: the
    contiguous one a vector runs along) blocked by `strip_size`: one strip per thread.
    A tile loop hoisted out of a one-thread schedule keeps that schedule's narrow tiles,
    each thread then reads short runs of each row (gemver's x = A^T y from one thread's
    tiles of 32 columns: 1.14x on two threads; in two strips of 1000: 1.6x). Then the
    same (or `moves` themselves, without strips) with rows jammed (`_jammed`). Empty
    when neither changes anything."""
    after = applied(s, moves[len(c.moves) :])
    if after is None:
        return []
    tiles: dict[str, int] = {}
    for nest in range(len([n for n in after.nodes if hasattr(n, "body")])):
        chain = chain_of(after, nest)
        inner = [x for x in chain if not after.loop(x).unroll]
        if not chain or not inner:
            continue
        tile = after.loop(chain[0])
        point = f"{inner[-1]}_t" == tile.name
        if tile.parallel and tile.kind == "tile" and point and _contiguous(after, inner[-1]):
            extent = after.extent(tile)[0]
            size = strip_size(extent if extent is not None else space.largest, space.thread_count)
            if size is not None:
                tiles[tile.name] = size
    out = _resized_blocks(moves, tiles, lambda tile, _: tiles[tile])
    found = []
    if out != tuple(moves):
        found.append(Candidate(out, c.recipe, "start, parallel outermost, a strip per thread"))
    # without a strip, the rows of the parallel tiles may still be jammed
    base = found[0] if found else Candidate(tuple(moves), c.recipe, "start, parallel outermost")
    jammed = _jammed(base, after, set(tiles))
    return [*found, *([jammed] if jammed is not None else [])]


def _jammed(strips: Candidate, after: Schedule, tiles: Collection[str]) -> Candidate | None:
    """`strips` (its loops those of `after`, in tiles of other sizes) with, in each nest
    whose strip loop is one of `tiles`, the loop just above the innermost (a sum along
    it: x[i] += A[j, i] * y[j]) in blocks of `JAM_ROWS` unrolled inside the innermost:
    each element of the strip loaded and stored once per JAM_ROWS rows, not per row.
    Two threads on one core share its loads and stores (mvt on two threads in strips:
    1.27 ms with eight rows a step, 1.45 with one; within 4% on one thread). In each
    other nest whose parallel tile loop's rows are summed along its innermost loop
    (w[i] += A[i, j] * x[j]), those rows `JAM_ROWS` at a time (`_row_jam`). None when no
    nest has such loops."""
    moves = list(strips.moves)
    changed = False
    for nest in range(len([n for n in after.nodes if hasattr(n, "body")])):
        chain = chain_of(after, nest)
        marked = Move("parallel_at", (str(nest),), 0)
        if len(chain) < 3 or marked not in moves:
            continue  # (a loop of the recipe parallel already: its moves are not here)
        if chain[0] not in tiles:
            jam = _row_jam(moves, after, chain)
        else:
            above = after.loop(chain[-2])
            innermost = after.loop(chain[-1])
            if innermost.unroll or above.parallel or above.unroll or above.kind == "tile":
                continue
            jam = _jam_moves(moves, chain, above.name, above.kind == "point")
        if not jam:
            continue
        at = moves.index(marked)
        moves[at:at] = jam
        changed = True
    if not changed:
        return None
    return Candidate(tuple(moves), strips.recipe, f"{strips.label}, {JAM_ROWS} rows a step")


def _row_jam(moves: list[Move], after: Schedule, chain: Sequence[str]) -> list[Move]:
    """The moves that run the point loop of `chain`'s parallel tile loop, when it sums
    its rows along the innermost loop below it (w[i] += A[i, j] * x[j] as (i_t, j_t, i,
    j)), in blocks of JAM_ROWS unrolled inside that loop: each thread walks eight rows
    at once, x[j] loaded once per eight rows (gemver on two threads, its w = A x so: 2.13
    ms against 2.30 with j unrolled by 16 inside each row). The block of the point loop
    is resized and an unroll of the innermost dropped, in `moves` (in place). Empty when
    the chain has no such loops."""
    tile = after.loop(chain[0])
    point = chain[0].removesuffix("_t")
    if not (tile.parallel and tile.kind == "tile") or chain[-2] != point:
        return []
    blocks = [k for k, m in enumerate(moves) if m.op == "block" and m.loops == (point,)]
    innermost = chain[-1]
    if len(blocks) != 1 or not _contiguous(after, innermost) or not _sums(after, innermost):
        return []
    moves[blocks[0]] = Move("block", (point,), JAM_ROWS)
    moves[:] = [m for m in moves if m != Move("unroll", (chain[-1],))]
    return [Move("reorder", (*chain[:-2], chain[-1], point)), Move("unroll", (point,))]


def _jam_moves(moves: list[Move], chain: Sequence[str], loop: str, blocked: bool) -> list[Move]:
    """The moves that run `loop` (just above the innermost of `chain`) in blocks of
    JAM_ROWS, its point loop innermost and unrolled; a block of it already in `moves`
    is resized (in place) instead."""
    out: list[Move] = []
    if blocked:
        k = next(k for k, m in enumerate(moves) if m.op == "block" and m.loops == (loop,))
        moves[k] = Move("block", (loop,), JAM_ROWS)
        order = [x for x in chain if x != loop]
    else:
        out.append(Move("block", (loop,), JAM_ROWS))
        order = [f"{loop}_t" if x == loop else x for x in chain]
    return [*out, Move("reorder", (*order, loop)), Move("unroll", (loop,))]


def _contiguous(s: Schedule, loop: str) -> bool:
    """Whether every access that `loop` (a loop of `s`, by its original loop) moves
    along moves along the last subscript alone: the loop walks its arrays' rows."""
    found = False
    for _, uses in _moved(s, loop):
        if uses is None or any(uses[:-1]):
            return False
        found = found or uses[-1]
    return found


def _sums(s: Schedule, loop: str) -> bool:
    """Whether a statement inside `loop` (a loop of `s`) writes an element that `loop`
    does not move: it sums (or otherwise reduces) along the loop."""
    return any(write and uses is not None and not any(uses) for write, uses in _moved(s, loop))


def _moved(s: Schedule, loop: str) -> Iterator[tuple[bool, list[bool] | None]]:
    """For each access of the statements inside `loop` (a loop of `s`): whether it
    writes, and which of its subscripts the loop moves (None: not affine)."""
    origin = s.loop(loop).origin
    for st in s.program.statements:
        if origin not in st.loops:
            continue
        value = re.compile(rf"\b_l{st.loops.index(origin)}\b")
        for access in st.accesses:
            subscripts = access.subscripts
            uses = None if subscripts is None else [bool(value.search(x)) for x in subscripts]
            yield access.write, uses


def _resized_blocks(
    moves: Sequence[Move], tiles: Collection[str], size: Callable[[str, int], int]
) -> tuple[Move, ...]:
    """`moves` with each block whose tile loop is in `tiles` given `size(that tile loop,
    its size)`."""
    return tuple(
        Move("block", m.loops, size(f"{m.loops[0]}_t", m.size))
        if m.op == "block" and f"{m.loops[0]}_t" in tiles
        else m
        for m in moves
    )


def hoist_parallel(s: Schedule, nest: int, depth: int) -> list[Move] | None:
    """The moves that run nest `nest`'s parallel loop at `depth` (below a perfectly
    nested chain of loops) outermost instead, in tiles: the loop blocked by `HOIST_BLOCK`
    when it is not a tile loop, its tile loop moved to the front of the chain and made
    parallel. One launch of the threads for the nest, not one per iteration of the loops
    above (mvt's x2 = A^T y2, tuned as (j2_t, i2, j2) for one thread: 2.1x on two threads
    as (i2_t, j2_t, i2, j2), 1.4x with i2 parallel where it is). None when the chain
    forks above the loop, or the order breaks a dependence."""
    chain = chain_of(s, nest)
    if len(chain) <= depth:
        return None
    loop = s.loop(chain[depth])
    moves: list[Move] = []
    if loop.kind != "tile":
        constant = s.trip_info(loop)[0]
        if loop.kind != "loop" or (constant is not None and constant < 2 * HOIST_BLOCK):
            return None
        moves.append(Move("block", (loop.name,), HOIST_BLOCK))
        chain = [*chain[:depth], f"{loop.name}_t", *chain[depth:]]
        tile = f"{loop.name}_t"
    else:
        tile = loop.name
    rest = [x for x in chain if x != tile]
    moves += [Move("reorder", (tile, *rest)), Move("parallel_at", (str(nest),), 0)]
    return _if_legal(s, moves)


def _if_legal(s: Schedule, moves: list[Move]) -> list[Move] | None:
    """`moves` when they apply to `s` (legal, not refused), else None."""
    return moves if applied(s, moves) is not None else None


def tile_wavefront(s: Schedule, nest: int) -> list[Move] | None:
    """The moves that run nest `nest`'s tiles in wavefronts, when its two outermost loops
    are tile loops (the caller asks when the outermost may not run in parallel as it is:
    a stencil tiled across time steps): the second skewed by the first, by the ratio of their tile
    sizes, so that a front holds the tiles with the same sum of tile indices, and moved
    outside it; the first then runs the tiles of a front in parallel. None when the nest
    does not start so, or the fronts do not keep the dependences."""
    moves = wavefront_moves(s, nest)
    return _if_legal(s, moves) if moves is not None else None


def finer_wavefronts(c: Candidate, s: Schedule, nest: int, divisor: int) -> Candidate | None:
    """`c` (whose schedule is `s`) with the sizes of nest `nest`'s two outermost tile
    loops divided by `divisor` (at least `WAVEFRONT_MIN_BLOCK`) and its tiles in
    wavefronts: a front of a stencil tiled for one thread holds a few large tiles, too
    few to share (heat-3d at LARGE, tiles 16 x 64 of t x i: 1.35x on two threads; 8 x 32:
    1.6x, 4 x 16: 1.9x). None when `c` does not block those loops itself, or nothing
    changes."""
    chain = chain_of(s, nest)[:2]
    moves = _resized_blocks(c.moves, chain, lambda _, n: max(WAVEFRONT_MIN_BLOCK, n // divisor))
    if moves == c.moves or len(chain) < 2:
        return None
    label = f"start, tile wavefronts / {divisor}"
    return Candidate((*moves, Move("wavefront", (str(nest),))), c.recipe, label)
