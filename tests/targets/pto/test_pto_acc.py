"""Forms that read what was there before (krnl/pto_acc.mlir): C += A * B with C's old values,
and krnl.memset of temporaries the fused nests accumulate into. Their simulation against
pk.run_reference is in test_pto_emit.py (the `acc` cases of pto_cases.CASES, and the CPU
simulator); here the shape of the kernels and the model of the atomic-add store."""

from __future__ import annotations

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.targets.pto.dtypes import dtype
from polykrnl.targets.pto.program import Instr, Loop
from polykrnl.targets.pto.sim import SimTile, tstore
from polykrnl.targets.pto.types import vec_tile
from tests.targets.pto.pto_cases import ACC

ARCHS = ["a2a3", "a5"]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", ["gemm_acc", "gemm_acc_f32", "matmul_op_acc", "matmul_not_zeroed"])
def test_the_sum_from_l0c_is_added_to_c(name: str, arch: str) -> None:
    """C is never loaded: the only access to it is the store from L0C, which adds."""
    kernel = pk.schedule(ACC[name]).to_pto(arch)
    ins = kernel.program.instructions()
    stores = [i for i in ins if i.op == "TSTORE"]
    assert len(stores) == 1 and stores[0].atomic_add
    assert not any(i.op == "TLOAD" and i.srcs[0].tensor == "C" for i in ins)  # type: ignore[union-attr]
    assert "AtomicType::AtomicAdd>(C_v" in kernel.source
    assert "// PIPE_FIX" in kernel.source.split("AtomicType::AtomicAdd>(C_v")[1].splitlines()[0]


def test_one_k_tile_is_tmatmul_alone() -> None:
    ops = [i.op for i in pk.schedule(ACC["gemm_acc_f32"]).to_pto().program.instructions()]
    assert ops.count("TMATMUL") == 1 and "TMATMUL_ACC" not in ops


def test_the_atomic_add_store_adds_in_the_tensor_type() -> None:
    t = SimTile.new("c", vec_tile(dtype("f32"), 2, 8, 2, 3))
    t.data[:2, :3] = np.arange(6, dtype=np.float32).reshape(2, 3)
    dst = np.ones((2, 3), np.float32)
    tstore(dst, t, add=True)
    np.testing.assert_array_equal(dst, 1 + np.arange(6).reshape(2, 3))
    tstore(dst, t)
    np.testing.assert_array_equal(dst, np.arange(6).reshape(2, 3))


def test_only_a_store_adds_atomically() -> None:
    with pytest.raises(pk.PtoError, match="only a store adds atomically"):
        Instr("TADD", "a", ("b", "c"), atomic_add=True)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", ["layernorm_memset", "softmax_memset"])
def test_memset_temporaries_stay_in_ub(name: str, arch: str) -> None:
    """The memsets emit nothing: the temporaries' rows start from the constant in every
    row tile of the one fused loop, and are never loaded or stored."""
    kernel = pk.schedule(ACC[name]).to_pto(arch)
    prog = kernel.program
    assert [t.name for t in prog.tensors] == ["X", "Y"] and not prog.notes
    assert sum(isinstance(x, Loop) for x in prog.body) == 1  # one loop over the row tiles
    ops = [i.op for i in prog.instructions()]
    assert "TEXPANDS" not in ops or name == "softmax_memset"
    assert ops.count("TLOAD") == 1  # X, once per row tile


def test_a_memset_start_that_is_not_the_identity_is_combined() -> None:
    """The sum starts from 1.0: TROWSUM, then TADD with a column filled with 1.0 (the
    tile-scalar forms take row-major tiles only); the max starts from -inf, its identity."""
    ins = pk.schedule(ACC["softmax_memset"]).to_pto().program.instructions()
    ops = [i.op for i in ins]
    expands = [i for i in ins if i.op == "TEXPANDS"]
    assert len(expands) == 1 and expands[0].srcs[0].value == 1.0  # type: ignore[union-attr]
    k = ops.index("TROWSUM")
    assert ops[k + 1 : k + 3] == ["TEXPANDS", "TADD"] and "TADDS" not in ops and "TMAXS" not in ops


def test_a_memset_temporary_in_global_memory_is_lowered_like_a_tensor() -> None:
    """Nests blocked differently are not fused: T becomes a workspace, its memset one
    filled tile stored over T before the nests (values: the memset_workspace case)."""
    prog = pk.schedule(ACC["memset_workspace"]).to_pto().program
    assert [t.name for t in prog.tensors] == ["X", "Y", "T"]
    ops = [i.op for i in prog.instructions()]
    assert ops[:2] == ["TEXPANDS", "TSTORE"]
