"""A PTO tile program: the kernel that the C++ printer prints and the NumPy model runs.

It is independent of Krnl: the pattern matcher translates loop nests into it, tests build it by
hand. Everything is a frozen value; expressions (loop bounds, offsets, valid extents) are sympy
expressions over the problem-size parameters and the loop iterators, restricted to integers,
names, ``+``, ``-``, ``*``, ``floor``, ``Mod``, ``Min`` and ``Max`` (see :func:`expr`).

Shape of a program::

    Program(name, tensors=(TensorParam...), params=("N", "M"), tiles=(TileDecl...), body=(...))

The body is a tree of :class:`Loop` items and flat items: :class:`Instr` (one PTO instruction),
:class:`SetValid` (new valid shape of a dynamic tile for this iteration), :class:`SetFlag` /
:class:`WaitFlag` / :class:`Barrier` (synchronization between pipes). Synchronization is part of
the list, so printing and simulation see exactly the same items;
:func:`.sync.insert_sync` adds the flags that data dependences between pipes need.

PTO facts used here (hw-native-sys/pto-isa headers and docs, restated):

- ``TLOAD(tile, gm)`` runs on PIPE_MTE2 and copies ``tile``'s valid region from the global view;
  ``TSTORE(gm, tile)`` runs on PIPE_MTE3 from a Vec tile, PIPE_FIX from an Acc tile;
  ``TMOV`` Mat -> Left/Right on PIPE_MTE1; ``TMATMUL``/``TMATMUL_ACC`` on PIPE_M; vector
  instructions on PIPE_V.
- A dynamic valid dimension (``-1``) is set at run time with ``tile.SetValidShape(r, c)``
  (both dynamic), ``SetValidRow(r)`` or ``SetValidCol(c)``; the constructor takes the initial
  values (``Tile t(r, c)``).
- The global view of a TLOAD/TSTORE must have exactly the tile's valid shape.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeAlias

import sympy  # type: ignore[import-untyped]

from polykrnl.errors import PtoError, TileConstraintError
from polykrnl.targets.pto.dtypes import ALIGN_BYTES, DType, dtype
from polykrnl.targets.pto.instructions import INSTRUCTIONS, Instruction, Pipe
from polykrnl.targets.pto.types import Arch, Buffer, Layout, Loc, TileType, arch

__all__ = [
    "Barrier",
    "ConvForm",
    "Expr",
    "GlobalView",
    "Instr",
    "Item",
    "Loop",
    "Operand",
    "Pipe",
    "Program",
    "Scalar",
    "SetFlag",
    "SetValid",
    "TensorParam",
    "TileDecl",
    "WaitFlag",
    "eval_expr",
    "expr",
    "plan_offsets",
    "walk",
]

Expr = sympy.Expr
ExprLike: TypeAlias = int | str | sympy.Expr


_FUNCS: dict[str, object] = {
    "Min": sympy.Min,
    "Max": sympy.Max,
    "floor": sympy.floor,
    "ceiling": sympy.ceiling,
    "Mod": sympy.Mod,
}


def expr(x: ExprLike) -> sympy.Expr:
    """A sympy integer expression from an int, a name (``"N"``) or an expression string
    (``"Min(16, N - i)"``); names become integer symbols."""
    if isinstance(x, sympy.Expr):
        return x
    if isinstance(x, bool):
        raise TypeError("a bool is not an expression")
    if isinstance(x, int):
        return sympy.Integer(x)
    if isinstance(x, str):
        if x.isidentifier():
            return sympy.Symbol(x, integer=True)
        # every name but the functions is an integer symbol (plain sympify would read N, S, E,
        # I, Q... as sympy objects)
        names = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", x)) - set(_FUNCS)
        local: dict[str, object] = {n: sympy.Symbol(n, integer=True) for n in names}
        local.update(_FUNCS)
        return sympy.sympify(x, locals=local)
    raise TypeError(f"not an expression: {x!r}")


def eval_expr(e: sympy.Expr, env: Mapping[str, int]) -> int:
    """Evaluate an integer expression exactly (floor division is Python's ``//``)."""
    if isinstance(e, sympy.Integer):
        return int(e)
    if isinstance(e, sympy.Symbol):
        try:
            return int(env[e.name])
        except KeyError:
            raise PtoError(
                f"expression {e}: no value for {e.name!r}",
                hint=f"give {e.name} as a parameter (known: {', '.join(sorted(env)) or 'none'})",
            ) from None
    if isinstance(e, sympy.Add):
        return sum(eval_expr(a, env) for a in e.args)
    if isinstance(e, sympy.Mul):
        num, den = sympy.fraction(e)
        if den != 1:
            q, r = divmod(_prod(num, env), eval_expr(den, env))
            assert r == 0, f"{e} is not an integer"
            return q
        return _prod(e, env)
    if isinstance(e, sympy.floor):
        num, den = sympy.fraction(sympy.together(e.args[0]))
        return eval_expr(num, env) // eval_expr(den, env)
    if isinstance(e, sympy.ceiling):
        num, den = sympy.fraction(sympy.together(e.args[0]))
        return -(-eval_expr(num, env) // eval_expr(den, env))
    if isinstance(e, sympy.Mod):
        return eval_expr(e.args[0], env) % eval_expr(e.args[1], env)
    if isinstance(e, sympy.Min):
        return min(eval_expr(a, env) for a in e.args)
    if isinstance(e, sympy.Max):
        return max(eval_expr(a, env) for a in e.args)
    if isinstance(e, sympy.Pow) and isinstance(e.exp, sympy.Integer) and int(e.exp) >= 0:
        return int(eval_expr(e.base, env) ** int(e.exp))
    raise PtoError(
        f"expression {e}: unsupported operation {type(e).__name__}",
        hint="use integers, names, +, -, *, floor, Mod, Min and Max",
    )


def _prod(e: sympy.Expr, env: Mapping[str, int]) -> int:
    if not isinstance(e, sympy.Mul):
        return eval_expr(e, env)
    out = 1
    for a in e.args:
        out *= eval_expr(a, env)
    return out


# --------------------------------------------------------------------------- declarations


@dataclass(frozen=True)
class TensorParam:
    """A kernel argument in global memory: a contiguous row-major array (any rank).

    ``shape`` entries are expressions of the problem sizes; the C++ argument is a pointer
    ``__gm__ T* name`` and the harness file holds ``prod(shape)`` elements.
    """

    name: str
    dtype: DType
    shape: tuple[sympy.Expr, ...]

    def __init__(self, name: str, dt: DType | str, shape: Sequence[ExprLike]) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "dtype", dtype(dt))
        object.__setattr__(self, "shape", tuple(expr(s) for s in shape))

    @property
    def numel(self) -> sympy.Expr:
        return sympy.Mul(*self.shape) if self.shape else sympy.Integer(1)

    @property
    def row_stride(self) -> sympy.Expr:
        """Elements between rows of the innermost 2-D view (the last extent)."""
        return self.shape[-1] if self.shape else sympy.Integer(1)


@dataclass(frozen=True)
class TileDecl:
    """A tile of the kernel: its type and its byte offset in its buffer (TASSIGN).

    A dynamic valid dimension starts at the full static extent; :class:`SetValid` items change
    it per iteration.
    """

    name: str
    type: TileType
    offset: int = 0
    # Double buffering: two copies, the second right after the first; in each iteration of
    # the loop over this variable the tile is the copy of the iteration's parity.
    pingpong: str | None = None
    # Tiles of different scopes (the nests run one after the other) may share bytes: the
    # kernel uses one scope's tiles at a time, and synchronization orders the next scope's
    # first use of shared bytes after the last use of the one before.
    scope: int = 0

    @property
    def buffer(self) -> Buffer:
        b = self.type.buffer
        assert b is not None, "Ctrl tiles are not declared"
        return b

    @property
    def copies(self) -> int:
        return 1 if self.pingpong is None else 2

    @property
    def stride(self) -> int:
        """Bytes from one copy to the next (the tile's bytes, 32-byte aligned)."""
        return -(-self.type.bytes // ALIGN_BYTES) * ALIGN_BYTES

    def copy_offset(self, copy: int) -> int:
        return self.offset + copy * self.stride

    @property
    def end(self) -> int:
        return self.copy_offset(self.copies - 1) + self.type.bytes


@dataclass(frozen=True)
class GlobalView:
    """A 2-D window of a global tensor: element ``(r, c)`` of the window is element
    ``offset + r * row_stride + c`` of the tensor; ``rows`` x ``cols`` is its shape (which must
    be the valid shape of the tile it is loaded into or stored from)."""

    tensor: str
    offset: sympy.Expr
    rows: sympy.Expr
    cols: sympy.Expr
    row_stride: sympy.Expr

    @classmethod
    def of(
        cls,
        tensor: TensorParam,
        row: ExprLike,
        col: ExprLike,
        rows: ExprLike,
        cols: ExprLike,
        *,
        leading: Sequence[ExprLike] = (),
    ) -> GlobalView:
        """The window at ``[*leading, row, col]`` of ``tensor`` (leading indices for the outer
        dimensions of a tensor of rank > 2)."""
        if len(leading) != max(0, len(tensor.shape) - 2):
            raise PtoError(
                f"view of {tensor.name}: {len(leading)} leading indices for rank "
                f"{len(tensor.shape)}",
                hint="give one leading index per dimension before the last two",
            )
        ld = tensor.row_stride
        off = expr(row) * ld + expr(col)
        stride = ld * (tensor.shape[-2] if len(tensor.shape) >= 2 else 1)
        for k in range(len(leading) - 1, -1, -1):
            off += expr(leading[k]) * stride
            stride *= tensor.shape[k]
        return cls(tensor.name, sympy.expand(off), expr(rows), expr(cols), ld)


@dataclass(frozen=True)
class Scalar:
    """A scalar operand: a number, or an expression of the parameters and iterators."""

    value: float | int | sympy.Expr


Operand: TypeAlias = str | GlobalView | Scalar  # a str names a tile


# --------------------------------------------------------------------------- instructions


@dataclass(frozen=True)
class ConvForm:
    """A TTRANS between convolution layouts: the source and destination tiles are seen as
    ConvTiles of these layouts and static shapes (C++: a ConvTile declared over each
    tile's bytes), the conversion given by the tmp rule `rule` (``TTRANS_NCHW_NC1HWC0``)."""

    rule: str
    src_layout: Layout
    dst_layout: Layout
    src_shape: tuple[int, ...]
    dst_shape: tuple[int, ...]

    def tmp_sizes(self) -> dict[str, int]:
        """The sizes the tmp rule takes (tmp_rules: H, W, C0; N and C for FRACTAL_Z_3D;
        none for FRACTAL_Z, which takes no tmp)."""
        if self.dst_layout is Layout.FRACTAL_Z:
            return {}
        if self.src_layout in (Layout.NCHW, Layout.GNCHW):
            h, w = self.src_shape[-2:]
            return {"H": h, "W": w, "C0": self.dst_shape[-1]}
        if self.src_layout is Layout.NC1HWC0:
            _, _, h, w, c0 = self.src_shape
            return {"H": h, "W": w, "C0": c0}
        n, c, _, h, w = self.src_shape
        return {"N": n, "C": c, "H": h, "W": w, "C0": self.dst_shape[3]}


@dataclass(frozen=True)
class Instr:
    """One PTO instruction: ``op(dst, *srcs[, tmp])`` as in C++ (destination first).

    ``dst`` is a tile name, or a GlobalView for TSTORE. ``srcs`` are tile names, a GlobalView
    (TLOAD) or Scalars (scalar variants; TDIVS with the scalar first is ``scalar / tile``).
    ``pipe`` is derived from the op and the tiles when None (see :meth:`Program.pipe_of`).
    ``comment`` names the Krnl statement it comes from. ``atomic_add`` (a store only) is
    ``TSTORE<..., AtomicType::AtomicAdd>``: the tile is added to what the window holds.
    """

    op: str
    dst: str | GlobalView
    srcs: tuple[Operand, ...] = ()
    tmp: str | None = None
    pipe: Pipe | None = None
    comment: str = ""
    conv: ConvForm | None = None  # TTRANS between convolution layouts
    atomic_add: bool = False

    def __post_init__(self) -> None:
        if self.op not in INSTRUCTIONS:
            raise PtoError(
                f"unknown PTO instruction {self.op!r}",
                hint=f"use one of {', '.join(sorted(INSTRUCTIONS))}",
            )
        if self.atomic_add and INSTRUCTIONS[self.op].kind != "store":
            raise PtoError(f"{self.op}: only a store adds atomically to global memory")
        object.__setattr__(self, "srcs", tuple(self.srcs))

    @property
    def info(self) -> Instruction:
        return INSTRUCTIONS[self.op]

    def tiles_read(self) -> tuple[str, ...]:
        names = [s for s in self.srcs if isinstance(s, str)]
        if self.info.kind == "matmul_acc" and isinstance(self.dst, str):
            names.append(self.dst)
        return tuple(names)

    def tiles_written(self) -> tuple[str, ...]:
        out = [self.dst] if isinstance(self.dst, str) else []
        if self.tmp is not None:
            out.append(self.tmp)
        return tuple(out)


@dataclass(frozen=True)
class SetValid:
    """Give a dynamic tile a new valid shape (None keeps a static dimension)."""

    tile: str
    rows: sympy.Expr | None
    cols: sympy.Expr | None

    def __init__(self, tile: str, rows: ExprLike | None, cols: ExprLike | None) -> None:
        object.__setattr__(self, "tile", tile)
        object.__setattr__(self, "rows", None if rows is None else expr(rows))
        object.__setattr__(self, "cols", None if cols is None else expr(cols))


@dataclass(frozen=True)
class SetFlag:
    """``set_flag(src, dst, EVENT_ID<event>)``; with ``pingpong``, the event id is ``event``
    plus the parity of the current iteration of the loop over that variable."""

    src: Pipe
    dst: Pipe
    event: int = 0
    pingpong: str | None = None


@dataclass(frozen=True)
class WaitFlag:
    """``wait_flag(src, dst, EVENT_ID<event>)``; ``pingpong`` as for :class:`SetFlag`."""

    src: Pipe
    dst: Pipe
    event: int = 0
    pingpong: str | None = None


@dataclass(frozen=True)
class Barrier:
    """``pipe_barrier(pipe)``: every earlier instruction on ``pipe`` has finished."""

    pipe: Pipe = Pipe.ALL


@dataclass(frozen=True)
class Loop:
    """``for (int64_t var = start; var < stop; var += step) { body }``."""

    var: str
    start: sympy.Expr
    stop: sympy.Expr
    step: sympy.Expr
    body: tuple[Item, ...]
    comment: str = ""

    def __init__(
        self,
        var: str,
        start: ExprLike,
        stop: ExprLike,
        step: ExprLike,
        body: Iterable[Item],
        comment: str = "",
    ) -> None:
        object.__setattr__(self, "var", var)
        object.__setattr__(self, "start", expr(start))
        object.__setattr__(self, "stop", expr(stop))
        object.__setattr__(self, "step", expr(step))
        object.__setattr__(self, "body", tuple(body))
        object.__setattr__(self, "comment", comment)

    @property
    def symbol(self) -> sympy.Symbol:
        return sympy.Symbol(self.var, integer=True)


Item: TypeAlias = Instr | SetValid | SetFlag | WaitFlag | Barrier | Loop


def walk(items: Iterable[Item]) -> Iterator[Item]:
    """Every item of a body, loops included (pre-order)."""
    for it in items:
        yield it
        if isinstance(it, Loop):
            yield from walk(it.body)


# --------------------------------------------------------------------------- program


@dataclass(frozen=True)
class Program:
    """One PTO kernel: global tensor arguments, problem-size parameters (int64 arguments),
    tiles, and the body."""

    name: str
    tensors: tuple[TensorParam, ...]
    params: tuple[str, ...]
    tiles: tuple[TileDecl, ...]
    body: tuple[Item, ...]
    arch: Arch = field(default_factory=lambda: arch("a2a3"))
    notes: tuple[str, ...] = ()  # printed as comments under the kernel's first line

    def __post_init__(self) -> None:
        object.__setattr__(self, "tensors", tuple(self.tensors))
        object.__setattr__(self, "params", tuple(self.params))
        object.__setattr__(self, "tiles", tuple(self.tiles))
        object.__setattr__(self, "body", tuple(self.body))
        object.__setattr__(self, "arch", arch(self.arch))
        self.validate()

    # -- lookups
    def tile(self, name: str) -> TileDecl:
        for t in self.tiles:
            if t.name == name:
                return t
        raise PtoError(
            f"kernel {self.name}: no tile named {name!r}",
            hint=f"declare it (tiles: {', '.join(t.name for t in self.tiles) or 'none'})",
        )

    def tensor(self, name: str) -> TensorParam:
        for t in self.tensors:
            if t.name == name:
                return t
        raise PtoError(
            f"kernel {self.name}: no tensor argument named {name!r}",
            hint=f"add it to tensors (have: {', '.join(t.name for t in self.tensors) or 'none'})",
        )

    def instructions(self) -> list[Instr]:
        return [it for it in walk(self.body) if isinstance(it, Instr)]

    def pipe_of(self, ins: Instr) -> Pipe:
        """The pipe an instruction runs on (its own ``pipe`` if given, else the table's; a
        store and a move go where their tiles' locations say)."""
        if ins.pipe is not None:
            return ins.pipe
        info = ins.info
        if info.pipe is not None:
            return info.pipe
        if info.kind == "store":
            src = ins.srcs[0]
            assert isinstance(src, str)
            loc = self.tile(src).type.loc
            return Pipe.FIX if loc is Loc.Acc else Pipe.MTE3
        assert info.kind == "mov", f"{ins.op}: the table gives no pipe"
        assert isinstance(ins.dst, str) and isinstance(ins.srcs[0], str)
        s, d = self.tile(ins.srcs[0]).type.loc, self.tile(ins.dst).type.loc
        if s is Loc.Mat and d in (Loc.Left, Loc.Right, Loc.Bias, Loc.Scaling):
            return Pipe.MTE1
        if s is Loc.Acc:
            return Pipe.FIX
        return Pipe.V

    # -- static checks
    def validate(self) -> None:
        """Names resolve, each tile is declared once, offsets are aligned, tiles fit their
        buffer and do not overlap, operands have the kinds the op takes."""
        seen: set[str] = set()
        for t in self.tiles:
            if t.name in seen:
                raise PtoError(f"kernel {self.name}: tile {t.name!r} is declared twice")
            seen.add(t.name)
            if t.offset % ALIGN_BYTES:
                raise TileConstraintError(
                    f"tile {t.name}: TASSIGN offset {t.offset} is not a multiple of "
                    f"{ALIGN_BYTES} bytes",
                    hint=f"use offset {(t.offset // ALIGN_BYTES + 1) * ALIGN_BYTES}",
                )
            cap = self.arch.usable(t.buffer)
            if t.offset < 0 or t.end > cap:
                raise TileConstraintError(
                    f"tile {t.name}: bytes [{t.offset}, {t.end}) are outside the "
                    f"{cap} usable bytes of {t.buffer.value} on {self.arch.name}",
                    hint="use smaller tiles or other offsets",
                )
        by_buf: dict[tuple[Buffer, int], list[TileDecl]] = {}
        for t in self.tiles:
            by_buf.setdefault((t.buffer, t.scope), []).append(t)
        for (buf, _), ts in by_buf.items():
            ts = sorted(ts, key=lambda d: d.offset)
            for a, b in itertools.pairwise(ts):
                if b.offset < a.end:
                    raise TileConstraintError(
                        f"tiles {a.name} [{a.offset}, {a.end}) and {b.name} "
                        f"[{b.offset}, {b.end}) overlap in {buf.value}",
                        hint="give each tile its own byte range (plan_offsets does)",
                    )
        self._check_pingpong()
        tensors = {t.name for t in self.tensors}
        names = {t.name for t in self.tiles}
        if dup := tensors & names:
            raise PtoError(f"kernel {self.name}: {sorted(dup)} name both a tile and a tensor")
        for it in walk(self.body):
            if isinstance(it, Instr):
                self._check_instr(it, names, tensors)
            elif isinstance(it, SetValid):
                decl = self.tile(it.tile)
                for axis, e, valid in (
                    ("row", it.rows, decl.type.valid_row),
                    ("col", it.cols, decl.type.valid_col),
                ):
                    if e is not None and valid is not None:
                        raise TileConstraintError(
                            f"SetValid {it.tile}: its valid {axis} count is static ({valid})",
                            hint=f"declare the tile with a dynamic valid {axis} count (None)",
                        )

    def _check_pingpong(self) -> None:
        """A double-buffered tile, and a flag whose event follows a loop's parity, are used
        only inside that loop (elsewhere there is no current copy)."""
        pp = {t.name: t.pingpong for t in self.tiles if t.pingpong is not None}

        def check(items: Iterable[Item], loops: frozenset[str]) -> None:
            for it in items:
                if isinstance(it, Loop):
                    check(it.body, loops | {it.var})
                    continue
                if isinstance(it, SetFlag | WaitFlag):
                    used = [(f"event of {type(it).__name__}", it.pingpong)]
                elif isinstance(it, SetValid):
                    used = [(it.tile, pp.get(it.tile))]
                elif isinstance(it, Instr):
                    names = {*it.tiles_read(), *it.tiles_written()}
                    used = [(n, pp.get(n)) for n in sorted(names)]
                else:
                    used = []
                for what, var in used:
                    if var is not None and var not in loops:
                        raise PtoError(
                            f"kernel {self.name}: {what} follows the parity of loop {var} "
                            "but is used outside it",
                            hint="double-buffer only tiles used inside that loop",
                        )

        if pp or any(isinstance(it, SetFlag | WaitFlag) and it.pingpong for it in walk(self.body)):
            check(self.body, frozenset())

    def _check_instr(self, ins: Instr, tiles: set[str], tensors: set[str]) -> None:
        kind = ins.info.kind

        def need_tile(x: object, what: str) -> None:
            if not (isinstance(x, str) and x in tiles):
                raise PtoError(
                    f"{ins.op}: {what} must be a declared tile, got {x!r}",
                    hint=f"declared tiles: {', '.join(sorted(tiles))}",
                )

        def need_view(x: object, what: str) -> None:
            if not (isinstance(x, GlobalView) and x.tensor in tensors):
                raise PtoError(f"{ins.op}: {what} must be a view of a tensor argument, got {x!r}")

        nsrc = ins.info.n_sources
        if len(ins.srcs) != nsrc:
            raise PtoError(f"{ins.op}: takes {nsrc} source operand(s), got {len(ins.srcs)}")
        if kind == "store":
            need_view(ins.dst, "the destination")
            need_tile(ins.srcs[0], "the source")
        else:
            need_tile(ins.dst, "the destination")
        if kind == "load":
            need_view(ins.srcs[0], "the source")
        elif kind == "scalar":
            if sum(isinstance(s, Scalar) for s in ins.srcs) != 1:
                raise PtoError(f"{ins.op}: needs one tile and one Scalar operand")
            if isinstance(ins.srcs[0], Scalar) and not ins.info.scalar_first:
                raise PtoError(f"{ins.op}: the scalar comes second (only TDIVS has scalar / tile)")
            for s in ins.srcs:
                if not isinstance(s, Scalar):
                    need_tile(s, "the tile operand")
        elif kind == "expands":
            if not isinstance(ins.srcs[0], Scalar):
                raise PtoError(f"{ins.op}: the source must be a Scalar")
        elif kind != "store":
            for s in ins.srcs:
                need_tile(s, "a source")
        info = ins.info
        if info.tmp == "required" and ins.tmp is None:
            raise PtoError(
                f"{ins.op}: the C++ intrinsic takes a tmp tile",
                hint="declare a tmp tile (tmp_rules gives its size) and pass it as tmp=",
            )
        if info.tmp == "none" and ins.tmp is not None:
            raise PtoError(f"{ins.op}: takes no tmp tile")
        if ins.tmp is not None:
            need_tile(ins.tmp, "the tmp")

    def with_body(self, body: Iterable[Item]) -> Program:
        return replace(self, body=tuple(body))


# --------------------------------------------------------------------------- helpers


def plan_offsets(
    tiles: Sequence[tuple[str, TileType]],
    arch_name: str | Arch = "a2a3",
    pingpong: Mapping[str, str] | None = None,
    scopes: Mapping[str, int] | None = None,
) -> tuple[TileDecl, ...]:
    """Place tiles one after another in their buffers (32-byte aligned, in the given order);
    a tile named in ``pingpong`` (tile -> loop variable) gets two copies; each scope (tile
    -> scope, default 0) starts again at offset 0 (see :class:`TileDecl`).

    Raises PtoError naming the buffer, the bytes needed and the bytes available when they do
    not fit.
    """
    a = arch(arch_name)
    nxt: dict[tuple[Buffer, int], int] = {}
    out: list[TileDecl] = []
    for name, tt in tiles:
        buf = tt.buffer
        assert buf is not None, "Ctrl tiles are not placed"
        scope = (scopes or {}).get(name, 0)
        decl = TileDecl(name, tt, nxt.get((buf, scope), 0), (pingpong or {}).get(name), scope)
        nxt[(buf, scope)] = -(-decl.end // ALIGN_BYTES) * ALIGN_BYTES
        out.append(decl)
    for (buf, scope), used in nxt.items():
        if used > a.usable(buf):
            names = ", ".join(
                f"{d.name} ({d.copies} x {d.type.bytes} B)"
                if d.copies > 1
                else f"{d.name} ({d.type.bytes} B)"
                for d in out
                if d.buffer is buf and d.scope == scope
            )
            raise PtoError(
                f"tiles do not fit {buf.value} on {a.name}: {used} bytes needed, "
                f"{a.usable(buf)} available ({names})",
                hint="use smaller tiles (a smaller block size)",
            )
    return tuple(out)
