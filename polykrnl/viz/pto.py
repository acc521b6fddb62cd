"""The tile grid of a PTO kernel (which window of a tensor each tile loads or stores) and
its buffer budget (where each tile sits in UB, L1, L0A/B/C).

``tile_windows(kernel, tensor, **sizes)`` lists the windows (data, no matplotlib);
``plot_tiles(kernel, tensor=None, **sizes)`` draws them over the tensor: each tile's
static shape as a dashed box, its valid region filled (partial tiles at the edges
in another colour), numbered in the order the kernel visits them.
``buffer_usage(kernel)`` gives the bytes per buffer and per tile (data);
``plot_buffers(kernel)`` draws one bar per buffer, each tile a segment at its offset,
coloured by what it holds (data tile, per-row column, per-column row, tmp).
``plot_timeline(kernel.timeline(...), ...)`` draws the pipes over time under the
timeline's cost model (single against double buffering, say).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from polykrnl.errors import ArgumentError
from polykrnl.targets.pto.kernel import PtoKernel
from polykrnl.targets.pto.program import (
    GlobalView,
    Instr,
    Item,
    Loop,
    Pipe,
    SetValid,
    TileDecl,
    eval_expr,
)
from polykrnl.targets.pto.timeline import Span, Timeline
from polykrnl.targets.pto.types import Buffer
from polykrnl.viz.plots import require_matplotlib

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "BufferUse",
    "TileWindow",
    "buffer_usage",
    "plot_buffers",
    "plot_tiles",
    "plot_timeline",
    "tile_windows",
]


@dataclass(frozen=True)
class TileWindow:
    """One window of the tensor that one TLOAD or TSTORE moves (element coordinates)."""

    order: int  # visiting order, from 1
    row: int
    col: int
    rows: int  # valid rows (the window's shape)
    cols: int
    tile_rows: int  # the tile's static shape
    tile_cols: int
    op: str  # TLOAD or TSTORE

    @property
    def partial(self) -> bool:
        return self.rows < self.tile_rows or self.cols < self.tile_cols


def tile_windows(kernel: PtoKernel, tensor: str | None = None, **sizes: int) -> list[TileWindow]:
    """The windows of `tensor` (default: the first tensor the kernel loads) that the
    kernel's TLOADs and TSTOREs move, for the given problem sizes, in execution order
    (a window moved twice counts once)."""
    prog = kernel.program
    names = [t.name for t in prog.tensors]
    if tensor is None:
        tensor = _first_tensor(kernel)
    if tensor not in names:
        raise ArgumentError(
            f"{prog.name} has no tensor {tensor!r}", hint=f"one of {', '.join(names)}"
        )
    env0 = _env(kernel, sizes)
    missing = [src for p, src in kernel.params.items() if p not in env0]
    if missing:
        raise ArgumentError(
            f"plot_tiles of {prog.name}: no value for {', '.join(missing)}",
            hint="give every size, e.g. " + ", ".join(f"{m.replace('.', '_')}=" for m in missing),
        )
    shapes = {t.name: (t.type.rows, t.type.cols) for t in prog.tiles}
    out: list[TileWindow] = []
    seen: set[tuple[int, int, int, int]] = set()
    for item, env in _run(prog.body, env0):
        if not isinstance(item, Instr) or item.op not in ("TLOAD", "TSTORE"):
            continue
        view, tile = (item.srcs[0], item.dst) if item.op == "TLOAD" else (item.dst, item.srcs[0])
        if not isinstance(view, GlobalView) or view.tensor != tensor or not isinstance(tile, str):
            continue
        offset = eval_expr(view.offset, env)
        stride = max(1, eval_expr(view.row_stride, env))
        row, col = divmod(offset, stride)
        key = (row, col, eval_expr(view.rows, env), eval_expr(view.cols, env))
        if key in seen:
            continue
        seen.add(key)
        tr, tc = shapes[tile]
        out.append(TileWindow(len(out) + 1, row, col, key[2], key[3], tr, tc, item.op))
    return out


def _env(kernel: PtoKernel, sizes: Mapping[str, int]) -> dict[str, int]:
    """Problem sizes by parameter: `N=..`, and a memref dimension as `A.0` or `A_0`."""
    out: dict[str, int] = {}
    for p, src in kernel.params.items():
        for key in (src, src.replace(".", "_")):
            if key in sizes:
                out[p] = sizes[key]
    return out


def _walk(items: Sequence[Item]) -> Iterator[Item]:
    for it in items:
        yield it
        if isinstance(it, Loop):
            yield from _walk(it.body)


def _run(items: Sequence[Item], env: Mapping[str, int]) -> Iterator[tuple[Item, dict[str, int]]]:
    """The items in execution order with the loop values they run with."""
    for it in items:
        if isinstance(it, Loop):
            start, stop, step = (eval_expr(e, env) for e in (it.start, it.stop, it.step))
            for v in range(start, stop, step):
                yield from _run(it.body, {**env, it.var: v})
        elif not isinstance(it, SetValid):
            yield it, dict(env)


def plot_tiles(
    kernel: PtoKernel,
    tensor: str | None = None,
    *,
    ax: Any = None,
    title: str | None = None,
    **sizes: int,
) -> Figure:
    """The tile grid of `tensor` for the given sizes (see the module docstring)."""
    require_matplotlib()
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    windows = tile_windows(kernel, tensor, **sizes)
    t = tensor if tensor is not None else _first_tensor(kernel)
    shape = _tensor_shape(kernel, t, sizes)
    if ax is None:
        width = max([shape[1], *(w.col + w.tile_cols for w in windows)])
        height = max([shape[0], *(w.row + w.tile_rows for w in windows)])
        fig = Figure(figsize=(6.0, 1.2 + 5.0 * height / max(width, 1)), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.get_figure(root=True)
    ax.add_patch(Rectangle((0, 0), shape[1], shape[0], fill=False, lw=1.5, ec="black"))
    for w in windows:
        colour = "#f4a261" if w.partial else "#8ecae6"
        ax.add_patch(
            Rectangle(
                (w.col, w.row), w.tile_cols, w.tile_rows, fill=False, ls="--", lw=0.8, ec="#555"
            )
        )
        ax.add_patch(
            Rectangle((w.col, w.row), w.cols, w.rows, alpha=0.6, fc=colour, ec="#1d3557", lw=0.8)
        )
        ax.text(
            w.col + w.cols / 2,
            w.row + w.rows / 2,
            str(w.order),
            ha="center",
            va="center",
            fontsize=8,
        )
    n_partial = sum(w.partial for w in windows)
    ax.set_xlim(-0.5, max(shape[1], max((w.col + w.tile_cols for w in windows), default=0)) + 0.5)
    ax.set_ylim(max(shape[0], max((w.row + w.tile_rows for w in windows), default=0)) + 0.5, -0.5)
    ax.set_aspect("equal")
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    ax.set_title(
        title
        or f"{kernel.program.name}: {t} {shape[0]}x{shape[1]}, {len(windows)} tiles "
        f"({n_partial} partial; dashed: tile shape, filled: valid region)",
        fontsize=9,
    )
    return fig


def _first_tensor(kernel: PtoKernel) -> str:
    """The first tensor the kernel loads (the one tile_windows shows by default)."""
    for it in _walk(kernel.program.body):
        if isinstance(it, Instr):
            for v in it.srcs:
                if isinstance(v, GlobalView):
                    return v.tensor
    return kernel.program.tensors[0].name


def _tensor_shape(kernel: PtoKernel, tensor: str, sizes: Mapping[str, int]) -> tuple[int, int]:
    env = _env(kernel, sizes)
    tp = next(x for x in kernel.program.tensors if x.name == tensor)
    dims = [eval_expr(d, env) for d in tp.shape]
    if len(dims) == 1:
        return dims[0], 1
    return dims[-2], dims[-1]


# ----------------------------------------------------------------------------- buffers

_ROLE_COLOURS = {"data": "#8ecae6", "per-row": "#90be6d", "per-column": "#b388eb", "tmp": "#f4a261"}


@dataclass(frozen=True)
class BufferUse:
    """The tiles of one buffer: their byte ranges, what the buffer holds, what it may."""

    buffer: Buffer
    capacity: int  # bytes of the buffer
    usable: int  # bytes from 0 that tiles may use (A2/A3 reserves the top 8 KiB of UB)
    tiles: tuple[TileDecl, ...]

    @property
    def used(self) -> int:
        """Bytes from 0 to the end of the last tile (tiles are never placed over each other)."""
        return max((t.end for t in self.tiles), default=0)

    @property
    def share(self) -> float:
        return self.used / self.usable


def tile_role(t: TileDecl) -> str:
    """What a tile holds: "tmp" (an instruction's scratch), "per-row" (a column of one value
    per row), "per-column" (a row of one value per column), or "data"."""
    if "tmp" in t.name:
        return "tmp"
    if t.type.cols == 1:
        return "per-row"
    if t.type.rows == 1:
        return "per-column"
    return "data"


def buffer_usage(kernel: PtoKernel) -> list[BufferUse]:
    """Per buffer the kernel uses (in the order UB, L1, L0A, L0B, L0C, ...), its tiles."""
    arch = kernel.program.arch
    out = []
    for buf in Buffer:
        tiles = tuple(t for t in kernel.tiles if t.buffer is buf)
        if tiles:
            out.append(BufferUse(buf, arch.capacity_of(buf), arch.usable(buf), tiles))
    return out


def plot_buffers(kernel: PtoKernel, *, title: str | None = None) -> Figure:
    """One bar per buffer, the tiles at their byte offsets (drawn over the used bytes; the
    label gives the share of what the buffer allows). Nests that run one after the other
    reuse the bytes: their tiles are drawn in bands one under the other."""
    require_matplotlib()
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch, Rectangle

    uses = buffer_usage(kernel)
    fig = Figure(figsize=(7.0, 0.9 + 0.9 * len(uses)), layout="constrained")
    axes = fig.subplots(len(uses), 1, squeeze=False)[:, 0]
    for ax, use in zip(axes, uses, strict=True):
        # nests run one after the other reuse the bytes: one band per scope
        scopes = sorted({t.scope for t in use.tiles})
        band = 1 / len(scopes)
        for t in use.tiles:
            colour = _ROLE_COLOURS[tile_role(t)]
            y = (len(scopes) - 1 - scopes.index(t.scope)) * band
            for k in range(t.copies):  # a double-buffered tile: both copies, hatched second
                at, label = t.copy_offset(k), t.name if t.copies == 1 else f"{t.name}[{k}]"
                ax.add_patch(
                    Rectangle(
                        (at, y), t.type.bytes, band, fc=colour, ec="#1d3557", lw=0.6,
                        hatch="//" if k else None,
                    )
                )  # fmt: skip
                if t.type.bytes >= 0.06 * use.used:
                    ax.text(
                        at + t.type.bytes / 2, y + band / 2, label, ha="center", va="center",
                        fontsize=7, rotation=90 if t.type.bytes < 0.15 * use.used else 0,
                    )  # fmt: skip
        ax.set_xlim(0, max(use.used, 1))
        ax.set_ylim(0, 1)
        ax.set_yticks([])
        ax.set_ylabel(use.buffer.value, rotation=0, ha="right", va="center")
        ax.set_title(
            f"{use.buffer.value}: {use.used} of {use.usable} bytes ({100 * use.share:.1f}%), "
            f"{len(use.tiles)} tile{'s' if len(use.tiles) != 1 else ''}",
            fontsize=8,
            loc="left",
        )
    axes[-1].set_xlabel("byte offset")
    roles = sorted({tile_role(t) for u in uses for t in u.tiles}, key=list(_ROLE_COLOURS).index)
    fig.legend(
        handles=[Patch(fc=_ROLE_COLOURS[r], ec="#1d3557", label=r) for r in roles],
        loc="outside upper right",
        ncols=len(roles),
        fontsize=7,
    )
    fig.suptitle(
        title or f"{kernel.program.name} on {kernel.arch}: buffer space per tile",
        fontsize=9,
        x=0.02,
        ha="left",
    )
    return fig


# ----------------------------------------------------------------------------- pipes

_KIND_COLOURS = {
    "load": "#8ecae6",
    "store": "#ffb703",
    "vector": "#90be6d",
    "move": "#b388eb",
    "cube": "#e76f51",
}


def _kind(span: Span) -> str:
    if span.op == "TLOAD":
        return "load"
    if span.op == "TSTORE":
        return "store"
    if span.pipe is Pipe.M:
        return "cube"
    if span.pipe in (Pipe.MTE1, Pipe.FIX):
        return "move"
    return "vector"


def plot_timeline(
    *timelines: Timeline, labels: Sequence[str] = (), title: str | None = None
) -> Figure:
    """The pipes of a kernel run over time (a :meth:`PtoKernel.timeline`), one row per pipe,
    each instruction a bar coloured by what it does; several timelines (single and double
    buffering, say) one under the other on the same time axis."""
    require_matplotlib()
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    if not timelines:
        raise ArgumentError("plot_timeline: no timeline given", hint="pass kernel.timeline(...)")
    names = list(labels) or [t.kernel for t in timelines]
    if len(names) != len(timelines):
        raise ArgumentError(
            f"plot_timeline: {len(timelines)} timelines but {len(names)} labels",
            hint="give one label per timeline",
        )
    rows = sum(len(t.pipes) for t in timelines)
    fig = Figure(figsize=(8.0, 0.9 + 0.32 * rows + 0.35 * len(timelines)), layout="constrained")
    axes = fig.subplots(
        len(timelines), 1, squeeze=False, sharex=True,
        gridspec_kw={"height_ratios": [max(1, len(t.pipes)) for t in timelines]},
    )[:, 0]  # fmt: skip
    for ax, tl, name in zip(axes, timelines, names, strict=True):
        pipes = tl.pipes
        for y, pipe in enumerate(pipes):
            spans = [s for s in tl.spans if s.pipe is pipe]
            ax.broken_barh(
                [(s.start, s.end - s.start) for s in spans],
                (y - 0.4, 0.8),
                facecolors=[_KIND_COLOURS[_kind(s)] for s in spans],
                edgecolors="#1d3557",
                linewidth=0.3,
            )
        ax.set_yticks(range(len(pipes)), [p.cpp for p in pipes], fontsize=7)
        ax.set_ylim(len(pipes) - 0.5, -0.5)
        ax.set_title(f"{name}: {tl.makespan:,.0f} modelled cycles", fontsize=8, loc="left")
    axes[-1].set_xlabel("modelled cycles (pipes in parallel, flags obeyed)")
    used = {_kind(s) for t in timelines for s in t.spans}
    fig.legend(
        handles=[Patch(fc=c, ec="#1d3557", label=k) for k, c in _KIND_COLOURS.items() if k in used],
        loc="outside upper right",
        ncols=len(used),
        fontsize=7,
    )
    if title:
        fig.suptitle(title, fontsize=9, x=0.02, ha="left")
    return fig
