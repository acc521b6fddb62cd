"""Problem sizes and initial data for the PolyBench kernels of this directory.

`SIZES[kernel][dataset]` gives the index arguments of the Krnl function `@kernel`
(and of `hand.kernel`) for PolyBench's MINI, SMALL, MEDIUM and LARGE datasets. The
values are PolyBench 4.2's (the `MINI_DATASET`, `SMALL_DATASET`, `MEDIUM_DATASET`
and `LARGE_DATASET` blocks of each kernel's header, e.g.
linear-algebra/blas/gemm/gemm.h), written down from PolyBench 4.2 without a copy
of its sources at hand. LARGE is for compiled code (the C kernels of hand.c,
generated kernels): its problems take seconds to minutes even there, and far
longer in the interpreter or in scalar Python.

`make_inputs(kernel, params)` creates the other arguments (arrays and float
scalars), either like PolyBench's `init_array` (`seed=None`, the default: its
formulas as remembered, with alpha = 1.5, beta = 1.2 and float_n = N; arrays that
PolyBench leaves uninitialised because the kernel overwrites them are zeros) or
as seeded random data (`seed=...`: uniform in [-1, 1), except where the kernel
needs more to stay numerically meaningful: a diagonally dominant matrix for lu,
positive integer weights with missing edges for floyd_warshall). Random data is
what the tests use: PolyBench's formulas give symmetric or repetitive matrices
(A[i][j] = i * j % n / n in mvt and gemver) that would hide a transposed
subscript.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

Array = np.ndarray[Any, Any]

DATASETS = ("MINI", "SMALL", "MEDIUM", "LARGE")


def _d(
    mini: dict[str, int], small: dict[str, int], medium: dict[str, int], large: dict[str, int]
) -> dict[str, dict[str, int]]:
    return {"MINI": mini, "SMALL": small, "MEDIUM": medium, "LARGE": large}


# PolyBench 4.2 dataset sizes (see the module docstring): MINI, SMALL, MEDIUM, LARGE.
SIZES: dict[str, dict[str, dict[str, int]]] = {
    "gemm": _d(
        {"NI": 20, "NJ": 25, "NK": 30},
        {"NI": 60, "NJ": 70, "NK": 80},
        {"NI": 200, "NJ": 220, "NK": 240},
        {"NI": 1000, "NJ": 1100, "NK": 1200},
    ),
    "two_mm": _d(
        {"NI": 16, "NJ": 18, "NK": 22, "NL": 24},
        {"NI": 40, "NJ": 50, "NK": 70, "NL": 80},
        {"NI": 180, "NJ": 190, "NK": 210, "NL": 220},
        {"NI": 800, "NJ": 900, "NK": 1100, "NL": 1200},
    ),
    "three_mm": _d(
        {"NI": 16, "NJ": 18, "NK": 20, "NL": 22, "NM": 24},
        {"NI": 40, "NJ": 50, "NK": 60, "NL": 70, "NM": 80},
        {"NI": 180, "NJ": 190, "NK": 200, "NL": 210, "NM": 220},
        {"NI": 800, "NJ": 900, "NK": 1000, "NL": 1100, "NM": 1200},
    ),
    "atax": _d(
        {"M": 38, "N": 42}, {"M": 116, "N": 124}, {"M": 390, "N": 410}, {"M": 1900, "N": 2100}
    ),
    "bicg": _d(
        {"M": 38, "N": 42}, {"M": 116, "N": 124}, {"M": 390, "N": 410}, {"M": 1900, "N": 2100}
    ),
    "mvt": _d({"N": 40}, {"N": 120}, {"N": 400}, {"N": 2000}),
    "gemver": _d({"N": 40}, {"N": 120}, {"N": 400}, {"N": 2000}),
    "syrk": _d(
        {"M": 20, "N": 30}, {"M": 60, "N": 80}, {"M": 200, "N": 240}, {"M": 1000, "N": 1200}
    ),
    "covariance": _d(
        {"M": 28, "N": 32}, {"M": 80, "N": 100}, {"M": 240, "N": 260}, {"M": 1200, "N": 1400}
    ),
    "jacobi_1d": _d(
        {"TSTEPS": 20, "N": 30},
        {"TSTEPS": 40, "N": 120},
        {"TSTEPS": 100, "N": 400},
        {"TSTEPS": 500, "N": 2000},
    ),
    "jacobi_2d": _d(
        {"TSTEPS": 20, "N": 30},
        {"TSTEPS": 40, "N": 90},
        {"TSTEPS": 100, "N": 250},
        {"TSTEPS": 500, "N": 1300},
    ),
    "heat_3d": _d(
        {"TSTEPS": 20, "N": 10},
        {"TSTEPS": 40, "N": 20},
        {"TSTEPS": 100, "N": 40},
        {"TSTEPS": 500, "N": 120},
    ),
    "fdtd_2d": _d(
        {"TMAX": 20, "NX": 20, "NY": 30},
        {"TMAX": 40, "NX": 60, "NY": 80},
        {"TMAX": 100, "NX": 200, "NY": 240},
        {"TMAX": 500, "NX": 1000, "NY": 1200},
    ),
    "seidel_2d": _d(
        {"TSTEPS": 20, "N": 40},
        {"TSTEPS": 40, "N": 120},
        {"TSTEPS": 100, "N": 400},
        {"TSTEPS": 500, "N": 2000},
    ),
    "lu": _d({"N": 40}, {"N": 120}, {"N": 400}, {"N": 2000}),
    "floyd_warshall": _d({"N": 60}, {"N": 180}, {"N": 500}, {"N": 2800}),
}

KERNELS: tuple[str, ...] = tuple(SIZES)


def sizes(kernel: str, dataset: str = "MINI") -> dict[str, int]:
    """The index arguments of `kernel` for a PolyBench dataset (a new dict)."""
    if kernel not in SIZES:
        raise KeyError(f"unknown kernel {kernel!r}; known: {', '.join(KERNELS)}")
    if dataset not in DATASETS:
        raise KeyError(f"unknown dataset {dataset!r}; known: {', '.join(DATASETS)}")
    return dict(SIZES[kernel][dataset])


def _grid(*shape: int) -> tuple[Array, ...]:
    """Integer index grids (like the loop counters of PolyBench's init_array)."""
    return tuple(np.indices(shape, dtype=np.int64))


# PolyBench 4.2's init_array of each kernel, vectorized: `s` holds the sizes.


def _init_gemm(s: Mapping[str, int]) -> dict[str, Any]:
    ni, nj, nk = s["NI"], s["NJ"], s["NK"]
    i, j = _grid(ni, nj)
    C = ((i * j + 1) % ni) / ni
    i, k = _grid(ni, nk)
    A = (i * (k + 1) % nk) / nk
    k, j = _grid(nk, nj)
    B = (k * (j + 2) % nj) / nj
    return {"alpha": 1.5, "beta": 1.2, "C": C, "A": A, "B": B}


def _init_two_mm(s: Mapping[str, int]) -> dict[str, Any]:
    ni, nj, nk, nl = s["NI"], s["NJ"], s["NK"], s["NL"]
    i, k = _grid(ni, nk)
    A = ((i * k + 1) % ni) / ni
    k, j = _grid(nk, nj)
    B = (k * (j + 1) % nj) / nj
    j, l_ = _grid(nj, nl)
    C = ((j * (l_ + 3) + 1) % nl) / nl
    i, l_ = _grid(ni, nl)
    D = (i * (l_ + 2) % nk) / nk
    tmp = np.zeros((ni, nj))
    return {"alpha": 1.5, "beta": 1.2, "tmp": tmp, "A": A, "B": B, "C": C, "D": D}


def _init_three_mm(s: Mapping[str, int]) -> dict[str, Any]:
    ni, nj, nk, nl, nm = s["NI"], s["NJ"], s["NK"], s["NL"], s["NM"]
    i, k = _grid(ni, nk)
    A = ((i * k + 1) % ni) / (5 * ni)
    k, j = _grid(nk, nj)
    B = ((k * (j + 1) + 2) % nj) / (5 * nj)
    j, m = _grid(nj, nm)
    C = (j * (m + 3) % nl) / (5 * nl)
    m, l_ = _grid(nm, nl)
    D = ((m * (l_ + 2) + 2) % nk) / (5 * nk)
    E, F, G = np.zeros((ni, nj)), np.zeros((nj, nl)), np.zeros((ni, nl))
    return {"E": E, "A": A, "B": B, "F": F, "C": C, "D": D, "G": G}


def _init_atax(s: Mapping[str, int]) -> dict[str, Any]:
    m, n = s["M"], s["N"]
    i, j = _grid(m, n)
    x = 1 + np.arange(n) / float(n)
    A = ((i + j) % n) / (5.0 * m)
    return {"A": A, "x": x, "y": np.zeros(n), "tmp": np.zeros(m)}


def _init_bicg(s: Mapping[str, int]) -> dict[str, Any]:
    m, n = s["M"], s["N"]
    i, j = _grid(n, m)
    p = (np.arange(m) % m) / m
    r = (np.arange(n) % n) / n
    A = (i * (j + 1) % n) / n
    return {"A": A, "s": np.zeros(m), "q": np.zeros(n), "p": p, "r": r}


def _init_mvt(s: Mapping[str, int]) -> dict[str, Any]:
    n = s["N"]
    v = np.arange(n)
    i, j = _grid(n, n)
    return {
        "x1": (v % n) / n,
        "x2": ((v + 1) % n) / n,
        "y1": ((v + 3) % n) / n,
        "y2": ((v + 4) % n) / n,
        "A": (i * j % n) / n,
    }


def _init_gemver(s: Mapping[str, int]) -> dict[str, Any]:
    n = s["N"]
    v = np.arange(n, dtype=np.float64)
    fn = float(n)
    i, j = _grid(n, n)
    return {
        "alpha": 1.5,
        "beta": 1.2,
        "A": (i * j % n) / n,
        "u1": v.copy(),
        "v1": ((v + 1) / fn) / 4.0,
        "u2": ((v + 1) / fn) / 2.0,
        "v2": ((v + 1) / fn) / 6.0,
        "w": np.zeros(n),
        "x": np.zeros(n),
        "y": ((v + 1) / fn) / 8.0,
        "z": ((v + 1) / fn) / 9.0,
    }


def _init_syrk(s: Mapping[str, int]) -> dict[str, Any]:
    n, m = s["N"], s["M"]
    i, k = _grid(n, m)
    A = ((i * k + 1) % n) / n
    i, j = _grid(n, n)
    C = ((i * j + 2) % m) / m
    return {"alpha": 1.5, "beta": 1.2, "C": C, "A": A}


def _init_covariance(s: Mapping[str, int]) -> dict[str, Any]:
    m, n = s["M"], s["N"]
    i, j = _grid(n, m)
    data = (i * j) / m
    return {"float_n": float(n), "data": data, "cov": np.zeros((m, m)), "mean": np.zeros(m)}


def _init_jacobi_1d(s: Mapping[str, int]) -> dict[str, Any]:
    n = s["N"]
    v = np.arange(n, dtype=np.float64)
    return {"A": (v + 2) / n, "B": (v + 3) / n}


def _init_jacobi_2d(s: Mapping[str, int]) -> dict[str, Any]:
    n = s["N"]
    i, j = _grid(n, n)
    return {"A": (i * (j + 2) + 2) / n, "B": (i * (j + 3) + 3) / n}


def _init_heat_3d(s: Mapping[str, int]) -> dict[str, Any]:
    n = s["N"]
    i, j, k = _grid(n, n, n)
    A = (i + j + (n - k)) * 10 / n
    return {"A": A, "B": A.copy()}


def _init_fdtd_2d(s: Mapping[str, int]) -> dict[str, Any]:
    tmax, nx, ny = s["TMAX"], s["NX"], s["NY"]
    i, j = _grid(nx, ny)
    return {
        "ex": (i * (j + 1)) / nx,
        "ey": (i * (j + 2)) / ny,
        "hz": (i * (j + 3)) / nx,
        "_fict_": np.arange(tmax, dtype=np.float64),
    }


def _init_seidel_2d(s: Mapping[str, int]) -> dict[str, Any]:
    n = s["N"]
    i, j = _grid(n, n)
    return {"A": (i * (j + 2) + 2) / n}


def _init_lu(s: Mapping[str, int]) -> dict[str, Any]:
    # Lower triangular L with a unit diagonal and L[i][j] = (-j % n) / n + 1 below
    # it (C's %: -(j % n)), then A = L @ L.T: symmetric positive definite, so LU
    # without pivoting is stable.
    n = s["N"]
    i, j = _grid(n, n)
    L = np.where(j < i, 1.0 - (j % n) / n, 0.0)
    np.fill_diagonal(L, 1.0)
    return {"A": L @ L.T}


def _init_floyd_warshall(s: Mapping[str, int]) -> dict[str, Any]:
    n = s["N"]
    i, j = _grid(n, n)
    path = (i * j % 7 + 1).astype(np.int32)
    ij = i + j
    path[(ij % 13 == 0) | (ij % 7 == 0) | (ij % 11 == 0)] = 999
    return {"path": path}


_POLYBENCH_INIT: dict[str, Callable[[Mapping[str, int]], dict[str, Any]]] = {
    "gemm": _init_gemm,
    "two_mm": _init_two_mm,
    "three_mm": _init_three_mm,
    "atax": _init_atax,
    "bicg": _init_bicg,
    "mvt": _init_mvt,
    "gemver": _init_gemver,
    "syrk": _init_syrk,
    "covariance": _init_covariance,
    "jacobi_1d": _init_jacobi_1d,
    "jacobi_2d": _init_jacobi_2d,
    "heat_3d": _init_heat_3d,
    "fdtd_2d": _init_fdtd_2d,
    "seidel_2d": _init_seidel_2d,
    "lu": _init_lu,
    "floyd_warshall": _init_floyd_warshall,
}


# Shapes of the array arguments and the float scalars, per kernel, for random data.
_SHAPES: dict[str, Callable[[Mapping[str, int]], dict[str, tuple[int, ...]]]] = {
    "gemm": lambda s: {"C": (s["NI"], s["NJ"]), "A": (s["NI"], s["NK"]), "B": (s["NK"], s["NJ"])},
    "two_mm": lambda s: {
        "tmp": (s["NI"], s["NJ"]),
        "A": (s["NI"], s["NK"]),
        "B": (s["NK"], s["NJ"]),
        "C": (s["NJ"], s["NL"]),
        "D": (s["NI"], s["NL"]),
    },
    "three_mm": lambda s: {
        "E": (s["NI"], s["NJ"]),
        "A": (s["NI"], s["NK"]),
        "B": (s["NK"], s["NJ"]),
        "F": (s["NJ"], s["NL"]),
        "C": (s["NJ"], s["NM"]),
        "D": (s["NM"], s["NL"]),
        "G": (s["NI"], s["NL"]),
    },
    "atax": lambda s: {"A": (s["M"], s["N"]), "x": (s["N"],), "y": (s["N"],), "tmp": (s["M"],)},
    "bicg": lambda s: {
        "A": (s["N"], s["M"]),
        "s": (s["M"],),
        "q": (s["N"],),
        "p": (s["M"],),
        "r": (s["N"],),
    },
    "mvt": lambda s: {
        "x1": (s["N"],),
        "x2": (s["N"],),
        "y1": (s["N"],),
        "y2": (s["N"],),
        "A": (s["N"], s["N"]),
    },
    "gemver": lambda s: {
        "A": (s["N"], s["N"]),
        **{v: (s["N"],) for v in ("u1", "v1", "u2", "v2", "w", "x", "y", "z")},
    },
    "syrk": lambda s: {"C": (s["N"], s["N"]), "A": (s["N"], s["M"])},
    "covariance": lambda s: {"data": (s["N"], s["M"]), "cov": (s["M"], s["M"]), "mean": (s["M"],)},
    "jacobi_1d": lambda s: {"A": (s["N"],), "B": (s["N"],)},
    "jacobi_2d": lambda s: {"A": (s["N"], s["N"]), "B": (s["N"], s["N"])},
    "heat_3d": lambda s: {"A": (s["N"],) * 3, "B": (s["N"],) * 3},
    "fdtd_2d": lambda s: {
        "ex": (s["NX"], s["NY"]),
        "ey": (s["NX"], s["NY"]),
        "hz": (s["NX"], s["NY"]),
        "_fict_": (s["TMAX"],),
    },
    "seidel_2d": lambda s: {"A": (s["N"], s["N"])},
}


def _random(kernel: str, s: Mapping[str, int], seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    if kernel == "lu":
        # Diagonally dominant: LU without pivoting stays well conditioned.
        n = s["N"]
        return {"A": rng.uniform(-1.0, 1.0, size=(n, n)) + n * np.eye(n)}
    if kernel == "floyd_warshall":
        # Positive weights, about two thirds of the edges missing (999, as in
        # PolyBench): sparse enough that shortest paths go through several nodes.
        n = s["N"]
        path = rng.integers(1, 20, size=(n, n)).astype(np.int32)
        path[rng.random((n, n)) < 0.65] = 999
        return {"path": path}
    out: dict[str, Any] = {}
    if kernel in ("gemm", "two_mm", "gemver", "syrk"):
        out |= {"alpha": 1.5, "beta": 1.2}
    if kernel == "covariance":
        out["float_n"] = float(s["N"])
    for name, shape in _SHAPES[kernel](s).items():
        out[name] = rng.uniform(-1.0, 1.0, size=shape)
    return out


def make_inputs(
    kernel: str, params: Mapping[str, int], *, seed: int | None = None
) -> dict[str, Any]:
    """The arrays and float scalars of `kernel` for the index arguments `params`.

    `seed=None`: PolyBench 4.2's initial data; an int: seeded random data (see the
    module docstring). Arrays are new, C-contiguous, float64 (int32 for
    floyd_warshall), shaped as PolyBench declares them.
    """
    if kernel not in SIZES:
        raise KeyError(f"unknown kernel {kernel!r}; known: {', '.join(KERNELS)}")
    s = dict(params)
    expected = set(SIZES[kernel]["MINI"])
    if set(s) != expected:
        raise KeyError(f"{kernel} takes the sizes {sorted(expected)}, got {sorted(s)}")
    data = _POLYBENCH_INIT[kernel](s) if seed is None else _random(kernel, s, seed)
    dtype = np.int32 if kernel == "floyd_warshall" else np.float64
    return {
        k: np.ascontiguousarray(v, dtype=dtype) if isinstance(v, np.ndarray) else v
        for k, v in data.items()
    }


def arguments(kernel: str, dataset: str = "MINI", *, seed: int | None = None) -> dict[str, Any]:
    """All the arguments of `kernel` for a PolyBench dataset: sizes and inputs."""
    s = sizes(kernel, dataset)
    return {**s, **make_inputs(kernel, s, seed=seed)}
