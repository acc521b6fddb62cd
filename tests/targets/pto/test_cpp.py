"""Printed C++ of the hand-built programs: structural checks (not a golden of unreviewed text).

Reading the printed text back: tile declarations, TASSIGN offsets, instructions in order with
the flags between them, braces. The expectations come from the PTO rules in
docs/pto.md (32-byte aligned offsets within the buffer capacity, a flag pair
between a producer pipe and a consumer pipe).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
import sympy  # type: ignore[import-untyped]

from polykrnl.errors import PtoError
from polykrnl.targets.pto.cpp import cpp_expr, harness, to_cpp
from polykrnl.targets.pto.program import (
    GlobalView,
    Instr,
    Loop,
    Program,
    TensorParam,
    eval_expr,
    expr,
    plan_offsets,
)
from polykrnl.targets.pto.sync import insert_sync
from polykrnl.targets.pto.types import Buffer, arch, vec_tile
from tests.targets.pto.hand_programs import cases

CASES = cases()
PIPE_OF = {"TLOAD": "PIPE_MTE2", "TMOV": "PIPE_MTE1", "TMATMUL": "PIPE_M", "TMATMUL_ACC": "PIPE_M"}


def _c_int_eval(text: str, env: dict[str, int]) -> int:
    """Evaluate printed C++ integer arithmetic in Python with C semantics for / on the
    non-negative values used here (std::min/max rewritten to min/max)."""
    py = text.replace("std::min<int64_t>", "min").replace("std::max<int64_t>", "max")
    py = re.sub(r"(?<![/])/(?![/])", "//", py)
    return int(eval(py, {"min": min, "max": max}, dict(env)))


@pytest.mark.parametrize(
    "text",
    [
        "Min(16, N - i)",
        "floor((N + 15) / 16) * 16 - i",
        "Max(i - 3, 0) + Mod(N, 7) * 2",
        "ceiling(M / 8)",
        "-i + 3 * (N - 2 * j)",
    ],
)
def test_cpp_expr_evaluates_like_the_expression(text: str) -> None:
    e = expr(text)
    for env in ({"N": 40, "M": 21, "i": 16, "j": 3}, {"N": 7, "M": 64, "i": 5, "j": 1}):
        assert _c_int_eval(cpp_expr(e), env) == eval_expr(e, env), cpp_expr(e)


def test_cpp_expr_refuses_rationals() -> None:
    with pytest.raises(PtoError, match="not an integer expression"):
        cpp_expr(sympy.Symbol("N", integer=True) / 2)


def _kernel_lines(src: str) -> list[str]:
    return [ln.strip() for ln in src.splitlines()]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_structure(case: Any) -> None:
    prog: Program = case.program
    src = to_cpp(prog)
    assert src.startswith("// PTO kernel")
    assert "#include <pto/pto-inst.hpp>" in src and "using namespace pto;" in src
    assert src.count("{") == src.count("}")
    sig = re.search(r"__global__ AICORE void (\w+)\((.*)\)\n\{", src)
    assert sig is not None and sig.group(1) == prog.name
    args = [a.strip() for a in sig.group(2).split(",")]
    assert args == [f"__gm__ {t.dtype.cpp}* {t.name}" for t in prog.tensors] + [
        f"int64_t {p}" for p in prog.params
    ]
    a = arch(prog.arch)
    for d in prog.tiles:
        decl = [ln for ln in _kernel_lines(src) if re.match(rf"Tile<.*> {d.name}(\(|;)", ln)]
        assert len(decl) == 1, d.name  # declared once
        assert decl[0].startswith(d.type.cpp)
        m = re.search(rf"TASSIGN\({d.name}, 0x([0-9a-f]+)\);", src)
        assert m is not None
        off = int(m.group(1), 16)
        assert off % 32 == 0
        assert off + d.type.bytes <= a.usable(d.buffer)
    # tiles of one buffer do not overlap
    for buf in Buffer:
        spans = sorted((d.offset, d.end) for d in prog.tiles if d.buffer is buf)
        assert all(e0 <= s1 for (_, e0), (s1, _) in itertools.pairwise(spans))


def _flag_pairs_between(lines: list[str], start: int, stop: int) -> set[tuple[str, str]]:
    sets, waits = set(), set()
    for ln in lines[start:stop]:
        if m := re.match(r"set_flag\((\w+), (\w+), EVENT_ID\d\);", ln):
            sets.add((m.group(1), m.group(2)))
        if m := re.match(r"wait_flag\((\w+), (\w+), EVENT_ID\d\);", ln):
            waits.add((m.group(1), m.group(2)))
    return sets & waits


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_every_load_is_waited_for_before_its_tile_is_read(case: Any) -> None:
    lines = _kernel_lines(to_cpp(case.program))
    for k, ln in enumerate(lines):
        m = re.match(r"TLOAD\((\w+), \w+\);", ln)
        if not m:
            continue
        tile = m.group(1)
        for j in range(k + 1, len(lines)):
            use = re.match(r"(T[A-Z_]+)\((.*)\);", lines[j])
            if use and tile in [x.strip() for x in use.group(2).split(",")[1:]]:
                consumer = PIPE_OF.get(use.group(1), "PIPE_V")
                assert ("PIPE_MTE2", consumer) in _flag_pairs_between(lines, k, j), (tile, lines[j])
                break
        else:
            raise AssertionError(f"loaded tile {tile} is never read")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_stores_wait_for_the_producer_pipe(case: Any) -> None:
    lines = _kernel_lines(to_cpp(case.program))
    for k, ln in enumerate(lines):
        m = re.match(r"TSTORE\(\w+, (\w+)\);\s*// (PIPE_\w+)", ln)
        if not m:
            continue
        producer = None
        for j in range(k - 1, -1, -1):
            w = re.match(r"(T[A-Z_]+)\((\w+),", lines[j])
            if w and w.group(2) == m.group(1) and w.group(1) != "TSTORE":
                producer = PIPE_OF.get(w.group(1), "PIPE_V")
                break
        assert producer is not None
        assert (producer, m.group(2)) in _flag_pairs_between(lines, j, k)


def test_loop_carried_reuse_is_synchronized() -> None:
    # the next iteration's TLOAD overwrites tile a while the previous TSTORE may still read it
    A = TensorParam("A", "f32", ("N", "M"))
    B = TensorParam("B", "f32", ("N", "M"))
    tiles = plan_offsets([("a", vec_tile("f32", 1, 8))])
    body = [
        Instr("TLOAD", "a", (GlobalView.of(A, "i", 0, 1, 8),)),
        Instr("TSTORE", GlobalView.of(B, "i", 0, 1, 8), ("a",)),
    ]
    prog = insert_sync(Program("copy", (A, B), ("N", "M"), tiles, (Loop("i", 0, "N", 1, body),)))
    lines = _kernel_lines(to_cpp(prog))
    k = next(i for i, ln in enumerate(lines) if ln.startswith("TSTORE"))
    assert ("PIPE_MTE2", "PIPE_MTE3") in _flag_pairs_between(lines, 0, k)
    assert ("PIPE_MTE3", "PIPE_MTE2") in _flag_pairs_between(lines, k, len(lines))


def test_dynamic_valid_shapes_use_the_setters() -> None:
    src = to_cpp(CASES[0].program)  # transpose f32: both dims dynamic
    assert "a.SetValidShape(std::min<int64_t>(16, N - i), std::min<int64_t>(16, M - j));" in src
    soft = to_cpp(next(c for c in CASES if c.name == "softmax_rows").program)
    assert "mx.SetValidRow(std::min<int64_t>(8, N - i));" in soft
    assert re.search(r"Tile<[^;]*ColMajor, -1, 1> mx\(8\);", soft)


def test_harness_reads_runs_writes_each_tensor_in_order() -> None:
    case = next(c for c in CASES if c.name == "matmul_f16")
    src = harness(case.program, case.params)
    main = src[src.index("int main") :]
    assert "const int64_t M = 40;" in main and "const int64_t K = 70;" in main
    sizes = re.findall(r"std::vector<unsigned char> (\w+)_buf\((\d+)\);", main)
    assert sizes == [("A", str(40 * 70 * 2)), ("B", str(70 * 50 * 2)), ("C", str(40 * 50 * 4))]
    reads = re.findall(r"polykrnl_io\(argv\[(\d)\], (\w+)_buf, (true|false)\)", main)
    assert reads == [(str(k + 1), t, rw) for rw in ("false", "true") for k, t in enumerate("ABC")]
    assert "matmul_f16(reinterpret_cast<half*>(A_buf.data())" in main
    assert "return 2;" in main
    with pytest.raises(PtoError, match="no value for problem size"):
        harness(case.program, {"M": 1})


def test_bad_identifiers_are_refused() -> None:
    prog = Program("int", (), (), (), ())
    with pytest.raises(PtoError, match="C\\+\\+ identifier"):
        to_cpp(prog)
