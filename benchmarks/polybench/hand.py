"""Hand-written NumPy versions of the PolyBench kernels of this directory.

Written from PolyBench 4.2's definitions (the C kernels), not from the Krnl files,
as the baseline that generated code is measured against and as an independent
check of the Krnl files (tests/benchmarks/test_polybench_kernels.py).

Each function takes the arguments of the Krnl function of the same name, by the
same names (the index arguments are the problem sizes), and updates the arrays in
place exactly as the Krnl function does: the same elements end up with the same
values (up to floating-point reassociation; floyd_warshall exactly). Arrays may be
larger than the sizes: only the leading part that the sizes describe is used,
as in the Krnl functions. Idiomatic NumPy: whole-array expressions, `@` for
contractions, slices for stencils; the time loop of a stencil stays a Python loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Array = np.ndarray[Any, Any]


def gemm(
    NI: int, NJ: int, NK: int, alpha: float, beta: float, C: Array, A: Array, B: Array
) -> None:
    """C := alpha * A @ B + beta * C."""
    c = C[:NI, :NJ]
    c *= beta
    c += alpha * (A[:NI, :NK] @ B[:NK, :NJ])


def two_mm(
    NI: int,
    NJ: int,
    NK: int,
    NL: int,
    alpha: float,
    beta: float,
    tmp: Array,
    A: Array,
    B: Array,
    C: Array,
    D: Array,
) -> None:
    """tmp := alpha * A @ B; D := tmp @ C + beta * D."""
    t = tmp[:NI, :NJ]
    np.matmul(A[:NI, :NK], B[:NK, :NJ], out=t)
    t *= alpha
    d = D[:NI, :NL]
    d *= beta
    d += t @ C[:NJ, :NL]


def three_mm(
    NI: int,
    NJ: int,
    NK: int,
    NL: int,
    NM: int,
    E: Array,
    A: Array,
    B: Array,
    F: Array,
    C: Array,
    D: Array,
    G: Array,
) -> None:
    """E := A @ B; F := C @ D; G := E @ F."""
    e, f = E[:NI, :NJ], F[:NJ, :NL]
    np.matmul(A[:NI, :NK], B[:NK, :NJ], out=e)
    np.matmul(C[:NJ, :NM], D[:NM, :NL], out=f)
    np.matmul(e, f, out=G[:NI, :NL])


def atax(M: int, N: int, A: Array, x: Array, y: Array, tmp: Array) -> None:
    """tmp := A @ x; y := A.T @ tmp."""
    a = A[:M, :N]
    np.matmul(a, x[:N], out=tmp[:M])
    np.matmul(tmp[:M], a, out=y[:N])


def bicg(M: int, N: int, A: Array, s: Array, q: Array, p: Array, r: Array) -> None:
    """s := A.T @ r; q := A @ p."""
    a = A[:N, :M]
    np.matmul(r[:N], a, out=s[:M])
    np.matmul(a, p[:M], out=q[:N])


def mvt(N: int, x1: Array, x2: Array, y1: Array, y2: Array, A: Array) -> None:
    """x1 += A @ y1; x2 += A.T @ y2."""
    a = A[:N, :N]
    x1[:N] += a @ y1[:N]
    x2[:N] += y2[:N] @ a


def gemver(
    N: int,
    alpha: float,
    beta: float,
    A: Array,
    u1: Array,
    v1: Array,
    u2: Array,
    v2: Array,
    w: Array,
    x: Array,
    y: Array,
    z: Array,
) -> None:
    """A += u1 v1^T + u2 v2^T; x += beta * A.T @ y + z; w += alpha * A @ x."""
    a = A[:N, :N]
    a += np.outer(u1[:N], v1[:N])
    a += np.outer(u2[:N], v2[:N])
    xs = x[:N]
    xs += beta * (y[:N] @ a)
    xs += z[:N]
    w[:N] += alpha * (a @ xs)


def syrk(N: int, M: int, alpha: float, beta: float, C: Array, A: Array) -> None:
    """Lower triangle (j <= i) of C := alpha * A @ A.T + beta * C; the rest unchanged."""
    a = A[:N, :M]
    lower = np.tri(N, dtype=bool)
    c = C[:N, :N]
    c[lower] = beta * c[lower] + alpha * (a @ a.T)[lower]


def covariance(M: int, N: int, float_n: float, data: Array, cov: Array, mean: Array) -> None:
    """mean := column means; data -= mean (in place); cov := data.T @ data / (n - 1)."""
    d = data[:N, :M]
    mean[:M] = d.sum(axis=0) / float_n
    d -= mean[:M]
    c = (d.T @ d) / (float_n - 1.0)
    # PolyBench computes the upper triangle and mirrors it: keep it exactly symmetric.
    upper = np.triu(c)
    cov[:M, :M] = upper + np.triu(c, 1).T


def jacobi_1d(TSTEPS: int, N: int, A: Array, B: Array) -> None:
    """TSTEPS steps of B[i] = 0.33333 * (A[i-1] + A[i] + A[i+1]), then back into A."""
    for _ in range(TSTEPS):
        B[1 : N - 1] = 0.33333 * (A[: N - 2] + A[1 : N - 1] + A[2:N])
        A[1 : N - 1] = 0.33333 * (B[: N - 2] + B[1 : N - 1] + B[2:N])


def jacobi_2d(TSTEPS: int, N: int, A: Array, B: Array) -> None:
    """TSTEPS steps of the 5-point Jacobi stencil, A -> B then B -> A."""
    c, w, e, s, n = (
        (slice(1, N - 1), slice(1, N - 1)),
        (slice(1, N - 1), slice(0, N - 2)),
        (slice(1, N - 1), slice(2, N)),
        (slice(2, N), slice(1, N - 1)),
        (slice(0, N - 2), slice(1, N - 1)),
    )
    for _ in range(TSTEPS):
        B[c] = 0.2 * (A[c] + A[w] + A[e] + A[s] + A[n])
        A[c] = 0.2 * (B[c] + B[w] + B[e] + B[s] + B[n])


def heat_3d(TSTEPS: int, N: int, A: Array, B: Array) -> None:
    """TSTEPS steps of the 7-point heat stencil, A -> B then B -> A."""
    inner, lo, hi = slice(1, N - 1), slice(0, N - 2), slice(2, N)
    c = (inner, inner, inner)
    i_p, i_m = (hi, inner, inner), (lo, inner, inner)
    j_p, j_m = (inner, hi, inner), (inner, lo, inner)
    k_p, k_m = (inner, inner, hi), (inner, inner, lo)

    def step(src: Array, dst: Array) -> None:
        twice = 2.0 * src[c]
        dst[c] = (
            0.125 * (src[i_p] - twice + src[i_m])
            + 0.125 * (src[j_p] - twice + src[j_m])
            + 0.125 * (src[k_p] - twice + src[k_m])
            + src[c]
        )

    for _ in range(TSTEPS):
        step(A, B)
        step(B, A)


def fdtd_2d(TMAX: int, NX: int, NY: int, ex: Array, ey: Array, hz: Array, _fict_: Array) -> None:
    """TMAX steps of the 2-D FDTD (Yee) update of ey, ex and hz."""
    for t in range(TMAX):
        ey[0, :NY] = _fict_[t]
        ey[1:NX, :NY] -= 0.5 * (hz[1:NX, :NY] - hz[: NX - 1, :NY])
        ex[:NX, 1:NY] -= 0.5 * (hz[:NX, 1:NY] - hz[:NX, : NY - 1])
        hz[: NX - 1, : NY - 1] -= 0.7 * (
            ex[: NX - 1, 1:NY]
            - ex[: NX - 1, : NY - 1]
            + ey[1:NX, : NY - 1]
            - ey[: NX - 1, : NY - 1]
        )


def _seidel_wavefronts(N: int) -> list[Array]:
    """The 3 x 3 neighbourhoods of the interior points of an N x N array, as flat
    indices, one (9, points) array per wavefront w = 2 i + j, in increasing w.

    In a Gauss-Seidel sweep A[i][j] reads the new A[i-1][j-1..j+1] and A[i][j-1]
    (smaller 2 i + j) and the old A[i][j+1] and A[i+1][j-1..j+1] (larger 2 i + j):
    the points of one wavefront are independent and can be updated at once. Row 4
    of each array is the points themselves.
    """
    i, j = np.meshgrid(np.arange(1, N - 1), np.arange(1, N - 1), indexing="ij")
    w, flat = (2 * i + j).ravel(), (i * N + j).ravel()
    order = np.argsort(w, kind="stable")
    w, flat = w[order], flat[order]
    offsets = np.array([-N - 1, -N, -N + 1, -1, 0, 1, N - 1, N, N + 1])
    cuts = np.flatnonzero(np.diff(w)) + 1
    return [offsets[:, None] + front[None, :] for front in np.split(flat, cuts)]


def seidel_2d(TSTEPS: int, N: int, A: Array) -> None:
    """TSTEPS in-place 9-point Gauss-Seidel sweeps (vectorized along wavefronts)."""
    if N < 3:
        return
    a = np.ascontiguousarray(A[:N, :N])
    flat = a.reshape(-1)
    fronts = _seidel_wavefronts(N)
    for _ in range(TSTEPS):
        for neighbours in fronts:
            # The nine terms in one sum (NumPy may pair them differently from
            # PolyBench's left-to-right sum: rounding differences only).
            flat[neighbours[4]] = flat[neighbours].sum(axis=0) / 9.0
    A[:N, :N] = a


def lu(N: int, A: Array) -> None:
    """In-place LU without pivoting (unit lower L below the diagonal, U on and above)."""
    a = A[:N, :N]
    for k in range(N - 1):
        a[k + 1 :, k] /= a[k, k]
        a[k + 1 :, k + 1 :] -= np.outer(a[k + 1 :, k], a[k, k + 1 :])


def floyd_warshall(N: int, path: Array) -> None:
    """All-pairs shortest paths in place: path = min(path, path[:, k] + path[k, :])."""
    p = path[:N, :N]
    for k in range(N):
        np.minimum(p, p[:, k : k + 1] + p[k, :], out=p)


KERNELS: dict[str, Callable[..., None]] = {
    "gemm": gemm,
    "two_mm": two_mm,
    "three_mm": three_mm,
    "atax": atax,
    "bicg": bicg,
    "mvt": mvt,
    "gemver": gemver,
    "syrk": syrk,
    "covariance": covariance,
    "jacobi_1d": jacobi_1d,
    "jacobi_2d": jacobi_2d,
    "heat_3d": heat_3d,
    "fdtd_2d": fdtd_2d,
    "seidel_2d": seidel_2d,
    "lu": lu,
    "floyd_warshall": floyd_warshall,
}
