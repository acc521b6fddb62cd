"""Two independent applications of a recipe agree: the loop nest's and the primitives'.

The loop nest (nest/loops.py) applies a function's recipe ops once, and
pk.schedule turns its loops into the schedule's loops and steps. The schedule
primitives that Python users call apply the same ops to a schedule on their
own. Both follow dialect/krnl/recipe.py; this test replays every function's
recipe through the primitives, from the original loops, and holds the two to
the same schedule (every field of every loop, the isl value of every loop for
every statement, the loop tree, the steps) and to the same refusals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from xdsl.ir import SSAValue

import polykrnl as pk
from polykrnl.dialect import krnl as k
from polykrnl.errors import ScheduleError
from polykrnl.ir import Function, location_of
from polykrnl.nest.loops import Loop, MapBound
from polykrnl.poly import PLoop, PNode, PolyProgram, PStmt, poly_program
from polykrnl.transforms.core import LoopInfo, Schedule, SLoop, SNode, SStmt, Step
from polykrnl.transforms.primitives.block import block
from polykrnl.transforms.primitives.parallel import parallel
from polykrnl.transforms.primitives.permute import permute
from polykrnl.transforms.primitives.trivialize import trivialize
from polykrnl.transforms.primitives.unroll import unroll
from polykrnl.transforms.recipe import _info, schedule_of
from tests.parsed import load

CORPUS = Path(__file__).parent.parent / "corpus"
RECIPE_OPS = (k.BlockOp, k.PermuteOp, k.ParallelOp, k.UnrollOp)


def _functions_with_a_recipe() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path in sorted(CORPUS.glob("*.mlir")):
        mod = load(path)
        for fn in mod.functions:
            if any(isinstance(op, RECIPE_OPS) for op in fn.op.walk()):
                out.append((path.name, fn.name))
    return out


CASES = _functions_with_a_recipe()


def test_the_corpus_has_recipes_to_compare() -> None:
    assert len(CASES) >= 15, CASES


@pytest.mark.parametrize(("file", "func"), CASES, ids=[f"{f}:{n}" for f, n in CASES])
def test_nest_and_primitives_make_the_same_schedule(file: str, func: str) -> None:
    fn = load(CORPUS / file)[func]
    try:
        sched = schedule_of(fn, Schedule)
    except pk.UnsupportedError as e:
        pytest.skip(f"no polyhedral model: {e.message}")
    replayed = _replay(fn, sched.program)
    assert sched.nodes == replayed.nodes
    assert sched.steps == replayed.steps
    assert sched.recipe_steps == replayed.recipe_steps
    # The same loops (the schedule lists them in tree order, the replay as it made them).
    assert sorted(sched.loop_info) == sorted(replayed.loop_info)
    assert sched.loop_info, "no loop compared"
    for name, info in sched.loop_info.items():
        _assert_same_loop(info, replayed.loop_info[name])


def _assert_same_loop(info: LoopInfo, other: LoopInfo) -> None:
    # LoopInfo leaves its isl values out of ==: they are compared here, as isl
    # prints them (the same computation prints the same).
    assert info == other, info.name
    assert list(info.values) == list(other.values), info.name
    for stmt, value in info.values.items():
        assert value.is_equal(other.values[stmt]), (info.name, stmt)
        assert str(value) == str(other.values[stmt]), (info.name, stmt)


LOOP = " : !krnl.loop"
BLOCK = " : (!krnl.loop) -> (!krnl.loop, !krnl.loop)"
# A recipe the nest accepts but a primitive refuses: both refuse it with the same words.
REFUSED = {
    "parallel twice": (f"krnl.parallel %ii{LOOP}", f"krnl.parallel %ii{LOOP}"),
    "parallel listed twice": (f"krnl.parallel(%ii, %ii){LOOP}, !krnl.loop", ""),
    "unroll twice": (f"krnl.unroll %jj{LOOP}", f"krnl.unroll %jj{LOOP}"),
    "parallel of an unrolled loop": (f"krnl.unroll %jj{LOOP}", f"krnl.parallel %jj{LOOP}"),
    "block of an unrolled loop": (f"krnl.unroll %jj{LOOP}", f"%jb, %jl = krnl.block %jj 2{BLOCK}"),
    "unroll without a trip count": (f"krnl.unroll %ii{LOOP}", ""),
}

REFUSED_TEXT = """
func.func @f(%A: memref<?x4xf32>, %N: index) {
  %ii, %jj = krnl.define_loops 2
  FIRST
  SECOND
  krnl.iterate(%ii, LOOPS) with (%ii -> %i = 0 to %N, %jj -> %j = 0 to 4) {
    %v = krnl.load %A[%i, %j] : memref<?x4xf32>
    krnl.store %v, %A[%i, %j] : memref<?x4xf32>
  }
  return
}
"""


@pytest.mark.parametrize(("first", "second"), REFUSED.values(), ids=list(REFUSED))
def test_nest_and_primitives_refuse_alike(first: str, second: str) -> None:
    text = REFUSED_TEXT.replace("FIRST", first).replace("SECOND", second)
    # Once blocked, the loop of %jj is those of its tile and point handles.
    text = text.replace("LOOPS", "%jb, %jl" if "krnl.block" in second else "%jj")
    fn = pk.parse(text)["f"]
    with pytest.raises(ScheduleError) as ours:
        schedule_of(fn, Schedule)
    with pytest.raises(ScheduleError) as theirs:
        _replay(fn, poly_program(fn))
    assert (ours.value.message, ours.value.hint) == (theirs.value.message, theirs.value.hint)
    assert ours.value.location == theirs.value.location


# ------------------------------------------------- the replay through the primitives


def _replay(fn: Function, program: PolyProgram) -> Schedule:
    """`fn`'s recipe applied by the primitives to its original loops, statements last."""
    base = _base(program)
    # Each top-level nest gets its recipe on its own (recipe ops name the loops of one nest).
    parts: list[Schedule] = []
    part_of: dict[str, int] = {}
    for n, node in enumerate(base.nodes):
        inside = [x.name for x in _loops_of((node,))]
        parts.append(Schedule(program, (node,), {x: base.loop_info[x] for x in inside}))
        part_of.update(dict.fromkeys(inside, n))
    steps: list[Step] = []
    names = program.handle_names
    for op in fn.op.walk():
        handles: tuple[SSAValue, ...] = ()
        if isinstance(op, k.BlockOp | k.UnrollOp):
            handles = (op.loop,)
        elif isinstance(op, k.PermuteOp | k.ParallelOp):
            handles = tuple(op.loops)
        if not handles or handles[0] not in names or names[handles[0]] not in part_of:
            continue
        n = part_of[names[handles[0]]]
        sched = parts[n]
        try:
            if isinstance(op, k.BlockOp):
                tile, point = names[op.loop_block], names[op.loop_local]
                sched = block(sched, names[op.loop], op.size, names=(tile, point))
                part_of[tile] = part_of[point] = n
            elif isinstance(op, k.PermuteOp):
                sched = permute(sched, [names[h] for h in op.loops], op.perm)
            elif isinstance(op, k.ParallelOp):
                sched = parallel(sched, *(names[h] for h in op.loops))
            elif isinstance(op, k.UnrollOp):
                sched = unroll(sched, names[op.loop])
        except ScheduleError as e:
            raise ScheduleError(
                f"{op.name}: {e.message}", location=location_of(op, fn.module), hint=e.hint
            ) from None
        parts[n] = sched
        steps.append(replace(sched.steps[-1], location=location_of(op, fn.module)))
    for lp, name in program.loop_names.items():
        if lp.trivial and name in part_of and name in parts[part_of[name]].loop_info:
            n = part_of[name]
            parts[n] = trivialize(parts[n], name)
            steps.append(parts[n].steps[-1])
    loop_info = {x: i for part in parts for x, i in part.loop_info.items()}
    # Statements go where Krnl puts them: the program's nest.
    nodes = _snodes(program.tree)
    present = {n.name for n in _loops_of(nodes)}
    infos = {n: i for n, i in loop_info.items() if n in present}
    return Schedule(program, nodes, infos, tuple(steps), recipe_steps=len(steps))


def _base(program: PolyProgram) -> Schedule:
    """The original loops of every chain, with all its statements in the innermost one."""
    infos: dict[str, LoopInfo] = {}

    def collapse(nodes: Sequence[PNode]) -> list[SNode]:
        out: list[SNode] = []
        for n in nodes:
            if isinstance(n, PStmt):
                out.append(SStmt(n.name))
                continue
            iterate = n.loop.origin.iterate
            inner: list[SNode] = []
            gather(n, iterate, inner)
            body: tuple[SNode, ...] = tuple(inner)
            stmts = _stmt_names(body)
            for e in reversed(iterate.entries):
                origin = program.nest.origins[e.handle]
                name = program.handle_names[e.handle]
                bounds = (MapBound(e.lb_map, e.lb_operands),), (MapBound(e.ub_map, e.ub_operands),)
                plain = Loop(origin, "loop", e.handle, *bounds, 1)
                infos[name] = _info(program, plain, name, stmts, program.statement_map)
                body = (SLoop(name, body),)
            out.extend(body)
        return out

    def gather(node: PLoop, iterate: k.IterateOp, into: list[SNode]) -> None:
        for b in node.body:
            if isinstance(b, PLoop) and b.loop.origin.iterate is iterate:
                gather(b, iterate, into)
            else:
                into.extend(collapse([b]))

    return Schedule(program, tuple(collapse(program.tree)), infos)


def _loops_of(nodes: Sequence[SNode]) -> list[SLoop]:
    out: list[SLoop] = []
    for n in nodes:
        if isinstance(n, SLoop):
            out.append(n)
            out += _loops_of(n.body)
    return out


def _snodes(nodes: Sequence[PNode]) -> tuple[SNode, ...]:
    return tuple(
        SLoop(n.name, _snodes(n.body)) if isinstance(n, PLoop) else SStmt(n.name) for n in nodes
    )


def _stmt_names(nodes: Sequence[SNode]) -> list[str]:
    out: list[str] = []
    for n in nodes:
        out += [n.name] if isinstance(n, SStmt) else _stmt_names(n.body)
    return out
