"""What the bounds guard costs a call (issue 30), paired in one process.

Each kernel is built twice, with its bounds guard (the default) and with
``check_bounds=False``, for the NumPy and the Numba targets, and both are called on the
same arrays through the raw generated function (no argument binding), alternating, best
of many rounds: the difference is the guard's cost per call, and the ratio puts it
against the kernel's own time. For Numba the guard also turns Numba's per-access index
checks off where it proves every access (``boundscheck``), which the last column shows
as a ratio against the same kernel with them forced on.

    python benchmarks/bench_bounds_guard.py
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import polykrnl as pk

ROOT = Path(__file__).resolve().parent.parent


def _best(fn: Callable[[], Any], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _cases(rng: np.random.Generator) -> list[tuple[str, str, str, dict[str, Any]]]:
    def f32(*shape: int) -> np.ndarray[Any, Any]:
        return rng.uniform(-1, 1, shape).astype(np.float32)

    poly = ROOT / "benchmarks" / "polybench"
    corpus = ROOT / "tests" / "corpus"
    return [
        (
            "gemm 20x25x30",
            str(corpus / "gemm.mlir"),
            "gemm",
            {"alpha": 0.5, "beta": 0.25, "A": f32(20, 30), "B": f32(30, 25), "C": f32(20, 25)},
        ),
        (
            "dynamic_add 64x64",
            str(corpus / "onnx_dynamic_add.mlir"),
            "dynamic_add",
            {"a": f32(64, 64), "b": f32(64, 64)},
        ),
        ("jacobi-1d", str(poly / "jacobi_1d.mlir"), "jacobi_1d", {}),
        ("atax", str(poly / "atax.mlir"), "atax", {}),
    ]


def _call(kernel: Any, values: dict[str, Any]) -> Callable[[], Any]:
    """The generated function on `values` (copies), without the argument binding."""
    fn = kernel.schedule.program.function
    args = [
        values[a.name].copy() if isinstance(values[a.name], np.ndarray) else values[a.name]
        for a in fn.arguments
    ]
    return lambda: kernel._run(args)


def main() -> None:
    from polykrnl.inputs import make_inputs

    rng = np.random.default_rng(0)
    print("| kernel | target | guarded | unguarded | guard per call | ratio |")
    print("|---|---|---|---|---|---|")
    for label, path, name, given in _cases(rng):
        fn = pk.load(path)[name]
        values = given if given else make_inputs(fn, {}, seed=0)
        sched = pk.schedule(fn)
        for target in ("numpy", "numba"):
            if target == "numpy":
                on, off = sched.to_numpy(), sched.to_numpy(check_bounds=False)
            else:
                on = sched.to_numba(cache=False)
                off = sched.to_numba(cache=False, check_bounds=False, boundscheck=on.boundscheck)
            calls = [_call(k, values) for k in (on, off)]
            for c in calls:
                c()  # compile, warm caches
            t_on = t_off = float("inf")
            for _ in range(5):
                t_on = min(t_on, _best(calls[0], 200))
                t_off = min(t_off, _best(calls[1], 200))
            print(
                f"| {label} | {target} | {t_on * 1e6:.2f} us | {t_off * 1e6:.2f} us | "
                f"{(t_on - t_off) * 1e6:+.2f} us | {t_on / t_off:.3f} |"
            )
        numba_on = sched.to_numba(cache=False)
        if not numba_on.boundscheck:
            forced = sched.to_numba(cache=False, boundscheck=True)
            calls = [_call(k, values) for k in (numba_on, forced)]
            for c in calls:
                c()
            a = min(_best(calls[0], 50) for _ in range(5))
            b = min(_best(calls[1], 50) for _ in range(5))
            print(
                f"| {label} | numba, boundscheck off / on | {a * 1e6:.2f} us | "
                f"{b * 1e6:.2f} us | | {a / b:.3f} |"
            )


if __name__ == "__main__":
    main()
