"""Double buffering (polykrnl.targets.pto.pipeline): which tiles get two copies, where the release
flags go, the C++ it prints, and what stays single-buffered. Results of the pipelined kernels
against the interpreter are in test_pto_emit (every case), with the race checker on."""

from __future__ import annotations

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.targets.pto.interpret import simulate, timeline
from polykrnl.targets.pto.pipeline import double_buffer
from polykrnl.targets.pto.program import (
    GlobalView,
    Instr,
    Loop,
    Pipe,
    Program,
    SetFlag,
    TensorParam,
    WaitFlag,
    expr,
    plan_offsets,
    walk,
)
from polykrnl.targets.pto.sync import insert_sync
from polykrnl.targets.pto.types import vec_tile
from tests.targets.pto.pto_cases import KERNELS

RNG = np.random.default_rng(5)


def _kernel(name: str, arch: str = "a2a3") -> pk.PtoKernel:
    return pk.schedule(KERNELS[name]).to_pto(arch)


def test_tiles_two_pipes_pass_along_get_two_copies() -> None:
    prog = _kernel("scale_add_relu").program
    doubled = {t.name: t.pingpong for t in prog.tiles if t.pingpong is not None}
    # the loaded X and Z tiles and the stored result; the vector-only temporaries keep one
    assert doubled == {"x1": "jb", "z3": "jb", "t5": "jb"}
    for t in prog.tiles:
        assert t.copies == (2 if t.name in doubled else 1)
    inner = next(it for it in walk(prog.body) if isinstance(it, Loop) and it.var == "jb")
    flags = [it for it in inner.body if isinstance(it, SetFlag | WaitFlag) and it.pingpong]
    # per pipe pair one wait (before the first use of the copy) and one set (after the last)
    assert [(type(f).__name__, f.src, f.dst) for f in flags] == [
        ("WaitFlag", Pipe.V, Pipe.MTE2),  # the copy is free again: V read it 2 tiles ago
        ("SetFlag", Pipe.V, Pipe.MTE2),  # after the last vector read of x1 and z3 (TADD)
        ("WaitFlag", Pipe.MTE3, Pipe.V),  # the result copy was stored 2 tiles ago
        ("SetFlag", Pipe.MTE3, Pipe.V),  # after the store
    ]
    ops = [it.op if isinstance(it, Instr) else type(it).__name__ for it in inner.body]
    assert ops.index("TADD") + 1 == ops.index("SetFlag", ops.index("TADD"))
    assert all(f.event == 1 for f in flags)


def test_the_cpp_uses_the_copy_of_the_iteration() -> None:
    src = _kernel("scale_add_relu").source
    assert "x1[2] = {" in src and "TASSIGN(x1[1], 0x400);" in src
    # the copies alternate along all iterations over jb, whatever the row of tiles
    assert "int64_t jb_count = 0;" in src
    assert "const int64_t jb_pp = jb_count++ % 2;" in src
    assert "TLOAD(x1[jb_pp], X_v1);" in src
    assert "wait_flag(PIPE_V, PIPE_MTE2, (event_t)(EVENT_ID1 + jb_pp));" in src
    # both copies free before the loop, both waited for after it
    for ev in ("EVENT_ID1", "EVENT_ID2"):
        assert src.count(f"set_flag(PIPE_V, PIPE_MTE2, {ev});") == 1
        assert src.count(f"wait_flag(PIPE_V, PIPE_MTE2, {ev});") == 1
    # the single-buffered kernel waited for the vector unit at the end of every tile
    assert "set_flag(PIPE_V, PIPE_MTE2, EVENT_ID0)" not in src


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_many_tiles_alternate_the_copies(arch: str) -> None:
    # 5 x 4 tiles of 8 x 32: every copy is reused, the last tiles are partial
    n, m = 37, 100
    x = RNG.uniform(-1, 1, (n, m)).astype(np.float32)
    z = RNG.uniform(-1, 1, (n, m)).astype(np.float32)
    y = np.zeros_like(x)
    _kernel("scale_add_relu", arch).simulate(N=n, M=m, X=x, Z=z, Y=y)
    np.testing.assert_array_equal(y, np.maximum(np.float32(2) * x + z, 0))


A = TensorParam("A", "f32", ("N",))
B = TensorParam("B", "f32", ("N",))


def _copy_loop(body_order: str, size: int = 64) -> Program:
    """A loop over rows of A copied to B through tile t (and u): "load-store" loads first;
    "store-load" stores the tile loaded by the iteration before (software pipelining)."""
    t = vec_tile("f32", 1, size)
    load = Instr("TLOAD", "t", (GlobalView(A.name, expr("i"), expr(1), expr(size), expr(size)),))
    store = Instr("TSTORE", GlobalView(B.name, expr("i"), expr(1), expr(size), expr(size)), ("t",))
    body = (load, store) if body_order == "load-store" else (store, load)
    return Program("k", (A, B), ("N",), plan_offsets([("t", t)]), (Loop("i", 0, "N", size, body),))


def test_a_tile_that_carries_a_value_to_the_next_iteration_keeps_one_copy() -> None:
    assert double_buffer(_copy_loop("load-store")).tile("t").pingpong == "i"
    assert double_buffer(_copy_loop("store-load")).tile("t").pingpong is None


def test_double_buffered_copy_runs_race_free() -> None:
    prog = insert_sync(double_buffer(_copy_loop("load-store")))
    a = RNG.uniform(-1, 1, 64 * 5).astype(np.float32)
    b = np.zeros_like(a)
    simulate(prog, {"A": a, "B": b}, {"N": a.size})
    np.testing.assert_array_equal(a, b)


def test_a_loop_whose_copies_do_not_fit_keeps_one_and_says_why() -> None:
    # one f32 tile of 30000 elements: 120000 bytes, twice that is more than UB holds
    prog = double_buffer(_copy_loop("load-store", 30000))
    assert prog.tile("t").pingpong is None
    assert prog.notes and "loop i not double-buffered: tiles do not fit UB" in prog.notes[0]


def test_the_k_tiles_of_a_matmul_alternate_and_the_accumulator_stays() -> None:
    # the first k tile is a loop of one iteration over kb before the loop over the others:
    # the L1 and L0A/L0B tiles live in loops over kb only, the accumulator outside them
    k = _kernel("matmul")
    doubled = {t.name for t in k.program.tiles if t.pingpong == "kb"}
    assert doubled == {"a_l1_1", "b_l1_2", "a_l0_3", "b_l0_4"}
    assert k.program.tile("c_l0_5").pingpong is None
    # one count of iterations over kb for both loops: the copies alternate through them
    assert k.source.count("const int64_t kb_pp = kb_count++ % 2;") == 2
    m, n, kk = 40, 50, 200
    a = RNG.uniform(-1, 1, (m, kk)).astype(np.float16)
    b = RNG.uniform(-1, 1, (kk, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    k.simulate(M=m, N=n, K=kk, A=a, B=b, C=c)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5, atol=1e-5)
    single = pk.schedule(KERNELS["matmul"]).to_pto("a2a3", double_buffer=False)
    args = {"M": m, "N": n, "K": kk, "A": a, "B": b, "C": c}
    assert k.timeline(**args).makespan < single.timeline(**args).makespan


def test_tiles_used_outside_the_loop_keep_one_copy() -> None:
    prog = _copy_loop("load-store")
    outside = Instr("TLOAD", "t", (GlobalView(A.name, expr(0), expr(1), expr(64), expr(64)),))
    prog = prog.with_body((outside, *prog.body))
    assert double_buffer(prog).tile("t").pingpong is None


def test_single_buffered_kernels_on_request() -> None:
    k = pk.schedule(KERNELS["scale_add_relu"]).to_pto("a2a3", double_buffer=False)
    assert all(t.pingpong is None for t in k.tiles)
    n, m = 37, 100
    x = RNG.uniform(-1, 1, (n, m)).astype(np.float32)
    z = RNG.uniform(-1, 1, (n, m)).astype(np.float32)
    y = np.zeros_like(x)
    k.simulate(N=n, M=m, X=x, Z=z, Y=y)
    np.testing.assert_array_equal(y, np.maximum(np.float32(2) * x + z, 0))


def test_timeline_of_a_copy_loop_by_hand() -> None:
    # 4 rows of 64 f32 (256 bytes): a TLOAD or TSTORE takes 100 + 256 / 64 = 104 cycles.
    # One copy: each load waits for the store before it, so nothing overlaps: 8 x 104.
    # Two copies: load i + 1 runs during store i; store i ends at (i + 2) x 104: 5 x 104.
    a = RNG.uniform(-1, 1, 256).astype(np.float32)
    arrays = {"A": a, "B": np.zeros_like(a)}
    single = insert_sync(_copy_loop("load-store"))
    double = insert_sync(double_buffer(_copy_loop("load-store")))
    assert timeline(single, dict(arrays), {"N": 256}).makespan == 8 * 104
    tl = timeline(double, dict(arrays), {"N": 256})
    assert tl.makespan == 5 * 104
    assert [s.start for s in tl.spans if s.op == "TLOAD"] == [0, 104, 208, 312]
    assert [s.end for s in tl.spans if s.op == "TSTORE"] == [208, 312, 416, 520]
    assert tl.busy(Pipe.MTE2) == 4 * 104
    assert "8 instructions in 520 modelled cycles" in tl.summary()


def test_timeline_of_a_kernel_leaves_the_arrays_alone() -> None:
    k = _kernel("softmax")
    x = RNG.uniform(-1, 1, (64, 40)).astype(np.float32)
    y = np.zeros_like(x)
    single = pk.schedule(KERNELS["softmax"]).to_pto("a2a3", double_buffer=False)
    fast, slow = k.timeline(N=64, X=x, Y=y), single.timeline(N=64, X=x, Y=y)
    assert not y.any()
    # the same instructions, overlapped: under the default costs the row loop of the
    # single-buffered softmax waits for the vector unit before each load
    assert sorted(s.op for s in fast.spans) == sorted(s.op for s in slow.spans)
    assert fast.makespan < slow.makespan
