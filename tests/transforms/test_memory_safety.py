"""Memory safety as a polyhedral fact (transforms/memory_safety.py).

Verdicts on small programs are checked by hand (the condition is the one a reader
derives from the subscripts and the extents); every witness is checked by the
reference interpreter: run with the witness's sizes, it must refuse the access.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import polykrnl as pk
from polykrnl.inputs import make_inputs
from polykrnl.transforms.memory_safety import memory_report
from tests.bounds_programs import BMM, GATHER

ROOT = Path(__file__).resolve().parents[2]


# X[i + 2] for i < N over a static memref<10xf32>: in bounds exactly when N <= 8.
SHIFTED = """
func.func @shifted(%X: memref<10xf32>, %Y: memref<10xf32>, %N: index) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    %j = affine.apply affine_map<(d0) -> (d0 + 2)>(%i)
    %v = krnl.load %X[%j] : memref<10xf32>
    krnl.store %v, %Y[%i] : memref<10xf32>
  }
  return
}
"""

# onnx-mlir's SIMD form over a flattened 10 x 20 argument: 32 lanes at a time over 200
# elements, no remainder loop, so the last load reads lanes 192..223 (past 200).
VECTOR_PAST_END = """
func.func @scale(%X: memref<10x20xf32>, %Y: memref<200xf32>) {
  %c200 = arith.constant 200 : index
  %shape = memref.alloc() : memref<1xindex>
  affine.store %c200, %shape[0] : memref<1xindex>
  %flat = memref.reshape %X(%shape) : (memref<10x20xf32>, memref<1xindex>) -> memref<200xf32>
  krnl.iterate() with () {
    %l = krnl.define_loops 1
    %t, %p = krnl.block %l 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    krnl.iterate(%t) with (%l -> %i = 0 to 200) {
      %s = krnl.get_induction_var_value(%t) : (!krnl.loop) -> index
      %v = vector.load %flat[%s] : memref<200xf32>, vector<32xf32>
      %w = arith.addf %v, %v : vector<32xf32>
      vector.store %w, %Y[%s] : memref<200xf32>, vector<32xf32>
    }
  }
  return
}
"""


def _memory(text: str, name: str) -> pk.LegalityReport:
    return pk.schedule(pk.parse(text)[name]).check()


def _witness_is_refused(fn: pk.Function, report: pk.LegalityReport) -> None:
    """The interpreter, run with each certain witness's sizes, refuses an access (of an array
    the report says may leave its bounds: an earlier access of another one may fail first)."""
    assert report.memory is not None
    flagged = [a.array for a in report.memory.arrays if a.verdict != "in bounds"]
    for a in report.memory.arrays:
        w = a.witness
        if w is None or not w.certain:
            continue
        params = {k: v for k, v in w.params.items() if "." in k or k.isidentifier()}
        inputs = make_inputs(fn, params, seed=0, size=4)
        with pytest.raises(pk.InterpretError, match="out of bounds") as err:
            pk.run_reference(fn, **inputs)
        assert any(f"of %{x} " in str(err.value) for x in flagged), str(err.value)


def test_dynamic_batch_is_in_bounds_when_every_batch_fits() -> None:
    report = _memory(BMM, "bmm")
    assert report.memory is not None
    verdicts = {a.array: a.text for a in report.memory.arrays}
    assert verdicts == {
        "A": "in bounds",
        "B": "in bounds when B.0 >= A.0",
        "C": "in bounds when C.0 >= A.0",
    }
    _witness_is_refused(pk.parse(BMM)["bmm"], report)


def test_shifted_read_is_in_bounds_when_n_at_most_8() -> None:
    report = _memory(SHIFTED, "shifted")
    assert report.memory is not None
    x = report.memory.array("X")
    assert x.text == "in bounds when N <= 8"
    assert x.witness is not None and x.witness.certain
    # the smallest failing size: N = 9, whose last iteration i = 8 reads X[10]
    assert x.witness.params == {"N": 9} and x.witness.element == (10,)
    assert report.memory.array("Y").text == "in bounds when N <= 10"
    _witness_is_refused(pk.parse(SHIFTED)["shifted"], report)


def test_vector_load_past_a_flattened_argument_is_out_of_bounds() -> None:
    fn = pk.parse(VECTOR_PAST_END)["scale"]
    report = pk.schedule(fn).check()
    assert report.memory is not None and not report.memory.safe
    x = report.memory.array("X")
    assert x.verdict == "out of bounds"
    assert x.witness is not None and x.witness.certain
    # the last tile starts at 192: lanes 192..223, rows 9 to 11 of the 10 x 20 argument
    assert "vector.load" in x.witness.statement and x.witness.element[0] >= 10
    assert report.memory.array("Y").verdict == "out of bounds"
    with pytest.raises(pk.InterpretError, match="out of bounds"):
        pk.run_reference(fn, **make_inputs(fn, {}, seed=0))


def test_gather_subscripts_are_listed_for_run_time_checks() -> None:
    report = _memory(GATHER, "gather")
    assert report.memory is not None
    x = report.memory.array("X")
    assert x.data_dependent and "dimension 0" in x.data_dependent[0]
    assert "krnl.load, line 9" in x.data_dependent[0]
    # the affine dimension 1 (j < 4) is still proven
    assert x.text == "in bounds (affine subscripts)"
    assert not report.memory.proven_by_guards


def test_check_prints_and_exits_on_memory_safety(tmp_path: Path) -> None:
    from polykrnl.cli import main

    path = tmp_path / "past_end.mlir"
    path.write_text(VECTOR_PAST_END)
    out, err = io_pair()
    assert main(["check", str(path)], out=out, err=err) == 1
    assert "memory safety:" in out.getvalue() and "X: out of bounds" in out.getvalue()
    out, err = io_pair()
    assert main(["check", "--json", str(path)], out=out, err=err) == 1
    data = json.loads(out.getvalue())
    memory = data["memory"] if "memory" in data else data[0]["memory"]
    assert {a["array"]: a["verdict"] for a in memory["arrays"]}["X"] == "out of bounds"
    ok = tmp_path / "bmm.mlir"
    ok.write_text(BMM)
    out, err = io_pair()
    assert main(["check", str(ok)], out=out, err=err) == 0
    assert "B: in bounds when B.0 >= A.0" in out.getvalue()


def io_pair() -> tuple[object, object]:
    import io

    return io.StringIO(), io.StringIO()


def _all_functions() -> list[tuple[str, str]]:
    files = sorted((ROOT / "tests" / "corpus").glob("*.mlir"))
    files += sorted((ROOT / "benchmarks" / "polybench").glob("*.mlir"))
    out = []
    for f in files:
        for fn in pk.load(f).functions:
            out.append((str(f.relative_to(ROOT)), fn.name))
    return out


@pytest.mark.slow
def test_every_corpus_and_polybench_function_has_a_memory_section() -> None:
    """The programs of the corpus and PolyBench are correct: none may be reported out of
    bounds for every size, and each report's witnesses are real."""
    seen = 0
    for path, name in _all_functions():
        fn = pk.load(ROOT / path)[name]
        try:
            sched = pk.schedule(fn)
        except pk.PolykrnlError:
            continue  # refused before the model (reported by other tests)
        report = sched.check()
        assert report.memory is not None, (path, name)
        assert report.memory.safe, (path, name, str(report.memory))
        assert "memory safety:" in str(report)
        seen += 1
    assert seen >= 90


def test_memory_report_is_computed_once_per_program() -> None:
    program = pk.schedule(pk.parse(BMM)["bmm"]).program
    assert memory_report(program) is memory_report(program)


MEMCPY = """
func.func @copy(%src: memref<4x4xf32>, %dst: memref<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %n = arith.constant NUM : i64
  "krnl.memcpy"(%dst, %src, %n, %c0, %c4)
      : (memref<2x4xf32>, memref<4x4xf32>, i64, index, index) -> ()
  return
}
"""


@pytest.mark.parametrize(
    ("n", "dst", "src"),
    [
        (8, "in bounds", "in bounds"),
        (12, "out of bounds", "in bounds"),
        (16, "out of bounds", "out of bounds"),
    ],
)
def test_memcpy_flat_range_past_the_end(n: int, dst: str, src: str) -> None:
    """12 elements into a 2 x 4 buffer run into a third row; 16 from source offset 4 run
    past the 16 elements of the 4 x 4 source too. The interpreter agrees."""
    fn = pk.parse(MEMCPY.replace("NUM", str(n)))["copy"]
    report = pk.check(fn)
    assert report.memory is not None
    assert {a.array: a.verdict for a in report.memory.arrays} == {"dst": dst, "src": src}
    inputs = make_inputs(fn, {}, seed=0)
    if dst == src == "in bounds":
        pk.run_reference(fn, **inputs)
    else:
        with pytest.raises(pk.InterpretError, match="out of bounds"):
            pk.run_reference(fn, **inputs)
