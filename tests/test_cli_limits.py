"""Inputs that would take forever or cannot even be printed end in a located error."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

import polykrnl as pk
from polykrnl.cli import main
from polykrnl.reference_work import (
    MAX_REFERENCE_STEPS,
    NOTICE_REFERENCE_STEPS,
    REFERENCE_RATE,
    reference_work,
)


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


HUGE_EMPTY_LOOP = """
func.func @f(%N: index, %x: memref<?x?xf32>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii) with (%ii -> %i = -2147483648 to %N) {
    krnl.iterate(%jj) with (%jj -> %j = 0 to %i) {
      %v = krnl.load %x[%i, %j] : memref<?x?xf32>
      krnl.store %v, %x[%j, %i] : memref<?x?xf32>
    }
  }
  return
}
"""

HUGE_WORK = """
func.func @g(%a: memref<4xf32>) {
  %ll:3 = krnl.define_loops 3
  krnl.iterate(%ll#0, %ll#1, %ll#2) with (%ll#0 -> %i = 0 to 100000,
      %ll#1 -> %j = 0 to 100000, %ll#2 -> %k = 0 to 4) {
    %v = krnl.load %a[%k] : memref<4xf32>
    krnl.store %v, %a[%k] : memref<4xf32>
  }
  return
}
"""


def test_a_loop_of_two_billion_iterations_is_refused_before_it_runs(tmp_path: Path) -> None:
    # Only 16*17/2 statement instances, but the outer loop runs from -2^31: the
    # interpreter counts each loop's iterations when it starts, and refuses.
    path = tmp_path / "huge.mlir"
    path.write_text(HUGE_EMPTY_LOOP)
    code, _, err = cli("run", "--reference", str(path), "--param", "N=16", "--size", "16")
    assert code == 2, err
    assert "huge.mlir:4:3: this loop would run 2,147,483,664 iterations" in err
    assert "Traceback" not in err


def test_too_much_work_is_refused_up_front(tmp_path: Path) -> None:
    path = tmp_path / "work.mlir"
    path.write_text(HUGE_WORK)
    fn = pk.load(path)["g"]
    work = reference_work(fn, {"a": np.zeros(4, np.float32)})
    # 4e10 instances of one statement of two ops (the load and the store)
    assert work == 100000 * 100000 * 4 * 2 > MAX_REFERENCE_STEPS
    code, _, err = cli("run", "--verify", str(path))
    assert code == 2
    assert "the reference interpreter would run up to 8e+10 ops of @g" in err


def test_a_long_reference_run_is_announced(tmp_path: Path) -> None:
    # 1500 x 1000 x 2 instances of a load and a store: past the notice, short of a
    # refusal. The load is out of bounds at once, so the run stops right after the notice.
    path = tmp_path / "long.mlir"
    path.write_text(
        HUGE_WORK.replace("%i = 0 to 100000", "%i = 0 to 1500")
        .replace("%j = 0 to 100000", "%j = 0 to 1000")
        .replace("%k = 0 to 4", "%k = 0 to 2")
        .replace("%v = krnl.load %a[%k]", "%v = krnl.load %a[%j]")
    )
    fn = pk.load(path)["g"]
    work = reference_work(fn, {"a": np.zeros(4, np.float32)})
    assert work == 1500 * 1000 * 2 * 2
    assert NOTICE_REFERENCE_STEPS < work < MAX_REFERENCE_STEPS
    code, stdout, err = cli("run", "--reference", str(path))
    assert code != 0 and "out of bounds" in err
    assert f"runs up to {work:.3g} ops: up to about {work / REFERENCE_RATE:.0f} s" in stdout


def test_sizes_computed_before_the_loops_are_estimated_from_the_arguments() -> None:
    # The loop bound is the max of two dimensions (onnx-mlir's broadcast sizes).
    fn = pk.parse(
        """
#max = affine_map<()[s0, s1] -> (s0, s1)>
func.func @h(%a: memref<?xf32>, %b: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %da = memref.dim %a, %c0 : memref<?xf32>
  %db = memref.dim %b, %c0 : memref<?xf32>
  %n = affine.max #max()[%da, %db]
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to %n) {
    %v = arith.constant 1.0 : f32
    krnl.store %v, %a[%c0] : memref<?xf32>
  }
  return
}"""
    )["h"]
    for na, nb in [(3, 40), (50, 7)]:
        work = reference_work(fn, {"a": np.zeros(na, np.float32), "b": np.zeros(nb, np.float32)})
        assert work is not None and max(na, nb) <= work <= 3 * max(na, nb)


def test_an_inner_affine_for_counts_its_iterations() -> None:
    inner = pk.parse(
        """
func.func @s(%a: memref<8x64xf32>) {
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 8) {
    affine.for %k = 0 to 64 step 4 {
      %v = affine.load %a[%i, %k] : memref<8x64xf32>
      affine.store %v, %a[%i, %k] : memref<8x64xf32>
    }
  }
  return
}"""
    )["s"]
    work = reference_work(inner, {"a": np.zeros((8, 64), np.float32)})
    # 8 instances of the affine.for, each 16 iterations of a load and a store (+ the for)
    assert work is not None and 8 * 16 * 2 <= work <= 8 * (16 * 3 + 1)


def test_the_estimate_bounds_the_instances_of_a_triangle() -> None:
    fn = pk.parse(HUGE_EMPTY_LOOP)["f"]
    # i >= 0 follows from 0 <= j < i: the box of the domain is 16 x 16, and each
    # instance is two ops (the load and the store).
    work = reference_work(fn, {"N": 16, "x": np.zeros((16, 16), np.float32)})
    assert work is not None and 2 * 16 * 15 // 2 <= work <= 2 * 16 * 16


def test_an_op_too_malformed_to_print_is_a_located_error(tmp_path: Path) -> None:
    # krnl.matmul's operand segments made to add up to one operand more than it has.
    corpus = Path(__file__).parent / "corpus" / "generic_form_recipe.mlir"
    text = corpus.read_text()
    good = "operandSegmentSizes = array<i32: 1, 2, 1, 2, 1, 2, 3,"
    assert good in text
    path = tmp_path / "segments.mlir"
    path.write_text(text.replace(good, good.replace("1, 2, 1, 2", "1, 2, 1, 3", 1)))
    code, _, err = cli("print", str(path))
    assert code == 2, err
    assert err.startswith(f"error: {path}:")
    assert "operand count (18) does not match" in err
    assert "Traceback" not in err


def test_an_affine_map_dividing_by_zero_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "mod0.mlir"
    path.write_text(
        "func.func @f(%a: memref<16xf32>, %n: index) {\n"
        "  %l = krnl.define_loops 1\n"
        "  krnl.iterate(%l) with (%l -> %i = affine_map<()[s0] -> (s0 mod 0)>()[%n] to 16) {\n"
        "    %v = krnl.load %a[%i] : memref<16xf32>\n"
        "    krnl.store %v, %a[%i] : memref<16xf32>\n"
        "  }\n  return\n}\n"
    )
    for verb in (["verify"], ["check"], ["emit", "numpy"]):
        code, _, err = cli(*verb, str(path))
        assert code == 2, err
        assert f"{path}:3:3: krnl.iterate: affine map" in err and "divides by 0" in err


def test_scf_and_affine_loops_count_too(tmp_path: Path) -> None:
    for loop in (
        "scf.for %i = %c0 to %big step %c1 {\n    memref.store %z, %a[%c0] : memref<4xf32>\n  }",
        # A symbol bound: the up-front estimate knows constant trip counts only, so the
        # interpreter's own count stops this one.
        "affine.for %i = 0 to %big {\n    memref.store %z, %a[%c0] : memref<4xf32>\n  }",
    ):
        path = tmp_path / "big.mlir"
        path.write_text(
            "func.func @f(%a: memref<4xf32>) {\n"
            "  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n"
            "  %big = arith.constant 1099511627776 : index\n"
            "  %z = arith.constant 0.0 : f32\n"
            f"  {loop}\n  return\n}}\n"
        )
        code, _, err = cli("run", "--reference", str(path))
        assert code == 2, err
        assert "this loop would run 1,099,511,627,776 iterations" in err


HUGE_SHAPES = """
func.func @f(%a: memref<100000x100000xf32>) {
  return
}
func.func @g(%n: index) {
  %b = memref.alloc(%n, %n) : memref<?x?xf32>
  return
}
"""


def test_huge_arguments_are_refused_before_allocating(tmp_path: Path) -> None:
    path = tmp_path / "huge.mlir"
    path.write_text(HUGE_SHAPES)
    code, _, err = cli("run", str(path), "--func", "f")
    assert code == 2 and "the arguments of @f need 37.3 GiB" in err, err
    assert "Traceback" not in err


def test_a_huge_allocation_is_a_located_error_in_the_interpreter(tmp_path: Path) -> None:
    path = tmp_path / "huge.mlir"
    path.write_text(HUGE_SHAPES)
    code, _, err = cli("run", str(path), "--func", "g", "--param", "n=100000", "--reference")
    assert code == 2 and "huge.mlir:6:8: an allocation of shape [100000, 100000]" in err, err
