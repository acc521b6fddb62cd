"""NumPy model of the PTO instructions (:mod:`.interpret` runs programs of them).

A tile is a NumPy array of its static shape (rows x cols, indexed logically whatever its
layout) plus its valid shape. Semantics follow the pto-isa doc pages (docs/isa/<OP>.md),
restated here:

- TLOAD copies the global window into the valid region; the rest of the tile is unspecified,
  so the model fills it with NaN (float tiles) or the type's minimum (integer tiles) and a
  result that depends on it shows up in the tests. The window's shape must equal the tile's
  valid shape. TSTORE writes the valid region back.
- Elementwise ops (unary, binary, with a scalar) work on the destination's valid region; every
  tile operand must have the same valid shape and element type.
- TROWSUM/TROWMAX/TROWMIN write ``dst[i, 0]`` for the source's valid rows (dst has the same
  valid row count). TROWEXPAND broadcasts ``src[i, 0]``; TROWEXPAND<OP> combines a full-size
  operand with a per-row one: either a column-major tile with one valid column (a scalar per
  row) or a row-major one with one 32-byte block per row (``dst[i, j]`` uses ``b[i, j mod B]``).
- TTRANS: ``dst[j, i] = src[i, j]`` over the source's valid region (A2/A3); A5 transposes the
  whole static shape.
- TMOV copies the valid region (equal valid shapes). TMATMUL ``acc = left @ right`` over the
  valid m x k x n (f32 <- f16/bf16/f32, i32 <- i8), TMATMUL_ACC adds to acc.
- TFILLPAD: dst gets src's valid region and the pad value of dst's type everywhere else.
- When the program's architecture uses the tmp tile of an instruction, the interpreter
  checks its size against :mod:`polykrnl.targets.pto.tmp_rules` with the run-time valid shape (the
  CPU simulator ignores tmp tiles, so this is the only check of them).

Every rule broken raises TileConstraintError naming the instruction, the rule and the numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from polykrnl.errors import TileConstraintError
from polykrnl.targets.pto.dtypes import BF16, DType
from polykrnl.targets.pto.instructions import INSTRUCTIONS, Kind
from polykrnl.targets.pto.program import (
    ConvForm,
    GlobalView,
    eval_expr,
)
from polykrnl.targets.pto.types import Layout, Loc, PadValue, TileType

__all__ = [
    "SimTile", "pad_value", "round_bf16", "tbinary", "tcolexpand_binary", "texpands",
    "tfillpad", "tload", "tmatmul", "tmov", "trowexpand", "trowexpand_binary", "trowreduce",
    "tscalar", "tstore", "ttrans", "ttrans_conv", "tunary", "unspecified_value", "window",
]  # fmt: skip

Array = np.ndarray[Any, Any]


def unspecified_value(dt: DType) -> float | int:
    """What the model puts where PTO leaves a tile unspecified."""
    if dt.is_float:
        return float("nan")
    return int(np.iinfo(dt.np_dtype).min)


def round_bf16(x: Array) -> Array:
    """float32 values rounded to bfloat16 precision (round to nearest even), kept in float32."""
    a = np.asarray(x, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(a), a, out)


def _cast(x: Any, dt: DType) -> Array:
    """Values converted to the element type (integer results wrap, as in C++)."""
    a = np.asarray(x)
    if dt.is_int and a.dtype.kind == "f":
        a = np.trunc(a)
        a = a.astype(np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        out = a.astype(dt.np_dtype)
    return round_bf16(out) if dt is BF16 else out


@dataclass
class SimTile:
    """A tile's contents and its current valid shape (mutable simulation state)."""

    name: str
    type: TileType
    data: Array
    valid_row: int
    valid_col: int

    @classmethod
    def new(cls, name: str, tt: TileType) -> SimTile:
        data = np.full((tt.rows, tt.cols), unspecified_value(tt.dtype), dtype=tt.dtype.np_dtype)
        vr = tt.rows if tt.valid_row is None else tt.valid_row
        vc = tt.cols if tt.valid_col is None else tt.valid_col
        return cls(name, tt, data, vr, vc)

    @property
    def dtype(self) -> DType:
        return self.type.dtype

    @property
    def valid(self) -> tuple[int, int]:
        return (self.valid_row, self.valid_col)

    def region(self) -> Array:
        """The valid region (a view)."""
        return self.data[: self.valid_row, : self.valid_col]

    def set_valid(self, rows: int | None, cols: int | None) -> None:
        for axis, v, full, static in (
            ("row", rows, self.type.rows, self.type.valid_row),
            ("col", cols, self.type.cols, self.type.valid_col),
        ):
            if v is None:
                continue
            if static is not None:
                raise TileConstraintError(
                    f"tile {self.name}: valid {axis} count is static ({static})",
                    hint="declare it dynamic (None) to change it per iteration",
                )
            if not 1 <= v <= full:
                raise TileConstraintError(
                    f"tile {self.name}: valid {axis} count {v} is outside [1, {full}]",
                    hint="the loop bounds give an empty or oversized tile; clamp them",
                )
        if rows is not None:
            self.valid_row = rows
        if cols is not None:
            self.valid_col = cols

    def describe(self) -> str:
        t = self.type
        return f"{self.name} ({t.dtype} {t.rows}x{t.cols}, valid {self.valid_row}x{self.valid_col})"


# --------------------------------------------------------------------------- checks


def _fail(op: str, msg: str, hint: str | None = None) -> TileConstraintError:
    return TileConstraintError(f"{op}: {msg}", hint=hint)


def _same_valid(op: str, dst: SimTile, *srcs: SimTile) -> None:
    for s in srcs:
        if s.valid != dst.valid:
            raise _fail(
                op,
                f"valid shape of {s.describe()} differs from destination {dst.describe()}",
                hint="give every operand the same valid rows and columns",
            )


def _same_dtype(op: str, dst: SimTile, *srcs: SimTile) -> None:
    for s in srcs:
        if s.dtype != dst.dtype:
            raise _fail(
                op,
                f"element type {s.dtype} of {s.name} differs from {dst.dtype} of {dst.name}",
                hint="convert with TCVT first",
            )


def _need_loc(op: str, t: SimTile, *locs: Loc) -> None:
    if t.type.loc not in locs:
        raise _fail(
            op,
            f"tile {t.name} is a {t.type.loc.name} tile; this operand must be "
            + " or ".join(loc.name for loc in locs),
        )


def _need_row_major(op: str, t: SimTile) -> None:
    if not t.type.is_row_major or t.type.boxed:
        raise _fail(op, f"tile {t.name} must be row-major and unboxed (ND)")


# --------------------------------------------------------------------------- global memory


def window(flat: Array, view: GlobalView, env: Mapping[str, int], op: str) -> Array:
    """The 2-D window of a flat global array that ``view`` denotes (a writable view)."""
    off = eval_expr(view.offset, env)
    rows, cols = eval_expr(view.rows, env), eval_expr(view.cols, env)
    ld = eval_expr(view.row_stride, env)
    if rows < 1 or cols < 1:
        raise _fail(op, f"window of {view.tensor} is {rows} x {cols}: empty")
    last = off + (rows - 1) * ld + cols
    if off < 0 or last > flat.size or cols > ld:
        raise _fail(
            op,
            f"window of {view.tensor} at element {off}, {rows} x {cols} with row stride {ld} "
            f"reaches element {last - 1}, outside [0, {flat.size})",
            hint="clamp the valid extents of partial tiles at the tensor's edge",
        )
    item = flat.itemsize
    return np.lib.stride_tricks.as_strided(
        flat[off:], shape=(rows, cols), strides=(ld * item, item), writeable=True
    )


def tload(dst: SimTile, src: Array, op: str = "TLOAD") -> None:
    _need_loc(op, dst, Loc.Vec, Loc.Mat)
    if src.shape != dst.valid:
        raise _fail(
            op,
            f"global window {src.shape[0]} x {src.shape[1]} does not match the valid shape "
            f"of {dst.describe()}",
            hint="the GlobalTensor view must have the tile's valid rows and columns",
        )
    if src.dtype.itemsize != dst.dtype.size:
        raise _fail(op, f"global element size {src.dtype.itemsize} != tile {dst.dtype.size}")
    dst.data[...] = unspecified_value(dst.dtype)
    dst.region()[...] = _cast(src, dst.dtype)


def tstore(dst: Array, src: SimTile, op: str = "TSTORE", add: bool = False) -> None:
    """`dst = src`, or with `add` (the atomic-add store) `dst += src` in dst's type."""
    _need_loc(op, src, Loc.Vec, Loc.Mat, Loc.Acc)
    if dst.shape != src.valid:
        raise _fail(
            op,
            f"global window {dst.shape[0]} x {dst.shape[1]} does not match the valid shape "
            f"of {src.describe()}",
            hint="the GlobalTensor view must have the tile's valid rows and columns",
        )
    if dst.dtype.itemsize != src.dtype.size:
        raise _fail(op, f"global element size {dst.dtype.itemsize} != tile {src.dtype.size}")
    if add:
        dst[...] = (dst + src.region().astype(dst.dtype)).astype(dst.dtype)
    else:
        dst[...] = src.region().astype(dst.dtype)


# --------------------------------------------------------------------------- vector ops


def _semantics(op: str, *kinds: Kind) -> Callable[..., Array]:
    """The NumPy function of `op` from the instruction table (which has one for every
    instruction of a computing kind)."""
    info = INSTRUCTIONS[op]
    assert info.kind in kinds and info.semantics is not None, f"{op} is not {' or '.join(kinds)}"
    return info.semantics


def _compute(dt: DType, f: Callable[..., Array], *xs: Array) -> Array:
    # f16/f32 arithmetic in the type itself (NumPy rounds each operation, like _Float16 on the
    # CPU simulator); integers in int64 and wrapped; bf16 in f32 then rounded
    work = np.dtype(np.int64) if dt.is_int else dt.np_dtype
    args = [x.astype(work) for x in xs]
    with np.errstate(all="ignore"):
        return _cast(f(*args), dt)


def tunary(op: str, dst: SimTile, src: SimTile) -> None:
    _need_loc(op, dst, Loc.Vec)
    _same_dtype(op, dst, src)
    _same_valid(op, dst, src)
    f = _semantics(op, "unary")
    if INSTRUCTIONS[op].float_only and not dst.dtype.is_float:
        raise _fail(op, f"takes float tiles, got {dst.dtype}")
    dst.region()[...] = _compute(dst.dtype, f, src.region().copy())


def tbinary(op: str, dst: SimTile, a: SimTile, b: SimTile) -> None:
    _need_loc(op, dst, Loc.Vec)
    _same_dtype(op, dst, a, b)
    _same_valid(op, dst, a, b)
    f = _semantics(op, "binary")
    dst.region()[...] = _compute(dst.dtype, f, a.region().copy(), b.region().copy())


def tscalar(op: str, dst: SimTile, src: SimTile, value: float | int, scalar_first: bool) -> None:
    _need_loc(op, dst, Loc.Vec)
    # pto-isa's tile-scalar ops assert row-major tiles (its CPU implementation's
    # static_assert; a column tile of per-row values must be expanded first).
    _need_row_major(op, src)
    _need_row_major(op, dst)
    _same_dtype(op, dst, src)
    _same_valid(op, dst, src)
    s = np.full(src.valid, _cast(value, src.dtype), dtype=src.dtype.np_dtype)
    f = _semantics(op, "scalar")
    a, b = (s, src.region().copy()) if scalar_first else (src.region().copy(), s)
    dst.region()[...] = _compute(dst.dtype, f, a, b)


def texpands(dst: SimTile, value: float | int) -> None:
    _need_loc("TEXPANDS", dst, Loc.Vec)
    dst.region()[...] = _cast(value, dst.dtype)


def trowreduce(op: str, dst: SimTile, src: SimTile) -> None:
    _need_loc(op, dst, Loc.Vec)
    _need_loc(op, src, Loc.Vec)
    _need_row_major(op, src)
    if not (dst.type.is_row_major or dst.type.cols == 1) or dst.type.boxed:
        raise _fail(op, f"destination {dst.name} must be ND, or DN with one column")
    _same_dtype(op, dst, src)
    if dst.type.rows != src.type.rows:
        # pto-isa's row reductions assert equal static row counts (TRowSum.hpp).
        raise _fail(
            op,
            f"destination {dst.describe()} and source {src.describe()} differ in static rows",
            hint="declare both tiles with the same Rows",
        )
    if dst.valid_row != src.valid_row:
        raise _fail(
            op,
            f"destination {dst.describe()} and source {src.describe()} differ in valid rows",
            hint="give the destination the source's valid row count",
        )
    x = src.region()
    acc = x.astype(np.float64) if dst.dtype.is_float else x.astype(np.int64)
    red = _semantics(op, "rowreduce")(acc)
    dst.data[: src.valid_row, 0] = _cast(red, dst.dtype)


def trowexpand(dst: SimTile, src: SimTile) -> None:
    op = "TROWEXPAND"
    _need_loc(op, dst, Loc.Vec)
    _same_dtype(op, dst, src)
    if src.valid_row != dst.valid_row:
        raise _fail(
            op, f"source {src.describe()} and destination {dst.describe()} differ in valid rows"
        )
    dst.region()[...] = src.data[: dst.valid_row, :1]


def trowexpand_binary(op: str, dst: SimTile, a: SimTile, b: SimTile) -> None:
    _need_loc(op, dst, Loc.Vec)
    _same_dtype(op, dst, a, b)
    _need_row_major(op, dst)
    full_a = a.valid == dst.valid and a.type.is_row_major
    full_b = b.valid == dst.valid and b.type.is_row_major
    if not (full_a or full_b):
        raise _fail(
            op,
            f"neither {a.describe()} nor {b.describe()} is row-major with the valid shape of "
            f"{dst.describe()}",
            hint="one operand must be the full-size tile",
        )
    per_row = b if full_a else a
    block = 32 // dst.dtype.size
    ok_cols = block if per_row.type.is_row_major else 1
    if per_row.valid_col != ok_cols or per_row.valid_row != dst.valid_row:
        raise _fail(
            op,
            f"per-row operand {per_row.describe()} must have {dst.valid_row} valid rows and "
            f"{ok_cols} valid column(s) (column-major: one value per row; row-major: one "
            "32-byte block per row)",
        )
    r, c = dst.valid

    def expand(t: SimTile) -> Array:
        # column j of a per-row operand is column j mod (its valid columns): 0, or j mod B
        return t.data[:r][:, np.arange(c) % t.valid_col]

    f = _semantics(op, "rowexpand_bin")
    dst.region()[...] = _compute(dst.dtype, f, expand(a), expand(b))


def tcolexpand_binary(op: str, dst: SimTile, a: SimTile, b: SimTile) -> None:
    """dst[i, j] = a[i, j] op b[0, j]: b holds one value per column (pto-isa's
    TCOLEXPAND<OP>, all three tiles row-major)."""
    _need_loc(op, dst, Loc.Vec)
    _same_dtype(op, dst, a, b)
    for t in (dst, a, b):
        _need_row_major(op, t)
    if a.valid != dst.valid:
        raise _fail(op, f"source {a.describe()} and destination {dst.describe()} differ in shape")
    if b.valid_col != dst.valid_col or b.valid_row < 1:
        raise _fail(
            op,
            f"per-column operand {b.describe()} must have {dst.valid_col} valid columns (one "
            "value per column, in its first row)",
        )
    f = _semantics(op, "colexpand_bin")
    r, c = dst.valid
    dst.region()[...] = _compute(
        dst.dtype, f, a.data[:r, :c], np.broadcast_to(b.data[:1, :c], (r, c))
    )


def ttrans_conv(conv: ConvForm, dst: SimTile, src: SimTile) -> None:
    """TTRANS between convolution layouts, on the tiles' bytes seen as ConvTiles of the
    form's shapes (as pto-isa's CPU implementation moves them; C0 lanes beyond C and N0
    lanes beyond N keep what the destination held)."""
    op = f"TTRANS {conv.src_layout.name} -> {conv.dst_layout.name}"
    _need_loc(op, dst, Loc.Vec)
    _need_loc(op, src, Loc.Vec)
    _same_dtype(op, dst, src)
    for t, shape in ((src, conv.src_shape), (dst, conv.dst_shape)):
        if t.data.size < math.prod(shape):
            raise _fail(
                op, f"{t.describe()} holds fewer than the {math.prod(shape)} elements of {shape}"
            )
    x = src.data.reshape(-1)[: math.prod(conv.src_shape)].reshape(conv.src_shape)
    out = dst.data.reshape(-1)
    if (conv.src_layout, conv.dst_layout) == (Layout.NCHW, Layout.NC1HWC0):
        n, c1, h, w, c0 = conv.dst_shape
        for c in range(x.shape[1]):
            view = out[: math.prod(conv.dst_shape)].reshape(conv.dst_shape)
            view[:, c // c0, :, :, c % c0] = x[:, c]
    elif (conv.src_layout, conv.dst_layout) == (Layout.NC1HWC0, Layout.NCHW):
        n, c, h, w = conv.dst_shape
        c0 = conv.src_shape[4]
        view = out[: math.prod(conv.dst_shape)].reshape(conv.dst_shape)
        for k in range(c):
            view[:, k] = x[:, k // c0, :, :, k % c0]
    elif (conv.src_layout, conv.dst_layout) == (Layout.NCDHW, Layout.FRACTAL_Z_3D):
        nn, c, d, h, w = conv.src_shape
        _, n1, n0, c0 = conv.dst_shape
        c1 = -(-c // c0)
        view = out[: math.prod(conv.dst_shape)].reshape(d, c1, h, w, n1, n0, c0)
        for n in range(nn):
            for k in range(c):
                view[:, k // c0, :, :, n // n0, n % n0, k % c0] = x[n, k]
    elif (conv.src_layout, conv.dst_layout) == (Layout.GNCHW, Layout.GNC1HWC0):
        c0 = conv.dst_shape[5]
        view = out[: math.prod(conv.dst_shape)].reshape(conv.dst_shape)
        for c in range(x.shape[2]):
            view[:, :, c // c0, :, :, c % c0] = x[:, :, c]
    elif conv.dst_layout is Layout.FRACTAL_Z and conv.src_layout in (
        Layout.NC1HWC0,
        Layout.GNC1HWC0,
    ):
        _to_fractal_z(op, conv, x, out)
    else:
        raise _fail(op, "a conversion the model does not implement")


def _to_fractal_z(op: str, conv: ConvForm, x: Array, out: Array) -> None:
    """[G,] N, C1, H, W, C0 -> [G * C1 * H * W, N1, N0, C0] (NC1HWC0: G = 1): each source
    C0 block moves whole, N split into N1 x N0, G outermost in the first dimension (pto-isa's
    CPU TTRANS_GNC1HWC02C1HWN1N0C0_Impl, with N0 and C0 from the destination's shape)."""
    *g, nn, c1, h, w, k0 = conv.src_shape
    rows, n1, n0, c0 = conv.dst_shape
    gg = math.prod(g)
    # pto-isa asserts these (CheckValidConvShape)
    if rows != gg * c1 * h * w or c0 != k0 or n1 * n0 < nn:
        raise _fail(
            op,
            f"{conv.src_shape} -> {conv.dst_shape}: the destination must be "
            f"[G * C1 * H * W, N1, N0, C0] with N1 * N0 >= N and the source's C0",
        )
    xs = x.reshape(gg, nn, c1, h, w, k0)
    view = out[: math.prod(conv.dst_shape)].reshape(gg, c1, h, w, n1, n0, c0)
    for n in range(nn):
        view[:, :, :, :, n // n0, n % n0, :] = xs[:, n]


def ttrans(dst: SimTile, src: SimTile, arch_name: str) -> None:
    op = "TTRANS"
    _need_loc(op, dst, Loc.Vec)
    _need_loc(op, src, Loc.Vec)
    if dst.dtype.size != src.dtype.size:
        raise _fail(op, f"element sizes differ: {src.dtype} -> {dst.dtype}")
    if arch_name == "a5":
        if (dst.type.rows, dst.type.cols) != (src.type.cols, src.type.rows):
            raise _fail(
                op, "on A5 the static shapes must mirror (dst Rows x Cols = src Cols x Rows)"
            )
        dst.data[...] = src.data.T
        return
    _need_row_major(op, src)
    if dst.valid != (src.valid_col, src.valid_row):
        raise _fail(
            op,
            f"destination {dst.describe()} is not the transposed valid shape of {src.describe()}",
            hint="give the destination valid rows = source valid columns and vice versa",
        )
    dst.region()[...] = src.region().T


def tmov(dst: SimTile, src: SimTile) -> None:
    op = "TMOV"
    _same_dtype(op, dst, src)
    _same_valid(op, dst, src)
    dst.region()[...] = src.region()


_MATMUL_TYPES = {
    ("f16", "f16", "f32"),
    ("bf16", "bf16", "f32"),
    ("f32", "f32", "f32"),
    ("i8", "i8", "i32"),
}


def tmatmul(acc: SimTile, left: SimTile, right: SimTile, accumulate: bool) -> None:
    op = "TMATMUL_ACC" if accumulate else "TMATMUL"
    _need_loc(op, acc, Loc.Acc)
    _need_loc(op, left, Loc.Left)
    _need_loc(op, right, Loc.Right)
    key = (left.dtype.name, right.dtype.name, acc.dtype.name)
    if key not in _MATMUL_TYPES:
        raise _fail(
            op,
            f"{acc.dtype} <- {left.dtype} * {right.dtype} is not a supported combination",
            hint="use f32 <- f16*f16, bf16*bf16, f32*f32 or i32 <- i8*i8",
        )
    lt, rt, at = left.type, right.type, acc.type
    if (lt.rows, lt.cols, rt.cols) != (at.rows, rt.rows, at.cols):
        raise _fail(
            op,
            f"static shapes: Left {lt.rows}x{lt.cols}, Right {rt.rows}x{rt.cols}, Acc "
            f"{at.rows}x{at.cols} (need Left.Rows = Acc.Rows, Left.Cols = Right.Rows, "
            "Right.Cols = Acc.Cols)",
        )
    m, k = left.valid
    n = right.valid_col
    if right.valid_row != k or acc.valid != (m, n):
        raise _fail(
            op,
            f"valid shapes: Left {m}x{k}, Right {right.valid_row}x{n}, Acc "
            f"{acc.valid_row}x{acc.valid_col} (need m x k, k x n, m x n)",
        )
    for name, v in (("m", m), ("k", k), ("n", n)):
        if not 1 <= v <= 4095:
            raise _fail(op, f"{name} = {v} is outside [1, 4095]")
    prod: Array
    if acc.dtype.is_int:
        prod = left.region().astype(np.int64) @ right.region().astype(np.int64)
    else:
        prod = left.region().astype(np.float64) @ right.region().astype(np.float64)
    if accumulate:
        prod = prod + acc.region().astype(prod.dtype)
    acc.region()[...] = _cast(prod, acc.dtype)


def pad_value(tt: TileType) -> float | int:
    dt = tt.dtype
    if tt.pad is PadValue.Zero:
        return 0
    if dt.is_float:
        return float("inf") if tt.pad is PadValue.Max else float("-inf")
    info = np.iinfo(dt.np_dtype)
    return int(info.max) if tt.pad is PadValue.Max else int(info.min)


def tfillpad(dst: SimTile, src: SimTile) -> None:
    op = "TFILLPAD"
    if dst.type.pad is PadValue.Null:
        raise _fail(
            op, f"destination {dst.name} has PadValue::Null", hint="give its type a pad value"
        )
    if (dst.type.rows, dst.type.cols) != (src.type.rows, src.type.cols):
        raise _fail(op, "source and destination static shapes differ")
    if dst.dtype.size != src.dtype.size:
        raise _fail(op, "element sizes differ")
    region = src.region().copy()
    dst.data[...] = pad_value(dst.type)
    dst.data[: src.valid_row, : src.valid_col] = region
