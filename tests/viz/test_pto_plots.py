"""The tile grid of PTO kernels (polykrnl.viz.pto), on kernels whose tiles are counted by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.viz import buffer_usage, plot_buffers, plot_tiles, plot_timeline, tile_windows
from polykrnl.viz.pto import tile_role

KERNELS = pk.load(Path(__file__).parent.parent / "targets" / "pto" / "krnl" / "pto_kernels.mlir")


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


def test_buffer_usage_of_the_fused_softmax() -> None:
    from tests.targets.pto.pto_cases import FUSED

    kernel = pk.schedule(FUSED["softmax5"]).to_pto("a2a3")
    (ub,) = buffer_usage(kernel)
    assert ub.buffer.value == "UB"
    assert ub.usable == 184 * 1024  # A2/A3 keeps [184 KiB, 192 KiB) free
    roles = [tile_role(t) for t in ub.tiles]
    # x, x - max, exp, the quotient: 8 x 40 f32 (1280 bytes each); the row max and sum;
    # the tmp tiles of TROWMAX, TROWEXPANDSUB, TROWSUM, TROWEXPANDDIV
    assert roles.count("data") == 4 and roles.count("per-row") == 2 and roles.count("tmp") == 4
    assert all(t.type.bytes == 1280 for t in ub.tiles if tile_role(t) == "data")
    assert ub.used == max(t.end for t in ub.tiles) and ub.used < ub.usable


def test_plot_buffers_one_bar_per_buffer() -> None:
    pytest.importorskip("matplotlib")
    kernel = pk.schedule(KERNELS["matmul"]).to_pto("a5")
    fig = plot_buffers(kernel)
    # the cube flow: A and B in L1, then L0A, L0B, and the accumulator in L0C; the k tiles
    # are double-buffered (two copies each), the accumulator is not
    assert [ax.get_ylabel() for ax in fig.axes] == ["L1", "L0A", "L0B", "L0C"]
    assert [len(ax.patches) for ax in fig.axes] == [4, 2, 2, 1]
    assert "L0C: 4096 of 262144 bytes" in fig.axes[3].get_title(loc="left")


def test_plot_timeline_draws_each_pipe_of_each_run() -> None:
    fn = pk.load(Path(__file__).parents[1] / "targets" / "pto" / "krnl" / "pto_kernels.mlir")[
        "softmax"
    ]
    x = np.random.default_rng(0).uniform(-1, 1, (32, 40)).astype(np.float32)
    runs = [
        pk.schedule(fn).to_pto("a2a3", double_buffer=db).timeline(N=32, X=x, Y=np.zeros_like(x))
        for db in (False, True)
    ]
    fig = plot_timeline(*runs, labels=["one copy", "two copies"])
    axes = fig.axes
    assert len(axes) == 2
    for ax, tl in zip(axes, runs, strict=True):
        assert [t.get_text() for t in ax.get_yticklabels()] == [p.cpp for p in tl.pipes]
        bars = sum(len(c.get_paths()) for c in ax.collections)
        assert bars == len(tl.spans)
        assert f"{tl.makespan:,.0f} modelled cycles" in ax.get_title(loc="left")
    with pytest.raises(pk.PolykrnlError, match="labels"):
        plot_timeline(*runs, labels=["one"])
