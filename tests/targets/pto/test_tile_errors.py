"""One test per distinct TileConstraintError message of tiles/types.py and tiles/tmp_rules.py.

Each asserts the message names the rule and the numbers, and that a hint is given.
"""

from __future__ import annotations

import pytest

from polykrnl.errors import TileConstraintError
from polykrnl.targets.pto.dtypes import dtype
from polykrnl.targets.pto.tmp_rules import check, tmp_bytes
from polykrnl.targets.pto.types import (
    BLayout,
    GlobalTensorType,
    Loc,
    SLayout,
    TileType,
    arch,
    vec_tile,
)


def _err(fn: object, *args: object, **kw: object) -> TileConstraintError:
    with pytest.raises(TileConstraintError) as info:
        fn(*args, **kw)  # type: ignore[operator]
    e = info.value
    assert e.hint, "every tile error carries a hint"
    return e


# ------------------------------------------------------------------ types.py


def test_unknown_element_type() -> None:
    e = _err(dtype, "f64")
    assert "f64" in e.message and "f32" in e.message and "bf16" in e.message


def test_row_major_alignment() -> None:
    e = _err(vec_tile, "f32", 16, 15)
    assert e.message == (
        "row-major tile of f32 with 15 columns: a row is 60 bytes, not a multiple of 32"
    )
    assert e.hint == "use 16 columns and a valid column count of 15"


def test_col_major_alignment() -> None:
    e = _err(TileType, Loc.Vec, dtype("f16"), 10, 16, BLayout.ColMajor)
    assert "column-major tile of f16 with 10 rows: a column is 20 bytes" in e.message
    assert "16 rows" in (e.hint or "")


def test_nonpositive_shape() -> None:
    e = _err(vec_tile, "f32", 0, 8)
    assert "rows and cols must be positive, got 0 x 8" in e.message


def test_valid_dim_out_of_range() -> None:
    e = _err(vec_tile, "f32", 16, 32, 17, 32)
    assert "valid row count 17 is outside [1, 16]" in e.message
    e = _err(vec_tile, "f32", 16, 32, 16, 40)
    assert "valid col count 40 is outside [1, 32]" in e.message


def test_bad_fractal_size() -> None:
    e = _err(
        TileType, Loc.Mat, dtype("f16"), 16, 16, BLayout.ColMajor, 16, 16, SLayout.RowMajor, 256
    )
    assert "fractal size 256 is not one of (512, 1024, 32)" in e.message


def test_box_width() -> None:
    # a boxed f16 tile with row-major boxes: boxes are 16 x 16 halves; 24 columns do not tile
    e = _err(TileType, Loc.Mat, dtype("f16"), 32, 24, BLayout.ColMajor, 32, 24, SLayout.RowMajor)
    assert "24 columns is not a multiple of the box width 16" in e.message
    assert "32" in (e.hint or "")


def test_box_height() -> None:
    e = _err(
        TileType, Loc.Acc, dtype("f32"), 20, 16, BLayout.ColMajor, 20, 16, SLayout.RowMajor, 1024
    )
    assert "20 rows is not a multiple of the box height 16" in e.message
    assert "32 rows" in (e.hint or "")


def test_global_tensor_rank() -> None:
    e = _err(GlobalTensorType, dtype("f32"), (4, 8), (8, 1))  # type: ignore[arg-type]
    assert "it has 2 dimensions, not 5" in e.message


def test_global_tensor_bad_entry() -> None:
    e = _err(GlobalTensorType, dtype("f32"), (1, 1, 1, 0, 8), (1, 1, 1, 8, 1))
    assert "0 is not a valid shape entry" in e.message


def test_unknown_arch() -> None:
    e = _err(arch, "a4")
    assert "unknown architecture 'a4': valid names are a2a3, a5" in e.message


# ------------------------------------------------------------------ tmp_rules.py


def test_unknown_instruction() -> None:
    e = _err(tmp_bytes, "TFOO", "a2a3", dtype="f32")
    assert "no tmp-size rule for instruction 'TFOO'" in e.message
    assert "TROWSUM" in (e.hint or "")


def test_unknown_parameter() -> None:
    e = _err(tmp_bytes, "TROWSUM", "a2a3", dtype="f32", valid_row=4, valid_col=8, depth=3)
    assert "TROWSUM: unknown size parameter(s) depth" in e.message


def test_missing_parameter() -> None:
    e = _err(tmp_bytes, "TROWSUM", "a2a3", dtype="f32", valid_row=4)
    assert "TROWSUM: size parameter(s) valid_col missing" in e.message


def test_nonpositive_parameter() -> None:
    e = _err(tmp_bytes, "TTRANS", "a2a3", dtype="f32", valid_row=0, valid_col=8)
    assert "TTRANS: valid_row = 0 is not a positive integer" in e.message


def test_mrgsort_list_count() -> None:
    e = _err(tmp_bytes, "TMRGSORT", "a2a3", dtype="f32", list_cols=(64,))
    assert "TMRGSORT: 1 source lists given, the tmp form merges 2, 3 or 4" in e.message


def test_dtype_not_supported() -> None:
    e = _err(tmp_bytes, "TROWSUM", "a2a3", dtype="i8", valid_row=4, valid_col=32)
    assert "TROWSUM on a2a3: element type i8 is not supported" in e.message
    assert "f16, f32, i16, i32" in e.message


def test_mrgsort_ub_overflow() -> None:
    # 4 lists of 8192 floats + a tmp of 32768 floats = 65536 floats = 262144 bytes >= 196608
    e = _err(check, "TMRGSORT", "a2a3", dtype="f32", list_cols=(8192, 8192, 8192, 8192))
    assert "65536 elements of f32 = 262144 bytes, not below the UB size 196608" in e.message


def test_tmp_not_plain_vec() -> None:
    tmp = TileType(Loc.Mat, dtype("f32"), 16, 64)
    e = _err(check, "TROWMAX", "a2a3", dtype="f32", tmp=tmp, valid_row=16, valid_col=100)
    assert "is not a row-major unboxed Vec tile" in e.message


def test_tmp_wrong_dtype() -> None:
    tmp = vec_tile("f32", 1, 8)
    e = _err(check, "TSEL", "a2a3", dtype="f32", tmp=tmp)
    assert "holds f32, the instruction needs u32" in e.message


def test_tmp_too_small() -> None:
    # TROWSUM f32 16 x 300: 16 rows of 128 floats; a 16 x 64 tmp is too narrow
    tmp = vec_tile("f32", 16, 64)
    e = _err(check, "TROWSUM", "a2a3", dtype="f32", tmp=tmp, valid_row=16, valid_col=300)
    assert "is 16 x 64, the instruction needs at least 16 x 128 (8192 bytes)" in e.message


def test_tmp_valid_shape_must_equal_dst() -> None:
    tmp = vec_tile("f32", 8, 32)  # valid 8 x 32, dst's valid shape is 5 x 30
    e = _err(check, "TPOW", "a2a3", dtype="f32", tmp=tmp, valid_row=5, valid_col=30)
    assert "valid shape 8 x 32, the instruction checks it equals dst's 5 x 30" in e.message
