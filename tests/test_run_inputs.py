"""Inputs of `polykrnl run`: integer arrays that index memory, and data from .npy files.

Random integers in [-10, 10] would index a gather's table out of bounds on nearly
every draw; `index_limits` finds the arrays whose elements end up in subscripts, and
`make_inputs` draws those in [0, n). `run --input NAME=FILE.npy` gives exact data.
The kernels are checked against the reference interpreter, and the gather's result
against NumPy's own `take`.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.cli import main
from polykrnl.inputs import make_inputs

# Gather along axis 0 with onnx-mlir's normalization of negative indices, and a
# reduction over data-given axes: `idx` indexes x's 5 rows, `axes` a 3-flag buffer.
GATHER = """
func.func @gather(%x: memref<5x4xf32>, %idx: memref<2x3xi64>) -> memref<2x3x4xf32> {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %res = memref.alloc() : memref<2x3x4xf32>
  %l:3 = krnl.define_loops 3
  krnl.iterate(%l#0, %l#1, %l#2)
      with (%l#0 -> %i = 0 to 2, %l#1 -> %j = 0 to 3, %l#2 -> %k = 0 to 4) {
    %iv:3 = krnl.get_induction_var_value(%l#0, %l#1, %l#2)
      : (!krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index)
    %a = krnl.load %idx[%iv#0, %iv#1] : memref<2x3xi64>
    %b = arith.index_cast %a : i64 to index
    %neg = arith.cmpi slt, %b, %c0 : index
    %up = arith.addi %b, %c5 : index
    %row = arith.select %neg, %up, %b : index
    %v = krnl.load %x[%row, %iv#2] : memref<5x4xf32>
    krnl.store %v, %res[%iv#0, %iv#1, %iv#2] : memref<2x3x4xf32>
  }
  return %res : memref<2x3x4xf32>
}

func.func @flags(%axes: memref<?xi64>, %n: memref<8xi32>) -> memref<3xi1> {
  %true = arith.constant true
  %flags = memref.alloc() : memref<3xi1>
  %c0 = arith.constant 0 : index
  %d = memref.dim %axes, %c0 : memref<?xi64>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to %d) {
    %a = krnl.load %axes[%i] : memref<?xi64>
    %b = arith.index_cast %a : i64 to index
    krnl.store %true, %flags[%b] : memref<3xi1>
  }
  return %flags : memref<3xi1>
}
"""


@pytest.fixture(scope="module")
def module() -> pk.Module:
    return pk.parse(GATHER)


def test_integer_arrays_that_index_memory_are_drawn_within_the_dimension(
    module: pk.Module,
) -> None:
    for seed in range(5):
        inputs = make_inputs(module["gather"], {}, seed=seed, size=6)
        assert inputs["idx"].dtype == np.int64 and inputs["idx"].min() >= 0
        assert inputs["idx"].max() < 5  # x has 5 rows
        flags = make_inputs(module["flags"], {}, seed=seed, size=6)
        assert flags["axes"].shape == (6,) and flags["axes"].min() >= 0 and flags["axes"].max() < 3
        # An integer array that indexes nothing keeps the ordinary range.
        assert flags["n"].min() < 0 or flags["n"].max() > 3


def test_the_gather_kernel_computes_what_numpy_take_does(module: pk.Module) -> None:
    fn = module["gather"]
    inputs = make_inputs(fn, {}, seed=3)
    inputs["idx"][0, 0] = -1  # a negative index counts from the end
    expected = np.take(inputs["x"], inputs["idx"], axis=0)
    assert np.array_equal(pk.run_reference(fn, **inputs), expected)
    # Regression: the loaded index array was taken for a loop-invariant subscript, and
    # x[idx, 0:4] made a (2, 3, 1, 4) array (a broadcast error, or a wrong result where
    # the shapes happened to broadcast).
    for kernel in (pk.schedule(fn).to_numpy(), pk.schedule(fn).to_numpy(vectorize=False)):
        assert np.array_equal(kernel(**inputs), expected)


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["run", *argv], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_run_takes_an_array_from_a_npy_file(tmp_path: Path) -> None:
    src = tmp_path / "g.mlir"
    src.write_text(GATHER)
    axes = tmp_path / "axes.npy"
    np.save(axes, np.array([2, 0, 2, 2, 0, 0, 2], dtype=np.int32))  # int32 widens to i64
    code, out, err = _run(str(src), "--func", "flags", "--reference", "--input", f"axes={axes}")
    assert code == 0, err
    assert "axes 7 int64" in out  # its dynamic size comes from the file
    # The flags of axes 0 and 2 are set, the never-written flag 1 stays 0 (a new buffer).
    assert "result 0: 3 bool  checksum=2" in out
    code, out, err = _run(str(src), "--func", "flags", "--verify", "--input", f"axes={axes}")
    assert code == 0 and "verify: ok" in out, out + err


@pytest.mark.parametrize(
    ("data", "arg", "message"),
    [
        (np.zeros((2, 2), dtype=np.int64), "idx", "holds a 2x2 array, %idx is memref<2x3xi64>"),
        (np.zeros((2, 3), dtype=np.float64), "idx", "holds float64, which does not convert"),
        (np.zeros((2, 3), dtype=np.int64), "nope", "@gather has no array argument %nope"),
    ],
)
def test_run_refuses_input_that_does_not_fit_the_argument(
    tmp_path: Path, data: np.ndarray, arg: str, message: str
) -> None:
    src = tmp_path / "g.mlir"
    src.write_text(GATHER)
    path = tmp_path / "data.npy"
    np.save(path, data)
    code, _out, err = _run(str(src), "--func", "gather", "--input", f"{arg}={path}")
    assert code == 2 and message in err and "Traceback" not in err, err


def test_run_refuses_an_unreadable_file_and_a_malformed_option(tmp_path: Path) -> None:
    src = tmp_path / "g.mlir"
    src.write_text(GATHER)
    code, _, err = _run(str(src), "--func", "gather", "--input", f"idx={tmp_path / 'no.npy'}")
    assert code == 2 and "cannot read" in err and "numpy.save" in err
    code, _, err = _run(str(src), "--func", "gather", "--input", "idx.0=x.npy")
    assert code == 2 and "--input takes NAME=FILE.npy" in err


def test_a_summary_of_infinities_prints_no_warning(tmp_path: Path) -> None:
    src = tmp_path / "inf.mlir"
    src.write_text(
        """func.func @f(%y: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %m = arith.constant -1.0 : f32
  %z = arith.constant 0.0 : f32
  %p = arith.divf %one, %z : f32
  %n = arith.divf %m, %z : f32
  krnl.store %p, %y[%c0] : memref<2xf32>
  krnl.store %n, %y[%c1] : memref<2xf32>
  return
}
"""
    )
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning would fail the run
        code, out, err = _run(str(src), "--verify")
    assert code == 0 and "checksum=nan" in out and "Warning" not in err, out + err
