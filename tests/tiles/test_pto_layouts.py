"""Layout conversions written as Krnl nests (krnl/pto_layouts.mlir) become one TTRANS on
ConvTiles; their simulation against pk.run_reference (bit for bit) is in
test_pto_emit.py (the `layouts` cases of pto_cases.CASES), and on pto-isa's CPU
simulator in test_pto_kernel_cpu_sim.py. Here: the instruction, its tmp, the refusals."""

from __future__ import annotations

import pytest

import polykrnl as pk
from tests.tiles.pto_cases import LAYOUTS

# tmp bytes by hand from the TTRANS page (f32: RowStride 16, C0 = 8, 4 bytes):
# NCHW -> NC1HWC0, H = 4, W = 8:    H * W * roundup(C0, 16) * 4 = 4 * 8 * 16 * 4
# NC1HWC0 -> NCHW, H = 3, W = 8:    C0 * roundup(H * W, 16) * 4 = 8 * 32 * 4
# NCDHW -> FRACTAL_Z_3D, N = 16, C = 8, H = W = 2: P = N * C1 * C0 * H * W = 512,
#                                   (P + max(P, H * W * 16)) * 4 = 1024 * 4
CASES = {
    "nchw_to_nc1hwc0": ("Layout::NCHW", "Layout::NC1HWC0", 2048),
    "nc1hwc0_to_nchw": ("Layout::NC1HWC0", "Layout::NCHW", 1024),
    "ncdhw_to_fractal_z_3d": ("Layout::NCDHW", "Layout::FRACTAL_Z_3D", 4096),
}


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_one_ttrans_on_conv_tiles(name: str, arch: str) -> None:
    src, dst, tmp_bytes = CASES[name]
    kernel = pk.schedule(LAYOUTS[name]).to_pto(arch)
    ops = [i.op for i in kernel.program.instructions()]
    assert ops == ["TLOAD", "TTRANS", "TSTORE"]
    assert f"{src}, ConvTileShape<" in kernel.source and f"{dst}, ConvTileShape<" in kernel.source
    (tmp,) = kernel.tmp_sizes
    assert kernel.tmp_bytes()[tmp] == tmp_bytes  # A5 uses the tmp of these conversions too
    assert next(t for t in kernel.tiles if t.name == tmp).type.bytes >= tmp_bytes


BLOCKED = """
func.func @blocked(%X: memref<1x32x4x8xf32>, %Y: memref<1x4x4x8x8xf32>) {
  %l:5 = krnl.define_loops 5
  %hb, %hl = krnl.block %l#2 2 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%l#0, %l#1, %hb, %hl, %l#3, %l#4) with (%l#0 -> %n = 0 to 1,
      %l#1 -> %c1 = 0 to 4, %l#2 -> %h = 0 to 4, %l#3 -> %w = 0 to 8, %l#4 -> %c0 = 0 to 8) {
    %c = affine.apply affine_map<(d0, d1) -> (d0 * 8 + d1)>(%c1, %c0)
    %v = krnl.load %X[%n, %c, %h, %w] : memref<1x32x4x8xf32>
    krnl.store %v, %Y[%n, %c1, %h, %w, %c0] : memref<1x4x4x8x8xf32>
  }
  return
}
"""

# C = 20 is not a multiple of C0 = 8: TTRANS would leave Y's padding lanes as they were.
PADDED = """
func.func @padded(%X: memref<1x20x4x8xf32>, %Y: memref<1x3x4x8x8xf32>) {
  %l:4 = krnl.define_loops 4
  krnl.iterate(%l#0, %l#1, %l#2, %l#3) with (%l#0 -> %n = 0 to 1, %l#1 -> %c = 0 to 20,
      %l#2 -> %h = 0 to 4, %l#3 -> %w = 0 to 8) {
    %c1 = affine.apply affine_map<(d0) -> (d0 floordiv 8)>(%c)
    %c0 = affine.apply affine_map<(d0) -> (d0 mod 8)>(%c)
    %v = krnl.load %X[%n, %c, %h, %w] : memref<1x20x4x8xf32>
    krnl.store %v, %Y[%n, %c1, %h, %w, %c0] : memref<1x3x4x8x8xf32>
  }
  return
}
"""


def test_a_blocked_conversion_is_refused() -> None:
    with pytest.raises(pk.PtoError) as info:
        pk.schedule(pk.parse(BLOCKED)["blocked"]).to_pto()
    assert "NCHW -> NC1HWC0" in info.value.message and "blocked loops" in info.value.message
    assert info.value.hint and info.value.location is not None


def test_a_padded_conversion_without_the_zeros_is_refused_with_the_reason() -> None:
    with pytest.raises(pk.PtoError) as info:
        pk.schedule(pk.parse(PADDED)["padded"]).to_pto()
    msg = info.value.message
    assert "NCHW -> NC1HWC0 conversion with padding (C0 = 8)" in msg, msg
    assert info.value.hint and "krnl.memset Y to 0" in info.value.hint
    assert info.value.location is not None


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_a_padded_conversion_after_a_memset_fills_zeros_first(arch: str) -> None:
    # onnx-mlir's form: Y = 0, then the 20 channels moved; the tile is zeroed (TEXPANDS)
    # before the TTRANS, which leaves the 4 padding lanes of the last block alone
    kernel = pk.schedule(LAYOUTS["nchw_to_nc1hwc0_padded"]).to_pto(arch)
    ops = [i.op for i in kernel.program.instructions()]
    assert ops == ["TLOAD", "TEXPANDS", "TTRANS", "TSTORE"]
    assert "ConvTileShape<2, 20, 2, 4>" in kernel.source  # C = 20, C1 = 3
    assert "ConvTileShape<2, 3, 2, 4, 8>" in kernel.source
