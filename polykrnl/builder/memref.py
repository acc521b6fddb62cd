"""memref dialect ops: buffers and their sizes."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, MemRefType, i64
from xdsl.ir import Attribute, SSAValue

from polykrnl.builder.core import FunctionCore, TypeLike, Value, builder_error, parse_type


class MemrefOps(FunctionCore):
    """``memref.alloc``, ``memref.alloca``, ``memref.dealloc``, ``memref.dim``."""

    def alloc(
        self,
        type: TypeLike,
        dynamic_sizes: Sequence[Value] = (),
        *,
        alignment: int | None = None,
        name: str | None = None,
    ) -> Value:
        """``memref.alloc(%sizes) : memref<...>`` (one index value per ``?``)."""
        return self._alloc(memref.AllocOp, type, dynamic_sizes, alignment, name)

    def alloca(
        self,
        type: TypeLike,
        dynamic_sizes: Sequence[Value] = (),
        *,
        alignment: int | None = None,
        name: str | None = None,
    ) -> Value:
        """``memref.alloca(%sizes) : memref<...>``."""
        return self._alloc(memref.AllocaOp, type, dynamic_sizes, alignment, name)

    def dealloc(self, memref_: Value) -> None:
        """``memref.dealloc %m``."""
        self._insert(memref.DeallocOp.get(self._memref(memref_, "memref.dealloc")))

    def dim(self, memref_: Value, index: Value, *, name: str | None = None) -> Value:
        """``%d = memref.dim %m, %k``: the size of dimension ``%k`` (an index value)."""
        m = self._memref(memref_, "memref.dim")
        k = self._index(index, "the dimension number")
        return self._insert(memref.DimOp(m, k), names=[name]).results[0]

    def _alloc(
        self,
        cls: type[memref.AllocOp] | type[memref.AllocaOp],
        type: TypeLike,
        dynamic_sizes: Sequence[Value],
        alignment: int | None,
        name: str | None,
    ) -> SSAValue:
        t = parse_type(type)
        if not isinstance(t, MemRefType):
            raise builder_error(f"{cls.name} needs a memref type, got {t}", "e.g. memref<?x8xf32>")
        sizes = [self._index(s, f"a dynamic size of {cls.name}") for s in dynamic_sizes]
        n_dyn = sum(1 for d in t.get_shape() if d == DYNAMIC_INDEX)
        if len(sizes) != n_dyn:
            raise builder_error(
                f"{cls.name} of {t} needs {n_dyn} dynamic sizes, got {len(sizes)}",
                "give one index value per `?` in the memref type",
            )
        props: dict[str, Attribute] = {}
        if alignment is not None:
            props["alignment"] = IntegerAttr(alignment, i64)
        op = cls.build(operands=[sizes, []], result_types=[t], properties=props)
        return self._insert(op, names=[name]).results[0]
