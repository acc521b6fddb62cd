"""The race checker of the NumPy model (polykrnl.targets.pto.races): hand-built programs with and
without the flags they need, flag misuse, and every flag pair insert_sync writes into the
test kernels found necessary by removing it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.errors import RaceError, TileConstraintError
from polykrnl.targets.pto.interpret import simulate
from polykrnl.targets.pto.program import (
    GlobalView,
    Instr,
    Item,
    Loop,
    Pipe,
    Program,
    SetFlag,
    SetValid,
    TensorParam,
    WaitFlag,
    plan_offsets,
)
from polykrnl.targets.pto.sync import insert_sync
from polykrnl.targets.pto.types import vec_tile
from tests.targets.pto.pto_cases import CASES, KERNELS, inputs_and_reference, pto_kernel

A = TensorParam("A", "f32", ("N", "M"))
B = TensorParam("B", "f32", ("N", "M"))
T = vec_tile("f32", 3, 8)
SIZES = {"N": 9, "M": 8}
MTE2_TO_MTE3 = (SetFlag(Pipe.MTE2, Pipe.MTE3), WaitFlag(Pipe.MTE2, Pipe.MTE3))


def _prog(body: tuple[Item, ...], tiles: tuple[str, ...] = ("t",)) -> Program:
    return Program("k", (A, B), ("N", "M"), plan_offsets([(n, T) for n in tiles]), body)


def _arrays() -> dict[str, np.ndarray[Any, Any]]:
    a = np.arange(72, dtype=np.float32).reshape(9, 8)
    return {"A": a, "B": np.zeros_like(a)}


def _load(tile: str, tensor: TensorParam, row: object) -> Instr:
    return Instr("TLOAD", tile, (GlobalView.of(tensor, row, 0, 3, 8),))  # type: ignore[arg-type]


def _store(tensor: TensorParam, row: object, tile: str) -> Instr:
    return Instr("TSTORE", GlobalView.of(tensor, row, 0, 3, 8), (tile,))  # type: ignore[arg-type]


def test_a_store_of_a_loaded_tile_needs_a_flag() -> None:
    bad = _prog((_load("t", A, 0), _store(B, 0, "t")))
    with pytest.raises(RaceError) as e:
        simulate(bad, _arrays(), SIZES)
    assert "race on t: TSTORE on PIPE_MTE3 reads it while TLOAD on PIPE_MTE2" in e.value.message
    assert "set_flag(PIPE_MTE2, PIPE_MTE3" in (e.value.hint or "")
    simulate(bad, _arrays(), SIZES, check_races=False)  # the values alone are right
    good = _prog((_load("t", A, 0), *MTE2_TO_MTE3, _store(B, 0, "t")))
    arrays = _arrays()
    simulate(good, arrays, SIZES)
    np.testing.assert_array_equal(arrays["B"][:3], arrays["A"][:3])


def test_a_flag_orders_everything_issued_before_it_on_its_pipe() -> None:
    # u's load is ordered before its store only through the flag set after t's load
    body = (_load("u", A, 3), _load("t", A, 0), *MTE2_TO_MTE3, _store(B, 0, "t"), _store(B, 3, "u"))
    simulate(_prog(body, ("t", "u")), _arrays(), SIZES)
    late = (_load("t", A, 0), *MTE2_TO_MTE3, _load("u", A, 3), _store(B, 0, "t"), _store(B, 3, "u"))
    with pytest.raises(RaceError, match="race on u"):
        simulate(_prog(late, ("t", "u")), _arrays(), SIZES)


def test_global_memory_conflicts_element_by_element() -> None:
    # the store writes rows 0-2 of B; a later load of rows 3-5 of B touches none of them
    head = (_load("t", A, 0), *MTE2_TO_MTE3, _store(B, 0, "t"))
    simulate(_prog((*head, _load("u", B, 3)), ("t", "u")), _arrays(), SIZES)
    with pytest.raises(RaceError) as e:  # rows 2-4 overlap row 2
        simulate(_prog((*head, _load("u", B, 2)), ("t", "u")), _arrays(), SIZES)
    assert "race on global memory of B: TLOAD on PIPE_MTE2" in e.value.message
    assert "TSTORE on PIPE_MTE3" in e.value.message


def test_the_next_iteration_of_a_loop_races_with_the_last_one() -> None:
    loop = Loop("i", 0, "N", 3, (_load("t", A, "i"), *MTE2_TO_MTE3, _store(B, "i", "t")))
    with pytest.raises(RaceError) as e:
        simulate(_prog((loop,)), _arrays(), SIZES)
    # the load of the second iteration overwrites t while the first store may still read it
    assert "TLOAD on PIPE_MTE2 at i=3 writes it while TSTORE on PIPE_MTE3" in e.value.message
    assert "at i=0" in e.value.message
    synced = insert_sync(_prog((Loop("i", 0, "N", 3, (_load("t", A, "i"), _store(B, "i", "t"))),)))
    arrays = _arrays()
    simulate(synced, arrays, SIZES)
    np.testing.assert_array_equal(arrays["B"], arrays["A"])


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ((WaitFlag(Pipe.V, Pipe.MTE2, 1),), "waits for a flag that no set_flag has set"),
        (
            (SetFlag(Pipe.V, Pipe.MTE2, 1), SetFlag(Pipe.V, Pipe.MTE2, 1)),
            "while the same flag, set, has not been waited for",
        ),
        (
            (SetFlag(Pipe.V, Pipe.MTE2, 2),),
            "set_flag(PIPE_V, PIPE_MTE2, EVENT_ID2) is never waited for",
        ),
    ],
)
def test_flags_are_set_once_and_waited_for_once(body: tuple[Item, ...], message: str) -> None:
    with pytest.raises(RaceError) as e:
        simulate(_prog(body), _arrays(), SIZES)
    assert message in e.value.message
    # with the other half the same flags are fine
    fixed = tuple(
        x for it in body for x in (
            (SetFlag(it.src, it.dst, it.event), it) if isinstance(it, WaitFlag) else
            (it, WaitFlag(it.src, it.dst, it.event))
        )
    )  # fmt: skip
    simulate(_prog(fixed), _arrays(), SIZES)


def test_a_barrier_over_all_pipes_orders_everything() -> None:
    from polykrnl.targets.pto.program import Barrier

    simulate(_prog((_load("t", A, 0), Barrier(), _store(B, 0, "t"))), _arrays(), SIZES)
    with pytest.raises(RaceError):
        simulate(_prog((_load("t", A, 0), Barrier(Pipe.V), _store(B, 0, "t"))), _arrays(), SIZES)


def test_a_valid_shape_change_is_not_an_access() -> None:
    dyn = vec_tile("f32", 3, 8, None, None)
    decls = plan_offsets([("t", dyn)])
    body = (SetValid("t", 3, 8), _load("t", A, 0), SetValid("t", 3, 8), *MTE2_TO_MTE3)
    simulate(Program("k", (A, B), ("N", "M"), decls, (*body, _store(B, 0, "t"))), _arrays(), SIZES)


# --------------------------------------------------------------------------- generated kernels

# kernels whose loops all run at least three times at the case's sizes, so that every flag
# guards something the checker can see (not the fused kernels with a workspace: their
# MTE3 -> MTE2 pair before the second nest's load is also implied by the release flags)
MUTATED = [
    "transpose_f32_partial", "scale_add_relu", "softmax_partial", "layernorm3",
    "onnx_layernorm", "matmul_op", "nchw_to_nc1hwc0", "accumulate", "fill_wide",
]  # fmt: skip


def _flag_pairs(items: tuple[Item, ...], path: tuple[int, ...] = ()) -> Iterator[tuple[int, ...]]:
    """Paths to the adjacent set/wait pairs insert_sync wrote (event 0)."""
    for k, it in enumerate(items):
        if isinstance(it, Loop):
            yield from _flag_pairs(it.body, (*path, k))
        elif (
            isinstance(it, SetFlag) and it.event == 0 and k + 1 < len(items)
            and isinstance(items[k + 1], WaitFlag)
        ):  # fmt: skip
            yield (*path, k)


def _release_flags(items: tuple[Item, ...], path: tuple[int, ...] = ()) -> Iterator[Any]:
    """Per double-buffered loop and pipe pair: the paths of its wait and its set (not in a
    loop of one iteration, a matmul's first k tile, where they guard nothing)."""
    for k, it in enumerate(items):
        if isinstance(it, Loop):
            yield from _release_flags(it.body, (*path, k))
            if (it.stop - it.start - it.step).expand() == 0:
                continue
            found: dict[tuple[Pipe, Pipe], list[tuple[int, ...]]] = {}
            for j, x in enumerate(it.body):
                if isinstance(x, SetFlag | WaitFlag) and x.pingpong == it.var:
                    found.setdefault((x.src, x.dst), []).append((*path, k, j))
            yield from found.values()


def _drop(items: tuple[Item, ...], paths: list[tuple[int, ...]], n: int = 1) -> tuple[Item, ...]:
    """`items` without the item at each path (and the `n - 1` after it)."""
    out = list(items)
    for path in sorted(paths, reverse=True):
        if len(path) == 1:
            del out[path[0] : path[0] + n]
        else:
            loop = out[path[0]]
            assert isinstance(loop, Loop)
            out[path[0]] = replace(loop, body=_drop(loop.body, [path[1:]], n))
    return tuple(out)


def _simulate(case_name: str, prog: Program) -> None:
    case = next(c for c in CASES if c.name == case_name)
    kernel = pto_kernel(case, "a2a3")
    args, _ = inputs_and_reference(case, 7)
    simulate(
        prog,
        {t.name: args[t.name] for t in prog.tensors},
        kernel.sizes_of(args),
    )


@pytest.mark.parametrize("name", MUTATED)
def test_every_flag_of_a_generated_kernel_is_needed(name: str) -> None:
    prog = pto_kernel(next(c for c in CASES if c.name == name), "a2a3").program
    _simulate(name, prog)
    pairs = list(_flag_pairs(prog.body))
    assert pairs
    for path in pairs:
        with pytest.raises(RaceError, match="race on"):
            _simulate(name, prog.with_body(_drop(prog.body, [path], 2)))


def _long_args(name: str) -> dict[str, Any]:
    """Sizes at which every double-buffered loop runs at least three times."""
    rng = np.random.default_rng(3)

    def u(*shape: int, dt: Any = np.float32) -> np.ndarray[Any, Any]:
        return rng.uniform(-1, 1, shape).astype(dt)

    if name == "scale_add_relu":
        return {"N": 20, "M": 100, "X": u(20, 100), "Z": u(20, 100), "Y": u(20, 100)}
    if name == "transpose_f32":
        return {"N": 40, "M": 70, "A": u(40, 70), "B": u(70, 40)}
    if name == "softmax":
        return {"N": 29, "X": u(29, 40), "Y": u(29, 40)}
    assert name == "matmul"
    a, b = u(20, 120, dt=np.float16), u(120, 36, dt=np.float16)
    return {"M": 20, "N": 36, "K": 120, "A": a, "B": b, "C": u(20, 36)}


@pytest.mark.parametrize("name", ["scale_add_relu", "transpose_f32", "softmax", "matmul"])
def test_every_release_flag_of_double_buffering_is_needed(name: str) -> None:
    kernel = pk.schedule(KERNELS[name]).to_pto("a2a3")
    args = _long_args(name)
    arrays = {t.name: args[t.name] for t in kernel.program.tensors}
    sizes = kernel.sizes_of(args)
    prog = kernel.program
    simulate(prog, {k: v.copy() for k, v in arrays.items()}, sizes)
    releases = list(_release_flags(prog.body))
    assert releases
    for paths in releases:  # a double-buffered loop without one of its release pairs
        with pytest.raises(RaceError, match="race on"):
            mutant = prog.with_body(_drop(prog.body, paths))
            simulate(mutant, {k: v.copy() for k, v in arrays.items()}, sizes)


def test_tiles_over_the_same_bytes_conflict() -> None:
    """Tiles of two scopes (nests run one after the other) share UB bytes: loading the
    second while the store of the first may still read them is a race, which insert_sync
    orders (it knows which tiles share bytes)."""
    from polykrnl.targets.pto.program import TileDecl

    decls = (TileDecl("t", T, 0, None, 0), TileDecl("u", T, 0, None, 1))
    body = (_load("t", A, 0), *MTE2_TO_MTE3, _store(B, 0, "t"), _load("u", A, 3))
    prog = Program("k", (A, B), ("N", "M"), decls, (*body, *MTE2_TO_MTE3, _store(B, 3, "u")))
    with pytest.raises(RaceError) as e:
        simulate(prog, _arrays(), SIZES)
    assert "race on u: TLOAD on PIPE_MTE2 writes it while TSTORE on PIPE_MTE3" in e.value.message
    plain = Program("k", (A, B), ("N", "M"), decls, (*body, _store(B, 3, "u")))
    arrays = _arrays()
    simulate(insert_sync(plain), arrays, SIZES)
    np.testing.assert_array_equal(arrays["B"][:6], arrays["A"][:6])
    with pytest.raises(TileConstraintError, match="overlap"):  # within one scope they may not
        Program("k", (A, B), ("N", "M"), (decls[0], TileDecl("u", T, 0)), body)
