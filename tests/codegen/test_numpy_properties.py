"""Property test of the NumPy generator: random nests, random legal schedules.

Programs and schedules build on tests/transforms/test_legality_properties.py
(loaded from its file, not edited): one ``krnl.iterate`` of 2-3 loops, 1-2
statements ``X[f] = Y[g] + Z[h] (+ iv)`` or reductions ``X[f] = X[f] + ...``
over ``A`` / ``B`` (i64 or f32) with random affine subscripts (negative offsets
included), and 1-4 random primitives (block, reorder, permute, parallel)
applied with ``force=True``. On top of its strategies, this file draws:

- half of the programs with a first statement from `contractions`
  (``X[f] = X[f] + Y[g]``, X[f] not indexed by every loop): the form the
  vectorizer turns into np.einsum / ``@``, which LP.programs() rarely makes;
- the subscripts as one SSA value each (LP.krnl_text), or shared (`krnl_text`);
- maybe one loop's upper bound as an index argument %N (at most the constant,
  so sometimes below the lower bound: an empty loop).

Property: for the original order, and for the transformed schedule when it is
legal, on random inputs (``polykrnl.inputs.make_inputs``), ``to_numpy()``
(vectorized, contractions allowed) gives what ``pk.run_reference`` gives: bit
for bit when the kernel is ``exact`` or the arrays hold integers (a
reassociated integer sum is the same sum modulo 2**64), else within
``_tolerance``; ``to_numpy(vectorize=False)`` and ``to_numpy(reassociate=False)``
are ``exact`` and give the reference's arrays bit for bit.

Two generator bugs found by this test are documented at FIXED_BUGS, each with
reproducers that now run as regression tests.

The run is derandomized (the same 120 examples on every run, about 10 s; FEW
in the fast tier, tests/property_tiers.py). To explore, set
``POLYKRNL_PROPERTY_EXAMPLES=3000``: that many examples, from a random seed.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import re
import sys
from dataclasses import replace
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, event, example, settings
from hypothesis import strategies as st

import polykrnl as pk
from polykrnl.inputs import make_inputs
from tests.property_tiers import tiered


def _legality_properties() -> ModuleType:
    """tests/transforms/test_legality_properties.py, for its strategies and helpers."""
    name = "_polykrnl_legality_properties"
    if name in sys.modules:
        return sys.modules[name]
    path = Path(__file__).parent.parent / "transforms" / "test_legality_properties.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up while it runs
    spec.loader.exec_module(mod)
    return mod


LP = _legality_properties()
EXPLORE = os.environ.get("POLYKRNL_PROPERTY_EXAMPLES")

PROPERTY = settings(
    max_examples=int(EXPLORE) if EXPLORE else 120,
    derandomize=not EXPLORE,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
    report_multiple_bugs=False,
    suppress_health_check=[HealthCheck.too_slow],
)
FEW = 5  # examples in the fast tier (tests/property_tiers.py)

# ------------------------------------------------------------------ programs


def _iv_sub(prog: Any, x: int, offset: int) -> Any:
    """The subscript `loop x + offset`."""
    return LP.Sub(tuple(int(n == x) for n in range(len(prog.lbs))), offset)


@st.composite
def contractions(draw: st.DrawFn, prog: Any) -> Any:
    """``X[f] = X[f] + Y[g]``: X[f] indexed by some of the loops, Y[g] by others."""
    depth = len(prog.lbs)
    x = draw(st.sampled_from(LP.ARRAYS))
    y = draw(st.sampled_from([a for a in LP.ARRAYS if a != x] * 2 + [x]))
    rank_x, rank_y = (prog.ranks[LP.ARRAYS.index(a)] for a in (x, y))
    kept = draw(
        st.lists(
            st.integers(0, depth - 1), min_size=1, max_size=min(depth - 1, rank_x), unique=True
        )
    )
    if draw(st.integers(0, 3)):
        kept.sort()  # the parallel loops' slice, in loop order: what a contraction updates

    def offset(loop: int) -> int:
        return draw(st.integers(-min(2, prog.lbs[loop]), 2))

    f = [_iv_sub(prog, n, offset(n)) for n in kept]
    f += [LP.Sub((0,) * depth, draw(st.integers(0, 2))) for _ in range(rank_x - len(kept))]
    reduced = [n for n in range(depth) if n not in kept]
    # Y[g] uses a reduction loop; mostly also the loops of X[f] (else the sum is
    # broadcast along them), or any loop (a diagonal when one comes twice).
    g_loops = [draw(st.sampled_from(reduced))]
    if draw(st.integers(0, 2)):
        g_loops += kept + draw(st.lists(st.sampled_from(reduced), max_size=1))
    g_loops = (g_loops + [draw(st.integers(0, depth - 1)) for _ in range(rank_y)])[:rank_y]
    g = [_iv_sub(prog, n, offset(n)) for n in draw(st.permutations(g_loops))]
    target = LP.Access(x, tuple(f))
    return LP.Stmt(target, (target, LP.Access(y, tuple(g))), None, True)


@st.composite
def programs(draw: st.DrawFn) -> Any:
    """LP.programs() half the time (f32 in two cases of three, not one of four);
    else its loops with a first statement from `contractions`, the reduction
    form that the generator contracts and that LP.programs() rarely makes (its
    reductions mostly add an induction variable, read the target's array, or
    update an element that every loop indexes): f32 in three cases of four,
    alone in three of four (a contraction is one statement of a loop body, or
    of one part of a distributed body)."""
    prog = draw(LP.programs())
    if draw(st.booleans()):
        return replace(prog, elem=draw(st.sampled_from(["i64", "f32", "f32"])))
    elem = draw(st.sampled_from(["i64", "f32", "f32", "f32"]))
    rest = prog.stmts[1:] if draw(st.integers(0, 3)) == 0 else ()
    return replace(prog, elem=elem, stmts=(draw(contractions(prog)), *rest))


# ------------------------------------------------------------------ program text


APPLY = re.compile(r"^\s*(%x\d+) = affine\.apply (affine_map<.*>)\((.*)\)$")
IDENTITY = "affine_map<(d0) -> (d0)>"


def krnl_text(prog: Any, shared: bool, bound: int | None = None) -> str:
    """LP.krnl_text(prog); `shared`: one SSA value per distinct subscript; `bound`:
    the upper bound of that loop is an index argument %N (at most the constant).

    LP.krnl_text computes every subscript with its own affine.apply. Shared,
    equal subscripts are one value and `x + 0` is the induction variable itself,
    as a front end would write them (the vectorizer recognizes an update
    ``X[f] = X[f] + ...`` only when its load and store use the same values).
    """
    text = LP.krnl_text(prog)
    if bound is not None:
        x, lb, ub = LP.IVS[bound], prog.lbs[bound], prog.ubs[bound]
        old = f"%{x}{x} -> %{x} = {lb} to {ub}"
        assert old in text
        text = text.replace(old, f"%{x}{x} -> %{x} = {lb} to %N")
        text = text.replace(f"func.func @{LP.NAME}(", f"func.func @{LP.NAME}(%N: index, ")
    if not shared:
        return text
    first: dict[tuple[str, str], str] = {}
    rename: dict[str, str] = {}
    out = []
    for line in text.splitlines():
        for old, new in rename.items():
            line = re.sub(re.escape(old) + r"(?!\d)", new, line)
        m = APPLY.match(line)
        if m:
            value, amap, operands = m.groups()
            if amap == IDENTITY:
                rename[value] = operands
                continue
            if (amap, operands) in first:
                rename[value] = first[amap, operands]
                continue
            first[amap, operands] = value
        out.append(line)
    return "\n".join(out) + "\n"


@cache
def _function(text: str) -> pk.Function:
    mod = pk.parse(text)
    pk.verify(mod)
    return mod[LP.NAME]


def transformed(sched: pk.Schedule, prims: Any) -> pk.Schedule:
    """`prims` applied with force=True (a choice a primitive refuses as misuse is skipped)."""
    for prim in prims:
        done = LP.step(sched, None, prim, force=True)
        if done is not None:
            sched = done[0]
    return sched


# ------------------------------------------------------------------ comparison


def _tolerance(prog: Any, want: dict[str, Any], args: dict[str, Any]) -> float:
    """The absolute tolerance of a reassociated f32 kernel of `prog`.

    Only contractions reassociate: a reduction ``X[f] = X[f] + Y[g]`` summed in
    another order. A float sum of n terms in any order is within (n - 1) * eps *
    sum|t| <= n * n * eps * max|t| of the exact sum (Higham, Accuracy and
    Stability of Numerical Algorithms, section 4.2), so two orders differ by at
    most 2 * n * n * eps * max|t|; n is at most the number of instances plus one
    (the initial X[f]). The terms are values of the arrays: inputs (uniform in
    [-1, 1)) or, when another statement runs first (distributed loops), values
    it stored, bounded here by the largest magnitude of the results.
    """
    n = len(prog.points()) + 1
    scale = max([1.0, *(float(np.max(np.abs(d[a]))) for d in (want, args) for a in LP.ARRAYS)])
    return 2.0 * n * n * float(np.finfo(np.float32).eps) * scale


def _differs(
    prog: Any, kernel: Any, args: dict[str, Any], want: dict[str, Any], got: dict[str, Any]
) -> str | None:
    """None when the kernel's arrays are the reference's, else what differs."""
    for a in LP.ARRAYS:
        w, g = want[a], got[a]
        assert w.dtype == g.dtype and w.shape == g.shape
        if kernel.exact or w.dtype.kind != "f":
            ok = np.array_equal(w, g)
        else:
            ok = np.allclose(g, w, rtol=0.0, atol=_tolerance(prog, want, args))
        if not ok:
            return f"{a} differs from the reference\nreference:\n{w}\nkernel:\n{g}"
    return None


# ------------------------------------------------------------------ fixed generator bugs
#
# Found by this test, fixed in polykrnl/codegen/vectorize.py (a contraction needs
# every loop to index some factor; a vectorized loop's stop is max(start, stop)
# when it may be below the start); the reproducers below are regression tests.

FIXED_BUGS: dict[str, str] = {
    "1": "polykrnl/codegen/vectorize.py, Vectorizer._contraction: a contraction over a loop "
    "that the summed operand does not index. The einsum spec (or the `@`) only has the "
    "operands' loops: a reduction loop the operand lacks is summed once instead of once per "
    "iteration (silently wrong), a parallel loop it lacks is an output letter that no "
    "operand has (np.einsum raises ValueError). Minimized: A[i, 0] += B[j, i] over i, j, k.",
    "2": "polykrnl/codegen (slices of vectorized loops): a loop whose symbolic upper bound is "
    "below its lower bound (it runs no iteration) still gets slices `lb + c:N + c`; when "
    "N + c < 0 Python counts the stop from the end of the array, so the empty loop reads "
    "and writes elements (silently wrong) or the shapes disagree (ValueError). Minimized: "
    "A[i - 1, 0] += B[j, i], i in [1, N), j in [0, 2), N = 0.",
}

REPRODUCERS: dict[str, tuple[str, str, dict[str, int]]] = {
    # name: (bug, Krnl text, params)
    "repeat": (  # A[i] += B[i], 3 times (k): the kernel adds B once.
        "1",
        """
func.func @repeat(%A: memref<4xf32>, %B: memref<4xf32>) {
  %ii, %kk = krnl.define_loops 2
  krnl.iterate(%ii, %kk) with (%ii -> %i = 0 to 4, %kk -> %k = 0 to 3) {
    %a = krnl.load %A[%i] : memref<4xf32>
    %b = krnl.load %B[%i] : memref<4xf32>
    %s = arith.addf %a, %b : f32
    krnl.store %s, %A[%i] : memref<4xf32>
  }
  return
}""",
        {},
    ),
    "broadcast": (  # A[i, j] += B[i, k]: np.einsum('ac->ab', ...) raises ValueError.
        "1",
        """
func.func @broadcast(%A: memref<2x3xf32>, %B: memref<2x4xf32>) {
  %ii, %jj, %kk = krnl.define_loops 3
  krnl.iterate(%ii, %jj, %kk) with (%ii -> %i = 0 to 2, %jj -> %j = 0 to 3, %kk -> %k = 0 to 4) {
    %a = krnl.load %A[%i, %j] : memref<2x3xf32>
    %b = krnl.load %B[%i, %k] : memref<2x4xf32>
    %s = arith.addf %a, %b : f32
    krnl.store %s, %A[%i, %j] : memref<2x3xf32>
  }
  return
}""",
        {},
    ),
    "matmul_twice": (  # C[i, j] += A[i, k] * B[k, j], twice (l): one A @ B.
        "1",
        """
func.func @matmul_twice(%A: memref<2x3xf32>, %B: memref<3x2xf32>, %C: memref<2x2xf32>) {
  %ii, %jj, %kk, %ll = krnl.define_loops 4
  krnl.iterate(%ii, %jj, %kk, %ll) with (%ii -> %i = 0 to 2, %jj -> %j = 0 to 2,
                                         %kk -> %k = 0 to 3, %ll -> %l = 0 to 2) {
    %a = krnl.load %A[%i, %k] : memref<2x3xf32>
    %b = krnl.load %B[%k, %j] : memref<3x2xf32>
    %c = krnl.load %C[%i, %j] : memref<2x2xf32>
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    krnl.store %s, %C[%i, %j] : memref<2x2xf32>
  }
  return
}""",
        {},
    ),
    "empty_copy": (  # B[i] = A[i] for i < N - 1, N = 0: the kernel copies B[0:-1] = A[0:-1].
        "2",
        """
func.func @empty_copy(%N: index, %A: memref<8xf32>, %B: memref<8xf32>) {
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to affine_map<()[s0] -> (s0 - 1)>()[%N]) {
    %v = krnl.load %A[%i] : memref<8xf32>
    krnl.store %v, %B[%i] : memref<8xf32>
  }
  return
}""",
        {"N": 0},
    ),
    "empty_update": (  # the minimized example: A[0:-1, 0] and B[j, 1:0] do not broadcast.
        "2",
        """
func.func @empty_update(%N: index, %A: memref<2x1xi64>, %B: memref<2x3xi64>) {
  %ii, %jj = krnl.define_loops 2
  krnl.iterate(%ii, %jj) with (%ii -> %i = 1 to %N, %jj -> %j = 0 to 2) {
    %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %c0 = arith.constant 0 : index
    %a = krnl.load %A[%im, %c0] : memref<2x1xi64>
    %b = krnl.load %B[%j, %i] : memref<2x3xi64>
    %s = arith.addi %a, %b : i64
    krnl.store %s, %A[%im, %c0] : memref<2x1xi64>
  }
  return
}""",
        {"N": 0},
    ),
}


def _kernel_is_right(text: str, params: dict[str, int]) -> bool:
    """Whether the default kernel of the one function in `text` matches the reference."""
    (fn,) = pk.parse(text).functions
    args = make_inputs(fn, params, seed=0)
    want, got = copy.deepcopy(args), copy.deepcopy(args)
    pk.run_reference(fn, **want)
    try:
        pk.schedule(fn).to_numpy()(**got)
    except ValueError:
        return False
    # At most 6 terms in [-1, 1): far below the error of a missing term.
    arrays = [a for a, v in want.items() if isinstance(v, np.ndarray)]
    return all(np.allclose(got[a], want[a], rtol=0.0, atol=1e-5) for a in arrays)


# ------------------------------------------------------------------ the property


def _check(
    prog: Any,
    fn: pk.Function,
    sched: pk.Schedule,
    seed: int,
    bound: int | None,
    params: dict[str, int],
) -> None:
    args = make_inputs(fn, params, seed=seed)
    want = copy.deepcopy(args)
    pk.run_reference(fn, **want)
    variants = {
        "to_numpy()": sched.to_numpy(),
        "to_numpy(vectorize=False)": sched.to_numpy(vectorize=False),
        "to_numpy(reassociate=False)": sched.to_numpy(reassociate=False),
    }
    for what, kernel in variants.items():
        if what != "to_numpy()":
            assert kernel.exact, f"{what} is not exact\n{kernel.source}"
        got = copy.deepcopy(args)
        assert kernel(**got) is None
        wrong = _differs(prog, kernel, args, want, got)
        assert wrong is None, f"{what}: {wrong}\n{sched.loops()}\n{kernel.source}"
    source = variants["to_numpy()"].source
    kind = (
        "contraction"
        if "contraction" in source
        else "vectorized"
        if "vectorized" in source
        else "scalar"
    )
    event(f"kernel: {kind}")


# A[i, 0] = A[i, 0] + B[i, j] (f32): a contraction over j, np.einsum('ab->a', ...).
ROW_SUMS = LP.Prog(
    (0, 0),
    (4, 5),
    (2, 2),
    "f32",
    (
        LP.Stmt(
            LP.Access("A", (LP.Sub((1, 0), 0), LP.Sub((0, 0), 0))),
            (
                LP.Access("A", (LP.Sub((1, 0), 0), LP.Sub((0, 0), 0))),
                LP.Access("B", (LP.Sub((1, 0), 0), LP.Sub((0, 1), 0))),
            ),
            reduction=True,
        ),
    ),
)


@tiered(
    PROPERTY,
    FEW,
    prog=programs(),
    shared=st.sampled_from([True, True, True, False]),
    bound=st.none() | st.integers(0, 2),
    n=st.integers(0, 8),
    prims=LP.prim_lists,
    seed=st.integers(0, 2**16),
)
@example(prog=LP.STENCIL, shared=False, bound=None, n=0, prims=LP.TILE_BOTH[:2], seed=0)
@example(
    prog=LP.REDUCTION, shared=True, bound=None, n=0, prims=(LP.Prim("reorder", size=3),), seed=0
)
@example(
    prog=ROW_SUMS, shared=True, bound=None, n=0, prims=(LP.Prim("block", at=1, size=1),), seed=0
)
def test_kernels_of_legal_schedules_match_the_reference(
    prog: Any, shared: bool, bound: int | None, n: int, prims: Any, seed: int
) -> None:
    params: dict[str, int] = {}
    if bound is not None:  # the loop `bound` runs from its lower bound to N <= its upper bound
        bound %= len(prog.lbs)
        params["N"] = min(n, prog.ubs[bound])
        event("bound N: empty loop" if params["N"] <= prog.lbs[bound] else "bound N")
    fn = _function(krnl_text(prog, shared, bound))
    original = pk.Schedule.from_function(fn, recipe=False)
    _check(prog, fn, original, seed, bound, params)
    sched = transformed(original, prims)
    legal = sched.check().legal
    event("transformed: legal" if legal else "transformed: illegal (original order only)")
    if legal:
        _check(prog, fn, sched, seed, bound, params)


@pytest.mark.parametrize("name", sorted(REPRODUCERS))
def test_fixed_generator_bug_reproducer(name: str) -> None:
    bug, text, params = REPRODUCERS[name]
    assert bug in FIXED_BUGS
    assert _kernel_is_right(text, params), FIXED_BUGS[bug]
