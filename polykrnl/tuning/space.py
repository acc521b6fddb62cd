"""The search space of `pk.tune`: what the primitives may do to each nest of a function.

Sibling loops inside a loop (a time loop's spatial nests) may first be fused, each pair at
its smallest legal shift (`fusion_moves`): a choice of its own, with the bands of the fused
schedule (jacobi-2d's t, i, j, tilable across time once skewed) in place of the others.
For every top-level nest of the function in its written order, every band (a perfectly
nested chain of at least two loops) that the legality report finds is a set of choices:
the skews the report suggests where they make the band tilable, a block size per loop
(none, powers of two and divisors of a constant extent, at most `MAX_BLOCK`), the order
of the tile loops and the order of the point loops, and whether to unroll the innermost
point loop when its trip count is small and constant; per nest, which depth of its loops
runs in parallel (with threads only; below a fork, each branch's loops at that depth), or,
for a nest with no parallel depth, its outermost loop in parallel parts at a split point,
or, for a nest with a band skewed to be tilable (a stencil across time steps), its tiles
in wavefronts (`tile_wavefront`: the Pluto start takes these for such nests). A
:class:`Candidate` is one choice of all of them as a sequence of primitive steps
(:class:`Move`), an immutable value that a worker process applies to the function again.

The space offers orders that break dependences (every order of a band that is not
permutable, every loop as the parallel one): legality decides, through the primitives'
own check, and the search counts what it prunes.
"""

from __future__ import annotations

import ast
import itertools
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from polykrnl.errors import (
    ArgumentError,
    IllegalTransformError,
    ScheduleError,
    UnprovenTransformError,
)

if TYPE_CHECKING:
    from polykrnl.pipeline import Schedule
    from polykrnl.transforms.core import SNode

#: the largest block size offered: a 256 x 256 tile of f64 is 512 KiB, half of a 1 MiB L2
MAX_BLOCK = 256
#: the smallest: below it the tile loop's overhead outweighs any locality won
MIN_BLOCK = 8
#: an innermost loop is offered for unrolling up to this trip count (code size)
MAX_UNROLL = 16
#: bands longer than this get the rotations of their order only, not all n! orders
MAX_PERMUTED = 5


#: the tile sizes of fusion by tiles (`tilewise_fusion`): rows of a few passes in cache
TILEWISE_BLOCKS = (8, 16, 32)

MoveOp = Literal[
    "surround",
    "fuse",
    "skew",
    "block",
    "reorder",
    "unroll",
    "parallel_at",
    "parts",
    "distribute",
    "wavefront",
]


@dataclass(frozen=True)
class Move:
    """One primitive step of a candidate.

    `parallel_at` names no loop: `loops` holds the nest's index and `size` the depth of
    its loops in the nest, resolved when applied (blocking renames loops); every loop at
    that depth runs in parallel (below a fork, each branch's). `wavefront` (`loops`: the
    nest's index) runs the nest's tiles in wavefronts (`tile_wavefront`), resolved when
    applied too.
    """

    op: MoveOp
    loops: tuple[str, ...]
    size: int = 0

    def __str__(self) -> str:
        """The step as a primitive's call (`Candidate.parse` reads it back)."""
        if self.op == "reorder":
            return f"reorder({list(self.loops)})"
        if self.op == "wavefront":
            return f"tile_wavefronts(nest {self.loops[0]})"
        if self.op == "parallel_at":
            return f"parallel(nest {self.loops[0]}, depth {self.size})"
        name, _, sized = _SPELLED[self.op]
        args = [repr(x) for x in self.loops] + ([str(self.size)] if sized else [])
        return f"{name}({', '.join(args)})"

    def apply(self, s: Schedule) -> Schedule:
        """The schedule after this step; the primitives refuse what breaks a dependence."""
        if self.op == "block":
            return s.block(self.loops[0], self.size)
        if self.op == "skew":
            return s.skew(self.loops[0], self.loops[1], self.size)
        if self.op == "fuse":
            return s.fuse(self.loops[0], self.loops[1], self.size)
        if self.op == "surround":
            return s.surround(self.loops[0], self.loops[1], self.size)
        if self.op == "reorder":
            return s.reorder(list(self.loops))
        if self.op == "unroll":
            return s.unroll(self.loops[0])
        if self.op == "parts":
            return s.parallel_parts(self.loops[0])
        if self.op == "distribute":
            return s.distribute(self.loops[0])
        if self.op == "wavefront":
            nest = int(self.loops[0])
            moves = wavefront_moves(s, nest)
            if moves is None:
                raise ScheduleError(
                    f"nest {nest} does not start with two tile loops: no tiles to run in wavefronts"
                )
            for m in moves:
                s = m.apply(s)
            return s
        return s.parallel(*loops_at(s.nodes, int(self.loops[0]), self.size))


def loops_at(nodes: Sequence[SNode], nest: int, depth: int) -> list[str]:
    """The loops `depth` levels down top-level loop `nest`: one along a chain, each
    sibling below a fork (a time loop around two spatial nests: both nests' loops)."""
    from polykrnl.transforms.core import SLoop

    top = [n for n in nodes if isinstance(n, SLoop)]
    if nest >= len(top):
        raise ScheduleError(f"the schedule has no nest {nest}")
    level: list[SLoop] = [top[nest]]
    for _ in range(depth):
        level = [c for n in level for c in n.body if isinstance(c, SLoop)]
    if not level:
        raise ScheduleError(f"nest {nest} has no loop at depth {depth}")
    return [n.name for n in level]


@dataclass(frozen=True)
class Candidate:
    """A schedule to try: primitive steps from the loops as written (or from the recipe).

    Equal candidates are the same schedule; `label` ("natural", "recipe", "pluto")
    only names where a seeded one came from.
    """

    moves: tuple[Move, ...] = ()
    recipe: bool = False  # start from the function's Krnl recipe (pk.schedule(fn))
    label: str = ""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Candidate) and (self.moves, self.recipe) == (
            other.moves,
            other.recipe,
        )

    def __hash__(self) -> int:
        return hash((self.moves, self.recipe))

    def __str__(self) -> str:
        start = "recipe" if self.recipe else "natural"
        return " > ".join([start, *(str(m) for m in self.moves)])

    @classmethod
    def parse(cls, text: str, label: str = "") -> Candidate:
        """The candidate `text` names, as `str(candidate)` writes it (the winners in a
        report or a benchmark's JSON): ``natural > block('i', 32) > parallel(nest 0,
        depth 0)``. Raises `ArgumentError` for text that names no candidate."""
        start, *steps = (p.strip() for p in text.strip().split(" > "))
        if start not in ("natural", "recipe"):
            raise ArgumentError(
                f"a candidate starts with 'natural' or 'recipe', not {start!r}",
                hint="write it as str(candidate) does: natural > block('i', 32) > ...",
            )
        return cls(tuple(_parse_move(step) for step in steps), start == "recipe", label)

    def schedule(self, natural: Schedule, recipe: Schedule | None = None) -> Schedule:
        """Apply the moves to `natural` (or to `recipe` for a recipe candidate).

        Raises `IllegalTransformError` / `UnprovenTransformError` when a step breaks a
        dependence (every step is checked, so the result is legal), `ScheduleError`
        when a primitive refuses its arguments.
        """
        s = natural
        if self.recipe:
            if recipe is None:
                raise ScheduleError("the function has no Krnl recipe to start from")
            s = recipe
        for m in self.moves:
            s = m.apply(s)
        return s


#: a step of a candidate's text: `name(arguments)`
_STEP = re.compile(r"(\w+)\((.*)\)")
#: `parallel(nest N, depth D)` and `tile_wavefronts(nest N)`: steps that name no loop
_AT = re.compile(r"nest (\d+)(?:, depth (\d+))?")
#: the steps written with Python literals, by the name they are written with: (their
#: move's op, the loop names taken, whether an integer follows them)
_LITERAL_STEPS: dict[str, tuple[MoveOp, int, bool]] = {
    "block": ("block", 1, True),
    "skew": ("skew", 2, True),
    "fuse": ("fuse", 2, True),
    "surround": ("surround", 2, True),
    "unroll": ("unroll", 1, False),
    "parallel_parts": ("parts", 1, False),
    "distribute": ("distribute", 1, False),
}
#: the same by op: (the name written, loop names, sized), for `Move.__str__`
_SPELLED = {op: (name, n, sized) for name, (op, n, sized) in _LITERAL_STEPS.items()}


def _parse_move(step: str) -> Move:
    """The move `step` names (`str(Move)` inverted)."""
    found = _STEP.fullmatch(step)
    name, inner = (found[1], found[2]) if found else ("", "")
    at = _AT.fullmatch(inner)
    if name == "parallel" and at is not None and at[2] is not None:
        return Move("parallel_at", (at[1],), int(at[2]))
    if name == "tile_wavefronts" and at is not None and at[2] is None:
        return Move("wavefront", (at[1],))
    args: tuple[Any, ...] = ()
    try:
        read = ast.literal_eval(f"({inner},)") if found else ()
        args = read if isinstance(read, tuple) else ()
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    order = args[0] if name == "reorder" and len(args) == 1 else None
    if isinstance(order, list) and order and all(isinstance(x, str) for x in order):
        return Move("reorder", tuple(order))
    if name in _LITERAL_STEPS:
        op, names, sized = _LITERAL_STEPS[name]
        loops, rest = args[:names], args[names:]
        if all(isinstance(x, str) for x in loops) and len(loops) == names:
            if sized and len(rest) == 1 and type(rest[0]) is int:
                return Move(op, tuple(loops), rest[0])
            if not sized and not rest:
                return Move(op, tuple(loops))
    raise ArgumentError(
        f"{step!r} is not a step of a candidate",
        hint="steps as str(candidate) writes them: block('i', 32), skew('j', 'i', 1), "
        "fuse('i', 'j', 0), surround('j', 'i', 1), reorder(['i_t', 'j']), unroll('i'), "
        "parallel_parts('i'), distribute('i'), parallel(nest 0, depth 0), "
        "tile_wavefronts(nest 0)",
    )


class Trial(Protocol):
    """What the space asks of a search engine's trial (Optuna's `Trial` has it)."""

    def suggest_categorical(self, name: str, choices: Sequence[Any]) -> Any: ...


@dataclass(frozen=True)
class BandChoices:
    """The choices of one band: its loops (outermost first), skews, block sizes."""

    key: str
    nest: int
    loops: tuple[str, ...]
    permutable: bool
    skews: tuple[Move, ...]  # that make it permutable (empty: none found or not allowed)
    sizes: tuple[tuple[int, ...], ...]  # per loop: 0 (not blocked) and the sizes offered
    constant: tuple[int | None, ...]  # per loop: its constant trip count, if any

    def orders(self, loops: Sequence[str]) -> list[str]:
        """The orders of `loops` offered, as comma-joined names (the first: as written)."""
        if len(loops) <= MAX_PERMUTED:
            return [",".join(p) for p in itertools.permutations(loops)]
        return [",".join([*loops[k:], *loops[:k]]) for k in range(len(loops))]


@dataclass(frozen=True)
class Space:
    """The choices for a function: its bands, and per nest the parallel loop's depth."""

    function: str
    bands: tuple[BandChoices, ...]
    nests: int
    threads: bool  # the parallel loop is a choice (one-thread kernels ignore the marks)
    parallel_depths: tuple[int, ...] = ()  # per nest: how many levels of loops it has
    # per nest: the outermost depth whose loops may run in parallel as written (None: none)
    parallel_starts: tuple[int | None, ...] = ()
    # the fusion of sibling loops inside a loop (a time loop's spatial nests), each at
    # its smallest legal shift, and the bands of the fused schedule (empty: none fuse)
    fusion: tuple[Move, ...] = ()
    fused_bands: tuple[BandChoices, ...] = ()
    # per nest with no parallel depth: its outermost loop that may run in parallel parts
    # (Schedule.parallel_parts: Floyd-Warshall's row loop), else None
    parts_starts: tuple[str | None, ...] = ()
    # only what Krnl text can write (`space_of(skew=False)`): no skew, fusion, parts
    krnl_only: bool = False
    # fusion by tiles of adjacent top-level nests (`tilewise_fusion`): per tile size
    # offered, its moves; and the nest the fused tiles are
    tilewise: tuple[tuple[int, tuple[Move, ...]], ...] = ()
    tilewise_nest: int = 0
    # with threads, the nests whose tiles may run in wavefronts: a band skewed to be
    # tilable (across time), whose outermost loop may not run in parallel as written
    wavefront_nests: tuple[int, ...] = ()
    # the threads a parallel kernel runs on (`thread_count`; 1 without threads), and
    # the largest size given (the extent assumed of a loop whose trip is not constant)
    thread_count: int = 1
    largest: int | None = None

    @property
    def size(self) -> int:
        """How many candidates the space holds (orders and sizes multiplied out)."""
        n = _bands_size(self.bands) + (_bands_size(self.fused_bands) if self.fusion else 0)
        for nest, depth in enumerate(self.parallel_depths):
            split = nest < len(self.parts_starts) and self.parts_starts[nest] is not None
            n *= depth + 1 + split + (nest in self.wavefront_nests)
        return n + len(self.tilewise_candidates())

    def candidate(self, trial: Trial) -> Candidate:
        """The candidate a trial chooses (its parameters suggested band by band)."""
        moves: list[Move] = []
        bands = self.bands
        if self.fusion and trial.suggest_categorical("fuse", [False, True]):
            moves += self.fusion
            bands = self.fused_bands
        for b in bands:
            moves += _band_moves(b, trial)
        if self.threads:
            for nest, depth in enumerate(self.parallel_depths):
                split = self.parts_starts[nest] if nest < len(self.parts_starts) else None
                offered = ["none", *map(str, range(depth)), *(["parts"] if split else [])]
                if nest in self.wavefront_nests:
                    offered.append("wavefront")
                choice = trial.suggest_categorical(f"n{nest}.parallel", offered)
                if choice == "parts" and split:
                    moves.append(Move("parts", (split,)))
                elif choice == "wavefront":
                    moves.append(Move("wavefront", (str(nest),)))
                elif choice != "none":
                    moves.append(Move("parallel_at", (str(nest),), int(choice)))
        return Candidate(tuple(moves))

    def natural_params(self, *, parallel: bool = False) -> dict[str, Any]:
        """The parameters of the loops as written (Optuna's enqueued first trial); with
        `parallel`, each nest's outermost loops that may run in parallel as written run
        in parallel."""
        out: dict[str, Any] = {"fuse": False} if self.fusion else {}
        out.update(_plain_params(self.bands))
        if self.threads:
            out.update({f"n{n}.parallel": "none" for n in range(len(self.parallel_depths))})
            if parallel:
                out.update(self._parallel_starts())
        return out

    def tilewise_candidates(self) -> list[Candidate]:
        """Fusion by tiles, one candidate per tile size offered (and with threads, one
        with the tiles in parallel): measured first, beside the starts. Not a choice of
        the sampler: a few candidates that win by much (atax: 2.5x) draw every later
        trial to them, and the search ends when it only asks again what it measured."""
        out: list[Candidate] = []
        sizes: set[int] = set()
        for size, moves in self.tilewise:
            # the second of a size has its window sums regrouped (`tilewise_fusion`)
            name = f"fusion by tiles of {size}{', window sums inside' if size in sizes else ''}"
            sizes.add(size)
            out.append(Candidate(moves, label=name))
            if self.threads:
                tiles = Move("parallel_at", (str(self.tilewise_nest),), 0)
                out.append(Candidate((*moves, tiles), label=f"{name}, parallel"))
        return out

    def _parallel_starts(self) -> dict[str, str]:
        out = {f"n{n}.parallel": "parts" for n, x in enumerate(self.parts_starts) if x}
        starts = enumerate(self.parallel_starts)
        out.update({f"n{n}.parallel": str(d) for n, d in starts if d is not None})
        return out

    def pluto_params(self, block: int | tuple[int, int, int] = 32) -> dict[str, Any]:
        """Pluto's start: skew where it makes a band tilable, tile every permutable band
        by `block` (the nearest size offered) in its order, the outermost loops that may
        run in parallel as written parallel. `block` may be three sizes: for the
        outermost loop of a band, the loops between, the innermost (a time-tiled
        stencil wants few time steps per tile and long innermost rows: 16, 64, 256)."""
        first, middle, last = (block, block, block) if isinstance(block, int) else block
        out = self.natural_params()
        fronts: list[int] = []  # nests tiled across time: their tiles in wavefronts
        bands = self.bands
        if self.fusion:
            # Pluto fuses first: the time loop's sibling nests become one band to tile.
            out["fuse"], bands = True, self.fused_bands
            out.update(_plain_params(bands))
        for b in bands:
            if not b.permutable and not b.skews:
                continue
            if b.skews:
                out[f"{b.key}.skew"] = True
                fronts += [b.nest] if b.nest in self.wavefront_nests else []
            blocked = []
            for k, (x, sizes) in enumerate(zip(b.loops, b.sizes, strict=True)):
                want = first if k == 0 else last if k == len(b.loops) - 1 else middle
                offered = [s for s in sizes if s]
                if offered:
                    size = min(offered, key=lambda s: (abs(s - want), s))
                    out[f"{b.key}.block.{x}"] = size
                    blocked.append(x)
            if blocked:
                out[f"{b.key}.tiles[{','.join(blocked)}]"] = ",".join(blocked)
        if self.threads:
            out.update(self._parallel_starts())
            out.update({f"n{n}.parallel": "wavefront" for n in fronts})
        return out


def _plain_params(bands: Sequence[BandChoices]) -> dict[str, Any]:
    """The parameters that leave `bands` as they are."""
    out: dict[str, Any] = {}
    for b in bands:
        if b.skews:
            out[f"{b.key}.skew"] = False
        out.update({f"{b.key}.block.{x}": 0 for x in b.loops})
        out[f"{b.key}.points"] = ",".join(b.loops)
        out[f"{b.key}.unroll"] = False
    return out


def _bands_size(bands: Sequence[BandChoices]) -> int:
    n = 1
    for b in bands:
        for sizes in b.sizes:
            n *= len(sizes)
        n *= len(b.orders(b.loops)) ** 2 * (2 if b.skews else 1) * 2
    return n


def _band_moves(b: BandChoices, trial: Trial) -> list[Move]:
    """The moves of one band's choices: skews, blocks, the order, the unroll."""
    moves: list[Move] = []
    if b.skews and trial.suggest_categorical(f"{b.key}.skew", [False, True]):
        moves += b.skews
    blocked: list[str] = []
    trip: dict[str, int | None] = {}
    for x, sizes, constant in zip(b.loops, b.sizes, b.constant, strict=True):
        size = trial.suggest_categorical(f"{b.key}.block.{x}", list(sizes)) if sizes[1:] else 0
        if size:
            moves.append(Move("block", (x,), size))
            blocked.append(x)
        trip[x] = size or constant
    tiles: list[str] = []
    if blocked:
        # The tile loops' order is a choice of its own for each set of blocked loops.
        order = trial.suggest_categorical(f"{b.key}.tiles[{','.join(blocked)}]", b.orders(blocked))
        tiles = [f"{x}_t" for x in order.split(",")]
    points = trial.suggest_categorical(f"{b.key}.points", b.orders(b.loops)).split(",")
    chain = [*tiles, *points]
    written = [y for x in b.loops for y in ([f"{x}_t", x] if x in blocked else [x])]
    if chain != written:
        moves.append(Move("reorder", tuple(chain)))
    inner = points[-1]
    small = trip[inner] is not None and 1 < (trip[inner] or 0) <= MAX_UNROLL
    if small and trial.suggest_categorical(f"{b.key}.unroll", [False, True]):
        moves.append(Move("unroll", (inner,)))
    return moves


def block_sizes(constant: int | None, largest: int | None, threads: int = 1) -> tuple[int, ...]:
    """0 (not blocked), then the block sizes offered for a loop: powers of two from
    MIN_BLOCK to MAX_BLOCK and the divisors of a constant trip count in that range,
    all below the trip count (constant, else `largest`, the largest size given); with
    `threads` > 1, also one strip per thread (`strip_size`)."""
    limit = constant if constant is not None else largest
    sizes = {1 << k for k in range(3, 9)}
    if constant is not None:
        sizes |= {d for d in range(MIN_BLOCK, MAX_BLOCK + 1) if constant % d == 0}
    strip = strip_size(limit, threads)
    if strip is not None:
        sizes.add(strip)
    if limit is not None:
        sizes = {s for s in sizes if s < limit}
    return (0, *sorted(sizes))


def strip_size(extent: int | None, threads: int) -> int | None:
    """The block size that gives each of `threads` threads one strip of a loop of
    `extent` iterations (rounded up to a multiple of MIN_BLOCK: whole cache lines of
    f64): the widest tiles that keep every thread busy. A parallel tile loop whose point
    loop is the innermost, contiguous one reads long runs of memory only in wide tiles
    (gemver's x = A^T y on two threads: 1.6x in strips of 1024 columns, 1.14x in
    tiles of 16-32, 1.5x of 256). None with one thread, an unknown extent, or no room for two."""
    if threads < 2 or extent is None:
        return None
    size = -(-extent // threads)
    size = -(-size // MIN_BLOCK) * MIN_BLOCK
    return size if MIN_BLOCK <= size < extent else None


def thread_count() -> int:
    """The threads a parallel kernel will run on: Numba's (and OpenMP's) setting in
    the environment, else one per CPU, as both default to."""
    for var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(var, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    return os.cpu_count() or 1


def space_of(
    natural: Schedule,
    *,
    params: Mapping[str, float] | None = None,
    threads: bool = False,
    skew: bool = True,
) -> Space:
    """The search space of a schedule of the loops as written (`recipe=False`).

    `params` (the sizes the kernel will run at) bound the block sizes of loops whose
    trip count is not constant; `threads` makes the parallel loop a choice; `skew=False`
    keeps to what Krnl text can write: no skew, fusion or parallel parts.

    Examples
    --------
    >>> import polykrnl as pk
    >>> from polykrnl.tuning.space import space_of
    >>> fn = pk.parse('''
    ... func.func @t(%A: memref<64x64xf32>, %B: memref<64x64xf32>) {
    ...   %ii, %jj = krnl.define_loops 2
    ...   krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 64, %jj -> %j = 0 to 64) {
    ...     %v = krnl.load %A[%i, %j] : memref<64x64xf32>
    ...     krnl.store %v, %B[%j, %i] : memref<64x64xf32>
    ...   }
    ...   return
    ... }''')["t"]
    >>> space = space_of(pk.Schedule.from_function(fn, recipe=False))
    >>> [(b.loops, b.permutable, b.sizes[0]) for b in space.bands]
    [(('i', 'j'), True, (0, 8, 16, 32))]
    """
    ints = [int(v) for v in (params or {}).values() if float(v).is_integer()]
    largest = max(ints) if ints else None
    top = [n for n in natural.nodes if hasattr(n, "body")]
    strips = thread_count() if threads else 1
    bands = _bands_of(natural, "b", largest, skew, strips)
    fusion, fused = fusion_moves(natural) if skew else ((), natural)
    fused_bands = _bands_of(fused, "f", largest, skew, strips) if fusion else ()
    depths = tuple(nest_depth(n) for n in top)
    starts: tuple[int | None, ...] = ()
    parts: tuple[str | None, ...] = ()
    if threads:
        found = [outermost_parallel(natural, k, d) for k, d in enumerate(depths)]
        starts = tuple(f[0].size if f is not None else None for f in found)
        parts = tuple(
            None if f is not None or not skew else next(iter(outermost_parts(natural, k)), None)
            for k, f in enumerate(found)
        )
    name = natural.program.function.name
    tilewise: list[tuple[int, tuple[Move, ...]]] = []
    nest = 0
    run = _fusable_run(natural) if skew else None
    for size in TILEWISE_BLOCKS if run is not None else ():
        for regroup in (False, True):
            fused_tiles = tilewise_fusion(natural, size, run, regroup)
            if fused_tiles is not None and (size, tuple(fused_tiles[0])) not in tilewise:
                tilewise.append((size, tuple(fused_tiles[0])))
                nest = fused_tiles[1]
    fronts = tuple(
        sorted(
            {b.nest for b in (*bands, *fused_bands) if b.skews and starts[b.nest] != 0}
            if threads and skew
            else ()
        )
    )
    return Space(
        name,
        bands,
        len(top),
        threads,
        depths,
        starts,
        fusion,
        fused_bands,
        parts,
        not skew,
        tuple(tilewise),
        nest,
        fronts,
        strips,
        largest,
    )


def _bands_of(
    sched: Schedule, prefix: str, largest: int | None, skew: bool, threads: int = 1
) -> tuple[BandChoices, ...]:
    """The choices of each band of at least two loops that `sched`'s report finds
    (`threads`: the strips of `block_sizes`)."""
    top = [n for n in sched.nodes if hasattr(n, "body")]
    nest_of = {name: k for k, n in enumerate(top) for name in _names(n)}
    bands: list[BandChoices] = []
    for band in sched.check().bands:
        if len(band.loops) < 2:
            continue  # strip-mining one loop alone changes no order: nothing to gain
        constant = tuple(sched.trip_info(sched.loop(x))[0] for x in band.loops)
        skews = tuple(_parse_skew(s) for s in band.suggestion) if skew else ()
        bands.append(
            BandChoices(
                key=f"{prefix}{len(bands)}",
                nest=nest_of[band.loops[0]],
                loops=band.loops,
                permutable=band.permutable,
                skews=() if band.permutable else skews,
                sizes=tuple(block_sizes(c, largest, threads) for c in constant),
                constant=constant,
            )
        )
    return tuple(bands)


def fusion_moves(natural: Schedule) -> tuple[tuple[Move, ...], Schedule]:
    """Fuse, left to right and then inside the fused loops, the adjacent sibling loops
    inside a loop (not top-level nests: a time loop's spatial nests), each at its
    smallest legal shift; the moves and the schedule after them. A loop shallower than
    the loop after it is first surrounded by a loop of one iteration at that loop's first
    value (fdtd-2d's row loop, before its 2-D nests). A pair that cannot fuse (bounds that
    differ by more than a constant, no constant shift) stays apart."""
    s, moves = natural, list[Move]()
    refused: set[tuple[str, str]] = set()
    while True:
        pair = next((p for p in _adjacent_inner_loops(s.nodes) if p not in refused), None)
        if pair is None:
            return tuple(moves), s
        try:
            found = _fused_pair(s, *pair)
        except (ScheduleError, IllegalTransformError, UnprovenTransformError):
            found = None
        if found is None:
            refused.add(pair)
        else:
            moves += found[0]
            s = found[1]


def tilewise_fusion(
    natural: Schedule,
    block: int,
    fused: tuple[list[str], Schedule] | None = None,
    regroup: bool = False,
) -> tuple[list[Move], int] | None:
    """Fusion by tiles: the longest run of adjacent top-level loops that fuse with no
    shift, fused, blocked by `block`, its point loop distributed (one loop per pass over
    the tile's rows); in each pass whose inner loop carries a dependence (a row sum), the
    rows moved inside it, unrolled when `block` is at most MAX_UNROLL (sums of
    `block` rows interleaved, not one waiting on its own last add). `regroup`: where the
    pass sums over several loops, the rows moved inside all of them instead, those that
    carry nothing first. The moves, and the index of the nest of the tiles; None when
    no two nests fuse so.

    The passes over a tile run while its rows are in cache (layernorm's sum, variance and
    output passes: one read of the rows from memory instead of three). `fused`: the loops
    to fuse and the schedule after fusing them, when known (`_fusable_run`)."""
    from polykrnl.transforms.core import SLoop

    found = fused or _fusable_run(natural)
    if found is None:
        return None
    run, s = found
    first = run[0]
    moves = [*(Move("fuse", (first, x), 0) for x in run[1:])]
    tiled = [Move("block", (first,), block), Move("distribute", (first,))]
    after = applied(s, tiled)
    if after is None:
        return None
    moves, s = moves + tiled, after
    tile = s.parent(first)
    assert tile is not None
    carried = {lv.loop for lv in s.check().loops if lv.status != "parallel"}
    for part in s.node(tile).body:
        chain = _only_loops_below(part) if isinstance(part, SLoop) else []
        if not chain or chain[0] not in carried:
            continue
        # The rows inside the pass's outermost loop; `regroup`, for a pass that sums
        # over several loops (a window): its loops that carry nothing outermost, then
        # those that carry, then the rows, which keeps a 3x3 convolution's sums of one
        # output point over the nine taps in registers (i, j, r, s, rows: 0.24 ms at
        # 32x126x126, against 0.50 for r, rows, s, i, j). A sum over one loop keeps it
        # first (gemm's k, rows, j: its innermost loop is the vector one).
        order = chain[:1]
        if regroup and sum(x in carried for x in chain) > 1:
            order = [x for x in chain if x not in carried] + [x for x in chain if x in carried]
        swap = [Move("reorder", (*order, part.name))]
        if block <= MAX_UNROLL:
            swap.append(Move("unroll", (part.name,)))
        swapped = applied(s, swap)
        if swapped is not None:
            moves, s = moves + swap, swapped
    top = [n.name for n in s.nodes if isinstance(n, SLoop)]
    return moves, top.index(tile)


def _only_loops_below(loop: Any) -> list[str]:
    """The loops below `loop`, outermost first, while each is its parent's only child."""
    from polykrnl.transforms.core import SLoop

    out: list[str] = []
    while len(loop.body) == 1 and isinstance(loop.body[0], SLoop):
        loop = loop.body[0]
        out.append(loop.name)
    return out


def _fusable_run(natural: Schedule) -> tuple[list[str], Schedule] | None:
    """The longest run of adjacent top-level loops that fuse one after the other with
    no shift (each pass over the same rows), at least two, and the schedule with them
    fused; None if there is none."""
    from polykrnl.transforms.core import SLoop

    best: tuple[list[str], Schedule] = ([], natural)
    s, run = natural, list[str]()
    for node in [*natural.nodes, None]:
        if isinstance(node, SLoop) and run:
            try:
                s = Move("fuse", (run[0], node.name), 0).apply(s)
                run.append(node.name)
                continue
            except (ScheduleError, IllegalTransformError, UnprovenTransformError):
                pass
        if len(run) > len(best[0]):
            best = (run, s)
        s, run = natural, ([node.name] if isinstance(node, SLoop) else [])
    return best if len(best[0]) >= 2 else None


def _fused_pair(s: Schedule, a: str, b: str) -> tuple[list[Move], Schedule] | None:
    """The moves that fuse adjacent loops `a` and `b` (surrounding `a` first when it is
    the shallower), and the schedule after them; None when no constant shift keeps the
    dependences."""
    from polykrnl.transforms.bounds import linear
    from polykrnl.transforms.primitives.fuse import smallest_shift

    moves: list[Move] = []
    if nest_depth(s.node(a)) < nest_depth(s.node(b)):
        lbs = s.loop(b).lbs
        start = linear(lbs[0]) if len(lbs) == 1 else None
        if start is None or start[0]:
            return None  # no constant first value to run `a` at
        around = Move("surround", (a, _fresh_name(s, f"{b}_s")), start[1])
        s, a = around.apply(s), around.loops[1]
        moves.append(around)
    shift = smallest_shift(s, a, b)
    if shift is None:
        return None
    if moves:
        shift = max(shift, 0)  # the one-iteration loop stays the fused range's first value
    move = Move("fuse", (a, b), shift)
    return [*moves, move], move.apply(s)


def _fresh_name(s: Schedule, name: str) -> str:
    from polykrnl.transforms.primitives.surround import taken_names

    taken = taken_names(s)
    out, n = name, 0
    while out in taken:
        n += 1
        out = f"{name}{n}"
    return out


def _adjacent_inner_loops(nodes: Sequence[SNode]) -> list[tuple[str, str]]:
    """Pairs of adjacent sibling loops inside a loop, outermost first."""
    from polykrnl.transforms.core import SLoop

    out: list[tuple[str, str]] = []
    for n in nodes:
        if isinstance(n, SLoop):
            for a, b in itertools.pairwise(n.body):
                if isinstance(a, SLoop) and isinstance(b, SLoop):
                    out.append((a.name, b.name))
            out += _adjacent_inner_loops(n.body)
    return out


def _names(node: Any) -> list[str]:
    out = [node.name]
    for child in node.body:
        if hasattr(child, "body"):
            out += _names(child)
    return out


def nest_depth(node: Any) -> int:
    """How many levels of loops a nest has (before blocking)."""
    inner = [c for c in node.body if hasattr(c, "body")]
    return 1 + max((nest_depth(c) for c in inner), default=0)


def outermost_parallel(s: Schedule, nest: int, depth: int) -> tuple[Move, Schedule] | None:
    """The move that runs nest `nest`'s outermost loops that may run in parallel (the
    first depth, below `depth`, whose loops carry no dependence), and the schedule after
    it; None when no depth may."""
    for d in range(depth):
        move = Move("parallel_at", (str(nest),), d)
        try:
            return move, move.apply(s)
        except (IllegalTransformError, UnprovenTransformError):
            continue
        except ScheduleError:
            return None
    return None


def outermost_parts(s: Schedule, nest: int) -> list[str]:
    """The outermost loop of nest `nest`'s chain that may run in parallel parts (its
    carried dependences all through one iteration), as a one-element list; empty when
    none may."""
    for loop in chain_of(s, nest):
        try:
            s.parallel_parts(loop)
        except (ScheduleError, IllegalTransformError, UnprovenTransformError):
            continue
        return [loop]
    return []


def _parse_skew(call: str) -> Move:
    """A report's suggestion "skew('j', 'i', 1)" as a move."""
    inner = call[call.index("(") + 1 : call.rindex(")")]
    loop, by, factor = (p.strip().strip("'") for p in inner.split(","))
    return Move("skew", (loop, by), int(factor))


def applied(s: Schedule, moves: Sequence[Move]) -> Schedule | None:
    """`s` after `moves` when they apply (legal, not refused), else None."""
    try:
        for m in moves:
            s = m.apply(s)
    except (ScheduleError, IllegalTransformError, UnprovenTransformError):
        return None
    return s


def chain_of(s: Schedule, nest: int) -> list[str]:
    """The loops of nest `nest` down to its first fork (or statement), outermost first."""
    from polykrnl.transforms.core import SLoop

    top = [n for n in s.nodes if isinstance(n, SLoop)]
    chain: list[str] = []
    node: Any = top[nest] if nest < len(top) else None
    while isinstance(node, SLoop):
        chain.append(node.name)
        loops = [c for c in node.body if isinstance(c, SLoop)]
        node = loops[0] if len(loops) == 1 and len(node.body) == 1 else None
    return chain


def wavefront_moves(s: Schedule, nest: int) -> list[Move] | None:
    """`tile_wavefront`'s moves, legal or not; None when the nest does not start with
    two tile loops."""
    chain = chain_of(s, nest)
    if len(chain) < 2:
        return None
    first, second = (s.loop(x) for x in chain[:2])
    if first.kind != "tile" or second.kind != "tile" or not first.tile_size:
        return None
    factor = -(-(second.tile_size or 0) // first.tile_size)
    return [
        Move("skew", (second.name, first.name), max(1, factor)),
        Move("reorder", (second.name, first.name, *chain[2:])),
        Move("parallel_at", (str(nest),), 1),
    ]


def legality_outcome(
    candidate: Candidate, natural: Schedule, recipe: Schedule | None
) -> tuple[Schedule | None, str, str]:
    """(the schedule or None, "ok" / "illegal" / "refused", why) for one candidate."""
    try:
        return candidate.schedule(natural, recipe), "ok", ""
    except (IllegalTransformError, UnprovenTransformError) as e:
        return None, "illegal", e.message
    except ScheduleError as e:
        return None, "refused", e.message


def starting_schedules(fn: Any) -> tuple[Schedule, Schedule | None]:
    """The schedule of the loops as written, and that of the function's Krnl recipe when
    it has one that is legal (None otherwise). A function whose statements only mean
    something in its blocked nest starts from its recipe."""
    from polykrnl.errors import PolykrnlError, UnsupportedError
    from polykrnl.pipeline import Schedule, schedule

    try:
        recipe: Schedule | None = schedule(fn)
    except PolykrnlError:
        recipe = None  # an illegal recipe is no candidate; the search starts without it
    if recipe is not None and not recipe.steps:
        recipe = None
    try:
        return Schedule.from_function(fn, recipe=False), recipe
    except UnsupportedError:
        if recipe is None:
            raise
        return recipe, None
