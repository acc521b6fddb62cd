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
    fn = pk.load(HERE.parent / "corpus" / "matmul_panel.mlir")["tile_buffer_attrs"]
    with pytest.raises(pk.PtoError, match=r"pad value -1\.0") as info:
        pk.schedule(fn).to_pto()
    assert info.value.location is not None and info.value.hint
