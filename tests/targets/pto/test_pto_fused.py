"""Nests that share function-level temporaries become one loop over row tiles
(krnl/pto_fused.mlir); their simulation against pk.run_reference is in test_pto_emit.py
(the `fused` cases of pto_cases.CASES). Here: the shape of the kernels."""

from __future__ import annotations

import re

import pytest

import polykrnl as pk
from tests.targets.pto.pto_cases import FUSED


def _kernel(name: str, arch: str) -> pk.PtoKernel:
    return pk.schedule(FUSED[name]).to_pto(arch)


def _instrs(source: str, op: str) -> int:
    return len(re.findall(rf"\b{op}\(", source))


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_five_nest_softmax_is_one_tile_loop(arch: str) -> None:
    src = _kernel("softmax5", arch).source
    assert src.count("for (") == 1  # the five nests' row tiles, fused
    assert _instrs(src, "TLOAD") == 1  # X once per tile: nests 2 and 3 share it
    # the temporaries live in UB: neither a kernel argument nor loaded or stored
    assert "mx" not in src and "sm" not in src
    assert _instrs(src, "TROWMAX") == 1 and _instrs(src, "TROWSUM") == 1
    # -inf and 0 are the identities of max and +: no combining with the initial values
    assert _instrs(src, "TMAXS") == 0 and _instrs(src, "TADDS") == 0
    # exp(x - max) stored into Y is read back from UB, not loaded from Y; and that store
    # is dead, Y's window being overwritten by the quotient in the same tile
    assert _instrs(src, "TROWEXPANDDIV") == 1 and "TLOAD(y" not in src
    assert _instrs(src, "TSTORE") == 1


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_three_nest_layernorm_is_one_static_tile(arch: str) -> None:
    src = _kernel("layernorm3", arch).source
    assert "for (" not in src
    assert _instrs(src, "TLOAD") == 1 and _instrs(src, "TSTORE") == 1
    assert _instrs(src, "TROWSUM") == 2


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_nests_sharing_nothing_keep_their_loops(arch: str) -> None:
    src = _kernel("through_array", arch).source
    # the first two nests share T (rows by 8, columns by 16); the third has its own tiles
    assert src.count("for (") == 4
    assert "T_v" not in src  # T never reaches GM
    assert _instrs(src, "TLOAD") == 2  # X in the fused loop, Y in the third nest


def test_unfused_programs_lower_as_before() -> None:
    """A function whose nests share no temporary is lowered nest by nest (softmax of
    pto_kernels.mlir is one nest): fusion only groups nests linked by a temporary."""
    from tests.targets.pto.pto_cases import KERNELS

    src = pk.schedule(KERNELS["softmax"]).to_pto().source
    assert src.count("// tiles of") == 1


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_a_returned_buffer_is_an_output_tensor(arch: str) -> None:
    """onnx-mlir's functions return what they allocate: the kernel takes the buffer as a
    tensor after the arguments (its simulation against the interpreter is the
    onnx_layernorm case of pto_cases.CASES)."""
    from tests.targets.pto.pto_cases import ONNX_LAYERNORM

    kernel = pk.schedule(ONNX_LAYERNORM["layernorm"]).to_pto(arch, params={"x_d0": 13})
    assert [t.name for t in kernel.program.tensors] == ["x", "scale", "bias", "y"]
    assert "__gm__ float* y," in kernel.source
    assert "for (" not in kernel.source  # 13 rows, unblocked: one tile
    assert _instrs(kernel.source, "TCOLEXPANDMUL") == 1  # the scale, one value per column


@pytest.mark.parametrize(
    ("name", "workspace", "why"),
    [
        ("fused_tiling", "T", "tiled differently"),
        ("fused_window", "S", "Y[j, i] and Y[i, j] in fused nests"),
    ],
)
def test_a_temporary_the_nests_cannot_share_stays_in_global_memory(
    name: str, workspace: str, why: str
) -> None:
    """Not fused (the reason is in the kernel's first lines): the temporary is a workspace
    tensor after the arguments, stored by one nest and loaded by the next (simulated
    against the interpreter as the `fused_tiling` and `fused_window` cases)."""
    kernel = _kernel(name, "a2a3")
    assert [t.name for t in kernel.program.tensors][-1] == workspace
    (note,) = kernel.program.notes
    assert note.startswith(f"workspace {workspace}: a temporary kept in global memory")
    assert why in note
    src = kernel.source
    store = src.index(f"TSTORE({workspace}_v")
    between = src[store : src.index("TLOAD(", store)]
    # the next nest's load waits for the store: directly, or through the vector unit (it
    # waits for the store pipe's last release after the first nest, the loads wait for it)
    assert "set_flag(PIPE_MTE3, PIPE_MTE2" in between or (
        "wait_flag(PIPE_MTE3, PIPE_V" in between and "wait_flag(PIPE_V, PIPE_MTE2" in between
    ), between


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_per_column_values_are_loaded_once_before_the_row_tiles(arch: str) -> None:
    """scale[j] and bias[j] are the same in every row tile: loaded before the loop."""
    src = _kernel("layernorm_affine", arch).source
    loop = src.index("for (")
    for tensor in ("scale", "bias"):
        loads = [m.start() for m in re.finditer(rf"TLOAD\(\w+, {tensor}_v", src)]
        assert len(loads) == 1 and loads[0] < loop, tensor
    assert src.index("TLOAD(x1") > loop  # x changes with the row tile
