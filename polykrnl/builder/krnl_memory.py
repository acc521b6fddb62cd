"""Krnl memory ops: loads, stores and the whole-buffer copies and matmul."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, BoolAttr, IntegerAttr, IntegerType, i64
from xdsl.ir import Attribute, SSAValue

from polykrnl.builder.core import FunctionCore, Value, builder_error, describe, memref_type
from polykrnl.dialect import krnl as krnl


def _i64_array(values: Sequence[int]) -> ArrayAttr[IntegerAttr[IntegerType]]:
    return ArrayAttr([IntegerAttr(int(v), i64) for v in values])


class KrnlMemoryOps(FunctionCore):
    """Element access (``krnl.load``, ``krnl.store``) and whole-buffer ops (``krnl.memset``,
    ``krnl.memcpy``, the tile buffer copies, ``krnl.matmul``)."""

    def load(self, memref_: Value, indices: Sequence[Value], *, name: str | None = None) -> Value:
        """``%v = krnl.load %m[%i, %j]``."""
        m, idx = self._access(memref_, indices, "krnl.load")
        return self._insert(krnl.LoadOp(m, idx), names=[name]).results[0]

    def store(self, value: Value, memref_: Value, indices: Sequence[Value]) -> None:
        """``krnl.store %v, %m[%i, %j]``."""
        v = self._value(value, "the stored value")
        m, idx = self._access(memref_, indices, "krnl.store")
        elem = memref_type(m).element_type
        if v.type != elem:
            raise builder_error(
                f"krnl.store of {describe(v)} into a memref of {elem}",
                f"convert the value to {elem} first (e.g. f.extf / f.truncf / f.sitofp)",
            )
        self._insert(krnl.StoreOp(v, m, idx))

    def memset(self, dest: Value, value: Value, *, delayed: bool | None = None) -> None:
        """``krnl.memset %m, %v``: fill the whole memref."""
        m = self._memref(dest, "krnl.memset")
        v = self._value(value, "the memset value")
        op = krnl.MemsetOp(m, v)
        if delayed is not None:
            op.properties["delayed"] = BoolAttr.from_bool(delayed)
        self._insert(op)

    def memcpy(
        self,
        dest: Value,
        src: Value,
        num_elems: Value,
        dest_offset: Value,
        src_offset: Value,
    ) -> None:
        """``krnl.memcpy``: flat copy of ``num_elems`` (i64) elements at index offsets."""
        ops = [
            self._memref(dest, "krnl.memcpy"),
            self._memref(src, "krnl.memcpy"),
            self._value(num_elems, "num_elems"),
            self._index(dest_offset, "dest_offset"),
            self._index(src_offset, "src_offset"),
        ]
        self._insert(krnl.MemcpyOp.build(operands=ops))

    def copy_to_tile_buffer(
        self,
        buffer: Value,
        source: Value,
        starts: Sequence[Value],
        pad_value: Value,
        *,
        tile_size: Sequence[int] | None = None,
        pad_to_next: Sequence[int] | None = None,
        transpose: bool | None = None,
    ) -> None:
        """``krnl.copy_to_tile_buffer %buf, %src[%starts], %pad {...}``."""
        props: dict[str, Attribute] = {}
        if tile_size is not None:
            props["tileSize"] = _i64_array(tile_size)
        if pad_to_next is not None:
            props["padToNext"] = _i64_array(pad_to_next)
        if transpose is not None:
            props["transpose"] = BoolAttr.from_bool(transpose)
        ops: list[SSAValue | list[SSAValue]] = [
            self._memref(buffer, "krnl.copy_to_tile_buffer"),
            self._memref(source, "krnl.copy_to_tile_buffer"),
            [self._index(s, "a tile start") for s in starts],
            self._value(pad_value, "the pad value"),
        ]
        self._insert(krnl.CopyToTileBufferOp.build(operands=ops, properties=props))

    def copy_from_tile_buffer(
        self,
        buffer: Value,
        dest: Value,
        starts: Sequence[Value],
        *,
        tile_size: Sequence[int] | None = None,
    ) -> None:
        """``krnl.copy_from_tile_buffer %buf, %dest[%starts] {...}``."""
        props: dict[str, Attribute] = {}
        if tile_size is not None:
            props["tileSize"] = _i64_array(tile_size)
        ops: list[SSAValue | list[SSAValue]] = [
            self._memref(buffer, "krnl.copy_from_tile_buffer"),
            self._memref(dest, "krnl.copy_from_tile_buffer"),
            [self._index(s, "a tile start") for s in starts],
        ]
        self._insert(krnl.CopyFromTileBufferOp.build(operands=ops, properties=props))

    def matmul(
        self,
        a: Value,
        a_starts: Sequence[Value],
        b: Value,
        b_starts: Sequence[Value],
        c: Value,
        c_starts: Sequence[Value],
        loops: Sequence[Value],
        compute_starts: Sequence[Value],
        global_ubs: Sequence[Value],
        *,
        compute_tile_size: Sequence[int] | None = None,
        a_tile_size: Sequence[int] | None = None,
        b_tile_size: Sequence[int] | None = None,
        c_tile_size: Sequence[int] | None = None,
        simdize: bool | None = None,
        unroll: bool | None = None,
        overcompute: bool | None = None,
    ) -> None:
        """``krnl.matmul %A[..], %B[..], %C[..], (%i, %j, %k), (starts), (ubs) {...}``.

        ``compute_starts`` and ``global_ubs`` are the (i, j, k) triples.
        """
        for what, triple in (("compute_starts", compute_starts), ("global_ubs", global_ubs)):
            if len(triple) != 3:
                raise builder_error(
                    f"krnl.matmul {what} needs 3 values (i, j, k), got {len(triple)}",
                    "give the i, j and k values in that order",
                )
        props: dict[str, Attribute] = {}
        for key, sizes in (
            ("computeTileSize", compute_tile_size),
            ("aTileSize", a_tile_size),
            ("bTileSize", b_tile_size),
            ("cTileSize", c_tile_size),
        ):
            if sizes is not None:
                props[key] = _i64_array(sizes)
        for key, flag in (("simdize", simdize), ("unroll", unroll), ("overcompute", overcompute)):
            if flag is not None:
                props[key] = BoolAttr.from_bool(flag)
        operands: list[SSAValue | list[SSAValue]] = [
            self._memref(a, "krnl.matmul"),
            [self._index(s, "a start index") for s in a_starts],
            self._memref(b, "krnl.matmul"),
            [self._index(s, "a start index") for s in b_starts],
            self._memref(c, "krnl.matmul"),
            [self._index(s, "a start index") for s in c_starts],
            [self._handle(h) for h in loops],
            *[self._index(s, "a compute start") for s in compute_starts],
            *[self._index(s, "a global upper bound") for s in global_ubs],
        ]
        self._insert(krnl.MatMulOp.build(operands=operands, properties=props))
