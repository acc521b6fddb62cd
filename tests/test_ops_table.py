"""pk.supported_ops() / `polykrnl ops`: the table of ops x stages, read from the op tables."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.cli import main
from polykrnl.reader.parser import context
from tests.parsed import load


def test_every_op_that_parses_has_a_row() -> None:
    table = pk.supported_ops()
    names = {r.name for r in table.rows}
    parsed = {op.name for op in context().loaded_ops if not op.name.startswith("builtin.")}
    assert names == parsed
    # the two analyses, then one column per code generation target
    assert table.stages == ("interpret", "poly", "numpy", "numba", "pto", "mlir")


def test_rows_agree_with_what_the_stages_do() -> None:
    table = pk.supported_ops()
    # What the table claims is what runs: math.tanh and arith.remf, through the
    # interpreter, equal NumPy's float32 tanh and fmod.
    fn = pk.parse(
        """func.func @f(%a: f32, %b: f32) -> f32 {
  %t = math.tanh %a : f32
  %r = arith.remf %t, %b : f32
  return %r : f32
}"""
    )["f"]
    assert table["math.tanh"].supports("numpy") and table["arith.remf"].supports("numpy")
    got = pk.run_reference(fn, a=np.float32(0.5), b=np.float32(0.25))
    assert got == np.float32(np.fmod(np.float32(np.tanh(0.5)), np.float32(0.25)))


def test_an_op_no_stage_supports_gets_the_registry_error() -> None:
    table = pk.supported_ops()
    assert not table["memref.collapse_shape"].supports("interpret")
    fn = pk.parse(
        """func.func @f(%p: memref<2x5xf32>) -> memref<10xf32> {
  %c0 = arith.constant 0 : index
  %v = memref.collapse_shape %p [[0, 1]] : memref<2x5xf32> into memref<10xf32>
  return %v : memref<10xf32>
}"""
    )["f"]
    with pytest.raises(pk.UnsupportedError) as e:
        pk.run_reference(fn, p=np.zeros((2, 5), np.float32))
    assert "`memref.collapse_shape` is not supported by the reference interpreter yet" in str(
        e.value
    )
    assert e.value.location is not None and e.value.location.line == 3
    assert "polykrnl ops" in (e.value.hint or "")


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out=out, err=err), out.getvalue(), err.getvalue()


def test_cli_prints_the_table() -> None:
    code, out, _ = _cli("ops", "--dialect", "arith")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["op", "parse", "interpret", "poly", "numpy", "numba", "pto", "mlir"]
    assert any(line.split()[:5] == ["arith.remf", "yes", "yes", "yes", "yes"] for line in lines)
    assert lines[-1].startswith(f"{len(lines) - 2} ops parse")


def test_cli_json_matches_the_table() -> None:
    code, out, _ = _cli("ops", "--json")
    assert code == 0
    rows = {r["op"]: r for r in json.loads(out)}
    table = pk.supported_ops()
    assert set(rows) == {r.name for r in table.rows}
    assert rows["krnl.iterate"] == {"op": "krnl.iterate", **dict(table["krnl.iterate"].stages)}


def test_cli_unknown_dialect_is_a_usage_error() -> None:
    code, _, err = _cli("ops", "--dialect", "vectr")
    assert code == 2
    assert "no dialect named 'vectr'" in err and "krnl" in err


def test_ops_the_statement_writer_handles_compile_in_some_corpus_program() -> None:
    # The numpy column counts STRUCTURAL_OPS as supported: each must occur in a corpus
    # program (or a recipe test) whose NumPy kernel compiles, or the claim is untested.
    from pathlib import Path

    from polykrnl.codegen.structural_ops import STRUCTURAL_OPS

    root = Path(__file__).parent
    files = [*root.glob("corpus/*.mlir"), *root.glob("transforms/recipes/*.mlir")]
    # krnl.call reaches only functions registered from Python: the NumPy differential
    # test registers one (test_krnl_call_reaches_registered_functions_with_their_keywords).
    untested = {op.name for op in STRUCTURAL_OPS} - {"krnl.call"}
    for path in sorted(files):
        for fn in load(path).functions:
            if not fn.op.body.blocks:
                continue
            used = {op.name for op in fn.op.walk()} & untested
            if not used:
                continue
            try:
                pk.schedule(fn, force=True).to_numpy()
            except pk.UnsupportedError:
                continue
            untested -= used
    assert not untested, f"no corpus program compiles with {sorted(untested)}"


MEMCPY = """func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %n = arith.constant 8 : i64
  "krnl.memcpy"(%b, %a, %n, %c0, %c0) : (memref<8xf32>, memref<8xf32>, i64, index, index) -> ()
  return
}"""


def test_target_columns_say_what_each_target_builds() -> None:
    """krnl.memcpy: NumPy translates it, Numba refuses it; math.tanh has no PTO pattern.
    Each claim is checked by building the kernel."""
    pytest.importorskip("numba")
    table = pk.supported_ops()
    row = table["krnl.memcpy"]
    assert row.supports("numpy") and not row.supports("numba")
    fn = pk.parse(MEMCPY)["f"]
    a, b = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    pk.compile(fn)(a=a, b=b)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(pk.UnsupportedError, match=r"krnl\.memcpy"):
        pk.compile(fn, target="numba")
    assert table["arith.addf"].supports("pto") and not table["math.tanh"].supports("pto")
    tanh = pk.parse(
        """func.func @g(%x: memref<8x32xf32>, %y: memref<8x32xf32>) {
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb) with (%ii -> %i = 0 to 8, %jj -> %j = 0 to 32) {
    krnl.iterate(%il, %jl) with () {
      %v = krnl.load %x[%i, %j] : memref<8x32xf32>
      %t = math.tanh %v : f32
      krnl.store %t, %y[%i, %j] : memref<8x32xf32>
    }
  }
  return
}"""
    )["g"]
    with pytest.raises(pk.PtoError):
        pk.compile(tanh, target="pto", arch="a2a3")


def test_targets_are_found_by_name() -> None:
    fn = pk.parse(MEMCPY)["f"]
    with pytest.raises(pk.ScheduleError, match="unknown target 'nump'") as e:
        pk.compile(fn, target="nump")
    assert "'numpy'" in (e.value.hint or "") and "'pto'" in (e.value.hint or "")
    with pytest.raises(pk.ScheduleError, match="the NumPy target takes no option boundscheck"):
        pk.compile(fn, boundscheck=False)
    sched = pk.schedule(fn)
    assert sched.kernel("numpy") is sched.to_numpy()  # one cache for both ways in
