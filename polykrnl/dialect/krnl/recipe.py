"""What Krnl's recipe ops mean: the one statement of their rules.

The loop nest (:mod:`polykrnl.nest.loops`) applies the recipe ops of Krnl text
once, to loops whose bounds are SSA values; the verifier, the reference
interpreter and the polyhedral model read it, and ``pk.schedule`` makes its
schedule from it. The nest needs no isl, so the interpreter stays an oracle
that runs programs the polyhedral model cannot represent. The schedule
primitives (:mod:`polykrnl.transforms.primitives`) apply the same ops on
their own to a schedule, whose loops carry isl values, for Python users.
Both take from here what each op does to the loops and when it is refused,
with the same words, so that they cannot drift apart
(``tests/transforms/test_recipe_agreement.py`` replays every recipe of the
test corpus through the primitives and compares).

Loop names are passed in already written the caller's way (``%ii`` in Krnl
text, ``'i'`` in the Python API). The facts are in docs/krnl-semantics.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
B = TypeVar("B")


@dataclass(frozen=True)
class Refusal:
    """Why a recipe op cannot be applied, and what to do instead."""

    message: str
    hint: str


# ------------------------------------------------------------------ krnl.block


def block_size_refusal(size: object, loop: str) -> Refusal | None:
    """krnl.block takes a constant tile size of at least 1."""
    if isinstance(size, int) and not isinstance(size, bool) and size > 0:
        return None
    return Refusal(
        f"tile size {size!r} of krnl.block {loop} must be a positive integer",
        "krnl.block takes a constant tile size >= 1",
    )


def tile_stride(step: int, size: int) -> int:
    """The step of the tile loop: `size` iterations of the blocked loop."""
    return step * size


def point_range(
    tile: T, stride: int, ubs: Sequence[B], at: Callable[[T, int], B]
) -> tuple[tuple[B, ...], tuple[B, ...]]:
    """The point loop's bounds: from the tile's value to min(tile + stride, the loop's UBs).

    `at(tile, offset)` writes "the tile loop's value plus offset" in the caller's
    bound type. The point loop keeps the blocked loop's step; a point loop whose
    handle is never used runs once, from 0 to 1 (onnx-mlir's lowering).
    """
    return (at(tile, 0),), (at(tile, stride), *ubs)


# ------------------------------------------------------ krnl.parallel / unroll


def parallel_first_refusal(op: str, loop: str, where: str | None = None) -> Refusal:
    """`op` (krnl.block, krnl.permute or krnl.unroll) of a loop already made parallel.

    `where` locates the krnl.parallel in Krnl text; without it the hint speaks
    of the Python API's order of calls.
    """
    hint = (
        f"move the krnl.parallel at {where} after the {op}: krnl.parallel must come last"
        if where
        else f"apply {op} first, then mark the loops parallel: krnl.parallel comes last"
    )
    return Refusal(f"{op} of loop {loop} after it was made parallel", hint)


def unrolled_block_refusal(
    loop: str, block_at: str | None = None, handles: tuple[str, str] | None = None
) -> Refusal:
    """A loop is unrolled after every other recipe op: a blocked loop is gone by then.

    From krnl.block's side (`block_at` None) or from the krnl.unroll's side, when
    the krnl.block at `block_at` (making the tile and point `handles`) comes later.
    """
    if block_at is None:
        return Refusal(
            f"krnl.block of loop {loop}, which is unrolled",
            "krnl.unroll applies after every other recipe op: block first, then unroll "
            "the tile or point loop",
        )
    instead = (
        f"the tile handle {handles[0]} or the point handle {handles[1]}"
        if handles
        else "the tile or the point handle of that krnl.block"
    )
    return Refusal(
        f"krnl.unroll {loop}: the krnl.block at {block_at} blocks {loop} afterwards, so it "
        "has no loop left to unroll",
        f"krnl.unroll applies after every other recipe op: unroll {instead} instead",
    )


#: what a loop marked by krnl.parallel / krnl.unroll is, and the rule for the op
_MARKED = {
    "krnl.parallel": ("made parallel", "made parallel", "is parallel"),
    "krnl.unroll": ("unrolled", "fully unrolled", "is unrolled"),
}


def twice_refusal(op: str, loop: str, first_at: str | None = None) -> Refusal:
    """A loop is made parallel (`op` krnl.parallel), or unrolled (krnl.unroll), once."""
    done, rule, _ = _MARKED[op]
    first = f" (first by the {op} at {first_at})" if first_at else ""
    return Refusal(
        f"loop {loop} is {done} twice{first}",
        f"remove one of the {op} ops: a loop is {rule} once",
    )


def parallel_unroll_refusal(op: str, loop: str, other_at: str | None = None) -> Refusal:
    """`op` (krnl.parallel or krnl.unroll) of a loop the other op marks: it is one or the other."""
    (other_op,) = set(_MARKED) - {op}
    verb = {"krnl.parallel": "makes parallel", "krnl.unroll": "unrolls"}[other_op]
    other = f"the {other_op} at {other_at} {verb}" if other_at else _MARKED[other_op][2]
    return Refusal(
        f"{op} of loop {loop}, which {other}",
        "a loop is either unrolled or parallel: remove one of the two ops",
    )


def no_trip_count_refusal(loop: str, bounds: str | None = None) -> Refusal:
    """krnl.unroll fully unrolls: a loop that is not a point loop needs a constant trip count.

    `bounds` shows the loop's bounds when the caller can write them.
    """
    shown = f" ({bounds})" if bounds else ""
    return Refusal(
        f"krnl.unroll {loop} needs a constant trip count, but the bounds of loop {loop} "
        f"are not constant{shown}",
        "unroll a loop with constant bounds, or block the loop and unroll the point loop "
        "(a point loop runs at most its tile size)",
    )


def listed_twice(names: Sequence[str], op: str) -> Refusal | None:
    """Each loop is listed once in one recipe op."""
    dup = next((x for i, x in enumerate(names) if x in names[:i]), None)
    if dup is None:
        return None
    return Refusal(f"loop {dup} is listed twice in {op}", "list each loop once")


# ---------------------------------------------------------------- krnl.permute


def permutation_refusal(perm: Sequence[int], n: int) -> Refusal | None:
    """krnl.permute's map gives each of its `n` loops one position 0..n-1."""
    if len(perm) != n:
        return Refusal(
            f"krnl.permute of {n} loop{'s' * (n != 1)} got a map of {len(perm)} "
            f"position{'s' * (len(perm) != 1)}",
            "give one position per loop: the loop of operand k goes to position map[k]",
        )
    if sorted(perm) != list(range(n)):
        return Refusal(
            f"permute map [{', '.join(map(str, perm))}] is not a permutation of 0..{n - 1}",
            f"give each position 0..{n - 1} exactly once (the loop of operand k goes to "
            "position map[k])",
        )
    return None


def scattered(chain: Sequence[T], perm: Sequence[int]) -> list[T]:
    """The new order of `chain`: the loop of operand k goes to position perm[k]."""
    new: list[T] = list(chain)
    for k, p in enumerate(perm):
        new[p] = chain[k]
    return new


def not_a_chain_refusal(outer: str, inner: str, order: Sequence[str]) -> Refusal:
    """krnl.permute reorders a perfectly nested chain, listed outermost first."""
    return Refusal(
        f"krnl.permute operands must form a perfectly nested chain in the current order, "
        f"but {inner} is not directly inside {outer}",
        "list the loops outermost first; the current order is " + " > ".join(order),
    )


def misplaced_bound(order: Sequence[T], uses: Callable[[T], Iterable[T]]) -> tuple[T, T] | None:
    """The first loop of `order` put outside a loop whose value its bounds use.

    Such a loop has no meaning (onnx-mlir would write invalid affine IR):
    `uses(loop)` lists the loops whose values the bounds of `loop` read.
    """
    for depth, loop in enumerate(order):
        inner = order[depth + 1 :]
        for used in uses(loop):
            if used in inner:
                return loop, used
    return None


def misplaced_refusal(loop: str, used: str, point: bool) -> Refusal:
    return Refusal(
        f"krnl.permute puts loop {loop} outside loop {used}, but its bounds use the "
        f"induction variable of {used}",
        "a point loop must stay inside its tile loop"
        if point
        else "a loop must stay inside the loops its bounds use",
    )
