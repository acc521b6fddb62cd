"""`PolyProgram.written_arguments`: the arguments a call may change.

pk.tune and the benchmarks copy only these into their buffers before each timed call
(`measure.refilled`); an argument the model leaves out but a call changes would be
timed on the previous call's output. The oracle is the reference interpreter: every
argument a run changes must be named. PolyBench's (exact) sets are checked against
the hand table of tests/benchmarks/test_polybench_kernels.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.errors import PolykrnlError
from polykrnl.inputs import make_inputs
from tests.parsed import load

CORPUS = sorted((Path(__file__).resolve().parents[1] / "corpus").glob("*.mlir"))


def _changed(fn: pk.Function) -> tuple[set[str], set[str]] | None:
    """The array arguments of `fn` and those a run of the interpreter changes (None:
    the interpreter cannot run it on random inputs)."""
    inputs = make_inputs(fn, {}, seed=0, size=6)
    before = {k: v.copy() for k, v in inputs.items() if isinstance(v, np.ndarray)}
    try:
        pk.run_reference(fn, **inputs)
    except PolykrnlError:
        return None  # an external call, a hash table the random data does not fit
    changed = {
        k
        for k, v in before.items()
        if not np.array_equal(v, inputs[k], equal_nan=v.dtype.kind in "fc")
    }
    return set(before), changed


def test_every_argument_a_run_changes_is_named_on_the_corpus() -> None:
    ran = kept = 0
    for path in CORPUS:
        for fn in load(path).functions:
            if not fn.op.body.blocks:
                continue
            try:
                written = pk.poly_program(fn).written_arguments()
            except PolykrnlError:
                continue  # no model of this function: pk.tune refuses it too
            found = _changed(fn)
            if found is None:
                continue
            arrays, changed = found
            assert changed <= written, f"{path.name} @{fn.name}: {changed - written} not named"
            assert written <= arrays, f"{path.name} @{fn.name}"
            ran += 1
            kept += bool(arrays - written)
    # most of the corpus runs, and most functions have an input copied only once
    assert ran >= 100 and kept >= 50, (ran, kept)


WRITES_THROUGH = {
    "subview": (
        "%v = memref.subview %A[2] [4] [1] "
        ": memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>",
        "memref<4xf32, strided<[1], offset: 2>>",
    ),
    "reinterpret_cast": (
        "%v = memref.reinterpret_cast %A to offset: [4], sizes: [4], strides: [1] "
        ": memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>",
        "memref<4xf32, strided<[1], offset: 4>>",
    ),
    "cast": ("%v = memref.cast %A : memref<8xf32> to memref<?xf32>", "memref<?xf32>"),
}


@pytest.mark.parametrize("view", WRITES_THROUGH)
def test_a_write_through_a_view_names_the_viewed_argument(view: str) -> None:
    line, t = WRITES_THROUGH[view]
    fn = pk.parse(f"""
func.func @f(%A: memref<8xf32>, %B: memref<8xf32>) {{
  {line}
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 4) {{
    %x = krnl.load %B[%i] : memref<8xf32>
    krnl.store %x, %v[%i] : {t}
  }}
  return
}}""")["f"]
    assert pk.poly_program(fn).written_arguments() == {"A"}
    found = _changed(fn)
    assert found is not None and found[1] == {"A"}


def test_an_argument_only_read_through_a_view_is_not_named() -> None:
    fn = pk.parse("""
func.func @f(%A: memref<8xf32>, %B: memref<8xf32>) {
  %v = memref.subview %B[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 4) {
    %x = krnl.load %v[%i] : memref<4xf32, strided<[1], offset: 2>>
    krnl.store %x, %A[%i] : memref<8xf32>
  }
  return
}""")["f"]
    assert pk.poly_program(fn).written_arguments() == {"A"}
