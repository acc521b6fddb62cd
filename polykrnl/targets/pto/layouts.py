"""A nest that only moves a tensor into a convolution layout: one TTRANS on ConvTiles.

onnx-mlir writes a layout conversion as a nest whose one statement stores a load:
``Y[n, c1, h, w, c0] = X[n, c1 * C0 + c0, h, w]`` (NCHW -> NC1HWC0, C0 elements of 32
bytes), its inverse ``Y[n, c, h, w] = X[n, c floordiv C0, h, w, c mod C0]``, the grouped
GNCHW -> GNC1HWC0 (the same with an outer G), the weight layouts NC1HWC0 -> FRACTAL_Z
``Y[(c1 * H + h) * W + w, n floordiv N0, n mod N0, c0] = X[n, c1, h, w, c0]`` and
GNC1HWC0 -> FRACTAL_Z (G outermost in the first dimension), or NCDHW -> FRACTAL_Z_3D.
Which one a nest is, is decided on its access relations: the map from each element of Y
to the element of X it receives must be the conversion's, and every element of Y must
receive one (so no subscript pattern is matched by hand). The element mappings are those
of pto-isa's CPU simulator (include/pto/cpu/TTrans.hpp). GNC1HWC0 -> GNCHW is not here:
pto-isa's CPU TTRANS has no branch for it (the call leaves the destination as it was).

The whole tensor is one tile: a TLOAD of X into a Vec tile, the TTRANS between ConvTiles
declared over the two tiles' bytes (with the rule's tmp tile), a TSTORE of Y. C must be
a multiple of C0 (and N of N0 = 16 for the FRACTAL_Z layouts): the instruction leaves the
padding lanes as they were, so a padded conversion needs them zeroed first.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import islpy as isl
import sympy  # type: ignore[import-untyped]

from polykrnl.poly import Statement
from polykrnl.targets.pto import tmp_rules
from polykrnl.targets.pto.dtypes import ALIGN_BYTES
from polykrnl.targets.pto.krnl_ops import is_load, is_store
from polykrnl.targets.pto.lowering_state import KernelBuilder, lowering_error
from polykrnl.targets.pto.program import ConvForm, GlobalView, Instr, Item, Scalar
from polykrnl.targets.pto.types import Layout, Loc, TileType

__all__ = ["Conversion", "conversion_of", "lower_conversion"]

N0 = 16  # the N blocks of FRACTAL_Z and FRACTAL_Z_3D (the cube's fractal)


@dataclass(frozen=True)
class _Kind:
    rule: str
    src: Layout
    dst: Layout
    src_rank: int
    dst_rank: int
    # source shape, C0 -> destination shape
    dst_shape: Callable[[tuple[int, ...], int], tuple[int, ...]]
    # isl constraints tying destination indices `d0..` to source indices `s0..`
    relation: Callable[[tuple[int, ...], tuple[int, ...], int], str]
    # the multiple the source's C (and N) must be of
    whole: Callable[[tuple[int, ...], int], bool]
    # why a conversion that is recognized is nevertheless not lowered ("": it is)
    refused: str = ""


def _nchw_nc1hwc0(s: tuple[int, ...], c0: int) -> tuple[int, ...]:
    n, c, h, w = s
    return (n, -(-c // c0), h, w, c0)


def _nc1hwc0_nchw(s: tuple[int, ...], c0: int) -> tuple[int, ...]:
    n, c1, h, w, k0 = s
    # a block other than 32 bytes is not NC1HWC0's C0 (pto-isa asserts the ConvTile's C0)
    return (n, c1 * k0, h, w) if k0 == c0 else ()


def _ncdhw_fz3d(s: tuple[int, ...], c0: int) -> tuple[int, ...]:
    n, c, d, h, w = s
    return (d * -(-c // c0) * h * w, -(-n // N0), N0, c0)


def _gnchw_gnc1hwc0(s: tuple[int, ...], c0: int) -> tuple[int, ...]:
    g, n, c, h, w = s
    return (g, n, -(-c // c0), h, w, c0)


def _to_fractal_z(s: tuple[int, ...], c0: int) -> tuple[int, ...]:
    # [G,] N, C1, H, W, C0 -> [G * C1 * H * W, N1, N0, C0]. pto-isa's CPU TTRANS reads C0
    # off the destination and only checks the source's equals it; a block other than 32
    # bytes is not NC1HWC0's C0, so no destination shape matches it
    *g, n, c1, h, w, k0 = s
    if k0 != c0:
        return ()
    return (math.prod(g) * c1 * h * w, -(-n // N0), N0, c0)


KINDS = (
    _Kind(
        "TTRANS_NCHW_NC1HWC0", Layout.NCHW, Layout.NC1HWC0, 4, 5, _nchw_nc1hwc0,
        lambda s, d, c0: f"d0 = s0 and s1 = {c0} * d1 + d4 and d2 = s2 and d3 = s3",
        lambda s, c0: s[1] % c0 == 0,
    ),
    _Kind(
        "TTRANS_NC1HWC0_NCHW", Layout.NC1HWC0, Layout.NCHW, 5, 4, _nc1hwc0_nchw,
        lambda s, d, c0: f"d0 = s0 and d1 = {c0} * s1 + s4 and d2 = s2 and d3 = s3",
        lambda s, c0: s[4] == c0,
    ),
    _Kind(
        "TTRANS_NCDHW_FRACTAL_Z_3D", Layout.NCDHW, Layout.FRACTAL_Z_3D, 5, 4, _ncdhw_fz3d,
        # d0 = ((d * C1 + c1) * H + h) * W + w, n = N0 * d1 + d2, c = C0 * c1 + d3
        lambda s, d, c0: (
            f"exists c1: s1 = {c0} * c1 + d3 and s0 = {N0} * d1 + d2 and "
            f"d0 = ((s2 * {-(-s[1] // c0)} + c1) * {s[3]} + s3) * {s[4]} + s4"
        ),
        lambda s, c0: s[1] % c0 == 0 and s[0] % N0 == 0,
    ),
    _Kind(
        "TTRANS_GNCHW_GNC1HWC0", Layout.GNCHW, Layout.GNC1HWC0, 5, 6, _gnchw_gnc1hwc0,
        lambda s, d, c0: (
            f"d0 = s0 and d1 = s1 and s2 = {c0} * d2 + d5 and d3 = s3 and d4 = s4"
        ),
        lambda s, c0: s[2] % c0 == 0,
    ),
    _Kind(
        "TTRANS_NC1HWC0_FRACTAL_Z", Layout.NC1HWC0, Layout.FRACTAL_Z, 5, 4, _to_fractal_z,
        # d0 = (c1 * H + h) * W + w, n = N0 * d1 + d2, the C0 lanes in place
        lambda s, d, c0: (
            f"d0 = (s1 * {s[2]} + s2) * {s[3]} + s3 and s0 = {N0} * d1 + d2 and d3 = s4"
        ),
        lambda s, c0: s[0] % N0 == 0,
    ),
    _Kind(
        "TTRANS_GNC1HWC0_FRACTAL_Z", Layout.GNC1HWC0, Layout.FRACTAL_Z, 6, 4, _to_fractal_z,
        # d0 = ((g * C1 + c1) * H + h) * W + w: G is the outermost part of the first
        # dimension (pto-isa's comment says C1HWG; its CPU code and A2/A3's put G first)
        lambda s, d, c0: (
            f"d0 = ((s0 * {s[2]} + s2) * {s[3]} + s3) * {s[4]} + s4 and "
            f"s1 = {N0} * d1 + d2 and d3 = s5"
        ),
        lambda s, c0: s[1] % N0 == 0,
    ),
    _Kind(
        "TTRANS_GNC1HWC0_GNCHW", Layout.GNC1HWC0, Layout.GNCHW, 6, 5,
        lambda s, c0: (s[0], s[1], s[2] * s[5], s[3], s[4]),
        lambda s, d, c0: (
            f"d0 = s0 and d1 = s1 and d2 = {c0} * s2 + s5 and d3 = s3 and d4 = s4"
        ),
        lambda s, c0: s[5] == c0,
        refused=(
            "pto-isa's CPU simulator has no GNC1HWC0 -> GNCHW (its TTRANS leaves the "
            "destination as it was), so polykrnl could not check the kernel"
        ),
    ),
)  # fmt: skip


# the destination layouts that also block N (into N1 x N0), and pad it
_N_BLOCKED = (Layout.FRACTAL_Z, Layout.FRACTAL_Z_3D)


@dataclass(frozen=True)
class Conversion:
    """A nest recognized as a layout conversion: tensors, their shapes, the instruction."""

    src: str
    dst: str
    form: ConvForm
    # C not a multiple of C0 (or N of N0): the destination has lanes no source element
    # fills, which TTRANS leaves as they were
    padded: bool = False


def conversion_of(b: KernelBuilder, statements: list[Statement]) -> Conversion | None:
    """The conversion the nest's statements perform, or None (not a conversion nest)."""
    if len(statements) != 1:
        return None
    s = statements[0]
    if not is_store(s.anchor):
        return None
    value = s.anchor.operands[0]
    load = getattr(value, "op", None)
    if load is None or not is_load(load):
        return None
    dst = b.tensor_of_value.get(s.anchor.operands[1])
    src = b.tensor_of_value.get(load.operands[0])
    if dst is None or src is None:
        return None
    sp, dp = b.tensors[src], b.tensors[dst]
    if not all(isinstance(x, sympy.Integer) for x in (*sp.shape, *dp.shape)):
        return None
    src_shape = tuple(int(x) for x in sp.shape)
    dst_shape = tuple(int(x) for x in dp.shape)
    c0 = ALIGN_BYTES // sp.dtype.size
    for kind in KINDS:
        if (len(src_shape), len(dst_shape)) != (kind.src_rank, kind.dst_rank):
            continue
        if kind.dst_shape(src_shape, c0) != dst_shape:
            continue
        moved = _moves(s, src, dst, src_shape, dst_shape, kind.relation(src_shape, dst_shape, c0))
        if moved is None:
            continue
        if kind.refused:
            raise lowering_error(
                s,
                f"{src} {src_shape} -> {dst} {dst_shape} is a {kind.src.name} -> "
                f"{kind.dst.name} conversion, not lowered: {kind.refused}",
                hint=f"fold G into N ({src} as {src_shape[0] * src_shape[1]} x "
                f"{' x '.join(map(str, src_shape[2:]))}, {dst} likewise, e.g. with "
                "memref.reinterpret_cast): the same bytes are then an NC1HWC0 -> NCHW "
                "conversion, which is lowered",
            )
        form = ConvForm(kind.rule, kind.src, kind.dst, src_shape, dst_shape)
        return Conversion(src, dst, form, padded=not (moved and kind.whole(src_shape, c0)))
    return None


def _moves(
    s: Statement,
    src: str,
    dst: str,
    src_shape: tuple[int, ...],
    dst_shape: tuple[int, ...],
    relation: str,
) -> bool | None:
    """None when the statement does not move elements of `src` to `dst` as `relation`
    (constraints on d0.. and s0..) says; else whether it gives every element of `dst`
    one (False: the padding lanes get none)."""
    writes = [a for a in s.accesses if a.write and a.array == dst]
    reads = [a for a in s.accesses if not a.write and a.array == src]
    if len(writes) != 1 or len(reads) != 1 or writes[0].may or reads[0].may:
        return None
    w, r = writes[0].relation, reads[0].relation
    moved = w.reverse().apply_range(r)  # dst element -> the src element it receives
    if moved.dim(isl.dim_type.param):
        return None
    dn, sn = w.get_tuple_name(isl.dim_type.out), r.get_tuple_name(isl.dim_type.out)
    dvars = ", ".join(f"d{k}" for k in range(len(dst_shape)))
    svars = ", ".join(f"s{k}" for k in range(len(src_shape)))
    dbox = " and ".join(f"0 <= d{k} < {n}" for k, n in enumerate(dst_shape))
    sbox = " and ".join(f"0 <= s{k} < {n}" for k, n in enumerate(src_shape))
    want = isl.Map(f"{{ {dn}[{dvars}] -> {sn}[{svars}] : {relation} and {dbox} and {sbox} }}")
    whole = isl.Set(f"{{ {dn}[{dvars}] : {dbox} }}")
    try:
        if not moved.is_equal(want):
            return None
        return bool(moved.domain().is_equal(whole))
    except isl.Error:
        return None


def lower_conversion(
    b: KernelBuilder, conv: Conversion, s: Statement, zeroed: bool = False
) -> list[Item]:
    """TLOAD the source whole, TTRANS between ConvTiles over the two tiles, TSTORE; a padded
    conversion after a `krnl.memset` of the destination to 0 (`zeroed`) fills the tile with
    0 first (TEXPANDS), so the padding lanes are the memset's zeros."""
    form = conv.form
    if conv.padded and not zeroed:
        c0 = form.dst_shape[-1] if form.dst_layout is not Layout.NCHW else form.src_shape[-1]
        raise lowering_error(
            s,
            f"{conv.src} {form.src_shape} -> {conv.dst} {form.dst_shape} is a "
            f"{form.src_layout.name} -> {form.dst_layout.name} conversion with padding "
            f"(C0 = {c0}" + (f", N0 = {N0}" if form.dst_layout in _N_BLOCKED else "")
            + "): TTRANS leaves the padding lanes as they were",
            hint=f"krnl.memset {conv.dst} to 0 right before the nest (the padding is then "
            "zeros), or pad the channels to a multiple of C0 in the program",
        )  # fmt: skip
    dt = b.tensors[conv.src].dtype
    src_rows, src_cols = _flat(form.src_shape, dt.size)
    dst_rows, dst_cols = _flat(form.dst_shape, dt.size)
    if src_cols * dt.size % ALIGN_BYTES or dst_cols * dt.size % ALIGN_BYTES:
        raise lowering_error(
            s,
            f"{conv.src} {form.src_shape} -> {conv.dst} {form.dst_shape}: the innermost "
            "dimensions are not a multiple of 32 bytes (PTO's row alignment)",
        )
    x = b.tile(conv.src.lower(), TileType(Loc.Vec, dt, src_rows, src_cols), "tile")
    y = b.tile(conv.dst.lower(), TileType(Loc.Vec, dt, dst_rows, dst_cols), "tile")
    tmp = b.tile("ttrans_tmp", tmp_rules.tmp_tile(form.rule, b.arch, dtype=dt,
                                                   **form.tmp_sizes()), "tmp")  # fmt: skip
    b.tmp_conv[tmp] = (form, dt)
    note = f"{s.name}: {form.src_layout.name} -> {form.dst_layout.name}"
    load = _whole(conv.src, src_rows, src_cols)
    store = _whole(conv.dst, dst_rows, dst_cols)
    fill: list[Item] = []
    if conv.padded:
        fill = [Instr("TEXPANDS", y, (Scalar(0.0),), comment=f"{s.name}: the padding is 0")]
    return [
        Instr("TLOAD", x, (load,), comment=f"{s.name}: {conv.src}"),
        *fill,
        Instr("TTRANS", y, (x,), tmp=tmp, comment=note, conv=form),
        Instr("TSTORE", store, (y,), comment=f"{s.name}: {conv.dst}"),
    ]


def _flat(shape: tuple[int, ...], size: int) -> tuple[int, int]:
    """A contiguous tensor as a row-major 2-D tile: the innermost dimensions that make a
    row of at least 32 bytes, the rest as rows."""
    cols = 1
    for k in range(len(shape) - 1, -1, -1):
        cols *= shape[k]
        if cols * size >= ALIGN_BYTES:
            break
    return math.prod(shape) // cols, cols


def _whole(tensor: str, rows: int, cols: int) -> GlobalView:
    r, c = sympy.Integer(rows), sympy.Integer(cols)
    return GlobalView(tensor, sympy.Integer(0), r, c, c)
