"""Optional: the hand-built programs' harnesses compiled against pto-isa's CPU simulator, run on
random inputs, and compared with NumPy and with our model (``simulate``).

Runs when ``PTO_ISA_ROOT`` points to a checkout of hw-native-sys/pto-isa and a C++20 compiler
is found (``$CXX``, clang++-19, clang++, or g++ >= 13); skipped otherwise, with the reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from polykrnl.targets.pto.cpp import harness
from polykrnl.targets.pto.interpret import simulate
from tests.targets.pto.hand_programs import Case, cases

CASES = cases()


def _compiler() -> str | None:
    for name in (os.environ.get("CXX"), "clang++-19", "clang++", "g++-14", "g++-13", "g++"):
        if not name or shutil.which(name) is None:
            continue
        out = subprocess.run([name, "--version"], capture_output=True, text=True).stdout
        m = re.search(r"(\d+)\.\d+", out)
        major = int(m.group(1)) if m else 0
        if ("clang" in out and major >= 17) or ("clang" not in out and major >= 13):
            return name
    return None


def _setup() -> tuple[Path, str]:
    root = os.environ.get("PTO_ISA_ROOT")
    if not root:
        pytest.skip("PTO_ISA_ROOT is not set (a checkout of hw-native-sys/pto-isa)")
    inc = Path(root) / "include"
    if not (inc / "pto" / "pto-inst.hpp").is_file():
        pytest.skip(f"PTO_ISA_ROOT={root} has no include/pto/pto-inst.hpp")
    cxx = _compiler()
    if cxx is None:
        pytest.skip("no C++20 compiler (clang++ >= 17 or g++ >= 13) found")
    return inc, cxx


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    inc, cxx = _setup()
    base = tmp_path_factory.mktemp("pto_cpu_sim")

    def build(case: Case) -> tuple[str, Path]:
        d = base / case.name
        d.mkdir()
        (d / "kernel.cpp").write_text(harness(case.program, case.params))
        cmd = [
            cxx, "-std=c++20", "-D__CPU_SIM", "-include", "stdint.h", "-include", "stddef.h",
            f"-I{inc}", "-w", str(d / "kernel.cpp"), "-o", str(d / "kernel"),
        ]  # fmt: skip
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, f"{case.name}: compile failed\n{r.stderr[-4000:]}"
        return case.name, d

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return dict(pool.map(build, CASES))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_cpu_simulator_agrees_with_numpy_and_model(case: Case, built: dict[str, Path]) -> None:
    d = built[case.name]
    rng = np.random.default_rng(3)
    inputs: dict[str, Any] = case.make_inputs(rng)
    want = case.oracle({k: v.copy() for k, v in inputs.items()})
    model = {k: v.copy() for k, v in inputs.items()}
    simulate(case.program, model, case.params)
    files = []
    for t in case.program.tensors:
        f = d / f"{t.name}.bin"
        inputs[t.name].tofile(f)
        files.append(str(f))
    r = subprocess.run([str(d / "kernel"), *files], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    for name, w in want.items():
        arr = inputs[name]
        got = np.fromfile(d / f"{name}.bin", dtype=arr.dtype).reshape(arr.shape)
        np.testing.assert_allclose(got, w, rtol=case.rtol, atol=case.atol)
        np.testing.assert_allclose(got, model[name], rtol=case.rtol, atol=case.atol)
    # inputs come back unchanged (the harness writes every tensor back)
    for t in case.program.tensors:
        if t.name not in want:
            back = np.fromfile(d / f"{t.name}.bin", dtype=inputs[t.name].dtype)
            np.testing.assert_array_equal(back, inputs[t.name].reshape(-1))


def test_harness_rejects_a_file_of_the_wrong_size(built: dict[str, Path], tmp_path: Path) -> None:
    d = built[CASES[0].name]
    short = tmp_path / "short.bin"
    np.zeros(3, np.float32).tofile(short)
    r = subprocess.run([str(d / "kernel"), str(short), str(short)], capture_output=True, text=True)
    assert r.returncode == 2 and "does not hold exactly" in r.stderr
    r = subprocess.run([str(d / "kernel")], capture_output=True, text=True)
    assert r.returncode == 2 and "usage:" in r.stderr
