"""PTO double buffering under the pipe timeline's cost model (issue 18).

Each kernel of tests/targets/pto/krnl/pto_kernels.mlir is lowered twice for A2/A3, with one copy
of every tile (``double_buffer=False``) and with double buffering, and both instruction
lists are timed by ``PtoKernel.timeline`` (pipes in parallel, flags obeyed, the default
``CostModel``): the ratio single / double is the modelled gain. The model compares schedules
of one kernel; it does not predict hardware time. Both runs also go through the race checker.

    python benchmarks/bench_pto_pipeline.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

import polykrnl as pk

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "tests" / "targets" / "pto" / "krnl" / "pto_kernels.mlir"


def _cases(rng: np.random.Generator) -> list[tuple[str, str, dict[str, Any]]]:
    def f32(*shape: int) -> np.ndarray[Any, Any]:
        return rng.uniform(-1, 1, shape).astype(np.float32)

    def f16(*shape: int) -> np.ndarray[Any, Any]:
        return rng.uniform(-1, 1, shape).astype(np.float16)

    return [
        ("scale_add_relu", "64 x 256", {"N": 64, "M": 256, "X": f32(64, 256),
                                        "Z": f32(64, 256), "Y": f32(64, 256)}),
        ("softmax", "128 x 40", {"N": 128, "X": f32(128, 40), "Y": f32(128, 40)}),
        ("layer_norm", "128 x 64", {"N": 128, "X": f32(128, 64), "Y": f32(128, 64)}),
        ("transpose_f32", "128 x 128", {"N": 128, "M": 128, "A": f32(128, 128),
                                        "B": f32(128, 128)}),
        ("matmul", "64 x 64 x 512 f16", {"M": 64, "N": 64, "K": 512, "A": f16(64, 512),
                                         "B": f16(512, 64), "C": f32(64, 64)}),
    ]  # fmt: skip


def main() -> None:
    module = pk.load(KERNELS)
    print("| kernel | size | one copy | two copies | gain | busiest pipe (two copies) |")
    print("|---|---|---:|---:|---:|---|")
    for name, size, args in _cases(np.random.default_rng(0)):
        sched = pk.schedule(module[name])
        single, double = (
            sched.to_pto("a2a3", double_buffer=db).timeline(**args) for db in (False, True)
        )
        pipe = max(double.pipes, key=double.busy)
        share = 100 * double.busy(pipe) / double.makespan
        print(
            f"| {name} | {size} | {single.makespan:,.0f} | {double.makespan:,.0f} | "
            f"{single.makespan / double.makespan:.2f}x | {pipe.cpp} {share:.0f}% |"
        )


if __name__ == "__main__":
    main()
