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
