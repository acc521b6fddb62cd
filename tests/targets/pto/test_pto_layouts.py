"""Layout conversions written as Krnl nests (krnl/pto_layouts.mlir) become one TTRANS on
ConvTiles; their simulation against pk.run_reference (bit for bit) is in
test_pto_emit.py (the `layouts` cases of pto_cases.CASES), and on pto-isa's CPU
simulator in test_pto_kernel_cpu_sim.py. Here: the instruction, its tmp, the refusals."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.targets.pto.dtypes import F32
from polykrnl.targets.pto.program import ConvForm
from polykrnl.targets.pto.sim import SimTile, ttrans_conv
from polykrnl.targets.pto.types import Layout, Loc, TileType
from tests.targets.pto.pto_cases import LAYOUTS

# tmp bytes by hand from the TTRANS page (f32: RowStride 16, C0 = 8, 4 bytes):
# NCHW -> NC1HWC0, H = 4, W = 8:    H * W * roundup(C0, 16) * 4 = 4 * 8 * 16 * 4
# NC1HWC0 -> NCHW, H = 3, W = 8:    C0 * roundup(H * W, 16) * 4 = 8 * 32 * 4
# NCDHW -> FRACTAL_Z_3D, N = 16, C = 8, H = W = 2: P = N * C1 * C0 * H * W = 512,
#                                   (P + max(P, H * W * 16)) * 4 = 1024 * 4
# f16 (RowStride 16, C0 = 16, 2 bytes):
# GNCHW -> GNC1HWC0, H = 2, W = 4:  as NCHW -> NC1HWC0, H * W * roundup(C0, 16) * 2
#                                   = 2 * 4 * 16 * 2
# NC1HWC0 / GNC1HWC0 -> FRACTAL_Z:  no tmp on either arch (a direct rearrangement)
CASES = {
    "nchw_to_nc1hwc0": ("Layout::NCHW", "Layout::NC1HWC0", 2048),
    "nc1hwc0_to_nchw": ("Layout::NC1HWC0", "Layout::NCHW", 1024),
    "ncdhw_to_fractal_z_3d": ("Layout::NCDHW", "Layout::FRACTAL_Z_3D", 4096),
    "gnchw_to_gnc1hwc0": ("Layout::GNCHW", "Layout::GNC1HWC0", 256),
    "nc1hwc0_to_fractal_z": ("Layout::NC1HWC0", "Layout::FRACTAL_Z", 0),
    "gnc1hwc0_to_fractal_z": ("Layout::GNC1HWC0", "Layout::FRACTAL_Z", 0),
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


# the ConvTile shapes: the source's as the memref, the destination's as pto-isa's CPU
# simulator checks them (GNC1HWC0: 6-D; FRACTAL_Z: [G * C1 * H * W, N1, N0, C0])
SHAPES = {
    "gnchw_to_gnc1hwc0": ("ConvTileShape<2, 2, 32, 2, 4>", "ConvTileShape<2, 2, 2, 2, 4, 16>"),
    "nc1hwc0_to_fractal_z": ("ConvTileShape<32, 2, 2, 3, 8>", "ConvTileShape<12, 2, 16, 8>"),
    "gnc1hwc0_to_fractal_z": (
        "ConvTileShape<2, 16, 2, 1, 3, 16>",
        "ConvTileShape<12, 1, 16, 16>",
    ),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_grouped_and_fractal_z_conv_tile_shapes(name: str) -> None:
    kernel = pk.schedule(LAYOUTS[name]).to_pto()
    src, dst = SHAPES[name]
    assert src in kernel.source and dst in kernel.source


# N = 20 is not a multiple of N0 = 16: the second N block has 12 rows no source fills.
FZ_PADDED = """
func.func @fz_padded(%X: memref<20x1x2x2x8xf32>, %Y: memref<4x2x16x8xf32>) {
  %l:5 = krnl.define_loops 5
  krnl.iterate(%l#0, %l#1, %l#2, %l#3, %l#4) with (%l#0 -> %n = 0 to 20, %l#1 -> %c1 = 0 to 1,
      %l#2 -> %h = 0 to 2, %l#3 -> %w = 0 to 2, %l#4 -> %c0 = 0 to 8) {
    %r = affine.apply affine_map<(d0, d1, d2) -> (d0 * 4 + d1 * 2 + d2)>(%c1, %h, %w)
    %n1 = affine.apply affine_map<(d0) -> (d0 floordiv 16)>(%n)
    %n0 = affine.apply affine_map<(d0) -> (d0 mod 16)>(%n)
    %v = krnl.load %X[%n, %c1, %h, %w, %c0] : memref<20x1x2x2x8xf32>
    krnl.store %v, %Y[%r, %n1, %n0, %c0] : memref<4x2x16x8xf32>
  }
  return
}
"""


def test_a_fractal_z_conversion_with_n_padding_needs_the_zeros() -> None:
    with pytest.raises(pk.PtoError) as info:
        pk.schedule(pk.parse(FZ_PADDED)["fz_padded"]).to_pto()
    msg = info.value.message
    assert "NC1HWC0 -> FRACTAL_Z conversion with padding (C0 = 8, N0 = 16)" in msg, msg
    assert info.value.hint and "krnl.memset Y to 0" in info.value.hint


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_a_padded_fractal_z_conversion_after_a_memset_fills_zeros_first(arch: str) -> None:
    kernel = pk.schedule(LAYOUTS["nc1hwc0_to_fractal_z_padded"]).to_pto(arch)
    ops = [i.op for i in kernel.program.instructions()]
    assert ops == ["TLOAD", "TEXPANDS", "TTRANS", "TSTORE"]
    assert "ConvTileShape<4, 2, 16, 8>" in kernel.source  # N1 = 2 blocks for N = 20


# GNC1HWC0 -> GNCHW has a tmp rule, but pto-isa's CPU TTRANS has no branch for it (the call
# leaves the destination as it was), so nothing could check a kernel: it is recognized and
# refused with the reason and the way around (fold G into N: NC1HWC0 -> NCHW).
GNC1HWC0_TO_GNCHW = """
func.func @back(%X: memref<2x2x2x2x4x16xf16>, %Y: memref<2x2x32x2x4xf16>) {
  %l:5 = krnl.define_loops 5
  krnl.iterate(%l#0, %l#1, %l#2, %l#3, %l#4) with (%l#0 -> %g = 0 to 2, %l#1 -> %n = 0 to 2,
      %l#2 -> %c = 0 to 32, %l#3 -> %h = 0 to 2, %l#4 -> %w = 0 to 4) {
    %c1 = affine.apply affine_map<(d0) -> (d0 floordiv 16)>(%c)
    %c0 = affine.apply affine_map<(d0) -> (d0 mod 16)>(%c)
    %v = krnl.load %X[%g, %n, %c1, %h, %w, %c0] : memref<2x2x2x2x4x16xf16>
    krnl.store %v, %Y[%g, %n, %c, %h, %w] : memref<2x2x32x2x4xf16>
  }
  return
}
"""


def test_gnc1hwc0_to_gnchw_is_refused_with_the_reason() -> None:
    with pytest.raises(pk.PtoError) as info:
        pk.schedule(pk.parse(GNC1HWC0_TO_GNCHW)["back"]).to_pto()
    message = info.value.message
    assert (
        "X (2, 2, 2, 2, 4, 16) -> Y (2, 2, 32, 2, 4) is a GNC1HWC0 -> GNCHW conversion" in message
    )
    assert "pto-isa's CPU simulator has no GNC1HWC0 -> GNCHW" in message
    assert "X as 4 x 2 x 2 x 4 x 16" in (info.value.hint or "")
    assert info.value.location is not None  # the statement of the nest


def _tiles(src: tuple[int, ...], dst: tuple[int, ...]) -> tuple[SimTile, SimTile]:
    x = SimTile.new("x", TileType(Loc.Vec, F32, int(np.prod(src)) // 8, 8))
    y = SimTile.new("y", TileType(Loc.Vec, F32, int(np.prod(dst)) // 8, 8))
    x.data[...] = np.arange(x.data.size, dtype=np.float32).reshape(x.data.shape)
    y.data[...] = np.nan
    return x, y


def test_the_model_moves_gnc1hwc0_to_fractal_z_as_pto_isas_offsets() -> None:
    # the offsets of pto-isa's CPU TTRANS_GNC1HWC02C1HWN1N0C0_Impl, written out: source
    # ((((g * N + n) * C1 + c1) * H + h) * W + w) * C0 + c0, destination
    # (((g * C1 + c1) * H + h) * W + w) * N1 * N0 * C0 + (n / N0) * N0 * C0 + (n % N0) * C0
    # + c0; N = 20 in N1 = 2 blocks of N0 = 16: the 12 rows after n = 19 keep their NaN
    g_, n_, c1_, h_, w_, c0 = 2, 20, 2, 1, 3, 8
    n1, n0 = 2, 16
    src, dst = (g_, n_, c1_, h_, w_, c0), (g_ * c1_ * h_ * w_, n1, n0, c0)
    x, y = _tiles(src, dst)
    form = ConvForm("TTRANS_GNC1HWC0_FRACTAL_Z", Layout.GNC1HWC0, Layout.FRACTAL_Z, src, dst)
    ttrans_conv(form, y, x)
    want = np.full(int(np.prod(dst)), np.nan, np.float32)
    flat = x.data.reshape(-1)
    for g, n, c1, h, w, k in itertools.product(*map(range, src)):
        s_off = ((((g * n_ + n) * c1_ + c1) * h_ + h) * w_ + w) * c0 + k
        d_off = (((g * c1_ + c1) * h_ + h) * w_ + w) * n1 * n0 * c0
        want[d_off + (n // n0) * n0 * c0 + (n % n0) * c0 + k] = flat[s_off]
    assert np.array_equal(y.data.reshape(-1), want, equal_nan=True)


def test_the_model_moves_gnchw_to_gnc1hwc0_as_pto_isas_offsets() -> None:
    # pto-isa's CPU TTRANS_GNCHW2NC1HWC0_Impl: source (((g * N + n) * C + c) * H + h) * W + w
    # to ((g * N + n) * C1 + c / C0) * H * W * C0 + (h * W + w) * C0 + c % C0; C = 12 in
    # C1 = 2 blocks of C0 = 8: the last block's 4 lanes keep their NaN
    g_, n_, c_, h_, w_, c0 = 2, 1, 12, 2, 4, 8
    c1_ = 2
    src, dst = (g_, n_, c_, h_, w_), (g_, n_, c1_, h_, w_, c0)
    x, y = _tiles(src, dst)
    form = ConvForm("TTRANS_GNCHW_GNC1HWC0", Layout.GNCHW, Layout.GNC1HWC0, src, dst)
    ttrans_conv(form, y, x)
    want = np.full(int(np.prod(dst)), np.nan, np.float32)
    flat = x.data.reshape(-1)
    for g, n, c, h, w in itertools.product(*map(range, src)):
        s_off = (((g * n_ + n) * c_ + c) * h_ + h) * w_ + w
        d_off = ((g * n_ + n) * c1_ + c // c0) * h_ * w_ * c0 + (h * w_ + w) * c0 + c % c0
        want[d_off] = flat[s_off]
    assert np.array_equal(y.data.reshape(-1), want, equal_nan=True)


def test_a_block_other_than_32_bytes_is_not_nc1hwc0() -> None:
    # f16 blocks of 8 channels (16 bytes): pto-isa's ConvTile asserts C0 = 32 bytes
    text = """
func.func @half_blocks(%X: memref<2x4x2x4x8xf16>, %Y: memref<2x32x2x4xf16>) {
  %l:4 = krnl.define_loops 4
  krnl.iterate(%l#0, %l#1, %l#2, %l#3) with (%l#0 -> %n = 0 to 2, %l#1 -> %c = 0 to 32,
      %l#2 -> %h = 0 to 2, %l#3 -> %w = 0 to 4) {
    %c1 = affine.apply affine_map<(d0) -> (d0 floordiv 8)>(%c)
    %c0 = affine.apply affine_map<(d0) -> (d0 mod 8)>(%c)
    %v = krnl.load %X[%n, %c1, %h, %w, %c0] : memref<2x4x2x4x8xf16>
    krnl.store %v, %Y[%n, %c, %h, %w] : memref<2x32x2x4xf16>
  }
  return
}
"""
    with pytest.raises(pk.PtoError) as info:
        pk.schedule(pk.parse(text)["half_blocks"]).to_pto()
    assert "TTRANS" not in info.value.message and "conversion" not in info.value.message
