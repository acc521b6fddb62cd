"""Pictures of a schedule: the iteration domain of a 2-D slice, its tiles and dependences.

``plot_domain(sched, params={"N": 10})`` draws, for fixed parameters:

* every statement instance of the slice as a point (one marker per
  statement), coloured by its position in the execution order
  (``sched.trace``);
* the tiles (instances that share the values of every tile loop), shaded,
  numbered in the order they start running;
* the dependences between instances of the slice (from
  :mod:`polykrnl.transforms.dependences`) as arrows from source to sink: red
  when the schedule runs the sink first, red and dashed when a parallel loop
  carries it (runs source and sink in different iterations inside the same
  iterations of the loops around it), gray otherwise. Memory-based WAR/WAW
  dependences link every pair of accesses to an element: ``kinds=("RAW",)``
  keeps the flow dependences only.

``dims=(horizontal, vertical)`` names the two original induction variables of
the slice (default: the inner one horizontal, the outer one vertical, so that
a time loop grows upwards); ``fix={"k": 0}`` fixes the others (default: their
smallest value). ``plot_transformation(before, after)`` draws two schedules
side by side.

matplotlib is an optional extra (``pip install polykrnl[plot]``). The figures
are ``matplotlib.figure.Figure`` objects built without pyplot, so no GUI
backend is needed; in Jupyter they display as images, elsewhere use
``fig.savefig(path)``.

The data behind a picture is available without matplotlib:
:func:`domain_slice` returns the points, tiles and arrows that would be drawn.
"""

from __future__ import annotations

import io
import sys
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import islpy as isl

from polykrnl.errors import UnsupportedError
from polykrnl.ir import Function
from polykrnl.transforms.core import Schedule, SLoop, SNode, step_text
from polykrnl.transforms.dependences import dependences
from polykrnl.transforms.recipe import schedule_of
from polykrnl.transforms.trace import fix_params, param_values, trace

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Arrows drawn at most (violated ones first, then the shortest): more is unreadable.
MAX_ARROWS = 150
KINDS = ("RAW", "WAR", "WAW")


@dataclass(frozen=True)
class Point:
    """One statement instance of the slice."""

    stmt: str
    point: dict[str, int]  # original induction variables -> values
    x: int
    y: int
    position: int  # index in the execution order (sched.trace)


@dataclass(frozen=True)
class Tile:
    """The instances of the slice that share the values of every tile loop."""

    number: int  # 1, 2, ... in the order the tiles start running
    loops: dict[str, int]  # tile loop -> its value
    points: tuple[tuple[int, int], ...]  # (x, y) of its instances


@dataclass(frozen=True)
class Arrow:
    """A dependence between two instances of the slice (one arrow per pair of positions)."""

    source: tuple[int, int]
    sink: tuple[int, int]
    kinds: tuple[str, ...]  # "RAW on A", ...
    reversed: bool  # the schedule runs the sink before the source
    parallel: str | None = None  # a parallel loop that carries it (runs them apart)

    @property
    def violated(self) -> bool:
        return self.reversed or self.parallel is not None


@dataclass(frozen=True)
class DomainSlice:
    """What plot_domain draws for one schedule."""

    function: str
    dims: tuple[str, str]  # (horizontal, vertical)
    fixed: dict[str, int]  # the other induction variables of the slice
    params: dict[str, int]
    statements: tuple[str, ...]  # those with instances in the slice, in program order
    labels: dict[str, str]  # statement -> "S0 (krnl.store, line 12)"
    points: tuple[Point, ...]
    tiles: tuple[Tile, ...]
    arrows: tuple[Arrow, ...]  # after the cap
    n_arrows: int  # before the cap
    instances: int  # all instances of the schedule (the colour scale)
    steps: str


def as_schedule(obj: object) -> Schedule:
    """A Schedule as it is, or a Function's schedule after its Krnl recipe."""
    if isinstance(obj, Schedule):
        return obj
    if isinstance(obj, Function):
        return schedule_of(obj, Schedule)
    raise UnsupportedError(
        f"cannot plot a {type(obj).__name__}",
        hint="pass a polykrnl Schedule (pk.schedule(fn), sched.block(...)) or a Function "
        "(module['name'])",
    )


def domain_slice(
    obj: Schedule | Function,
    *,
    dims: Sequence[str] | None = None,
    params: Mapping[str, int] | None = None,
    fix: Mapping[str, int] | None = None,
    kinds: Sequence[str] = KINDS,
    max_arrows: int = MAX_ARROWS,
) -> DomainSlice:
    """The points, tiles and dependence arrows of a 2-D slice (see the module docstring)."""
    sched = as_schedule(obj)
    program = sched.program
    fname = program.function.name
    given = dict(params or {})
    instances = trace(sched, given)
    stmt_dims = {s.name: s.dims for s in program.statements}
    if dims is None:
        deep = next((stmt_dims[s] for s, _ in instances if len(stmt_dims[s]) >= 2), None)
        if deep is None:
            raise UnsupportedError(
                f"@{fname} has no statement inside two loops: nothing to plot in 2-D",
                hint="plot a function with a 2-D (or deeper) loop nest",
            )
        dims = (deep[1], deep[0])
    if len(dims) != 2 or dims[0] == dims[1]:
        raise UnsupportedError(
            f"dims={tuple(dims)!r}: a plot needs two different induction variables",
            hint="dims=('j', 'i') puts j horizontally and i vertically",
        )
    hx, vy = dims[0], dims[1]
    inside = [s for s in program.statements if hx in s.dims and vy in s.dims]
    if not inside:
        known = sorted({d for s in program.statements for d in s.dims})
        raise UnsupportedError(
            f"no statement of @{fname} runs inside loops {hx!r} and {vy!r}",
            hint="dims names two original induction variables of one statement; "
            f"they are: {', '.join(known)}",
        )
    names = {s.name for s in inside}
    fixed = dict(fix or {})
    unknown = [d for d in fixed if not any(d in s.dims for s in inside) or d in (hx, vy)]
    if unknown:
        raise UnsupportedError(
            f"fix={fixed!r}: {unknown[0]!r} is not another loop of the plotted statements",
            hint="fix the induction variables other than dims, e.g. fix={'k': 0}",
        )
    smallest: dict[str, int] = {}
    for s, point in instances:
        if s in names:
            for d, v in point.items():
                if d not in (hx, vy):
                    smallest[d] = min(v, smallest.get(d, v))
    fixed = {**smallest, **fixed}  # not given: the smallest value
    points: list[Point] = []
    for pos, (s, point) in enumerate(instances):
        if s in names and all(point[d] == fixed[d] for d in point if d not in (hx, vy)):
            points.append(Point(s, point, point[hx], point[vy], pos))
    isl_params = param_values(program, given)
    tiles = _tiles(sched, points, isl_params)
    arrows, n_arrows = _arrows(sched, points, fixed, isl_params, kinds, max_arrows)
    shown = [s.name for s in inside if any(p.stmt == s.name for p in points)]
    labels = {s.name: s.label for s in inside}
    steps = " \u2192 ".join(step_text(st) for st in sched.steps) or "original order"
    return DomainSlice(
        fname,
        (hx, vy),
        {d: fixed[d] for d in sorted(fixed)},
        given,
        tuple(shown),
        labels,
        tuple(points),
        tiles,
        arrows,
        n_arrows,
        len(instances),
        steps,
    )


def _value(
    pa: isl.PwAff, dims: Sequence[str], point: Mapping[str, int], params: Mapping[str, int]
) -> int:
    dom = pa.domain()
    pt = isl.Point.zero(dom.get_space())
    for i, d in enumerate(dims):
        pt = pt.set_coordinate_val(isl.dim_type.set, i, point[d])
    for i in range(dom.dim(isl.dim_type.param)):
        name = str(dom.get_dim_name(isl.dim_type.param, i))
        if name in params:
            pt = pt.set_coordinate_val(isl.dim_type.param, i, params[name])
    v = pa.eval(pt)
    assert v.is_int(), "a loop value of an instance is an integer"
    return int(v.to_python())


def _tiles(sched: Schedule, points: Sequence[Point], params: Mapping[str, int]) -> tuple[Tile, ...]:
    order = sched.loop_names()
    tile_loops = [n for n in order if sched.loop_info[n].kind == "tile"]
    if not tile_loops:
        return ()
    stmts = sched.statements
    groups: dict[tuple[tuple[str, int], ...], list[Point]] = {}
    for p in points:
        key = tuple(
            (n, _value(sched.loop_info[n].values[p.stmt], stmts[p.stmt].dims, p.point, params))
            for n in tile_loops
            if p.stmt in sched.loop_info[n].values
        )
        if key:
            groups.setdefault(key, []).append(p)
    ranked = sorted(groups.items(), key=lambda kv: min(p.position for p in kv[1]))
    return tuple(
        Tile(k + 1, dict(key), tuple(sorted({(p.x, p.y) for p in pts})))
        for k, (key, pts) in enumerate(ranked)
    )


def _arrows(
    sched: Schedule,
    points: Sequence[Point],
    fixed: Mapping[str, int],
    params: Mapping[str, int],
    kinds: Sequence[str],
    max_arrows: int,
) -> tuple[tuple[Arrow, ...], int]:
    stmts = sched.statements
    where = {(p.stmt, tuple(p.point[d] for d in stmts[p.stmt].dims)): p for p in points}
    in_slice = {p.stmt for p in points}
    program = sched.reference_program
    found: dict[tuple[tuple[int, int], tuple[int, int]], tuple[set[str], bool, str | None]] = {}
    paths = _loop_paths(sched)
    parallel = [n for n in sched.loop_names() if sched.loop_info[n].parallel]
    values: dict[tuple[str, str, int], int] = {}

    def value(loop: str, p: Point) -> int:
        key = (loop, p.stmt, p.position)
        if key not in values:
            pa = sched.loop_info[loop].values[p.stmt]
            values[key] = _value(pa, stmts[p.stmt].dims, p.point, params)
        return values[key]

    def carried(a: Point, b: Point) -> str | None:
        """The parallel loop that runs a and b in different iterations of it, inside the
        same iterations of the loops around it (legality's rule for parallel loops)."""
        for name in parallel:
            vals = sched.loop_info[name].values
            if a.stmt not in vals or b.stmt not in vals:
                continue
            if all(value(o, a) == value(o, b) for o in paths[name][:-1]) and value(
                name, a
            ) != value(name, b):
                return name
        return None

    for d in dependences(program).deps:
        if d.kind not in kinds or d.source not in in_slice or d.sink not in in_slice:
            continue
        rel = isl.UnionMap.from_map(d.relation)
        rel = fix_params(rel, program, params).project_out_all_params()
        rel = rel.intersect_domain(_slice_set(d.source, stmts[d.source].dims, fixed))
        rel = rel.intersect_range(_slice_set(d.sink, stmts[d.sink].dims, fixed))

        try:
            pairs = _pairs(rel)
        except isl.Error as e:
            raise UnsupportedError(
                f"cannot enumerate the dependences of @{program.function.name}: {e}",
                hint="give every parameter a value in params",
            ) from None
        for src, snk in pairs:
            a = where.get((d.source, src))
            b = where.get((d.sink, snk))
            if a is None or b is None or (a.x, a.y) == (b.x, b.y):
                continue  # outside the slice, or an arrow of length 0
            key = ((a.x, a.y), (b.x, b.y))
            ks, bad, par = found.get(key, (set(), False, None))
            ks.add(f"{d.kind} on {d.array}")
            found[key] = (ks, bad or b.position < a.position, par or carried(a, b))
    arrows = [Arrow(a, b, tuple(sorted(ks)), bad, par) for (a, b), (ks, bad, par) in found.items()]
    # Violated first, then the shortest (the direct neighbours say most).
    arrows.sort(
        key=lambda r: (
            not r.violated,
            abs(r.sink[0] - r.source[0]) + abs(r.sink[1] - r.source[1]),
            r.source,
            r.sink,
        )
    )
    return tuple(arrows[:max_arrows]), len(arrows)


def _loop_paths(sched: Schedule) -> dict[str, tuple[str, ...]]:
    """Loop -> the loops from the outermost down to it."""
    out: dict[str, tuple[str, ...]] = {}

    def go(nodes: Sequence[SNode], prefix: tuple[str, ...]) -> None:
        for n in nodes:
            if isinstance(n, SLoop):
                out[n.name] = (*prefix, n.name)
                go(n.body, (*prefix, n.name))

    go(sched.nodes, ())
    return out


def _pairs(rel: isl.UnionMap) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Every (source, sink) pair of coordinates of a finite relation."""
    out: list[tuple[tuple[int, ...], tuple[int, ...]]] = []

    def on_map(m: isl.Map) -> None:
        n_in, n_out = m.dim(isl.dim_type.in_), m.dim(isl.dim_type.out)

        def on_point(pt: isl.Point) -> None:
            c = tuple(
                int(pt.get_coordinate_val(isl.dim_type.set, k).to_python())
                for k in range(n_in + n_out)
            )
            out.append((c[:n_in], c[n_in:]))

        m.wrap().foreach_point(on_point)

    rel.foreach_map(on_map)
    return out


def _slice_set(stmt: str, dims: Sequence[str], fixed: Mapping[str, int]) -> isl.UnionSet:
    names = [f"d{k}" for k in range(len(dims))]
    cons = " and ".join(f"d{k} = {fixed[d]}" for k, d in enumerate(dims) if d in fixed) or "true"
    return isl.UnionSet(f"{{ {stmt}[{', '.join(names)}] : {cons} }}")


# ------------------------------------------------------------------ drawing


def require_matplotlib() -> Any:
    try:
        import matplotlib
        from matplotlib.figure import Figure  # noqa: F401
    except ImportError:
        raise UnsupportedError(
            "plotting needs matplotlib, which is not installed",
            hint="pip install polykrnl[plot]  (or pip install matplotlib)",
        ) from None
    _show_in_ipython()
    return matplotlib


def _png(fig: Figure) -> bytes:
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=90)
    return out.getvalue()


def _show_in_ipython() -> None:
    """Make Jupyter show figures built without pyplot as images.

    IPython learns to render a Figure when matplotlib's inline backend loads,
    which pyplot does; a figure made with ``Figure()`` alone would show as
    ``<Figure size ...>``. Registers the PNG formatter if none is there yet.
    """
    if "IPython" not in sys.modules:
        return  # not running under IPython
    from IPython import get_ipython
    from matplotlib.figure import Figure

    shell = get_ipython()
    if shell is None:
        return
    formatter = shell.display_formatter.formatters["image/png"]
    try:
        formatter.lookup_by_type(Figure)
    except KeyError:
        formatter.for_type(Figure, _png)


def plot_domain(
    obj: Schedule | Function,
    *,
    dims: Sequence[str] | None = None,
    params: Mapping[str, int] | None = None,
    fix: Mapping[str, int] | None = None,
    tiles: bool = True,
    order: bool = True,
    deps: bool = True,
    kinds: Sequence[str] = KINDS,
    max_arrows: int = MAX_ARROWS,
    ax: Axes | None = None,
    title: str | None = None,
) -> Figure:
    """The iteration domain of a 2-D slice of `obj` with its tiles and dependences.

    `dims=(horizontal, vertical)`, `params` gives every parameter a value,
    `fix` the other induction variables; `tiles`, `order` (colour by execution
    order) and `deps` switch the layers; `kinds` chooses RAW/WAR/WAW; at most
    `max_arrows` arrows are drawn (violated first). With `ax`, draws into it.
    """
    require_matplotlib()
    from matplotlib.figure import Figure

    data = domain_slice(obj, dims=dims, params=params, fix=fix, kinds=kinds, max_arrows=max_arrows)
    if ax is not None:
        handles = draw(ax, data, tiles=tiles, order=order, deps=deps, title=title)
        ax.legend(handles=handles, loc="best", fontsize=7)
        return ax.get_figure(root=True)  # type: ignore[return-value]
    w, h = _panel_size(data)
    fig = Figure(figsize=(w, h), layout="constrained")
    handles = draw(fig.add_subplot(), data, tiles=tiles, order=order, deps=deps, title=title)
    fig.legend(handles=handles, loc="outside lower center", ncols=2, fontsize=8, frameon=False)
    return fig


def plot_transformation(
    before: Schedule | Function,
    after: Schedule | Function,
    *,
    dims: Sequence[str] | None = None,
    params: Mapping[str, int] | None = None,
    fix: Mapping[str, int] | None = None,
    tiles: bool = True,
    order: bool = True,
    deps: bool = True,
    kinds: Sequence[str] = KINDS,
    max_arrows: int = MAX_ARROWS,
) -> Figure:
    """Two schedules of one function side by side (same slice, same options)."""
    require_matplotlib()
    from matplotlib.figure import Figure

    left = domain_slice(
        before, dims=dims, params=params, fix=fix, kinds=kinds, max_arrows=max_arrows
    )
    right = domain_slice(
        after, dims=left.dims, params=params, fix=left.fixed, kinds=kinds, max_arrows=max_arrows
    )
    sizes = [_panel_size(left), _panel_size(right)]
    fig = Figure(figsize=(sum(w for w, _ in sizes), max(h for _, h in sizes)), layout="constrained")
    panels: Any = fig.subfigures(1, 2)
    for sub, data, when in zip(panels, (left, right), ("before", "after"), strict=True):
        handles = draw(
            sub.add_subplot(),
            data,
            tiles=tiles,
            order=order,
            deps=deps,
            title=f"{when}: {data.steps}",
        )
        sub.legend(handles=handles, loc="outside lower center", ncols=2, fontsize=8, frameon=False)
    return fig


def _panel_size(data: DomainSlice) -> tuple[float, float]:
    """Figure inches for one panel: the axes follow the slice's shape (equal units)."""
    xs = [p.x for p in data.points] or [0]
    ys = [p.y for p in data.points] or [0]
    wide, high = max(xs) - min(xs) + 1.5, max(ys) - min(ys) + 1.5
    unit = min(0.6, 6.0 / wide, 6.0 / high)  # inches per unit of the loops
    return max(3.2, wide * unit) + 1.8, max(2.4, high * unit) + 2.0


_MARKERS = ("o", "s", "^", "D", "v", "P", "X")
_TILE_COLORS = (
    "#a6cee3", "#b2df8a", "#fdbf6f", "#cab2d6", "#fb9a99", "#ffff99", "#8dd3c7", "#bebada",
)  # fmt: skip
KEPT = "#6e7781"
VIOLATED = "#d1242f"


def draw(
    ax: Axes,
    data: DomainSlice,
    *,
    tiles: bool = True,
    order: bool = True,
    deps: bool = True,
    title: str | None = None,
) -> list[Any]:
    """Draw a DomainSlice into `ax` (the layers plot_domain describes); the legend handles."""
    from matplotlib.ticker import MaxNLocator

    handles = _draw_tiles(ax, data) if tiles and data.tiles else []
    points, scatter = _draw_points(ax, data, order)
    handles += points
    if deps:
        handles += _draw_deps(ax, data)
    if order and scatter is not None:
        bar = ax.figure.colorbar(scatter, ax=ax, shrink=0.9, pad=0.02)
        bar.set_label("execution order (instance number)")
    hx, vy = data.dims
    ax.set_xlabel(hx)
    ax.set_ylabel(vy)
    ax.set_aspect("equal", adjustable="datalim")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(True, color="#d0d7de", linewidth=0.5, zorder=0)
    ax.set_axisbelow(True)
    head = title if title is not None else f"@{data.function}: {data.steps}"
    context = ", ".join(f"{k}={v}" for k, v in (*data.params.items(), *data.fixed.items()))
    lines = textwrap.wrap(head, 70) or [""]
    if context:
        lines.append(context)
    if deps and data.n_arrows > len(data.arrows):
        lines.append(f"{len(data.arrows)} of {data.n_arrows} dependence arrows drawn")
    ax.set_title("\n".join(lines), fontsize=10)
    return handles


def _draw_tiles(ax: Axes, data: DomainSlice) -> list[Any]:
    """The tiles, numbered in execution order; their legend handle."""
    from matplotlib.patches import Patch, Polygon

    handles: list[Any] = []
    for t in data.tiles:
        color = _TILE_COLORS[(t.number - 1) % len(_TILE_COLORS)]
        ax.add_patch(
            Polygon(
                _outline(t.points, 0.45),
                closed=True,
                facecolor=color,
                edgecolor="#444c56",
                linewidth=0.8,
                alpha=0.55,
                zorder=1,
                gid="tile",
            )
        )
        # At the centroid: between points for even sizes, inside a staircase tile;
        # moved up a little when it would hide a point.
        cx = sum(p[0] for p in t.points) / len(t.points)
        cy = sum(p[1] for p in t.points) / len(t.points)
        if any(abs(cx - x) < 0.3 and abs(cy - y) < 0.3 for x, y in t.points):
            cy += 0.3
        ax.text(
            cx,
            cy,
            str(t.number),
            ha="center",
            va="center",
            fontsize=9,
            fontweight="bold",
            color="#1f2328",
            zorder=5,
            gid="tile-number",
            bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "alpha": 0.8, "lw": 0},
        )
    handles.append(
        Patch(facecolor=_TILE_COLORS[0], edgecolor="#444c56", alpha=0.55,
              label=f"tile ({len(data.tiles)}; number = execution order)")
    )  # fmt: skip
    return handles


def _draw_points(ax: Axes, data: DomainSlice, order: bool) -> tuple[list[Any], Any]:
    """The instances, one marker per statement, colored by execution order (or by
    statement); their legend handles and the scatter the color bar reads (None)."""
    from matplotlib.lines import Line2D

    handles: list[Any] = []
    n_stmts = len(data.statements)
    size = 40 if len(data.points) <= 150 else 14
    scatter = None
    for k, s in enumerate(data.statements):
        pts = [p for p in data.points if p.stmt == s]
        # Statements at the same point stand a little apart.
        dx = (k - (n_stmts - 1) / 2) * 0.2 if n_stmts > 1 else 0.0
        marker = _MARKERS[k % len(_MARKERS)]
        common: dict[str, Any] = {
            "marker": marker,
            "s": size,
            "zorder": 3,
            "edgecolors": "black",
            "linewidths": 0.4,
            "gid": f"points:{s}",
        }
        if order:
            scatter = ax.scatter(
                [p.x + dx for p in pts],
                [p.y for p in pts],
                c=[p.position for p in pts],
                cmap="viridis",
                vmin=0,
                vmax=max(1, data.instances - 1),
                **common,
            )
        else:
            ax.scatter([p.x + dx for p in pts], [p.y for p in pts], color=f"C{k}", **common)
        face = "#9ba3ab" if order else f"C{k}"
        handles.append(
            Line2D([], [], linestyle="", marker=marker, markerfacecolor=face,
                   markeredgecolor="black", markersize=7, label=data.labels[s])
        )  # fmt: skip
    return handles, scatter


def _draw_deps(ax: Axes, data: DomainSlice) -> list[Any]:
    """The dependence arrows, kept and violated; their legend handles."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyArrowPatch

    handles: list[Any] = []
    for a in data.arrows:
        length = max(abs(a.sink[0] - a.source[0]), abs(a.sink[1] - a.source[1]))
        ax.add_patch(
            FancyArrowPatch(
                a.source,
                a.sink,
                arrowstyle="-|>",
                mutation_scale=9 if a.violated else 7,
                color=VIOLATED if a.violated else KEPT,
                linewidth=1.5 if a.violated else 0.7,
                # carried by a parallel loop (but in order): dashed
                linestyle="-" if a.reversed or not a.violated else "--",
                alpha=1.0 if a.violated else 0.75,
                shrinkA=4,
                shrinkB=4,
                # Longer arrows bend, so that they do not hide the short ones on their line.
                connectionstyle="arc3,rad=0.2" if length > 1 else "arc3,rad=0",
                zorder=4 if a.violated else 2,
                gid="dep-violated" if a.violated else "dep",
            )
        )
    bad = sum(a.violated for a in data.arrows)
    flipped = sum(a.reversed for a in data.arrows)
    handles.append(
        Line2D([], [], color=KEPT, linewidth=0.9, marker=">", markersize=5,
               label=f"dependence kept ({len(data.arrows) - bad})")
    )  # fmt: skip
    handles.append(
        Line2D([], [], color=VIOLATED, linewidth=1.5, marker=">", markersize=6,
               label=f"dependence violated: sink runs first ({flipped})")
    )  # fmt: skip
    if bad > flipped:
        handles.append(
            Line2D([], [], color=VIOLATED, linewidth=1.5, linestyle="--",
                   label=f"violated: carried by a parallel loop ({bad - flipped})")
        )  # fmt: skip
    return handles


def _outline(points: Sequence[tuple[int, int]], pad: float) -> list[tuple[float, float]]:
    """A polygon around the points, row by row (each row's span padded by `pad`).

    The points of a tile are the integer points of a convex set, so every row is
    one interval: the outline is exact for skewed (staircase) tiles too, where a
    convex hull would cover the neighbouring tile.
    """
    rows: dict[int, list[int]] = {}
    for x, y in points:
        rows.setdefault(y, []).append(x)
    ys = sorted(rows)
    right = [(max(rows[y]) + pad, y + dy) for y in ys for dy in (-pad, pad)]
    left = [(min(rows[y]) - pad, y + dy) for y in reversed(ys) for dy in (pad, -pad)]
    return right + left
