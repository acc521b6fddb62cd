"""Optional: the kernels polykrnl emits for the Krnl functions of krnl/*.mlir, compiled with
their harness against pto-isa's CPU simulator, run, and compared with pk.run_reference and
with the NumPy model (``simulate``).

Runs when ``PTO_ISA_ROOT`` points to a checkout of hw-native-sys/pto-isa and a C++20 compiler
is found; skipped otherwise, with the reason (see test_pto_cpu_sim.py).

Both architectures' kernels are compiled for the CPU simulator as pto-isa's own CPU tests are
(``-D__CPU_SIM``, no ``__NPU_ARCH__``): the headers then model no particular chip, and defining
``__NPU_ARCH__`` for A5 does not compile with ``__CPU_SIM`` (pto-isa's syncall_soft.hpp needs
``atomicAdd``). What differs between the two kernels (tmp tiles, L0A layout, capacities) is
still exercised by the simulator's instruction implementations.
"""

from __future__ import annotations

import copy
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.targets.pto.pto_cases import CASES, PtoCase, close, pto_kernel, reference, sizes
from tests.targets.pto.test_pto_cpu_sim import _setup
from tests.targets.pto.test_pto_emit import MORE_SIZES, ONE_TILE

ARCHS = ["a2a3", "a5"]
ALL = [*CASES, *MORE_SIZES, *ONE_TILE]


@pytest.fixture(scope="module")
def built(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[tuple[str, str], tuple[Path, dict[str, Any]]]:
    inc, cxx = _setup()
    base = tmp_path_factory.mktemp("pto_kernel_cpu_sim")

    def build(job: tuple[str, PtoCase]) -> tuple[tuple[str, str], tuple[Path, dict[str, Any]]]:
        arch, case = job
        d = base / f"{arch}_{case.name}"
        d.mkdir()
        kernel = pto_kernel(case, arch)
        args = case.make(np.random.default_rng(11))
        (d / "kernel.cpp").write_text(kernel.harness(**sizes(kernel, args)))
        cmd = [
            cxx, "-std=c++20", "-D__CPU_SIM", "-include", "stdint.h", "-include", "stddef.h",
            f"-I{inc}", "-w", str(d / "kernel.cpp"), "-o", str(d / "kernel"),
        ]  # fmt: skip
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, f"{arch} {case.name}: compile failed\n{r.stderr[-4000:]}"
        return (arch, case.name), (d, args)

    jobs = [(arch, case) for arch in ARCHS for case in ALL]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return dict(pool.map(build, jobs))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", ALL, ids=lambda c: c.name)
def test_cpu_simulator_agrees_with_reference_and_model(
    case: PtoCase, arch: str, built: dict[tuple[str, str], tuple[Path, dict[str, Any]]]
) -> None:
    d, args = built[arch, case.name]
    kernel = pto_kernel(case, arch)
    expected = reference(case, args)
    model = copy.deepcopy(args)
    kernel.simulate(**model)
    files = []
    for t in kernel.program.tensors:
        f = d / f"{t.name}.bin"
        args[t.name].tofile(f)
        files.append(str(f))
    r = subprocess.run([str(d / "kernel"), *files], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    for t in kernel.program.tensors:
        if t.name in case.scratch:
            continue
        a = args[t.name]
        got = np.fromfile(d / f"{t.name}.bin", dtype=a.dtype).reshape(a.shape)
        assert close(got, expected[t.name], case), (t.name, "vs reference")
        assert close(got, model[t.name], case), (t.name, "vs model")
