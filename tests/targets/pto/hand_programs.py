"""Tile programs built by hand with the program IR, shared by the sim, C++ and CPU-simulator
tests; each comes with a plain NumPy oracle of what it computes.

They are what the pattern matcher will produce for the Krnl kernels of issue 6: a tiled 2-D
transpose with partial edge tiles, a row softmax, a tiled matmul (f16 in, f32 out) and an
elementwise add with scalar variants.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy  # type: ignore[import-untyped]

from polykrnl.targets.pto import tmp_rules
from polykrnl.targets.pto.dtypes import F32, dtype
from polykrnl.targets.pto.program import (
    GlobalView,
    Instr,
    Item,
    Loop,
    Program,
    Scalar,
    SetValid,
    TensorParam,
    expr,
    plan_offsets,
)
from polykrnl.targets.pto.sync import insert_sync
from polykrnl.targets.pto.types import (
    BLayout,
    Loc,
    SLayout,
    TileType,
    acc_tile,
    left_tile,
    right_tile,
    vec_tile,
)

Array = np.ndarray[Any, Any]


@dataclass(frozen=True)
class Case:
    """A hand-built program, sizes to run it with, inputs and the NumPy oracle."""

    name: str
    program: Program
    params: dict[str, int]
    make_inputs: Callable[[np.random.Generator], dict[str, Array]]
    oracle: Callable[[dict[str, Array]], dict[str, Array]]  # inputs -> expected outputs
    rtol: float
    atol: float


def _min(a: object, b: object) -> sympy.Expr:
    return sympy.Min(expr(a), expr(b))  # type: ignore[arg-type]


def transpose(dt_name: str = "f32", tr: int = 16, tc: int = 16, arch: str = "a2a3") -> Program:
    """B[j, i] = A[i, j] for A of N x M, in tiles of tr x tc with partial edge tiles."""
    dt = dtype(dt_name)
    A = TensorParam("A", dt, ("N", "M"))
    B = TensorParam("B", dt, ("M", "N"))
    tmp = tmp_rules.tmp_tile("TTRANS", arch, dtype=dt, valid_row=tr, valid_col=tc)
    tiles = plan_offsets(
        [
            ("a", vec_tile(dt, tr, tc, None, None)),
            ("b", vec_tile(dt, tc, tr, None, None)),
            ("tmp", tmp),
        ],
        arch,
    )
    vr, vc = _min(tr, "N - i"), _min(tc, "M - j")
    body: list[Item] = [
        SetValid("a", vr, vc),
        SetValid("b", vc, vr),
        Instr("TLOAD", "a", (GlobalView.of(A, "i", "j", vr, vc),), comment="load A[i:, j:]"),
        Instr("TTRANS", "b", ("a",), tmp="tmp", comment="S0: B[j][i] = A[i][j]"),
        Instr("TSTORE", GlobalView.of(B, "j", "i", vc, vr), ("b",), comment="store B[j:, i:]"),
    ]
    loops = Loop("i", 0, "N", tr, [Loop("j", 0, "M", tc, body)], comment="tiles of A")
    name = f"transpose_{dt.name}"
    return insert_sync(Program(name, (A, B), ("N", "M"), tiles, (loops,), arch))


def softmax(tr: int = 8, cols: int = 64, arch: str = "a2a3") -> Program:
    """Y[i, :] = softmax(X[i, :]) for X of N x M (M <= cols), tr rows per tile."""
    dt = F32
    X = TensorParam("X", dt, ("N", "M"))
    Y = TensorParam("Y", dt, ("N", "M"))
    col = TileType(Loc.Vec, dt, tr, 1, BLayout.ColMajor, None, 1)
    red_tmp = tmp_rules.tmp_tile("TROWSUM", arch, dtype=dt, valid_row=tr, valid_col=cols)
    exp_tmp = tmp_rules.tmp_tile("TROWEXPANDSUB", arch, dtype=dt, valid_row=tr)
    tiles = plan_offsets(
        [
            ("x", vec_tile(dt, tr, cols, None, None)),
            ("mx", col),
            ("sm", col),
            ("red_tmp", red_tmp),
            ("exp_tmp", exp_tmp),
        ],
        arch,
    )
    vr = _min(tr, "N - i")
    body: list[Item] = [
        SetValid("x", vr, "M"),
        SetValid("mx", vr, None),
        SetValid("sm", vr, None),
        Instr("TLOAD", "x", (GlobalView.of(X, "i", 0, vr, "M"),), comment="x = X[i:i+tr, :]"),
        Instr("TROWMAX", "mx", ("x",), tmp="red_tmp", comment="mx[i] = max_j x[i][j]"),
        Instr("TROWEXPANDSUB", "x", ("x", "mx"), tmp="exp_tmp", comment="x[i][j] -= mx[i]"),
        Instr("TEXP", "x", ("x",), comment="x = exp(x)"),
        Instr("TROWSUM", "sm", ("x",), tmp="red_tmp", comment="sm[i] = sum_j x[i][j]"),
        Instr("TROWEXPANDDIV", "x", ("x", "sm"), comment="x[i][j] /= sm[i]"),
        Instr("TSTORE", GlobalView.of(Y, "i", 0, vr, "M"), ("x",), comment="Y[i:i+tr, :] = x"),
    ]
    loop = Loop("i", 0, "N", tr, body, comment="row tiles")
    return insert_sync(Program("softmax_rows", (X, Y), ("N", "M"), tiles, (loop,), arch))


def _mat_tile(dt_name: str, rows: int, cols: int) -> TileType:
    # L1 tile in the layout TLOAD makes from an ND matrix for the cube: column-major 512-byte
    # boxes, row-major inside ("NZ"), as pto-isa's matmul tests declare it
    return TileType(
        Loc.Mat, dtype(dt_name), rows, cols, BLayout.ColMajor, None, None, SLayout.RowMajor
    )


def matmul(tm: int = 32, tk: int = 32, tn: int = 32, arch: str = "a2a3") -> Program:
    """C = A @ B with A (M x K) and B (K x N) in f16, C in f32; tiles tm x tk x tn, the first
    k tile peeled (TMATMUL) and the others accumulated (TMATMUL_ACC)."""
    A = TensorParam("A", "f16", ("M", "K"))
    B = TensorParam("B", "f16", ("K", "N"))
    C = TensorParam("C", "f32", ("M", "N"))
    tiles = plan_offsets(
        [
            ("a_l1", _mat_tile("f16", tm, tk)),
            ("b_l1", _mat_tile("f16", tk, tn)),
            ("a_l0", left_tile("f16", tm, tk, arch, None, None)),
            ("b_l0", right_tile("f16", tk, tn, None, None)),
            ("c_l0", acc_tile("f32", tm, tn, None, None)),
        ],
        arch,
    )
    vm, vn = _min(tm, "M - i"), _min(tn, "N - j")

    def k_step(k: object, first: bool) -> list[Item]:
        vk = _min(tk, f"K - {k}") if not isinstance(k, int) else _min(tk, expr("K") - k)
        return [
            SetValid("a_l1", vm, vk),
            SetValid("b_l1", vk, vn),
            SetValid("a_l0", vm, vk),
            SetValid("b_l0", vk, vn),
            Instr("TLOAD", "a_l1", (GlobalView.of(A, "i", k, vm, vk),), comment="A[i:, k:]"),
            Instr("TLOAD", "b_l1", (GlobalView.of(B, k, "j", vk, vn),), comment="B[k:, j:]"),
            Instr("TMOV", "a_l0", ("a_l1",)),
            Instr("TMOV", "b_l0", ("b_l1",)),
            Instr(
                "TMATMUL" if first else "TMATMUL_ACC",
                "c_l0",
                ("a_l0", "b_l0"),
                comment="S0: C[i][j] += A[i][k] * B[k][j]",
            ),
        ]

    body: list[Item] = [
        SetValid("c_l0", vm, vn),
        *k_step(0, True),
        Loop("k", tk, "K", tk, k_step("k", False)),
        Instr("TSTORE", GlobalView.of(C, "i", "j", vm, vn), ("c_l0",), comment="C[i:, j:]"),
    ]
    loops = Loop("i", 0, "M", tm, [Loop("j", 0, "N", tn, body)])
    return insert_sync(Program("matmul_f16", (A, B, C), ("M", "N", "K"), tiles, (loops,), arch))


def add_scalar(dt_name: str = "f32", tr: int = 16, tc: int = 32, arch: str = "a2a3") -> Program:
    """C = max((A + B) * 0.5 + 1, 0.25) over N x M in tr x tc tiles (TADD, TMULS, TADDS, TMAXS)."""
    dt = dtype(dt_name)
    A, B, C = (TensorParam(n, dt, ("N", "M")) for n in "ABC")
    tiles = plan_offsets(
        [(n, vec_tile(dt, tr, tc, None, None)) for n in ("a", "b", "c")],
        arch,
    )
    vr, vc = _min(tr, "N - i"), _min(tc, "M - j")
    body: list[Item] = [
        *(SetValid(t, vr, vc) for t in ("a", "b", "c")),
        Instr("TLOAD", "a", (GlobalView.of(A, "i", "j", vr, vc),)),
        Instr("TLOAD", "b", (GlobalView.of(B, "i", "j", vr, vc),)),
        Instr("TADD", "c", ("a", "b"), comment="c = a + b"),
        Instr("TMULS", "c", ("c", Scalar(0.5)), comment="c = c * 0.5"),
        Instr("TADDS", "c", ("c", Scalar(1.0)), comment="c = c + 1"),
        Instr("TMAXS", "c", ("c", Scalar(0.25)), comment="c = max(c, 0.25)"),
        Instr("TSTORE", GlobalView.of(C, "i", "j", vr, vc), ("c",)),
    ]
    loops = Loop("i", 0, "N", tr, [Loop("j", 0, "M", tc, body)])
    return insert_sync(
        Program(f"add_scalar_{dt.name}", (A, B, C), ("N", "M"), tiles, (loops,), arch)
    )


# --------------------------------------------------------------------------- cases


def _rand(rng: np.random.Generator, shape: tuple[int, ...], dt: str) -> Array:
    return rng.standard_normal(shape).astype(dt)


def cases() -> list[Case]:
    """The hand-built programs with sizes that leave partial tiles at every edge."""
    out: list[Case] = []
    for dt in ("float32", "float16"):
        n, m = 40, 21 if dt == "float32" else 37
        out.append(
            Case(
                f"transpose_{dt}",
                transpose("f32" if dt == "float32" else "f16"),
                {"N": n, "M": m},
                lambda rng, n=n, m=m, dt=dt: {
                    "A": _rand(rng, (n, m), dt),
                    "B": np.zeros((m, n), dt),
                },
                lambda x: {"B": x["A"].T.copy()},
                0.0,
                0.0,
            )
        )
    out.append(
        Case(
            "softmax_rows",
            softmax(),
            {"N": 19, "M": 50},
            lambda rng: {
                "X": _rand(rng, (19, 50), "float32") * 3,
                "Y": np.zeros((19, 50), "float32"),
            },
            lambda x: {
                "Y": (e := np.exp(x["X"] - x["X"].max(axis=1, keepdims=True)))
                / e.sum(axis=1, keepdims=True)
            },
            1e-5,
            1e-7,
        )
    )
    out.append(
        Case(
            "matmul_f16",
            matmul(),
            {"M": 40, "N": 50, "K": 70},
            lambda rng: {
                "A": _rand(rng, (40, 70), "float16"),
                "B": _rand(rng, (70, 50), "float16"),
                "C": np.zeros((40, 50), "float32"),
            },
            lambda x: {"C": x["A"].astype(np.float64) @ x["B"].astype(np.float64)},
            1e-5,
            1e-4,
        )
    )
    for dt, tol in (("float32", 1e-6), ("float16", 1e-3)):
        out.append(
            Case(
                f"add_scalar_{dt}",
                add_scalar("f32" if dt == "float32" else "f16"),
                {"N": 35, "M": 70},
                lambda rng, dt=dt: {
                    "A": _rand(rng, (35, 70), dt),
                    "B": _rand(rng, (35, 70), dt),
                    "C": np.zeros((35, 70), dt),
                },
                lambda x: {"C": np.maximum((x["A"].astype(np.float64) + x["B"]) * 0.5 + 1.0, 0.25)},
                tol,
                tol,
            )
        )
    return out
