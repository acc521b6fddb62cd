"""The tile grid of PTO kernels (polykrnl.viz.pto), on kernels whose tiles are counted by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

import polykrnl as pk
from polykrnl.viz import plot_tiles, tile_windows

KERNELS = pk.load(Path(__file__).parent.parent / "tiles" / "krnl" / "pto_kernels.mlir")


def test_transpose_windows_with_partial_edges() -> None:
    kernel = pk.schedule(KERNELS["transpose_f32"]).to_pto()
    windows = tile_windows(kernel, N=37, M=21, A_0=37, A_1=21, B_0=21, B_1=37)
    # A is 37 x 21 in 16 x 16 tiles: rows 0, 16, 32 (the last 5 rows), cols 0, 16 (5 cols),
    # visited row tile by row tile.
    assert [(w.row, w.col, w.rows, w.cols) for w in windows] == [
        (0, 0, 16, 16),
        (0, 16, 16, 5),
        (16, 0, 16, 16),
        (16, 16, 16, 5),
        (32, 0, 5, 16),
        (32, 16, 5, 5),
    ]
    assert [w.partial for w in windows] == [False, True, False, True, True, True]
    # The transposed output B (21 x 37) gets the same tiles, transposed.
    out = tile_windows(kernel, "B", N=37, M=21, A_0=37, A_1=21, B_0=21, B_1=37)
    assert sorted((w.col, w.row, w.cols, w.rows) for w in out) == sorted(
        (w.row, w.col, w.rows, w.cols) for w in windows
    )


def test_plot_draws_every_tile() -> None:
    pytest.importorskip("matplotlib")
    kernel = pk.schedule(KERNELS["softmax"]).to_pto()
    fig = plot_tiles(kernel, N=19, X_0=19, Y_0=19)
    (ax,) = fig.axes
    # 19 rows of 8-row tiles: 3 tiles, the last one 3 rows; one outline of X, and per
    # tile its dashed static shape and its filled valid region.
    assert len(ax.patches) == 1 + 2 * 3
    assert [t.get_text() for t in ax.texts] == ["1", "2", "3"]
    assert "1 partial" in ax.get_title()


def test_missing_size_is_named() -> None:
    kernel = pk.schedule(KERNELS["softmax"]).to_pto()
    with pytest.raises(pk.ArgumentError, match=r"X\.0"):
        tile_windows(kernel, N=19)
    with pytest.raises(pk.ArgumentError, match="no tensor 'Q'"):
        tile_windows(kernel, "Q", N=19, X_0=19, Y_0=19)
