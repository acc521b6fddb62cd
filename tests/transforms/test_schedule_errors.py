"""One negative test per misuse message of the Schedule primitives.

Each test checks the exception type (pk.ScheduleError), a key phrase of the
message and that the hint is not empty: a user must learn what to do next.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

import polykrnl as pk

NESTS = """\
func.func @perfect(%A: memref<10x8xf32>, %B: memref<10x8xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 0 to 10, %jj -> %j = 0 to 8) {
    %v = krnl.load %A[%i, %j] : memref<10x8xf32>
    krnl.store %v, %B[%i, %j] : memref<10x8xf32>
  }
  return
}

func.func @imperfect(%A: memref<10x8xf32>, %X: memref<10xf32>) {
  %f0 = arith.constant 0.0 : f32
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 10) {
    krnl.store %f0, %X[%i] : memref<10xf32>
    %jj = krnl.define_loops 1
    krnl.iterate(%jj) with (%jj -> %j = 0 to 8) {
      %v = krnl.load %A[%i, %j] : memref<10x8xf32>
      krnl.store %v, %A[%i, %j] : memref<10x8xf32>
    }
  }
  return
}

func.func @deep(%A: memref<4x5x6xf32>) {
  %f0 = arith.constant 0.0 : f32
  %ii, %jj, %kk = krnl.define_loops 3
  krnl.iterate(%ii, %jj, %kk) with (%ii -> %i = 0 to 4, %jj -> %j = 0 to 5, %kk -> %k = 0 to 6) {
    krnl.store %f0, %A[%i, %j, %k] : memref<4x5x6xf32>
  }
  return
}

func.func @symbolic(%A: memref<?xf32>, %N: index) {
  %f0 = arith.constant 0.0 : f32
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    krnl.store %f0, %A[%i] : memref<?xf32>
  }
  return
}
"""

MODULE = pk.parse(NESTS, "nests.mlir")
pk.verify(MODULE)


def _original(name: str) -> pk.Schedule:
    return pk.Schedule.from_function(MODULE[name], recipe=False)


@pytest.fixture
def perfect() -> pk.Schedule:
    """for i = 0 to 10 { for j = 0 to 8 { S0 } }"""
    return _original("perfect")


@pytest.fixture
def imperfect() -> pk.Schedule:
    """for i = 0 to 10 { S0; for j = 0 to 8 { S1 } }"""
    return _original("imperfect")


@pytest.fixture
def blocked(perfect: pk.Schedule) -> pk.Schedule:
    """i (0 to 10) blocked by 4: i_t > i > j, the point loop i ends at min(i_t + 4, 10)."""
    return perfect.block("i", 4)


def _refused(action: Callable[[], object], phrase: str) -> pk.ScheduleError:
    with pytest.raises(pk.ScheduleError) as info:
        action()
    e = info.value
    assert phrase in e.message, e.message
    assert e.hint, f"no hint for: {e.message}"
    return e


# ------------------------------------------------------------------ unknown loop


@pytest.mark.parametrize(
    "use",
    [
        lambda s: s.block("k", 4),
        lambda s: s.permute(["i", "k"], [1, 0]),
        lambda s: s.reorder(["k", "i"]),
        lambda s: s.parallel("k"),
        lambda s: s.unroll("k"),
    ],
    ids=["block", "permute", "reorder", "parallel", "unroll"],
)
def test_unknown_loop_lists_the_loops(
    perfect: pk.Schedule, use: Callable[[pk.Schedule], object]
) -> None:
    e = _refused(lambda: use(perfect), "no loop named 'k' in the schedule of @perfect")
    assert e.hint == "its loops are: i, j"


def test_unknown_loop_after_blocking_names_the_new_loops(blocked: pk.Schedule) -> None:
    e = _refused(lambda: blocked.unroll("i_p"), "no loop named 'i_p'")
    assert e.hint == "its loops are: i_t, i, j"


# ------------------------------------------------------------------ block


@pytest.mark.parametrize("size", [0, -2, 2.0, True, "4", None])
def test_block_size_must_be_a_positive_int(perfect: pk.Schedule, size: object) -> None:
    e = _refused(
        lambda: perfect.block("i", size),  # type: ignore[arg-type]
        f"tile size {size!r} of krnl.block 'i' must be a positive integer",
    )
    assert "constant tile size >= 1" in (e.hint or "")


@pytest.mark.parametrize(
    "names",
    [("a", "a"), ("j", "il"), ("ib", "j")],
    ids=["duplicate", "tile-name-in-use", "point-name-in-use"],
)
def test_block_names_must_be_new_and_different(
    perfect: pk.Schedule, names: tuple[str, str]
) -> None:
    e = _refused(
        lambda: perfect.block("i", 4, names=names),
        f"cannot name the loops of block('i') {names[0]!r} and {names[1]!r}",
    )
    assert "names must be new and different" in e.message
    assert e.hint == "loops in use: j"


def test_block_names_in_use_among_blocked_loops(blocked: pk.Schedule) -> None:
    e = _refused(lambda: blocked.block("j", 2, names=("i_t", "jl")), "names must be new")
    assert e.hint == "loops in use: i, i_t"


def test_block_a_parallel_loop(perfect: pk.Schedule) -> None:
    e = _refused(
        lambda: perfect.parallel("i").block("i", 4),
        "krnl.block of loop 'i' after it was made parallel",
    )
    assert "apply krnl.block first, then mark the loops parallel" in (e.hint or "")


def test_block_an_unrolled_loop(perfect: pk.Schedule) -> None:
    e = _refused(
        lambda: perfect.unroll("j").block("j", 4),
        "krnl.block of loop 'j', which is unrolled",
    )
    assert "block first, then unroll the tile or point loop" in (e.hint or "")


# ------------------------------------------------------------------ permute / reorder


@pytest.mark.parametrize("perm", [[0, 0], [1, 2], [-1, 0]])
def test_permute_map_not_a_permutation(perfect: pk.Schedule, perm: list[int]) -> None:
    e = _refused(
        lambda: perfect.permute(["i", "j"], perm),
        f"permute map {perm} is not a permutation of 0..1",
    )
    assert e.hint is not None and e.hint.startswith("give each position 0..1 exactly once")


@pytest.mark.parametrize("perm", [[0], [1, 0, 2]])
def test_permute_map_of_the_wrong_length(perfect: pk.Schedule, perm: list[int]) -> None:
    e = _refused(
        lambda: perfect.permute(["i", "j"], perm),
        f"krnl.permute of 2 loops got a map of {len(perm)} position{'s' * (len(perm) != 1)}",
    )
    assert "one position per loop" in (e.hint or "")


def test_permute_repeated_loop(perfect: pk.Schedule) -> None:
    _refused(
        lambda: perfect.permute(["i", "i"], [1, 0]), "loop 'i' is listed twice in krnl.permute"
    )


@pytest.mark.parametrize(
    "use",
    [lambda s: s.permute(["i", "j"], [1, 0]), lambda s: s.reorder(["j", "i"])],
    ids=["permute", "reorder"],
)
def test_statement_between_the_loops(
    imperfect: pk.Schedule, use: Callable[[pk.Schedule], object]
) -> None:
    e = _refused(lambda: use(imperfect), "are not perfectly nested: loop 'i' also contains S0")
    # The hint shows the nest, so the user sees where S0 sits.
    assert "statements between them pin the order" in (e.hint or "")
    assert "for %i = 0 to 10\n    S0\n    for %j = 0 to 8" in (e.hint or "")


def test_loops_that_skip_a_level_are_not_one_chain() -> None:
    deep = _original("deep")
    e = _refused(lambda: deep.permute(["i", "k"], [1, 0]), "'i', 'k' are not one perfectly")
    assert "for %j = 0 to 5" in (e.hint or "")


@pytest.mark.parametrize(
    "use",
    [lambda s: s.permute(["i_t", "i"], [1, 0]), lambda s: s.reorder(["i", "i_t"])],
    ids=["permute", "reorder"],
)
def test_point_loop_moved_outside_its_tile(
    blocked: pk.Schedule, use: Callable[[pk.Schedule], object]
) -> None:
    e = _refused(
        lambda: use(blocked),
        "krnl.permute puts loop 'i' outside loop 'i_t', but its bounds use the induction "
        "variable of 'i_t'",
    )
    assert e.hint == "a point loop must stay inside its tile loop"


def test_reorder_repeated_loop(perfect: pk.Schedule) -> None:
    _refused(lambda: perfect.reorder(["j", "j"]), "loop 'j' is listed twice in reorder")


# ------------------------------------------------------------------ parallel


def test_parallel_needs_a_loop(perfect: pk.Schedule) -> None:
    _refused(lambda: perfect.parallel(), "parallel() needs at least one loop name")


def test_parallel_twice(perfect: pk.Schedule) -> None:
    e = _refused(lambda: perfect.parallel("i").parallel("i"), "loop 'i' is made parallel twice")
    assert e.hint == "remove one of the krnl.parallel ops: a loop is made parallel once"


# ------------------------------------------------------------------ unroll


def test_unroll_symbolic_loop() -> None:
    _refused(
        lambda: _original("symbolic").unroll("i"),
        "krnl.unroll 'i' needs a constant trip count, but the bounds of loop 'i' are not "
        "constant (for %i = 0 to %N)",
    )


def test_unroll_full_tile_point_loop_is_fine(perfect: pk.Schedule) -> None:
    # The counterpart of the refusal: 8 by 4 leaves full tiles, the point loop runs 4 times.
    assert "// unroll" in str(perfect.block("j", 4).unroll("j").loops())


def test_unroll_twice(perfect: pk.Schedule) -> None:
    e = _refused(lambda: perfect.unroll("j").unroll("j"), "loop 'j' is unrolled twice")
    assert e.hint == "remove one of the krnl.unroll ops: a loop is fully unrolled once"


def test_unroll_a_parallel_loop(perfect: pk.Schedule) -> None:
    e = _refused(
        lambda: perfect.parallel("j").unroll("j"),
        "krnl.unroll of loop 'j', which is parallel",
    )
    assert "a loop is either unrolled or parallel" in (e.hint or "")


def test_parallel_of_an_unrolled_loop(perfect: pk.Schedule) -> None:
    # Krnl text refuses it (the verifier); the Python API follows the same rule.
    e = _refused(
        lambda: perfect.unroll("j").parallel("j"), "krnl.parallel of loop 'j', which is unrolled"
    )
    assert "a loop is either unrolled or parallel" in (e.hint or "")


# ------------------------------------------------------------------ refusals change nothing


def test_a_refused_primitive_leaves_the_schedule_as_it_was(blocked: pk.Schedule) -> None:
    before = (str(blocked.loops()), blocked.steps, blocked.loop_names())
    for bad in (
        lambda: blocked.unroll("no_such_loop"),
        lambda: blocked.reorder(["i", "i_t"]),
        lambda: blocked.block("j", 0),
    ):
        with pytest.raises(pk.ScheduleError):
            bad()
    assert (str(blocked.loops()), blocked.steps, blocked.loop_names()) == before


# ------------------------------------------------------------------ misused recipes

# `%i to min(%i + 4, %i + 6)` runs 4 times (MLIR's getConstantTripCount takes the
# minimum over the upper bound's results): krnl.unroll accepts it.
MIN_UNROLL = """\
func.func @min_unroll(%a: memref<10x16xf32>) {
  %one = arith.constant 1.0 : f32
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 10) {
    %jj = krnl.define_loops 1
    krnl.unroll %jj : !krnl.loop
    krnl.iterate(%jj) with (%jj -> %j = %i to min affine_map<(d0) -> (d0 + 4, d0 + 6)>(%i)) {
      krnl.store %one, %a[%i, %j] : memref<10x16xf32>
    }
  }
  return
}
"""

SYMBOLIC_UNROLL = """\
func.func @symbolic_unroll(%a: memref<?xf32>, %n: index) {
  %one = arith.constant 1.0 : f32
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.unroll %ib : !krnl.loop
  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to %n) {
    krnl.store %one, %a[%i] : memref<?xf32>
  }
  return
}
"""


def test_misused_recipe_is_reported_at_the_recipe_op() -> None:
    # Unrolling a tile loop of symbolic trip count: the recipe op is located, with a hint.
    mod = pk.parse(SYMBOLIC_UNROLL, "symbolic_unroll.mlir")
    with pytest.raises(pk.PolykrnlError) as info:
        pk.schedule(mod["symbolic_unroll"])
    e = info.value
    assert "trip count" in e.message
    assert e.location is not None
    assert (e.location.file, e.location.line) == ("symbolic_unroll.mlir", 5)
    assert e.location.line_text is not None and "krnl.unroll %ib" in e.location.line_text
    assert e.hint


def test_unroll_of_min_of_constant_offsets() -> None:
    mod = pk.parse(MIN_UNROLL, "min_unroll.mlir")
    text = str(pk.schedule(mod["min_unroll"]).loops())
    assert "for %j = %i to min(%i + 4, %i + 6) {  // unroll" in text


def test_block_naming_the_tile_after_the_blocked_loop(perfect: pk.Schedule) -> None:
    try:
        sched = perfect.block("i", 4, names=("i", "il"))
    except pk.ScheduleError as e:  # refusing the name is a fine outcome too
        assert e.hint
        return
    assert "S0: krnl.store B[%il, %j] <- A[%il, %j]" in str(sched.loops())
