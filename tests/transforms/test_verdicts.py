"""Legality's three verdicts: legal (proven), illegal (certain, or under a stated data
condition), not proven (only through approximated statements, each named).

The oracle for the exact branches is the reference interpreter, which runs scf.if and
affine.if as written: kernels generated from the model's guarded domains must agree
with it on random inputs and parameters, so a wrong condition in a domain shows.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.cli import main
from tests.parsed import load

FORK = Path(__file__).parent.parent / "corpus" / "parallel_fork.mlir"

# A parallel scatter: B[idx[i]] = x[i]. Two iterations write one element exactly when
# their idx entries agree.
SCATTER = """
func.func @scatter(%idx: memref<8xi64>, %x: memref<8xf32>, %B: memref<8xf32>) {
  %ii = krnl.define_loops 1
  krnl.parallel(%ii) : !krnl.loop
  krnl.iterate(%ii) with (%ii -> %i = 0 to 8) {
    %k64 = krnl.load %idx[%i] : memref<8xi64>
    %k = arith.index_cast %k64 : i64 to index
    %v = krnl.load %x[%i] : memref<8xf32>
    krnl.store %v, %B[%k] : memref<8xf32>
  }
  return
}
"""

# The fork with its second nest written as affine.for loops, which the model does not
# read (an opaque statement): t parallel is neither proven nor refuted.
OPAQUE_FORK = """
func.func @opaque_fork(%A: memref<8x16xf32>, %B: memref<8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %tt = krnl.define_loops 1
  krnl.parallel(%tt) : !krnl.loop
  krnl.iterate(%tt) with (%tt -> %t = 0 to 2) {
    %first = arith.cmpi eq, %t, %c0 : index
    scf.if %first {
      %l:2 = krnl.define_loops 2
      krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 4, %l#1 -> %j = 0 to 16) {
        %a = krnl.load %A[%i, %j] : memref<8x16xf32>
        krnl.store %a, %B[%i, %j] : memref<8x16xf32>
      }
    }
    %second = arith.cmpi eq, %t, %c1 : index
    scf.if %second {
      affine.for %i = 4 to 8 {
        affine.for %j = 0 to 16 {
          %a = affine.load %A[%i, %j] : memref<8x16xf32>
          affine.store %a, %B[%i, %j] : memref<8x16xf32>
        }
      }
    }
  }
  return
}
"""

# A call to a function the model does not look into, in a loop: it may read and write
# any element of the memref it is given.
OPAQUE_CALL = """
func.func private @touch(%v: memref<8xf32>, %i: index) {
  %x = memref.load %v[%i] : memref<8xf32>
  memref.store %x, %v[%i] : memref<8xf32>
  return
}

func.func @calls(%v: memref<8xf32>) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to 8) {
    func.call @touch(%v, %i) : (memref<8xf32>, index) -> ()
  }
  return
}
"""

# Branches on every comparison the model reads, with negative loop values and a
# parameter, so that signed and unsigned comparisons differ.
CONDITIONS = """
func.func @conditions(%y: memref<16x10xi64>, %k: index) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1 : i64
  %true = arith.constant true
  %ll = krnl.define_loops 1
  krnl.iterate(%ll) with (%ll -> %i = -8 to 8) {
    %r = affine.apply affine_map<(d0) -> (d0 + 8)>(%i)
    %ult = arith.cmpi ult, %i, %k : index
    scf.if %ult {
      krnl.store %one, %y[%r, %c0] : memref<16x10xi64>
    }
    %uge = arith.cmpi uge, %i, %k : index
    scf.if %uge {
      %c = arith.constant 1 : index
      krnl.store %one, %y[%r, %c] : memref<16x10xi64>
    }
    %sle = arith.cmpi sle, %i, %k : index
    %ne = arith.cmpi ne, %i, %c3 : index
    %both = arith.andi %sle, %ne : i1
    scf.if %both {
      %c = arith.constant 2 : index
      krnl.store %one, %y[%r, %c] : memref<16x10xi64>
    } else {
      %c = arith.constant 3 : index
      krnl.store %one, %y[%r, %c] : memref<16x10xi64>
    }
    %sgt = arith.cmpi sgt, %i, %c0 : index
    %either = arith.ori %sgt, %ult : i1
    %neither = arith.xori %either, %true : i1
    scf.if %neither {
      %c = arith.constant 4 : index
      krnl.store %one, %y[%r, %c] : memref<16x10xi64>
    }
    %ugt = arith.cmpi ugt, %i, %k : index
    %ule = arith.cmpi ule, %k, %i : index
    %x = arith.xori %ugt, %ule : i1
    scf.if %x {
      %c = arith.constant 5 : index
      krnl.store %one, %y[%r, %c] : memref<16x10xi64>
    }
    %eq = arith.cmpi eq, %i, %k : index
    %sge = arith.cmpi sge, %i, %k : index
    %slt = arith.cmpi slt, %i, %k : index
    scf.if %eq {
      %c = arith.constant 6 : index
      krnl.store %one, %y[%r, %c] : memref<16x10xi64>
    }
    scf.if %sge {
      %c = arith.constant 7 : index
      krnl.store %one, %y[%r, %c] : memref<16x10xi64>
    }
    scf.if %slt {
      %c = arith.constant 8 : index
      krnl.store %one, %y[%r, %c] : memref<16x10xi64>
    }
  }
  return
}
"""


def _cli(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue()


def _fork_inputs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((8, 16)).astype(np.float32)
    b = rng.standard_normal((8, 16)).astype(np.float32)
    return a, b


# -------------------------------------------------------------- legal: proven


def test_parallel_fork_is_proven_parallel_because_its_branch_conditions_are_affine() -> None:
    fn = load(str(FORK))["parallel_fork"]
    report = pk.check(fn)
    assert report.verdict == "legal" and report.legal
    assert {lv.loop: lv.status for lv in report.loops}["t"] == "parallel"
    # Nothing approximated: each branch's nest is statements of its own, under t == 0
    # and t == 1.
    assert report.approximations == ()
    program = pk.poly_program(fn)
    domains = [str(s.domain) for s in program.statements]
    assert len(domains) == 2
    assert "t = 0" in domains[0] and "t = 1" in domains[1]


# Each target's bit-exact kernel (NumPy's default computes float32 exp in float32).
_EXACT: dict[str, dict[str, bool]] = {"numpy": {"reassociate": False}, "numba": {}}


@pytest.mark.parametrize("target", ["numpy", "numba"])
def test_parallel_fork_kernels_agree_with_the_interpreter(target: str) -> None:
    if target == "numba":
        pytest.importorskip("numba", reason="the Numba target needs polykrnl[numba]")
    fn = load(str(FORK))["parallel_fork"]
    a, b = _fork_inputs(0)
    want = b.copy()
    pk.run_reference(fn, A=a.copy(), B=want)
    got = b.copy()
    pk.compile(fn, target=target, **_EXACT[target])(A=a.copy(), B=got)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("target", ["numpy", "numba"])
@pytest.mark.parametrize("h", [-3, 0, 3, 8, 11])
def test_affine_if_fork_kernels_agree_with_the_interpreter(target: str, h: int) -> None:
    if target == "numba":
        pytest.importorskip("numba", reason="the Numba target needs polykrnl[numba]")
    fn = load(str(FORK))["affine_fork"]
    assert pk.check(fn).verdict == "legal"
    a, b = _fork_inputs(h + 20)
    want = b.copy()
    pk.run_reference(fn, A=a.copy(), B=want, h=h)
    got = b.copy()
    pk.compile(fn, target=target, **_EXACT[target])(A=a.copy(), B=got, h=h)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("target", ["numpy", "numba"])
@pytest.mark.parametrize("k", [-9, -5, -1, 0, 3, 5, 9])
def test_every_comparison_in_a_branch_condition_is_modeled_exactly(target: str, k: int) -> None:
    if target == "numba":
        pytest.importorskip("numba", reason="the Numba target needs polykrnl[numba]")
    fn = pk.parse(CONDITIONS)["conditions"]
    assert pk.check(fn).approximations == ()
    want = np.zeros((16, 10), dtype=np.int64)
    pk.run_reference(fn, y=want, k=k)
    got = np.zeros((16, 10), dtype=np.int64)
    pk.compile(fn, target=target)(y=got, k=k)
    np.testing.assert_array_equal(got, want)
    # The interpreter itself, checked by hand for one case: ult of -1 (unsigned: the
    # largest value) against 3 is false, sle is true.
    if k == 3:
        assert want[-1 + 8, 0] == 0 and want[-1 + 8, 2] == 1


# -------------------------------------------------------------- illegal


def test_parallel_scatter_is_illegal_when_two_idx_entries_agree() -> None:
    fn = pk.parse(SCATTER)["scatter"]
    report = pk.check(fn)
    assert report.verdict == "illegal" and not report.legal
    (v,) = report.violations
    assert v.kind == "WAW" and v.certainty == "data" and v.reason == "parallel"
    i, j = v.source.point["i"], v.sink.point["i"]
    assert i != j
    assert v.condition == f"idx[{i}] == idx[{j}]"
    assert f"when idx[{i}] == idx[{j}]" in str(report)
    assert report.to_json()["violations"][0]["condition"] == v.condition


def test_a_certain_violation_stays_certain() -> None:
    # Reversing a loop that carries a must-dependence: no approximation anywhere.
    text = """
    func.func @prefix(%x: memref<16xf32>) {
      %ll = krnl.define_loops 1
      krnl.parallel(%ll) : !krnl.loop
      krnl.iterate(%ll) with (%ll -> %i = 1 to 16) {
        %p = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
        %a = krnl.load %x[%p] : memref<16xf32>
        %b = krnl.load %x[%i] : memref<16xf32>
        %s = arith.addf %a, %b : f32
        krnl.store %s, %x[%i] : memref<16xf32>
      }
      return
    }
    """
    report = pk.check(pk.parse(text)["prefix"])
    assert report.verdict == "illegal"
    assert all(v.certainty == "certain" and v.condition == "" for v in report.violations)
    assert report.violations[0].kind == "RAW"


# -------------------------------------------------------------- not proven


def test_a_parallel_loop_whose_only_dependences_come_from_an_opaque_affine_for_is_not_proven() -> (
    None
):
    fn = pk.parse(OPAQUE_FORK)["opaque_fork"]
    report = pk.check(fn)
    assert report.verdict == "unproven" and not report.legal
    assert all(v.certainty == "may" for v in report.violations)
    for v in report.violations:
        assert any("affine.for, line 18" in a and "opaque" in a for a in v.approximated)
    text = str(report)
    assert text.startswith("@opaque_fork: NOT PROVEN") and "ILLEGAL" not in text
    assert "possible " in text and "affine.for, line 18" in text
    # Not proven is not proven parallel: no threads for t.
    pytest.importorskip("numba", reason="the Numba target needs polykrnl[numba]")
    source = pk.compile(fn, target="numba").source
    assert "in prange(" not in source


def test_parallelizing_a_loop_with_an_opaque_call_is_refused_as_unproven() -> None:
    fn = pk.parse(OPAQUE_CALL)["calls"]
    sched = pk.Schedule.from_function(fn, recipe=False)
    with pytest.raises(pk.UnprovenTransformError) as e:
        sched.parallel("i")
    assert not isinstance(e.value, pk.IllegalTransformError)
    assert "cannot be proven legal" in str(e.value)
    assert "func.call" in str(e.value) and "force=True" in (e.value.hint or "")
    forced = sched.parallel("i", force=True)
    assert forced.check().verdict == "unproven"
    # Forced, it is still not proven: the kernel runs i in order, as the interpreter.
    v = np.arange(8, dtype=np.float32)
    want = v.copy()
    pk.run_reference(fn, v=want)
    got = v.copy()
    forced.to_numpy()(v=got)
    np.testing.assert_array_equal(got, want)


# -------------------------------------------------------------- the CLI


def test_check_exits_0_1_and_4_for_legal_illegal_and_not_proven(tmp_path: Path) -> None:
    cases = {"scatter": (SCATTER, 1, "illegal"), "opaque": (OPAQUE_FORK, 4, "unproven")}
    code, out = _cli("check", str(FORK), "--func", "parallel_fork", "--json")
    assert code == 0 and json.loads(out)["verdict"] == "legal"
    for name, (text, want, verdict) in cases.items():
        path = tmp_path / f"{name}.mlir"
        path.write_text(text)
        code, out = _cli("check", str(path), "--json")
        assert code == want, out
        (data,) = json.loads(out)
        assert data["verdict"] == verdict and data["legal"] is False
    # Several functions: illegal wins over not proven.
    both = tmp_path / "both.mlir"
    both.write_text(SCATTER + OPAQUE_FORK)
    assert _cli("check", str(both))[0] == 1
