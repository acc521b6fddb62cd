"""Tile model: C++ spellings, sizes, dynamic valid dims, architecture profiles.

The expected C++ strings were checked by hand against pto-isa's headers
(include/pto/common/pto_tile.hpp: the Tile template's parameter order and defaults, and the
TileLeft/TileRight/TileAcc aliases; type.hpp: enum spellings; GlobalTensor<T, Shape, Stride>).
"""

from __future__ import annotations

import numpy as np
import pytest

from polykrnl.targets.pto.dtypes import dtype
from polykrnl.targets.pto.types import (
    ARCHES,
    BLayout,
    Buffer,
    CompactMode,
    GlobalTensorType,
    Loc,
    PadValue,
    SLayout,
    TileType,
    acc_tile,
    arch,
    left_tile,
    right_tile,
    vec_tile,
)


@pytest.mark.parametrize(
    ("name", "cpp", "size"),
    [
        ("f32", "float", 4),
        ("f16", "half", 2),
        ("bf16", "bfloat16_t", 2),
        ("i8", "int8_t", 1),
        ("u8", "uint8_t", 1),
        ("i16", "int16_t", 2),
        ("u16", "uint16_t", 2),
        ("i32", "int32_t", 4),
        ("u32", "uint32_t", 4),
        ("i64", "int64_t", 8),
        ("u64", "uint64_t", 8),
    ],
)
def test_dtypes(name: str, cpp: str, size: int) -> None:
    t = dtype(name)
    assert (t.cpp, t.size) == (cpp, size)
    assert dtype(cpp) is t
    assert t.np_dtype.itemsize == (4 if name == "bf16" else size)


def test_dtype_lookup_spellings() -> None:
    assert dtype(np.float32).name == "f32"
    assert dtype(np.dtype("int16")).name == "i16"
    assert dtype("ui8").name == "u8"  # MLIR unsigned
    assert dtype("index").name == "i64"
    assert dtype("bf16").numpy is None  # no NumPy bfloat16: simulated in float32


def test_vec_tile_cpp_and_bytes() -> None:
    t = vec_tile("f32", 16, 32)
    assert t.cpp == "Tile<TileType::Vec, float, 16, 32, BLayout::RowMajor, 16, 32>"
    assert t.bytes == 16 * 32 * 4
    assert not t.dynamic and t.buffer is Buffer.UB
    assert (t.row_stride, t.col_stride) == (32, 1)


def test_dynamic_valid_dims() -> None:
    t = vec_tile("f16", 16, 64, None, None)
    assert t.cpp == "Tile<TileType::Vec, half, 16, 64, BLayout::RowMajor, -1, -1>"
    assert t.dynamic and t.dynamic_dims == ("row", "col")
    t2 = vec_tile("f16", 16, 64, 16, -1)  # -1 is accepted as in C++
    assert t2.valid_col is None and t2.dynamic_dims == ("col",)
    assert t2.with_valid(3, 50).cpp.endswith(", 3, 50>")


def test_partial_valid_region() -> None:
    t = vec_tile("f32", 16, 16, 16, 15)
    assert t.cpp == "Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, 16, 15>"


def test_column_major_and_trailing_args() -> None:
    t = TileType(Loc.Vec, dtype("f32"), 8, 1, BLayout.ColMajor)
    assert t.cpp == "Tile<TileType::Vec, float, 8, 1, BLayout::ColMajor, 8, 1>"
    p = vec_tile("f32", 8, 8, 5, 5, pad=PadValue.Zero)
    assert p.cpp == (
        "Tile<TileType::Vec, float, 8, 8, BLayout::RowMajor, 5, 5, SLayout::NoneBox, 512, "
        "PadValue::Zero>"
    )
    c = TileType(Loc.Vec, dtype("f32"), 8, 8, compact=CompactMode.Normal)
    assert c.cpp.endswith("SLayout::NoneBox, 512, PadValue::Null, CompactMode::Normal>")


def test_cube_tiles_follow_pto_aliases() -> None:
    assert acc_tile("f32", 16, 32).cpp == (
        "Tile<TileType::Acc, float, 16, 32, BLayout::ColMajor, 16, 32, SLayout::RowMajor, 1024>"
    )
    assert left_tile("f16", 16, 32, "a2a3").cpp == (
        "Tile<TileType::Left, half, 16, 32, BLayout::RowMajor, 16, 32, SLayout::RowMajor>"
    )
    assert left_tile("f16", 16, 32, "a5").blayout is BLayout.ColMajor
    r = right_tile("f16", 32, 16)
    assert r.cpp == (
        "Tile<TileType::Right, half, 32, 16, BLayout::RowMajor, 32, 16, SLayout::ColMajor>"
    )
    # boxes: Right f16 column-major boxes are 16 rows x 16 cols; Acc boxes 16 x 16
    assert (r.inner_rows, r.inner_cols) == (16, 16)
    assert r.buffer is Buffer.L0B and acc_tile("f32", 16, 16).buffer is Buffer.L0C


def test_boxed_inner_shape_by_dtype() -> None:
    # row-major boxes of 512 bytes: 16 rows x 32/sizeof(T) columns
    m = TileType(Loc.Mat, dtype("i8"), 16, 32, BLayout.ColMajor, slayout=SLayout.RowMajor)
    assert (m.inner_rows, m.inner_cols) == (16, 32)
    # column-major boxes: 32/sizeof(T) rows x 16 columns
    m2 = TileType(Loc.Mat, dtype("f32"), 8, 16, BLayout.RowMajor, slayout=SLayout.ColMajor)
    assert (m2.inner_rows, m2.inner_cols) == (8, 16)


def test_global_tensor() -> None:
    g = GlobalTensorType.matrix("f32", 64, 128)
    assert g.cpp == (
        "GlobalTensor<float, pto::Shape<1, 1, 1, 64, 128>, pto::Stride<1, 1, 1, 128, 1>>"
    )
    d = GlobalTensorType.matrix("f16", None, 64, 256)
    assert d.shape == (1, 1, 1, -1, 64) and d.stride == (1, 1, 1, 256, 1)
    assert d.dynamic_shape == (3,) and d.dynamic_stride == ()
    n = GlobalTensorType.matrix("f32", 16, 16, None)
    assert n.stride[3] == 16


def test_arch_profiles() -> None:
    a, b = arch("a2a3"), arch("A5")
    assert set(ARCHES) == {"a2a3", "a5"}
    assert arch("A2/A3") is a and arch("a3") is a
    assert a.capacity_of(Loc.Vec) == 192 * 1024 and b.capacity_of(Loc.Vec) == 256 * 1024
    assert a.usable(Buffer.UB) == 184 * 1024 and b.usable(Buffer.UB) == 256 * 1024
    assert a.capacity_of(Buffer.L1) == b.capacity_of(Buffer.L1) == 512 * 1024
    assert a.capacity_of(Loc.Left) == a.capacity_of(Loc.Right) == 64 * 1024
    assert a.capacity_of(Loc.Acc) == 128 * 1024 and b.capacity_of(Loc.Acc) == 256 * 1024
    assert a.align == b.align == 32
    assert a.uses_tmp("TTRANS") and not b.uses_tmp("TTRANS")
    assert a.uses_tmp("trowsum") and not b.uses_tmp("TROWSUM")
    assert b.uses_tmp("TMRGSORT") and not a.uses_tmp("TADD")
