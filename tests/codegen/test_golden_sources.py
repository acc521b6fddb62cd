"""Golden files of generated NumPy sources, each also run against the reference.

Every case below names a Krnl function, the schedule it runs in (its Krnl
recipe, or primitives applied to its original order) and the options of
``to_numpy``; ``golden/NAME.txt`` holds ``kernel.source`` exactly. The files
were reviewed by hand (what was checked, per file, is in golden/README.md).
Regenerate them after a reviewed change with
`POLYKRNL_UPDATE_GOLDEN=1 python -m pytest tests/codegen/test_golden_sources.py`
and review the diff: a golden file records what the generator writes, not
that it is right. That is why each case also runs the kernel on random inputs
(``polykrnl.inputs.make_inputs``) against ``pk.run_reference``: bit for bit
when ``kernel.exact``, else within the reassociation bound of ``_close``.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.inputs import make_inputs
from polykrnl.targets.numpy.kernel import NumpyKernel
from tests.parsed import load

ROOT = Path(__file__).parent.parent.parent
GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("POLYKRNL_UPDATE_GOLDEN") == "1"

Steps = Callable[[pk.Schedule], pk.Schedule]


@dataclass(frozen=True)
class Case:
    name: str  # golden/NAME.txt
    path: str  # the Krnl file, from the repository root
    func: str
    # Primitives applied to the function's original order (None: its Krnl recipe).
    steps: Steps | None = None
    params: dict[str, int] = field(default_factory=dict)  # make_inputs' params
    vectorize: bool = True
    reassociate: bool = True
    # The most terms any reassociated reduction sums (it sizes the tolerance); 0 when
    # the kernel must be exact.
    terms: int = 0

    def function(self) -> pk.Function:
        return _verified(self.path)[self.func]

    def schedule(self) -> pk.Schedule:
        fn = self.function()
        if self.steps is None:
            return pk.schedule(fn)
        return self.steps(pk.Schedule.from_function(fn, recipe=False))

    def kernel(self) -> NumpyKernel:
        # built once for both tests of the case (the source, then the runs)
        if self.name not in _KERNELS:
            sched = self.schedule()
            _KERNELS[self.name] = sched.to_numpy(
                vectorize=self.vectorize, reassociate=self.reassociate
            )
        return _KERNELS[self.name]


_KERNELS: dict[str, NumpyKernel] = {}


@cache  # each file parsed and verified once: the tests only read the programs
def _verified(path: str) -> pk.Module:
    mod = load(ROOT / path)
    pk.verify(mod)
    return mod


def _original(s: pk.Schedule) -> pk.Schedule:
    return s


def _skewed_time_tiles(s: pk.Schedule) -> pk.Schedule:
    # The skew legality suggests for jacobi-1d, then rectangular (t, i) tiles.
    return s.skew("i", "t", 1).block("t", 2).block("i", 4).reorder(["t_t", "i_t", "t", "i"])


def _gemm_tiles(s: pk.Schedule) -> pk.Schedule:
    # 6 x 7 by 4 x 4 tiles: partial tiles in both i and j.
    return s.block("i", 4).block("j", 4).reorder(["i_t", "j_t", "i", "j"])


CORPUS = "tests/corpus"
LEGALITY = "tests/transforms/legality"
CASES = [
    Case("relu", f"{CORPUS}/parallel_forms.mlir", "relu"),
    Case("transpose_2d", f"{CORPUS}/transpose.mlir", "transpose_2d"),
    Case("transpose_blocked", f"{CORPUS}/transpose.mlir", "transpose_blocked"),
    Case("gemm", f"{CORPUS}/gemm.mlir", "gemm", terms=30),
    Case(
        "gemm_tiled",
        f"{CORPUS}/gemm.mlir",
        "gemm_tiled",
        # 21 x 13 by 13 x 19: partial last tiles of 16 (i, j) and of 8 (k).
        params={"M": 21, "N": 19, "K": 13, "A.0": 21, "A.1": 13, "B.0": 13, "B.1": 19}
        | {"C.0": 21, "C.1": 19},
        terms=13,
    ),
    Case("jacobi_2d_time", f"{LEGALITY}/jacobi_2d.mlir", "jacobi_2d", steps=_original),
    Case("gemm_exact", f"{LEGALITY}/gemm.mlir", "gemm", steps=_original, reassociate=False),
    Case(
        "sum_of_squares_iter_args",
        f"{CORPUS}/reduction_iter_args.mlir",
        "sum_of_squares",
        reassociate=False,
    ),
    Case("softmax_rows", f"{CORPUS}/softmax.mlir", "softmax_rows", terms=10),
    Case("jacobi_1d_skewed_tiled", f"{LEGALITY}/jacobi_1d.mlir", "jacobi_1d", _skewed_time_tiles),
    Case("lu", f"{LEGALITY}/lu.mlir", "lu", steps=_original, terms=7),
    Case("cholesky", f"{LEGALITY}/cholesky.mlir", "cholesky", steps=_original),
    Case("matmul_panel", f"{CORPUS}/matmul_panel.mlir", "matmul_panel", terms=10),
    Case("tile_buffer_attrs", f"{CORPUS}/matmul_panel.mlir", "tile_buffer_attrs"),
    Case("normalize_rows", f"{CORPUS}/companion_ops.mlir", "normalize_rows", params={"m.0": 5}),
    Case("histogram_scalar", f"{CORPUS}/companion_ops.mlir", "histogram"),
    Case("row_max", f"{CORPUS}/reductions.mlir", "row_max"),
    Case("col_sum_exp", f"{CORPUS}/reductions.mlir", "col_sum_exp", terms=6),
    Case("gemm_tiled_scalar", f"{LEGALITY}/gemm.mlir", "gemm", _gemm_tiles, vectorize=False),
]
NAMES = [c.name for c in CASES]


def test_the_golden_set_is_complete() -> None:
    assert len(CASES) >= 12 and len(set(NAMES)) == len(NAMES)
    # No stale golden file: every file belongs to a case.
    assert sorted(p.stem for p in GOLDEN.glob("*.txt")) == sorted(NAMES)
    readme = (GOLDEN / "README.md").read_text()
    for name in NAMES:
        assert f"`{name}`" in readme, (
            f"golden/README.md does not say what {name}.txt was checked for"
        )


@pytest.mark.parametrize("case", CASES, ids=NAMES)
def test_source_matches_golden(case: Case) -> None:
    source = case.kernel().source
    golden = GOLDEN / f"{case.name}.txt"
    if UPDATE:
        golden.write_text(source)
    assert source == golden.read_text()


def _close(want: np.ndarray, got: np.ndarray, terms: int) -> bool:
    """Equal up to reassociating sums of `terms` terms (plus the initial value).

    The inputs are uniform in [-1, 1) and every term is a product of inputs (and
    of alpha): |term| < 1. A floating-point sum of n terms in any order is within
    (n - 1) * eps * sum|terms| <= n * n * eps of the exact sum (Higham, Accuracy
    and Stability of Numerical Algorithms, 2nd ed., section 4.2), so the
    reference's order and the kernel's differ by at most 2 * n * n * eps; the
    roundings of the products and of the scaling by alpha (a few eps per term)
    fit in doubling that. With n = terms + 1 that is about 5e-4 for 30 f32 terms,
    while a term dropped or added twice moves an element by |a * b|, which for
    uniform inputs is larger than that in most elements.
    """
    n = terms + 1
    tol = 4.0 * n * n * float(np.finfo(want.dtype).eps)
    return bool(np.allclose(got, want, rtol=0.0, atol=tol, equal_nan=True))


# The interpreter takes about a second on each of these (two seeds of the static 20 x 30 x 25
# gemm, of 16-wide matmul panels); their sources are still checked in the fast tier.
SLOW = {"gemm", "matmul_panel"}


def _param(case: Case) -> Any:
    return pytest.param(case, id=case.name, marks=[pytest.mark.slow] if case.name in SLOW else [])


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_kernel_matches_the_reference(case: Case) -> None:
    fn = case.function()
    kernel = case.kernel()
    assert kernel.reassociated == (case.terms > 0), "a case reassociates exactly when it has terms"
    for seed in (0, 1):
        args = make_inputs(fn, case.params, seed=seed)
        want = copy.deepcopy(args)
        got = copy.deepcopy(args)
        r_want = pk.run_reference(fn, **want)
        r_got = kernel(**got)
        pairs: list[tuple[str, Any, Any]] = [
            (k, v, got[k]) for k, v in want.items() if isinstance(v, np.ndarray)
        ]
        pairs.append(("result", r_want, r_got))
        for what, w, g in pairs:
            if w is None:
                assert g is None, what
                continue
            w, g = np.asarray(w), np.asarray(g)
            assert w.shape == g.shape and w.dtype == g.dtype, what
            if kernel.exact or w.dtype.kind not in "fc":
                assert np.array_equal(w, g, equal_nan=w.dtype.kind in "fc"), f"{what} differs"
            elif not kernel.reassociated:
                # float32 math in float32 (kernel.narrow_math): each value a few ulp off
                eps = float(np.finfo(w.dtype).eps)
                assert np.allclose(g, w, rtol=4 * eps, atol=0, equal_nan=True), what
            else:
                assert _close(w, g, case.terms), f"{what}: max error {np.max(np.abs(w - g))}"
