"""krnl.matmul as onnx-mlir writes a MatMul (krnl/pto_matmul_op.mlir): krnl.memset C, 0
absorbed, the cube flow in each (i, j) tile over the k tiles; without the memset the sum is
added to C. Simulation against
pk.run_reference: the `matmul_op` cases of pto_cases.CASES (and the CPU simulator)."""

from __future__ import annotations

import re

import pytest

import polykrnl as pk
from tests.targets.pto.pto_cases import MATMUL_OP


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
@pytest.mark.parametrize("name", ["matmul_op", "matmul_op_dynamic"])
def test_krnl_matmul_runs_on_the_cube(name: str, arch: str) -> None:
    kernel = pk.schedule(MATMUL_OP[name]).to_pto(arch)
    src = kernel.source
    ops = [i.op for i in kernel.program.instructions()]
    # per (i, j) tile: the first k tile by TMATMUL, the others (a loop) by TMATMUL_ACC
    assert ops.count("TMATMUL") == 1 and ops.count("TMATMUL_ACC") == 1
    assert ops.count("TSTORE") == 1 and "TEXPANDS" not in ops  # the memset is absorbed
    assert re.findall(r"// tiles of (\w+)", src) == ["i", "j", "k"]  # k inside (i, j)
    assert "PIPE_FIX" in src  # C stored from L0C


def test_krnl_matmul_without_the_memset_adds_to_c() -> None:
    """krnl.matmul's own semantics, C += A * B: the sum from L0C is added to C's values by
    the atomic-add store (values checked by the matmul_op_not_zeroed case)."""
    kernel = pk.schedule(MATMUL_OP["matmul_op_not_zeroed"]).to_pto()
    stores = [i for i in kernel.program.instructions() if i.op == "TSTORE"]
    assert len(stores) == 1 and stores[0].atomic_add
    assert "AtomicType::AtomicAdd>(C_v" in kernel.source
