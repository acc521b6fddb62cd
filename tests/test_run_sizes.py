"""Random inputs of `polykrnl run` inside what the program can take: a scalar argument
used as a subscript (or a position in a sequence) takes the last position of what it
subscripts rather than `--size`, one past it; an integer array whose elements bound a
loop that subscripts memory (TopK's k) is drawn in [1, n], n the smallest size that
loop subscripts. The runs are checked against the reference interpreter.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.cli import main
from polykrnl.inputs import make_inputs

PROGRAM = """
func.func @pick(%A: memref<5x?xf32>, %r: index) -> memref<?xf32> {
  %c1 = arith.constant 1 : index
  %n = memref.dim %A, %c1 : memref<5x?xf32>
  %out = memref.alloc(%n) : memref<?xf32>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %j = 0 to %n) {
    %v = krnl.load %A[%r, %j] : memref<5x?xf32>
    krnl.store %v, %out[%j] : memref<?xf32>
  }
  return %out : memref<?xf32>
}

func.func @first_k(%x: memref<3x4xf32>, %kk: memref<1xi64>) -> memref<3x?xf32> {
  %c0 = arith.constant 0 : index
  %k64 = krnl.load %kk[%c0] : memref<1xi64>
  %k = arith.index_cast %k64 : i64 to index
  %out = memref.alloc(%k) : memref<3x?xf32>
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 3, %l#1 -> %j = 0 to %k) {
    %iv:2 = krnl.get_induction_var_value(%l#0, %l#1) : (!krnl.loop, !krnl.loop) -> (index, index)
    %v = krnl.load %x[%iv#0, %iv#1] : memref<3x4xf32>
    krnl.store %v, %out[%iv#0, %iv#1] : memref<3x?xf32>
  }
  return %out : memref<3x?xf32>
}
"""


def test_a_scalar_subscript_takes_the_last_position_not_one_past_it() -> None:
    fn = pk.parse(PROGRAM)["pick"]
    inputs = make_inputs(fn, {}, seed=0, size=8)
    assert inputs["r"] == 4  # A has 5 rows
    assert np.array_equal(pk.run_reference(fn, **inputs), inputs["A"][4])
    # A value given with --param is kept as it is.
    assert make_inputs(fn, {"r": 2}, seed=0, size=8)["r"] == 2


def test_an_array_of_sizes_stays_within_the_loop_it_bounds() -> None:
    fn = pk.parse(PROGRAM)["first_k"]
    for seed in range(8):
        kk = make_inputs(fn, {}, seed=seed, size=8)["kk"]
        assert 1 <= kk[0] <= 4  # the loop over k subscripts x's 4 columns


def test_run_verify_passes_on_random_inputs(tmp_path: Path) -> None:
    src = tmp_path / "p.mlir"
    src.write_text(PROGRAM)
    for fn in ("pick", "first_k"):
        for seed in ("0", "1", "2"):
            out, err = io.StringIO(), io.StringIO()
            code = main(
                ["run", "--verify", "--func", fn, "--seed", seed, "--size", "8", str(src)],
                out=out,
                err=err,
            )
            assert code == 0, err.getvalue()


# onnx-mlir's Concat of two `?x?` inputs along axis 0: the column loop runs to a static
# 32 over both inputs' dynamic column dimension, which the model it was compiled for
# makes 32; equal random sizes would read past the columns.
CONCAT = """
func.func @concat(%a: memref<?x?xf32>, %b: memref<?x?xf32>) -> memref<?x32xf32> {
  %c0 = arith.constant 0 : index
  %na = memref.dim %a, %c0 : memref<?x?xf32>
  %nb = memref.dim %b, %c0 : memref<?x?xf32>
  %n = arith.addi %na, %nb : index
  %out = memref.alloc(%n) : memref<?x32xf32>
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to %na, %l#1 -> %j = 0 to 32) {
    %v = krnl.load %a[%i, %j] : memref<?x?xf32>
    krnl.store %v, %out[%i, %j] : memref<?x32xf32>
  }
  %m:2 = krnl.define_loops 2
  krnl.iterate(%m#0, %m#1) with (%m#0 -> %i = 0 to %nb, %m#1 -> %j = 0 to 32) {
    %v = krnl.load %b[%i, %j] : memref<?x?xf32>
    %r = arith.addi %i, %na : index
    krnl.store %v, %out[%r, %j] : memref<?x32xf32>
  }
  return %out : memref<?x32xf32>
}

func.func @big(%a: memref<?x?x?xf32>) -> memref<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n0 = memref.dim %a, %c0 : memref<?x?x?xf32>
  %n1 = memref.dim %a, %c1 : memref<?x?x?xf32>
  %n2 = memref.dim %a, %c2 : memref<?x?x?xf32>
  %out = memref.alloc(%n0, %n1, %n2) : memref<?x?x?xf32>
  %l:4 = krnl.define_loops 4
  krnl.iterate(%l#0, %l#1, %l#2, %l#3) with (%l#0 -> %i = 0 to %n0, %l#1 -> %j = 0 to %n1,
      %l#2 -> %k = 0 to %n2, %l#3 -> %r = 0 to 300) {
    %v = krnl.load %a[%i, %j, %k] : memref<?x?x?xf32>
    krnl.store %v, %out[%i, %j, %k] : memref<?x?x?xf32>
  }
  return %out : memref<?x?x?xf32>
}
"""


def _run(tmp_path: Path, fn: str, *extra: str) -> tuple[int, str]:
    src = tmp_path / "p.mlir"
    src.write_text(CONCAT)
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", "--verify", "--func", fn, *extra, str(src)], out=out, err=err)
    return code, out.getvalue() + err.getvalue()


def test_run_grows_a_dynamic_dimension_the_program_addresses_further(tmp_path: Path) -> None:
    code, text = _run(tmp_path, "concat")
    assert code == 0, text
    assert "inputs: a 16x32 float32, b 16x32 float32" in text
    assert "note: a.1 = 32: the program addresses it up to index 31" in text
    assert "verify: ok, exactly equal" in text


def test_run_keeps_a_dimension_the_user_gives_and_refuses_the_run(tmp_path: Path) -> None:
    code, text = _run(tmp_path, "concat", "--param", "a.1=20")
    assert code == 2
    assert "a 16x20 float32, b 16x32 float32" in text
    assert "out of bounds: index 20 in dimension 1 of %a" in text, text


def test_run_verify_without_size_shrinks_the_sizes_the_interpreter_would_take_long_on(
    tmp_path: Path,
) -> None:
    # 16^3 x 300 instances of two ops: about 2.5e6 ops at 16; 8 gives 3e5.
    code, text = _run(tmp_path, "big")
    assert code == 0, text
    assert "inputs: a 8x8x8 float32" in text
    assert "note: dynamic sizes 8, not 16" in text


@pytest.mark.slow  # the interpreter's 2.5e6 ops: about 8 s
def test_run_verify_keeps_an_explicit_size_the_interpreter_takes_long_on(
    tmp_path: Path,
) -> None:
    code, text = _run(tmp_path, "big", "--size", "16")
    assert code == 0, text
    assert "inputs: a 16x16x16 float32" in text and "not 16" not in text


def test_a_kernel_run_without_the_interpreter_keeps_the_default_size(tmp_path: Path) -> None:
    src = tmp_path / "p.mlir"
    src.write_text(CONCAT)
    out, err = io.StringIO(), io.StringIO()
    assert main(["run", "--func", "big", str(src)], out=out, err=err) == 0, err.getvalue()
    assert "a 16x16x16 float32" in out.getvalue()
