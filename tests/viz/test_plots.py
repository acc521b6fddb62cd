"""Plots: the Figures hold the expected numbers of points, tiles and dependence arrows.

Every expected number is derived by hand from the kernel's text in a comment.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import polykrnl as pk
from polykrnl.viz import domain_slice, plot_domain, plot_transformation
from polykrnl.viz.plots import VIOLATED

matplotlib = pytest.importorskip("matplotlib")
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

LEGALITY = Path(__file__).resolve().parent.parent / "transforms" / "legality"
CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _points(ax: Any) -> int:
    return sum(
        len(c.get_offsets()) for c in ax.collections if str(c.get_gid()).startswith("points:")
    )


def _patches(ax: Any, *gids: str) -> list[Any]:
    return [p for p in ax.patches if p.get_gid() in gids]


def _arrows(ax: Any) -> tuple[int, int]:
    """(arrows, red arrows): red by their colour, cross-checked with their gid."""
    arrows = _patches(ax, "dep", "dep-violated")
    red = [a for a in arrows if to_hex(a.get_edgecolor()) == VIOLATED]
    assert len(red) == len(_patches(ax, "dep-violated"))
    return len(arrows), len(red)


def _jacobi() -> pk.Schedule:
    fn = pk.load(LEGALITY / "jacobi_1d.mlir")["jacobi_1d"]
    return pk.Schedule.from_function(fn, recipe=False)


def _tiled_badly(s: pk.Schedule) -> pk.Schedule:
    return s.block("t", 2).block("i", 4).reorder(["t_t", "i_t", "t", "i"], force=True)


def test_jacobi_original_order() -> None:
    # jacobi_1d.mlir: t = 0..3, i = 1..8 -> 32 instances. A[t+1][i] is read by S0(t+1, i-1),
    # S0(t+1, i), S0(t+1, i+1) (each element written once: RAW only). Sources t = 0..2;
    # per row 8 vertical + 7 to the left + 7 to the right = 22 arrows -> 66; the original
    # order runs every source first: none red. No tile loops: no tiles.
    fig = plot_domain(_jacobi())
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert _points(ax) == 32
    assert _patches(ax, "tile") == []
    assert _arrows(ax) == (66, 0)
    assert ax.get_xlabel() == "i" and ax.get_ylabel() == "t"  # inner loop horizontal


def test_jacobi_tiled_illegally() -> None:
    # Tiles of 2 t by 4 i (i_t in {1, 5}), run tile by tile (t_t, i_t): 4 tiles.
    # Tile order: (t_t, i_t) = (0, 1), (0, 5), (2, 1), (2, 5) -> 1, 2, 3, 4.
    # The (1, -1) dependence S0(t, 5) -> S0(t+1, 4) crosses from the i_t = 5 tile to the
    # i_t = 1 tile: when t and t+1 are in the same t-tile (t = 0 and t = 2), the sink's
    # tile runs first: 2 red arrows. All 66 arrows are still drawn.
    sched = _tiled_badly(_jacobi())
    fig = plot_domain(sched)
    ax = fig.axes[0]
    assert _points(ax) == 32
    tiles = _patches(ax, "tile")
    assert len(tiles) == 4
    numbers = {t.get_text(): t.get_position() for t in ax.texts if t.get_gid() == "tile-number"}
    # centroids: tile 2 holds i = 5..8, t = 0..1 -> (6.5, 0.5); tile 3: i = 1..4, t = 2..3
    assert numbers == {"1": (2.5, 0.5), "2": (6.5, 0.5), "3": (2.5, 2.5), "4": (6.5, 2.5)}
    assert _arrows(ax) == (66, 2)
    data = domain_slice(sched)
    red = sorted((a.source, a.sink) for a in data.arrows if a.violated)
    # (x, y) = (i, t)
    assert red == [((5, 0), (4, 1)), ((5, 2), (4, 3))]


def test_transformation_side_by_side() -> None:
    s = _jacobi()
    fig = plot_transformation(s, _tiled_badly(s))
    plots = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    assert len(plots) == 2
    assert [_arrows(ax) for ax in plots] == [(66, 0), (66, 2)]  # as in the two tests above
    assert [len(_patches(ax, "tile")) for ax in plots] == [0, 4]
    assert plots[0].get_title().startswith("before: original order")
    assert plots[1].get_title().startswith("after: block('t', 2)")


def test_tiled_copy() -> None:
    # copy_2d.mlir: i = 0..5, j = 0..9 -> 60 instances; blocks of 4: i_t in {0, 4},
    # j_t in {0, 4, 8} -> 6 tiles, the last column and row partial. src is only read and
    # dst only written, each element once: no dependence.
    fn = pk.load(CORPUS / "copy_2d.mlir")["copy_2d"]
    sched = pk.Schedule.from_function(fn, recipe=False)
    sched = sched.block("i", 4).block("j", 4).reorder(["i_t", "j_t", "i", "j"])
    ax = plot_domain(sched).axes[0]
    assert _points(ax) == 60
    assert len(_patches(ax, "tile")) == 6
    assert _arrows(ax) == (0, 0)
    data = domain_slice(sched)
    # tile 3 = (i_t, j_t) = (0, 8): j = 8..9, i = 0..3 -> 8 instances; tile 6: 2 x 2
    assert data.tiles[2].loops == {"i_t": 0, "j_t": 8} and len(data.tiles[2].points) == 8
    assert data.tiles[5].loops == {"i_t": 4, "j_t": 8} and len(data.tiles[5].points) == 4
    # tiles are numbered in the order their first instance runs
    firsts = [min(p.position for p in data.points if (p.x, p.y) in t.points) for t in data.tiles]
    assert firsts == sorted(firsts)


def test_slice_of_a_deeper_nest_and_the_cap() -> None:
    # gemm.mlir: i = 0..5, j = 0..6, k = 0..7; slice j = 2, k horizontal, i vertical:
    # 6 * 8 = 48 instances. C[i][j] is updated at every k: RAW (k, k+1) -> 7 per i = 42;
    # WAR and WAW link every k < k' -> 28 pairs per i = 168 arrows (the RAW pairs among
    # them), more than the cap of 150: the shortest 150 are drawn and the title says so.
    fn = pk.load(LEGALITY / "gemm.mlir")["gemm"]
    sched = pk.Schedule.from_function(fn, recipe=False)
    ax = plot_domain(sched, dims=("k", "i"), fix={"j": 2}, kinds=("RAW",)).axes[0]
    assert _points(ax) == 48
    assert _arrows(ax) == (42, 0)
    assert "j=2" in ax.get_title()
    ax = plot_domain(sched, dims=("k", "i"), fix={"j": 2}).axes[0]
    assert _arrows(ax) == (150, 0)
    assert "150 of 168 dependence arrows drawn" in ax.get_title()
    # without fix, j is fixed at its smallest value
    assert domain_slice(sched, dims=("k", "i")).fixed == {"j": 0}


def test_parameters_and_function_input() -> None:
    # A recipe blocks i by 4 with i = 0 to N, j = 0 to 3: for N = 6, 6 * 3 = 18 instances,
    # tiles i_t in {0, 4}: 2 tiles. B[i][j] = B[i][j] + 1 (i outer): each instance reads and
    # writes its own element: no dependence between different instances.
    text = """
    func.func @f(%B: memref<?x3xf32>, %N: index) {
      %one = arith.constant 1.0 : f32
      %ii, %jj = krnl.define_loops 2
      %ib, %il = krnl.block %ii 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
      krnl.iterate(%ib, %il, %jj) with (%ii -> %i = 0 to %N, %jj -> %j = 0 to 3) {
        %v = krnl.load %B[%i, %j] : memref<?x3xf32>
        %w = arith.addf %v, %one : f32
        krnl.store %w, %B[%i, %j] : memref<?x3xf32>
      }
      return
    }
    """
    fn = pk.parse(text)["f"]
    ax = plot_domain(fn, params={"N": 6}).axes[0]
    assert _points(ax) == 18 and len(_patches(ax, "tile")) == 2 and _arrows(ax) == (0, 0)
    assert "N=6" in ax.get_title()
    with pytest.raises(pk.ArgumentError, match="missing value for parameter 'N'"):
        plot_domain(fn)


def test_layers_switch_off_and_ax() -> None:
    sched = _tiled_badly(_jacobi())
    fig = plot_domain(sched, tiles=False, deps=False, order=False)
    ax = fig.axes[0]
    assert len(fig.axes) == 1  # no colour bar without the order colouring
    assert _patches(ax, "tile", "dep", "dep-violated") == []
    assert _points(ax) == 32
    target = Figure().add_subplot()
    assert plot_domain(sched, ax=target) is target.figure
    assert len(_patches(target, "tile")) == 4


def test_errors() -> None:
    sched = _jacobi()
    with pytest.raises(pk.UnsupportedError, match="no statement of @jacobi_1d runs inside"):
        plot_domain(sched, dims=("i", "x"))
    with pytest.raises(pk.UnsupportedError, match="two different"):
        plot_domain(sched, dims=("i", "i"))
    with pytest.raises(pk.UnsupportedError, match="'i' is not another loop"):
        plot_domain(sched, fix={"i": 1})
    with pytest.raises(pk.UnsupportedError, match="cannot plot a str"):
        plot_domain("jacobi")  # type: ignore[arg-type]


def test_missing_matplotlib(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    with pytest.raises(pk.UnsupportedError, match="needs matplotlib") as e:
        plot_domain(_jacobi())
    assert e.value.hint is not None and "pip install polykrnl[plot]" in e.value.hint


def test_figures_display_as_png_in_ipython(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without pyplot, IPython knows no image format for a Figure: plotting registers one.
    ipython = pytest.importorskip("IPython")
    from IPython.core.formatters import DisplayFormatter

    class Shell:
        display_formatter = DisplayFormatter()

    monkeypatch.setattr(ipython, "get_ipython", lambda: Shell())
    png = Shell.display_formatter.formatters["image/png"]
    fig = plot_domain(_jacobi(), deps=False)
    data = png(fig)
    assert isinstance(data, bytes) and data.startswith(b"\x89PNG")


def test_arrows_carried_by_a_parallel_loop_are_red() -> None:
    # gemm reordered to k, j, i with k parallel: k carries every C[i][j] update (k -> k+1,
    # no loop around k): all 42 RAW arrows of the j = 2 slice are violations, dashed (in
    # order, but run apart). With i parallel instead (original order), the arrows link
    # instances of one i: none is carried by i, none red.
    fn = pk.load(LEGALITY / "gemm.mlir")["gemm"]
    sched = pk.Schedule.from_function(fn, recipe=False)
    bad = sched.reorder(["k", "j", "i"]).parallel("k", force=True)
    ax = plot_domain(bad, dims=("k", "i"), fix={"j": 2}, kinds=("RAW",)).axes[0]
    assert _arrows(ax) == (42, 42)
    assert {a.get_linestyle() for a in _patches(ax, "dep-violated")} == {"--"}
    data = domain_slice(bad, dims=("k", "i"), fix={"j": 2}, kinds=("RAW",))
    assert {a.parallel for a in data.arrows} == {"k"} and not any(a.reversed for a in data.arrows)
    good = sched.parallel("i")
    ax = plot_domain(good, dims=("k", "i"), fix={"j": 2}, kinds=("RAW",)).axes[0]
    assert _arrows(ax) == (42, 0)
