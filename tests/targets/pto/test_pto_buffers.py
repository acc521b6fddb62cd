"""Tile-buffer copies (krnl.copy_to_tile_buffer / copy_from_tile_buffer) on PTO tiles:
TLOAD of the part inside the source, TFILLPAD, TTRANS for transposed copies, TSTORE.
The oracle is pk.run_reference."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk

HERE = Path(__file__).parent
KERNELS = pk.load(HERE / "krnl" / "pto_buffers.mlir")


@pytest.mark.parametrize(
    ("name", "shapes"),
    [("copy_padded", ((13, 21), (13, 21))), ("copy_transposed", ((13, 21), (21, 13)))],
)
@pytest.mark.parametrize("arch", ["a2a3", "a5"])
def test_copies_match_the_reference(
    name: str, shapes: tuple[tuple[int, int], ...], arch: str
) -> None:
    fn = KERNELS[name]
    kernel = pk.schedule(fn).to_pto(arch)
    rng = np.random.default_rng(3)
    args = {
        "src": rng.uniform(-1, 1, shapes[0]).astype(np.float32),
        "out": np.full(shapes[1], np.nan, np.float32),
    }
    expected = copy.deepcopy(args)
    pk.run_reference(fn, **expected)
    kernel.simulate(**args)
    assert np.array_equal(args["out"], expected["out"])  # copies are exact
    ops = [i.op for i in kernel.program.instructions()]
    assert ops.count("TFILLPAD") == 1 and ops.count("TSTORE") == 1
    assert ("TTRANS" in ops) is (name == "copy_transposed")


def test_pad_values_a_tile_cannot_hold_are_refused() -> None:
    # tile_buffer_attrs pads with -1.0: a PTO tile's pad value is 0, max or min.
    fn = pk.load(HERE.parent.parent / "corpus" / "matmul_panel.mlir")["tile_buffer_attrs"]
    with pytest.raises(pk.PtoError, match=r"pad value -1\.0") as info:
        pk.schedule(fn).to_pto()
    assert info.value.location is not None and info.value.hint


def _chain(steps: int) -> str:
    """`steps` nests one after the other, each 32 x 256 f32 tiles (32 KiB), T_k+1 = T_k + 1."""
    args = ", ".join(f"%T{k}: memref<?x256xf32>" for k in range(steps + 1))
    lines = [f"func.func @chain(%N: index, {args}) {{", "  %one = arith.constant 1.0 : f32"]
    for k in range(steps):
        lines += [
            f"  %i{k}, %j{k} = krnl.define_loops 2",
            f"  %ib{k}, %il{k} = krnl.block %i{k} 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)",
            f"  krnl.iterate(%ib{k}, %il{k}, %j{k}) with (%i{k} -> %x{k} = 0 to %N, "
            f"%j{k} -> %y{k} = 0 to 256) {{",
            f"    %v{k} = krnl.load %T{k}[%x{k}, %y{k}] : memref<?x256xf32>",
            f"    %w{k} = arith.addf %v{k}, %one : f32",
            f"    krnl.store %w{k}, %T{k + 1}[%x{k}, %y{k}] : memref<?x256xf32>",
            "  }",
        ]
    return "\n".join([*lines, "  return", "}"]) + "\n"


def test_nests_run_one_after_the_other_share_the_buffer() -> None:
    """Three nests of 128 KiB of tiles each (two 32 KiB tiles, double-buffered): 384 KiB in
    all, more than UB holds, but each nest's tiles start again at offset 0; the race checker
    (on in simulate) sees the next nest's loads into bytes the last one's stores read."""
    fn = pk.parse(_chain(3))["chain"]
    kernel = pk.schedule(fn).to_pto("a2a3")
    tiles = kernel.program.tiles
    assert {t.scope for t in tiles} == {0, 1, 2}
    assert sum(t.end - t.offset for t in tiles) > 188416  # more than A2/A3's usable UB
    assert [min(t.offset for t in tiles if t.scope == s) for s in range(3)] == [0, 0, 0]
    assert all(t.pingpong is not None for t in tiles)  # the copies fit too
    n = 70
    arrays = {f"T{k}": np.zeros((n, 256), np.float32) for k in range(4)}
    arrays["T0"] = np.random.default_rng(0).uniform(-1, 1, (n, 256)).astype(np.float32)
    kernel.simulate(N=n, **arrays)
    one = np.float32(1)
    np.testing.assert_array_equal(arrays["T3"], arrays["T0"] + one + one + one)
