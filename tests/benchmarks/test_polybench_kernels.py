"""The PolyBench kernels of benchmarks/polybench/: Krnl files against hand NumPy.

Each kernel NAME has a Krnl file NAME.mlir with `@NAME` (PolyBench's loop order)
and `@NAME_tiled` (a Krnl recipe), and a hand-written NumPy version
`hand.NAME`, written independently. The reference interpreter runs both Krnl
functions on copies of the same seeded random inputs (`sizes.make_inputs`):

- `@NAME_tiled` must equal `@NAME` exactly: every recipe here keeps the order of
  the operations on each element, so the results are bitwise the same;
- both must equal the hand version (np.allclose, rtol 1e-10, for f64, up to
  reassociation in NumPy's sums and BLAS products; exactly for floyd_warshall);
- the arrays the kernel writes must change and the others must not, so that two
  versions that both do nothing cannot agree by accident.

At the file's tile sizes (32, or 16 for heat_3d) and the test sizes most nests
fit in one tile, so the recipes are run a second time with every krnl.block size
replaced by 5, on sizes with full and partial tiles.

Sizes: PolyBench's MINI dataset, except fewer time steps for the 2-D and 3-D
stencils and a smaller floyd_warshall (N = 20 instead of 60): the interpreter
runs a few tens of thousands of statement instances per second.
"""

from __future__ import annotations

import importlib.util
import itertools
import re
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.builtin import IndexType

import polykrnl as pk
from tests.parsed import load

KERNEL_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "polybench"


def _import(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"polybench_{name}", KERNEL_DIR / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hand = _import("hand")
sizes = _import("sizes")

KERNELS: tuple[str, ...] = sizes.KERNELS

# The arrays each kernel writes (every other array argument is only read).
OUTPUTS: dict[str, set[str]] = {
    "gemm": {"C"},
    "two_mm": {"tmp", "D"},
    "three_mm": {"E", "F", "G"},
    "atax": {"y", "tmp"},
    "bicg": {"s", "q"},
    "mvt": {"x1", "x2"},
    "gemver": {"A", "x", "w"},
    "syrk": {"C"},
    "covariance": {"data", "cov", "mean"},
    "jacobi_1d": {"A", "B"},
    "jacobi_2d": {"A", "B"},
    "heat_3d": {"A", "B"},
    "fdtd_2d": {"ex", "ey", "hz"},
    "seidel_2d": {"A"},
    "lu": {"A"},
    "floyd_warshall": {"path"},
}

# MINI, with fewer time steps for the expensive stencils and a smaller floyd_warshall.
TEST_SIZES: dict[str, dict[str, int]] = {
    k: sizes.sizes(k, "MINI")
    | {
        "jacobi_2d": {"TSTEPS": 3},
        "heat_3d": {"TSTEPS": 3},
        "fdtd_2d": {"TMAX": 3},
        "seidel_2d": {"TSTEPS": 3},
        "floyd_warshall": {"N": 20},
    }.get(k, {})
    for k in KERNELS
}

# Sizes for the recipes with tiles of 5: two full tiles and a partial one (or more)
# in every blocked dimension, different sizes per dimension.
SMALL_TILE_SIZES: dict[str, dict[str, int]] = {
    "gemm": {"NI": 11, "NJ": 12, "NK": 13},
    "two_mm": {"NI": 11, "NJ": 12, "NK": 13, "NL": 14},
    "three_mm": {"NI": 11, "NJ": 12, "NK": 13, "NL": 14, "NM": 16},
    "atax": {"M": 11, "N": 13},
    "bicg": {"M": 11, "N": 13},
    "mvt": {"N": 13},
    "gemver": {"N": 13},
    "syrk": {"N": 13, "M": 12},
    "covariance": {"M": 13, "N": 12},
    "jacobi_1d": {"TSTEPS": 3, "N": 14},
    "jacobi_2d": {"TSTEPS": 2, "N": 14},
    "heat_3d": {"TSTEPS": 1, "N": 13},
    "fdtd_2d": {"TMAX": 2, "NX": 12, "NY": 13},
    "seidel_2d": {"TSTEPS": 2, "N": 13},
    "lu": {"N": 13},
    "floyd_warshall": {"N": 13},
}

SEED = 20260

# The fast tier runs the legality and small-tile tests below on five kernels of different
# shapes (a contraction, a time-tiled stencil, an in-place stencil, a triangular
# factorization, a min-plus closure); the full suite on all of them.
FAST = {"gemm", "jacobi_2d", "seidel_2d", "lu", "floyd_warshall"}
TIERED = [pytest.param(k, id=k, marks=[] if k in FAST else [pytest.mark.slow]) for k in KERNELS]


@cache
def _module(kernel: str) -> pk.Module:
    mod = load(KERNEL_DIR / f"{kernel}.mlir")
    pk.verify(mod)
    return mod


@cache
def _small_tile_module(kernel: str) -> pk.Module:
    text = (KERNEL_DIR / f"{kernel}.mlir").read_text()
    text, count = re.subn(r"(krnl\.block %\w+ )\d+", r"\g<1>5", text)
    assert count > 0, f"{kernel}_tiled has no krnl.block"
    mod = pk.parse(text)
    pk.verify(mod)
    return mod


def _copy(inputs: dict[str, Any]) -> dict[str, Any]:
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in inputs.items()}


def _arrays(values: dict[str, Any]) -> dict[str, np.ndarray[Any, Any]]:
    return {k: v for k, v in values.items() if isinstance(v, np.ndarray)}


def _run_krnl(fn: pk.Function, params: dict[str, int], inputs: dict[str, Any]) -> dict[str, Any]:
    values = _copy(inputs)
    pk.run_reference(fn, **params, **values)
    return values


def _run_hand(kernel: str, params: dict[str, int], inputs: dict[str, Any]) -> dict[str, Any]:
    values = _copy(inputs)
    hand.KERNELS[kernel](**params, **values)
    return values


def _assert_same_as_hand(kernel: str, got: dict[str, Any], want: dict[str, Any], what: str) -> None:
    for name, expected in _arrays(want).items():
        actual = got[name]
        if kernel == "floyd_warshall":
            np.testing.assert_array_equal(actual, expected, err_msg=f"{what}: {name}")
        else:
            # Reassociation errors scale with the magnitude of the terms, not of
            # the result: an absolute floor 1e-12 times the array's scale keeps
            # results that cancel to almost zero from failing on rtol alone.
            atol = 1e-12 * max(1.0, float(np.abs(expected).max(initial=0.0)))
            np.testing.assert_allclose(
                actual, expected, rtol=1e-10, atol=atol, err_msg=f"{what}: {name}"
            )


def _assert_bitwise(got: dict[str, Any], want: dict[str, Any], what: str) -> None:
    for name, expected in _arrays(want).items():
        np.testing.assert_array_equal(got[name], expected, err_msg=f"{what}: {name}")


def _assert_writes(kernel: str, inputs: dict[str, Any], result: dict[str, Any], what: str) -> None:
    for name, before in _arrays(inputs).items():
        changed = not np.array_equal(before, result[name])
        assert changed == (name in OUTPUTS[kernel]), (
            f"{what}: {name} {'changed' if changed else 'did not change'}"
        )


def test_every_kernel_has_its_files() -> None:
    assert len(KERNELS) >= 14
    assert set(KERNELS) == set(hand.KERNELS) == set(OUTPUTS)
    assert {"jacobi_1d", "jacobi_2d", "heat_3d", "fdtd_2d", "seidel_2d"} <= set(KERNELS)
    assert {"syrk", "covariance", "lu"} <= set(KERNELS)
    for kernel in KERNELS:
        assert [f.name for f in _module(kernel).functions] == [kernel, f"{kernel}_tiled"]


@pytest.mark.parametrize("kernel", KERNELS)
def test_the_model_names_the_arguments_each_kernel_writes(kernel: str) -> None:
    # pk.tune and the benchmarks copy only these before each timed call: an array left
    # out would be timed on the previous call's output
    mod = _module(kernel)
    for fn in (mod[kernel], mod[f"{kernel}_tiled"]):
        assert pk.poly_program(fn).written_arguments() == OUTPUTS[kernel], fn.name


@pytest.mark.parametrize("kernel", KERNELS)
def test_sizes_and_inputs_fit_the_krnl_signature(kernel: str) -> None:
    mod = _module(kernel)
    assert mod[kernel].arguments == mod[f"{kernel}_tiled"].arguments
    for fn in (mod[kernel], mod[f"{kernel}_tiled"]):
        index_args = {a.name for a in fn.arguments if isinstance(a.type, IndexType)}
        other_args = {a.name for a in fn.arguments} - index_args
        for dataset in sizes.DATASETS:
            s = sizes.sizes(kernel, dataset)
            assert set(s) == index_args
            if dataset == "LARGE":
                continue  # ~30 MB of inputs each (lu: an N = 2000 product); same code as MEDIUM
            for seed in (None, 1):
                inputs = sizes.make_inputs(kernel, s, seed=seed)
                assert set(inputs) == other_args
    # The hand version takes the same names, in the same order.
    code = hand.KERNELS[kernel].__code__
    assert code.co_varnames[: code.co_argcount] == tuple(a.name for a in mod[kernel].arguments)


def test_dataset_sizes_grow() -> None:
    assert sizes.DATASETS == ("MINI", "SMALL", "MEDIUM", "LARGE")
    for kernel in KERNELS:
        by_size = [sizes.sizes(kernel, d) for d in sizes.DATASETS]
        for smaller, larger in itertools.pairwise(by_size):
            assert all(smaller[k] <= larger[k] for k in smaller), kernel
            assert any(smaller[k] < larger[k] for k in smaller), kernel


@pytest.mark.parametrize("kernel", TIERED)
def test_tiled_recipe_is_legal(kernel: str) -> None:
    fn = _module(kernel)[f"{kernel}_tiled"]
    pk.schedule(fn)  # raises IllegalTransformError for an illegal recipe
    report = pk.check(fn)
    assert report.legal, str(report)


# MINI sizes: 9 s of reference interpreter in all; test_recipe_with_small_tiles makes the same
# comparisons on small sizes in the fast tier.
@pytest.mark.slow
@pytest.mark.parametrize("kernel", KERNELS)
def test_krnl_matches_hand_numpy(kernel: str) -> None:
    mod = _module(kernel)
    params = TEST_SIZES[kernel]
    inputs = sizes.make_inputs(kernel, params, seed=SEED)
    want = _run_hand(kernel, params, inputs)
    _assert_writes(kernel, inputs, want, f"hand.{kernel}")
    natural = _run_krnl(mod[kernel], params, inputs)
    _assert_writes(kernel, inputs, natural, f"@{kernel}")
    _assert_same_as_hand(kernel, natural, want, f"@{kernel} vs hand.{kernel}")
    tiled = _run_krnl(mod[f"{kernel}_tiled"], params, inputs)
    _assert_bitwise(tiled, natural, f"@{kernel}_tiled vs @{kernel}")
    _assert_same_as_hand(kernel, tiled, want, f"@{kernel}_tiled vs hand.{kernel}")


@pytest.mark.parametrize("kernel", TIERED)
def test_recipe_with_small_tiles(kernel: str) -> None:
    params = SMALL_TILE_SIZES[kernel]
    inputs = sizes.make_inputs(kernel, params, seed=SEED + 1)
    want = _run_hand(kernel, params, inputs)
    natural = _run_krnl(_module(kernel)[kernel], params, inputs)
    tiled = _run_krnl(_small_tile_module(kernel)[f"{kernel}_tiled"], params, inputs)
    _assert_writes(kernel, inputs, tiled, f"@{kernel}_tiled (tiles of 5)")
    _assert_bitwise(tiled, natural, f"@{kernel}_tiled (tiles of 5) vs @{kernel}")
    _assert_same_as_hand(kernel, tiled, want, f"@{kernel}_tiled (tiles of 5) vs hand.{kernel}")


@pytest.mark.parametrize("kernel", KERNELS)
def test_arrays_larger_than_the_sizes(kernel: str) -> None:
    """Dynamic memrefs may be larger than the problem (as with `polykrnl run
    --size`): the Krnl function and the hand version use the same leading part
    and leave the rest alone."""
    params = {k: max(3, (v + 1) // 2) for k, v in SMALL_TILE_SIZES[kernel].items()}
    bigger = {k: v + 3 for k, v in params.items()}
    inputs = sizes.make_inputs(kernel, bigger, seed=SEED + 2)
    want = _run_hand(kernel, params, inputs)
    got = _run_krnl(_module(kernel)[kernel], params, inputs)
    _assert_writes(kernel, inputs, got, f"@{kernel} on larger arrays")
    _assert_same_as_hand(kernel, got, want, f"@{kernel} vs hand.{kernel} on larger arrays")


def _seidel_rectangular_tiles() -> pk.Function:
    """@seidel_2d_tiled with its strip-mined i, j permuted into rectangular tiles."""
    text = (KERNEL_DIR / "seidel_2d.mlir").read_text()
    blocked = "%jb, %jl = krnl.block %jj 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)\n"
    permute = (
        "  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] "
        ": !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop\n"
    )
    assert text.count(blocked) == 1 and text.count("krnl.iterate(%tt, %ib, %il, %jb, %jl)") == 1
    text = text.replace(blocked, blocked + permute).replace(
        "krnl.iterate(%tt, %ib, %il, %jb, %jl)", "krnl.iterate(%tt, %ib, %jb, %il, %jl)"
    )
    text = re.sub(r"(krnl\.block %\w+ )\d+", r"\g<1>5", text)
    mod = pk.parse(text)
    pk.verify(mod)
    return mod["seidel_2d_tiled"]


def test_seidel_rectangular_tiles_are_refused_and_wrong() -> None:
    """The header of seidel_2d.mlir says that rectangular i, j tiles are illegal:
    polykrnl refuses them, and run anyway they give other results, which the
    comparison with the hand version catches."""
    fn = _seidel_rectangular_tiles()
    with pytest.raises(pk.IllegalTransformError):
        pk.schedule(fn)
    assert not pk.check(fn).legal
    params = SMALL_TILE_SIZES["seidel_2d"]
    inputs = sizes.make_inputs("seidel_2d", params, seed=SEED)
    want = _run_hand("seidel_2d", params, inputs)
    got = _run_krnl(fn, params, inputs)
    with pytest.raises(AssertionError):
        _assert_same_as_hand("seidel_2d", got, want, "illegal seidel tiles")


@pytest.mark.parametrize("kernel", ["lu", "floyd_warshall", "covariance", "gemver"])
def test_polybench_init_stays_meaningful(kernel: str) -> None:
    """PolyBench's own initial data at MINI: the hand versions give finite,
    non-degenerate results (lu factors without blowing up, floyd_warshall finds
    shorter paths through other nodes)."""
    params = sizes.sizes(kernel, "MINI")
    inputs = sizes.make_inputs(kernel, params)
    out = _run_hand(kernel, params, inputs)
    _assert_writes(kernel, inputs, out, f"hand.{kernel} on PolyBench's data")
    for name in OUTPUTS[kernel]:
        assert np.all(np.isfinite(out[name])), name
    if kernel == "lu":
        n = params["N"]
        a = out["A"]
        lower = np.tril(a, -1) + np.eye(n)
        upper = np.triu(a)
        np.testing.assert_allclose(lower @ upper, inputs["A"], rtol=1e-10, atol=1e-10)
        assert np.abs(a).max() < 1e3 * np.abs(inputs["A"]).max()
    if kernel == "floyd_warshall":
        assert (out["path"] <= inputs["path"]).all()
        assert (out["path"] < 999).all()
