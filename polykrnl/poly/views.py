"""Accesses through views, mapped onto the buffer behind them.

A view (a memref.view of an i8 pool, memref.reshape, reinterpret_cast, cast,
subview) names elements of its source. When every view on the way says which
element of its source each of its elements is (`OpModel.view`), an access
through them is an exact access of the buffer behind, so two views of one pool
that do not overlap have no dependence, and two that do have exactly the
dependences of the bytes they share. Otherwise the access is a may-access of
the whole buffer, which is sound whatever the views overlap.

A view that changes the element type (f32 elements in an i8 pool) makes one of
its elements several elements of its source: an access then covers a `span`
of consecutive elements in the source's last dimension (its bytes).

The helpers at the end write the index arithmetic of the views' maps.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import (
    AnyFloat,
    IndexType,
    IntegerType,
    MemRefType,
    NoneAttr,
)
from xdsl.ir import Attribute, OpResult, SSAValue

from polykrnl.poly.table import Exprs, model_of


@dataclass(frozen=True)
class Mapped:
    """An access through views, seen on the buffer behind them."""

    #: subscripts in the buffer (None: which elements is not known)
    subs: list[str] | None
    #: how many consecutive elements of the buffer's last dimension it covers
    span: int = 1
    #: the view that hides the elements, when `subs` is None
    blocker: str = ""


def element_bytes(t: Attribute) -> int | None:
    """The bytes one element of type `t` takes in a buffer (None: not a scalar)."""
    if isinstance(t, IntegerType):
        return max(1, t.width.data // 8)
    if isinstance(t, AnyFloat) and t.bitwidth in (16, 32, 64):
        return t.bitwidth // 8
    if isinstance(t, IndexType):
        return 8
    return None


def through_views(v: SSAValue, subs: Sequence[str], expr: Exprs) -> Mapped:
    """The elements of the buffer behind the views that `v[subs]` is."""
    cur = list(subs)
    span = 1
    while isinstance(v, OpResult) and (m := model_of(v.op)) is not None and m.alias:
        op = v.op
        src = op.operands[0]
        new = m.view(op, cur, expr) if m.view is not None else None
        # A span maps element by element only through views that keep the subscripts.
        if new is None or (span > 1 and new != cur):
            return Mapped(None, 1, op.name)
        rt, st = v.type, src.type
        if not isinstance(rt, MemRefType) or not isinstance(st, MemRefType):
            return Mapped(None, 1, op.name)
        rb, sb = element_bytes(rt.element_type), element_bytes(st.element_type)
        if rb is None or sb is None:
            return Mapped(None, 1, op.name)
        if rb != sb:
            if rb % sb or len(st.get_shape()) != 1:
                return Mapped(None, 1, op.name)
            span *= rb // sb
        cur, v = new, src
    return Mapped(cur, span)


# -- index arithmetic of the views' maps


def contiguous_shape(t: Attribute) -> list[int] | None:
    """The shape of a row-major memref whose sizes, after the first, are static
    (what linearizing and delinearizing need); None otherwise."""
    if not isinstance(t, MemRefType) or not isinstance(t.layout, NoneAttr):
        return None
    shape = list(t.get_shape())
    if any(d < 0 for d in shape[1:]) or 0 in shape:
        return None
    return shape


def linearize(subs: Sequence[str], shape: Sequence[int]) -> str:
    """The row-major offset of the element at `subs` in an array of `shape`."""
    terms: list[str] = []
    stride = 1
    for d in range(len(subs) - 1, -1, -1):
        terms.append(f"{stride}*({subs[d]})")
        stride *= max(shape[d], 0)
    return " + ".join(reversed(terms)) if terms else "0"


def delinearize(flat: str, shape: Sequence[int]) -> list[str]:
    """The subscripts of the element at row-major offset `flat` of an array of `shape`."""
    out: list[str] = []
    for d in range(len(shape)):
        stride = 1
        for n in shape[d + 1 :]:
            stride *= n
        q = f"({flat})" if stride == 1 else f"floor(({flat})/{stride})"
        # The first subscript needs no wrap (and its size may be dynamic).
        out.append(q if d == 0 else f"{q} mod {shape[d]}")
    return out


_VIEW_DIM = re.compile(r"\b_a(\d+)\b")


def region_through_views(
    v: SSAValue, region: Sequence[tuple[str, str]], expr: Exprs
) -> list[tuple[str, str]] | None:
    """A region of view `v` (constraints on its subscripts `_a0, _a1, ...`) as a region of
    the buffer behind: the view's subscripts become existential variables, tied to the
    buffer's by the views' element map (a run of a vector.load through a reshape, say).
    None when the views have no exact element map."""
    t = v.type
    if not isinstance(t, MemRefType):
        return None
    names = [f"_v{d}" for d in range(len(t.get_shape()))]
    mapped = through_views(v, names, expr)
    if mapped.subs is None:
        return None
    conds = [_VIEW_DIM.sub(lambda m: f"_v{m[1]}", c) for _, c in region]
    last = len(mapped.subs) - 1
    ties = [
        f"_a{d} = {x}" if mapped.span == 1 or d < last else f"{x} <= _a{d} < {x} + {mapped.span}"
        for d, x in enumerate(mapped.subs)
    ]
    inner = " and ".join([*conds, *ties]) or "true"
    return [("", f"exists ({', '.join(names)} : {inner})")] if names else [("", inner)]
