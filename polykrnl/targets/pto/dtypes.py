"""PTO element types: the scalar types a tile holds, their C++ and NumPy spellings.

The C++ spellings are those of pto-isa's kernels (``float``, ``half``, ``bfloat16_t``,
``int8_t``...); :func:`dtype` also reads MLIR element types and NumPy dtypes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from polykrnl.errors import TileConstraintError

__all__ = [
    "ALIGN_BYTES",
    "BF16",
    "DTYPES",
    "F16",
    "F32",
    "I8",
    "I16",
    "I32",
    "I64",
    "U8",
    "U16",
    "U32",
    "U64",
    "DType",
    "dtype",
]

#: Byte alignment of every on-chip buffer offset and of unboxed tile rows/columns (one
#: 32-byte block, the unit that DType.elems_per_block counts in).
ALIGN_BYTES = 32


@dataclass(frozen=True)
class DType:
    """An element type of PTO tiles.

    ``cpp`` is the spelling in PTO kernels (``float``, ``half``, ``bfloat16_t``, ``int8_t``...).
    ``numpy`` is the NumPy dtype name, or None for bf16: NumPy has no bfloat16, so the
    simulator keeps bf16 values in float32 arrays (``sim_numpy``) rounded to bf16 precision
    where the instruction's semantics requires it.
    """

    name: str
    cpp: str
    size: int
    kind: str  # "float", "int" (signed) or "uint"
    numpy: str | None

    @property
    def bits(self) -> int:
        return 8 * self.size

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        return self.kind in ("int", "uint")

    @property
    def np_dtype(self) -> np.dtype[Any]:
        """The NumPy dtype used to hold values of this type (float32 for bf16)."""
        return np.dtype(self.numpy if self.numpy is not None else "float32")

    @property
    def elems_per_block(self) -> int:
        """Elements per 32-byte block."""
        return ALIGN_BYTES // self.size

    def __str__(self) -> str:
        return self.name


F32 = DType("f32", "float", 4, "float", "float32")
F16 = DType("f16", "half", 2, "float", "float16")
BF16 = DType("bf16", "bfloat16_t", 2, "float", None)
I8 = DType("i8", "int8_t", 1, "int", "int8")
U8 = DType("u8", "uint8_t", 1, "uint", "uint8")
I16 = DType("i16", "int16_t", 2, "int", "int16")
U16 = DType("u16", "uint16_t", 2, "uint", "uint16")
I32 = DType("i32", "int32_t", 4, "int", "int32")
U32 = DType("u32", "uint32_t", 4, "uint", "uint32")
I64 = DType("i64", "int64_t", 8, "int", "int64")
U64 = DType("u64", "uint64_t", 8, "uint", "uint64")

#: Element types by our short name.
DTYPES: dict[str, DType] = {
    t.name: t for t in (F32, F16, BF16, I8, U8, I16, U16, I32, U32, I64, U64)
}

# Other spellings accepted by dtype(): MLIR element types (signless iN is taken as signed,
# `index` as i64), C++ spellings, NumPy names.
_ALIASES: dict[str, str] = {
    "float": "f32",
    "float32": "f32",
    "half": "f16",
    "float16": "f16",
    "bfloat16": "bf16",
    "bfloat16_t": "bf16",
    "index": "i64",
    **{f"si{b}": f"i{b}" for b in (8, 16, 32, 64)},
    **{f"ui{b}": f"u{b}" for b in (8, 16, 32, 64)},
    **{f"int{b}": f"i{b}" for b in (8, 16, 32, 64)},
    **{f"uint{b}": f"u{b}" for b in (8, 16, 32, 64)},
    **{f"int{b}_t": f"i{b}" for b in (8, 16, 32, 64)},
    **{f"uint{b}_t": f"u{b}" for b in (8, 16, 32, 64)},
}


def dtype(x: DType | str | np.dtype[Any] | type) -> DType:
    """The element type named by ``x``: a DType, our name (``"f32"``), an MLIR element type
    (``"f16"``, ``"i32"``, ``"ui8"``, ``"index"``), a C++ spelling (``"half"``) or a NumPy
    dtype. Raises TileConstraintError for a type PTO tiles do not hold."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str):
        key = x.strip()
    else:
        try:
            key = np.dtype(x).name
        except TypeError:
            key = str(x)
    key = _ALIASES.get(key, key)
    if key in DTYPES:
        return DTYPES[key]
    raise TileConstraintError(
        f"element type {x!s}: PTO tiles hold only {', '.join(DTYPES)}",
        hint="convert the data to one of these types (f64 is not supported: use f32)",
    )
