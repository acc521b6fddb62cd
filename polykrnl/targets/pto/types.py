"""PTO tile model: tile types, global tensor types and architecture profiles.

Element types are in :mod:`polykrnl.targets.pto.dtypes`.

Facts come from hw-native-sys/pto-isa (include/pto/common/type.hpp, pto_tile.hpp,
buffer_limits.hpp, constants.hpp) and are restated here in our own words:

- ``Tile<TileType Loc, T, Rows, Cols, BLayout = RowMajor, ValidRow = Rows, ValidCol = Cols,
  SLayout = NoneBox, SFractalSize = 512, PadValue = Null, CompactMode = Null>``; a valid
  dimension of ``-1`` is dynamic and is given to the constructor.
- Static checks of the Tile template: ``Rows > 0``, ``Cols > 0``, ``ValidRow <= Rows``,
  ``ValidCol <= Cols``; the fractal size is 512 (L0A/L0B box), 1024 (L0C box) or 32 (MX scale
  box); a box of ``InnerRows x InnerCols`` elements (1 x 1 without boxing) must tile the
  storage (``Cols % InnerCols == 0``; ``Rows % InnerRows == 0`` unless the tile is a Vec tile,
  an MX-scale tile or has one row); an unboxed row-major tile needs rows of a multiple of 32
  bytes, an unboxed column-major tile columns of a multiple of 32 bytes.
- Each TileType lives in one on-chip buffer (Vec: UB, Mat: L1, Left: L0A, Right: L0B,
  Acc: L0C, Bias: bias table, Scaling: fixpipe buffer, ScaleLeft/ScaleRight: L0A/L0B).

Every violation raises :class:`~polykrnl.errors.TileConstraintError` naming the rule and the
numbers, with a hint.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from polykrnl.errors import TileConstraintError
from polykrnl.targets.pto.dtypes import ALIGN_BYTES, DType, dtype

__all__ = [
    "ARCHES",
    "DYNAMIC",
    "Arch",
    "BLayout",
    "Buffer",
    "CompactMode",
    "GlobalTensorType",
    "Layout",
    "Loc",
    "PadValue",
    "SLayout",
    "TileType",
    "acc_tile",
    "arch",
    "left_tile",
    "right_tile",
    "vec_tile",
]

#: The C++ spelling of a dynamic dimension (pto::DYNAMIC).
DYNAMIC = -1

#: Fractal (box) sizes in bytes accepted by the Tile template.
FRACTAL_AB = 512  # boxes of L0A/L0B (and Mat/Vec boxed tiles)
FRACTAL_C = 1024  # boxes of L0C: 16 x 16 elements
FRACTAL_MX = 32  # MX scale boxes: 16 x 2 or 2 x 16 elements
FRACTAL_SIZES = (FRACTAL_AB, FRACTAL_C, FRACTAL_MX)


# --------------------------------------------------------------------------- enums


class _CppEnum(enum.Enum):
    """An enum whose members print as their C++ spelling ``Enum::Member``."""

    @property
    def cpp(self) -> str:
        return f"{self._cpp_name()}::{self.name}"

    @classmethod
    def _cpp_name(cls) -> str:
        return cls.__name__


class Buffer(enum.Enum):
    """An on-chip buffer (memory) that tiles are placed in with TASSIGN."""

    UB = "UB"  # unified buffer (vector unit)
    L1 = "L1"  # cube input buffer (cbuf)
    L0A = "L0A"
    L0B = "L0B"
    L0C = "L0C"
    BT = "BT"  # bias table
    FB = "FB"  # fixpipe buffer (quantization scales)


class Loc(_CppEnum):
    """pto::TileType: where a tile lives (C++ ``TileType::Vec``...)."""

    Vec = "Vec"
    Mat = "Mat"
    Left = "Left"
    Right = "Right"
    Acc = "Acc"
    Bias = "Bias"
    Scaling = "Scaling"
    ScaleLeft = "ScaleLeft"
    ScaleRight = "ScaleRight"
    Ctrl = "Ctrl"

    @classmethod
    def _cpp_name(cls) -> str:
        return "TileType"

    @property
    def buffer(self) -> Buffer | None:
        """The buffer holding tiles of this location (None for Ctrl: a register)."""
        return _LOC_BUFFER[self]


_LOC_BUFFER: dict[Loc, Buffer | None] = {
    Loc.Vec: Buffer.UB,
    Loc.Mat: Buffer.L1,
    Loc.Left: Buffer.L0A,
    Loc.Right: Buffer.L0B,
    Loc.Acc: Buffer.L0C,
    Loc.Bias: Buffer.BT,
    Loc.Scaling: Buffer.FB,
    Loc.ScaleLeft: Buffer.L0A,
    Loc.ScaleRight: Buffer.L0B,
    Loc.Ctrl: None,
}


class BLayout(_CppEnum):
    """Big (outer) layout of a tile: order of rows/columns, or of boxes when boxed."""

    RowMajor = 0
    ColMajor = 1


class SLayout(_CppEnum):
    """Small (inner, box) layout: NoneBox for a plain tile, else order inside each box."""

    NoneBox = 0
    RowMajor = 1
    ColMajor = 2


class PadValue(_CppEnum):
    """Value that TLOAD/TFILLPAD write outside the valid region (Null: leave as is)."""

    Null = 0
    Zero = 1
    Max = 2
    Min = 3


class CompactMode(_CppEnum):
    """Compact storage modes of the Tile template (Null: none)."""

    Null = 0
    Normal = 1
    RowPlusOne = 2
    RowAlignedPadding = 3


class Layout(_CppEnum):
    """pto::Layout: of a GlobalTensor in global memory (ND, DN, NZ), or of a ConvTile (the
    convolution layouts TTRANS converts between)."""

    # the values are pto-isa's enumerators (include/pto/common/type.hpp); 3..11 are the
    # scale and MX layouts, which polykrnl does not use
    ND = 0  # row-major
    DN = 1  # column-major
    NZ = 2  # fractal, for the cube
    NC1HWC0 = 12
    GNC1HWC0 = 13  # grouped: G outermost
    NCHW = 14
    GNCHW = 15
    NCDHW = 18
    FRACTAL_Z = 19  # [C1 * H * W (G outermost), N1, N0, C0]: a convolution's weights
    FRACTAL_Z_3D = 21  # [D * C1 * H * W, N1, N0, C0]


# --------------------------------------------------------------------------- tiles


def _fmt_dim(v: int | None) -> str:
    return "dynamic" if v is None else str(v)


@dataclass(frozen=True)
class TileType:
    """A ``pto::Tile<...>`` type. ``valid_row``/``valid_col`` of None are dynamic (``-1``).

    Construction checks the Tile template's static rules and raises TileConstraintError.
    """

    loc: Loc
    dtype: DType
    rows: int
    cols: int
    blayout: BLayout = BLayout.RowMajor
    valid_row: int | None = field(default=-2)  # -2: "same as rows" (the C++ default)
    valid_col: int | None = field(default=-2)
    slayout: SLayout = SLayout.NoneBox
    fractal: int = FRACTAL_AB
    pad: PadValue = PadValue.Null
    compact: CompactMode = CompactMode.Null

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", dtype(self.dtype))
        if self.valid_row == -2:
            object.__setattr__(self, "valid_row", self.rows)
        if self.valid_col == -2:
            object.__setattr__(self, "valid_col", self.cols)
        if self.valid_row == DYNAMIC:
            object.__setattr__(self, "valid_row", None)
        if self.valid_col == DYNAMIC:
            object.__setattr__(self, "valid_col", None)
        self._check()

    # -- rules of the Tile template
    def _check(self) -> None:
        t, what = self.dtype, self._what()
        if self.rows <= 0 or self.cols <= 0:
            raise TileConstraintError(
                f"{what}: rows and cols must be positive, got {self.rows} x {self.cols}",
                hint="give the storage shape of the tile (at least 1 x 1)",
            )
        for axis, valid, full in (
            ("row", self.valid_row, self.rows),
            ("col", self.valid_col, self.cols),
        ):
            if valid is not None and not 1 <= valid <= full:
                raise TileConstraintError(
                    f"{what}: valid {axis} count {valid} is outside [1, {full}] "
                    f"(Valid{axis.capitalize()} <= {axis.capitalize()}s)",
                    hint=f"use a valid {axis} count between 1 and {full}, "
                    "or None for one given at run time",
                )
        if self.fractal not in FRACTAL_SIZES:
            raise TileConstraintError(
                f"{what}: fractal size {self.fractal} is not one of {FRACTAL_SIZES}",
                hint="use 512 (L0A/L0B boxes), 1024 (L0C boxes) or 32 (MX scale boxes)",
            )
        if self.slayout is SLayout.NoneBox:
            if self.blayout is BLayout.RowMajor and self.cols * t.size % ALIGN_BYTES:
                raise TileConstraintError(
                    f"row-major tile of {t} with {self.cols} columns: a row is "
                    f"{self.cols * t.size} bytes, not a multiple of {ALIGN_BYTES}",
                    hint=self._align_hint("column", self.cols, self.valid_col),
                )
            if self.blayout is BLayout.ColMajor and self.rows * t.size % ALIGN_BYTES:
                raise TileConstraintError(
                    f"column-major tile of {t} with {self.rows} rows: a column is "
                    f"{self.rows * t.size} bytes, not a multiple of {ALIGN_BYTES}",
                    hint=self._align_hint("row", self.rows, self.valid_row),
                )
        ir, ic = self.inner_rows, self.inner_cols
        if self.cols % ic:
            raise TileConstraintError(
                f"{what}: {self.cols} columns is not a multiple of the box width {ic} "
                f"({self.slayout.cpp} boxes of {ir} x {ic} elements)",
                hint=f"use {_roundup(self.cols, ic)} columns and a valid column count of "
                f"{self.valid_col if self.valid_col is not None else 'dynamic'}",
            )
        rows_exempt = self.loc is Loc.Vec or self.fractal == FRACTAL_MX or self.rows == 1
        if not rows_exempt and self.rows % ir:
            raise TileConstraintError(
                f"{what}: {self.rows} rows is not a multiple of the box height {ir} "
                f"({self.slayout.cpp} boxes of {ir} x {ic} elements)",
                hint=f"use {_roundup(self.rows, ir)} rows and a valid row count of "
                f"{self.valid_row if self.valid_row is not None else 'dynamic'}",
            )

    def _what(self) -> str:
        return (
            f"tile {self.loc.name} {self.dtype} {self.rows} x {self.cols} "
            f"(valid {_fmt_dim(self.valid_row)} x {_fmt_dim(self.valid_col)})"
        )

    def _align_hint(self, axis: str, n: int, valid: int | None) -> str:
        good = _roundup(n, self.dtype.elems_per_block)
        v = n if valid is None or valid == n else valid
        return f"use {good} {axis}s and a valid {axis} count of {v}"

    # -- derived facts
    @property
    def boxed(self) -> bool:
        return self.slayout is not SLayout.NoneBox

    @property
    def inner_rows(self) -> int:
        """Rows of one box (1 for an unboxed tile), as the Tile template computes them."""
        if self.fractal == FRACTAL_C:
            return 16
        if self.fractal == FRACTAL_MX:
            return 16 if self.slayout is SLayout.RowMajor else 2
        if not self.boxed:
            return 1
        return 16 if self.slayout is SLayout.RowMajor else ALIGN_BYTES // self.dtype.size

    @property
    def inner_cols(self) -> int:
        """Columns of one box (1 for an unboxed tile)."""
        if self.fractal == FRACTAL_C:
            return 16
        if self.fractal == FRACTAL_MX:
            return 2 if self.slayout is SLayout.RowMajor else 16
        if not self.boxed:
            return 1
        return ALIGN_BYTES // self.dtype.size if self.slayout is SLayout.RowMajor else 16

    @property
    def numel(self) -> int:
        return self.rows * self.cols

    @property
    def bytes(self) -> int:
        """Storage size in bytes (Rows * Cols * sizeof(T))."""
        return self.numel * self.dtype.size

    @property
    def row_stride(self) -> int:
        """Elements between consecutive rows of an unboxed tile (Cols when row-major, else 1)."""
        return self.cols if self.blayout is BLayout.RowMajor else 1

    @property
    def col_stride(self) -> int:
        return 1 if self.blayout is BLayout.RowMajor else self.rows

    @property
    def is_row_major(self) -> bool:
        return self.blayout is BLayout.RowMajor

    @property
    def dynamic(self) -> bool:
        """True when a valid dimension is given at run time."""
        return self.valid_row is None or self.valid_col is None

    @property
    def dynamic_dims(self) -> tuple[str, ...]:
        """Which valid dims the C++ constructor takes, in order: ("row", "col"), ("row",)..."""
        return tuple(
            name for name, v in (("row", self.valid_row), ("col", self.valid_col)) if v is None
        )

    @property
    def buffer(self) -> Buffer | None:
        return self.loc.buffer

    @property
    def valid_shape(self) -> tuple[int | None, int | None]:
        return (self.valid_row, self.valid_col)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    def with_valid(self, valid_row: int | None, valid_col: int | None) -> TileType:
        """The same tile type with other valid dims (None: dynamic)."""
        return TileType(
            self.loc,
            self.dtype,
            self.rows,
            self.cols,
            self.blayout,
            valid_row,
            valid_col,
            self.slayout,
            self.fractal,
            self.pad,
            self.compact,
        )

    @property
    def cpp(self) -> str:
        """The C++ type, e.g. ``Tile<TileType::Vec, float, 16, 32, BLayout::RowMajor, 16, 32>``.

        Template arguments up to ValidCol are always written; later ones only up to the last
        that differs from its default.
        """
        vr = DYNAMIC if self.valid_row is None else self.valid_row
        vc = DYNAMIC if self.valid_col is None else self.valid_col
        args = [
            self.loc.cpp,
            self.dtype.cpp,
            str(self.rows),
            str(self.cols),
            self.blayout.cpp,
            str(vr),
            str(vc),
        ]
        tail = [
            (self.slayout.cpp, self.slayout is SLayout.NoneBox),
            (str(self.fractal), self.fractal == FRACTAL_AB),
            (self.pad.cpp, self.pad is PadValue.Null),
            (self.compact.cpp, self.compact is CompactMode.Null),
        ]
        while tail and tail[-1][1]:
            tail.pop()
        args += [s for s, _ in tail]
        return f"Tile<{', '.join(args)}>"

    def __str__(self) -> str:
        return self.cpp


def _roundup(n: int, m: int) -> int:
    return -(-n // m) * m


def vec_tile(
    dt: DType | str,
    rows: int,
    cols: int,
    valid_row: int | None = -2,
    valid_col: int | None = -2,
    *,
    blayout: BLayout = BLayout.RowMajor,
    pad: PadValue = PadValue.Null,
) -> TileType:
    """A plain Vec (UB) tile; valid dims default to the storage shape, None is dynamic."""
    return TileType(Loc.Vec, dtype(dt), rows, cols, blayout, valid_row, valid_col, pad=pad)


def left_tile(
    dt: DType | str,
    rows: int,
    cols: int,
    arch_name: str = "a2a3",
    valid_row: int | None = -2,
    valid_col: int | None = -2,
) -> TileType:
    """The L0A tile of pto's ``TileLeft`` alias: boxes of 512 bytes with row-major inside;
    boxes row-major on A2/A3 ("Zz"), column-major on A5 and in the CPU simulator ("Nz")."""
    big = BLayout.RowMajor if arch(arch_name).name == "a2a3" else BLayout.ColMajor
    return TileType(
        Loc.Left, dtype(dt), rows, cols, big, valid_row, valid_col, SLayout.RowMajor, FRACTAL_AB
    )


def right_tile(
    dt: DType | str,
    rows: int,
    cols: int,
    valid_row: int | None = -2,
    valid_col: int | None = -2,
) -> TileType:
    """The L0B tile of pto's ``TileRight`` alias: row-major boxes, column-major inside ("Zn")."""
    return TileType(
        Loc.Right,
        dtype(dt),
        rows,
        cols,
        BLayout.RowMajor,
        valid_row,
        valid_col,
        SLayout.ColMajor,
        FRACTAL_AB,
    )


def acc_tile(
    dt: DType | str,
    rows: int,
    cols: int,
    valid_row: int | None = -2,
    valid_col: int | None = -2,
) -> TileType:
    """The L0C tile of pto's ``TileAcc`` alias: column-major 16 x 16 boxes, row-major inside."""
    return TileType(
        Loc.Acc,
        dtype(dt),
        rows,
        cols,
        BLayout.ColMajor,
        valid_row,
        valid_col,
        SLayout.RowMajor,
        FRACTAL_C,
    )


# --------------------------------------------------------------------------- global tensors


def _dim(v: int | None) -> int:
    return DYNAMIC if v is None else v


@dataclass(frozen=True)
class GlobalTensorType:
    """A ``pto::GlobalTensor<T, Shape<5 dims>, Stride<5 dims>, Layout>`` type.

    Dimensions and strides are ints, with ``-1`` (or None) for a run-time value.
    """

    dtype: DType
    shape: tuple[int, int, int, int, int]
    stride: tuple[int, int, int, int, int]
    layout: Layout = Layout.ND

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", dtype(self.dtype))
        for name in ("shape", "stride"):
            vals = tuple(_dim(v) for v in getattr(self, name))
            if len(vals) != 5:
                raise TileConstraintError(
                    f"GlobalTensor {name} {vals}: it has {len(vals)} dimensions, not 5",
                    hint="pad with leading 1s, e.g. (1, 1, 1, rows, cols)",
                )
            for v in vals:
                if v != DYNAMIC and v < (1 if name == "shape" else 0):
                    raise TileConstraintError(
                        f"GlobalTensor {name} {vals}: {v} is not a valid {name} entry",
                        hint="use positive sizes, non-negative strides, or -1 for dynamic",
                    )
            object.__setattr__(self, name, vals)

    @classmethod
    def matrix(
        cls,
        dt: DType | str,
        rows: int | None,
        cols: int | None,
        ld: int | None = None,
        *,
        layout: Layout = Layout.ND,
    ) -> GlobalTensorType:
        """The common 2-D case: ``Shape<1, 1, 1, rows, cols>`` and ``Stride<1, 1, 1, ld, 1>``
        (row-major, leading dimension ``ld``, default ``cols``; None is dynamic). The outer
        strides are 1 because the outer extents are 1 and never step."""
        if ld is None:
            ld = cols
        return cls(dtype(dt), (1, 1, 1, _dim(rows), _dim(cols)), (1, 1, 1, _dim(ld), 1), layout)

    @property
    def dynamic_shape(self) -> tuple[int, ...]:
        """Indices of the dynamic shape dimensions."""
        return tuple(i for i, v in enumerate(self.shape) if v == DYNAMIC)

    @property
    def dynamic_stride(self) -> tuple[int, ...]:
        return tuple(i for i, v in enumerate(self.stride) if v == DYNAMIC)

    @property
    def shape_cpp(self) -> str:
        return f"pto::Shape<{', '.join(map(str, self.shape))}>"

    @property
    def stride_cpp(self) -> str:
        return f"pto::Stride<{', '.join(map(str, self.stride))}>"

    @property
    def cpp(self) -> str:
        """E.g. ``GlobalTensor<float, pto::Shape<1, 1, 1, 16, 32>, pto::Stride<1, 1, 1, 32, 1>>``.

        Shape and Stride are written with ``pto::`` because kernels that include other headers
        may have another ``Shape`` in scope; the Layout argument only when it is not ND.
        """
        args = [self.dtype.cpp, self.shape_cpp, self.stride_cpp]
        if self.layout is not Layout.ND:
            args.append(self.layout.cpp)
        return f"GlobalTensor<{', '.join(args)}>"

    def __str__(self) -> str:
        return self.cpp


# --------------------------------------------------------------------------- architectures

KIB = 1024


@dataclass(frozen=True)
class Arch:
    """An Ascend architecture profile.

    ``capacity`` is the size of each buffer in bytes; ``reserved`` the byte ranges of a
    buffer that some instruction forms use as hidden scratch (A2/A3: UB [184 KiB, 192 KiB)),
    so the planner should keep tiles out of them; ``tmp_instructions`` the instructions whose
    tmp tile this architecture really uses (others ignore the tmp argument).
    """

    name: str
    title: str
    capacity: Mapping[Buffer, int]
    reserved: Mapping[Buffer, tuple[int, int]]
    tmp_instructions: frozenset[str]
    align: int = ALIGN_BYTES

    def capacity_of(self, buf: Buffer | Loc) -> int:
        """Total bytes of a buffer (given directly or by a tile location)."""
        b = buf.buffer if isinstance(buf, Loc) else buf
        assert b is not None, "Ctrl tiles live in registers"
        return self.capacity[b]

    def usable(self, buf: Buffer | Loc) -> int:
        """Bytes from offset 0 that tiles may use without touching reserved scratch."""
        b = buf.buffer if isinstance(buf, Loc) else buf
        assert b is not None, "Ctrl tiles live in registers"
        lo_hi = self.reserved.get(b)
        return lo_hi[0] if lo_hi is not None else self.capacity[b]

    def uses_tmp(self, instruction: str) -> bool:
        """True when ``instruction`` (e.g. "TROWSUM") really uses its tmp tile here."""
        return instruction.upper() in self.tmp_instructions

    def __str__(self) -> str:
        return self.name


#: Instructions that take a tmp tile (docs/pto.md, "Tmp tiles") (in their A2/A3 form).
TMP_INSTRUCTIONS: frozenset[str] = frozenset(
    {
        "TTRANS",
        "TTRANS_NCHW_NC1HWC0",
        "TTRANS_NC1HWC0_NCHW",
        "TTRANS_GNCHW_GNC1HWC0",
        "TTRANS_GNC1HWC0_GNCHW",
        "TTRANS_NC1HWC0_FRACTAL_Z",
        "TTRANS_GNC1HWC0_FRACTAL_Z",
        "TTRANS_NCDHW_FRACTAL_Z_3D",
        "TROWSUM",
        "TROWMAX",
        "TROWMIN",
        "TROWPROD",
        "TCOLSUM",
        "TROWARGMAX",
        "TROWARGMIN",
        "TCOLARGMAX",
        "TCOLARGMIN",
        "TROWEXPANDADD",
        "TROWEXPANDSUB",
        "TROWEXPANDMUL",
        "TROWEXPANDDIV",
        "TROWEXPANDMAX",
        "TROWEXPANDMIN",
        "TROWEXPANDEXPDIF",
        "TSORT32",
        "TMRGSORT",
        "TCI",
        "TSEL",
        "TSELS",
        "TREM",
        "TPOW",
        "TPOWS",
    }
)

_A2A3_TMP = TMP_INSTRUCTIONS - {
    # the FRACTAL_Z conversions rearrange memory directly and take no tmp
    "TTRANS_NC1HWC0_FRACTAL_Z",
    "TTRANS_GNC1HWC0_FRACTAL_Z",
}
# A5 ignores tmp for most instructions (2-D TTRANS, row reductions, arg-reductions, TROWEXPAND*,
# TCI, TSEL(S), TREM, TPOW(S)); these still use it there (their doc pages and the A5 TTrans
# header, which checks the tmp of the layout conversions against the UB size).
_A5_TMP: frozenset[str] = frozenset(
    {
        "TTRANS_NCHW_NC1HWC0",
        "TTRANS_NC1HWC0_NCHW",
        "TTRANS_GNCHW_GNC1HWC0",
        "TTRANS_GNC1HWC0_GNCHW",
        "TTRANS_NCDHW_FRACTAL_Z_3D",
        "TCOLSUM",
        "TSORT32",
        "TMRGSORT",
    }
)

ARCHES: dict[str, Arch] = {
    "a2a3": Arch(
        name="a2a3",
        title="Ascend A2/A3",
        capacity={
            Buffer.UB: 192 * KIB,
            Buffer.L1: 512 * KIB,
            Buffer.L0A: 64 * KIB,
            Buffer.L0B: 64 * KIB,
            Buffer.L0C: 128 * KIB,
            Buffer.BT: 1 * KIB,
            Buffer.FB: 2 * KIB,
        },
        reserved={Buffer.UB: (184 * KIB, 192 * KIB)},
        tmp_instructions=_A2A3_TMP,
    ),
    "a5": Arch(
        name="a5",
        title="Ascend A5",
        capacity={
            Buffer.UB: 256 * KIB,
            Buffer.L1: 512 * KIB,
            Buffer.L0A: 64 * KIB,
            Buffer.L0B: 64 * KIB,
            Buffer.L0C: 256 * KIB,
            Buffer.BT: 4 * KIB,
            Buffer.FB: 4 * KIB,
        },
        reserved={},
        tmp_instructions=_A5_TMP,
    ),
}


def arch(name: str | Arch) -> Arch:
    """The architecture profile named ``name`` ("a2a3" or "a5"; "A2/A3", "A3", "A2" too)."""
    if isinstance(name, Arch):
        return name
    key = name.strip().lower().replace("/", "").replace("-", "").replace("_", "")
    key = {"a2": "a2a3", "a3": "a2a3"}.get(key, key)
    if key in ARCHES:
        return ARCHES[key]
    raise TileConstraintError(
        f"unknown architecture {name!r}: valid names are {', '.join(ARCHES)}",
        hint="use --arch a2a3 (Ascend A2/A3) or --arch a5 (Ascend A5)",
    )
