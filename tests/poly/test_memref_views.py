"""Accesses through views in the polyhedral model: exact where the view's map is
affine, sound everywhere.

Each test writes a buffer through one view in a first loop and reads it through
another in a second loop, then compares the model's flow dependences between the
two loops with the pairs of instances that touch a common element (a common byte
for views of an i8 pool), computed here with NumPy from the views' definitions.
Equal sets mean the model is exact (no false dependence between views that do
not overlap) and sound (every overlap is a dependence).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import islpy as isl
import numpy as np
import pytest

import polykrnl as pk
from polykrnl.poly import PolyProgram, poly_program
from polykrnl.transforms.dependences import dependences

DTYPES = {"i8": np.int8, "i16": np.int16, "f32": np.float32, "f64": np.float64}
ONE = {"i8": "1", "i16": "1", "f32": "1.0", "f64": "1.0"}


def _flow_pairs(program: PolyProgram, writer: str, reader: str) -> set[tuple[int, ...]]:
    """(writer instance..., reader instance...) of the RAW dependences writer -> reader."""
    out: set[tuple[int, ...]] = set()

    def add(p: isl.Point) -> None:
        n = p.get_space().dim(isl.dim_type.set)
        out.add(tuple(p.get_coordinate_val(isl.dim_type.set, k).to_python() for k in range(n)))

    for d in dependences(program).deps:
        if d.kind == "RAW" and d.source == writer and d.sink == reader:
            d.relation.wrap().foreach_point(add)
    return out


def _statements(program: PolyProgram) -> tuple[str, str]:
    """The writer (first loop) and the reader (second loop) statements."""
    looped = [s.name for s in program.statements if s.dims]
    assert len(looped) == 2, [str(s) for s in program.statements]
    return looped[0], looped[1]


# ------------------------------------------------------------------ views of an i8 pool

POOL = """
func.func @f(%out: memref<{nb}x{tb}>) {{
  %ca = arith.constant {sa} : index
  %cb = arith.constant {sb} : index
  %pool = memref.alloc() : memref<{p}xi8>
  %a = memref.view %pool[%ca][] : memref<{p}xi8> to memref<{na}x{ta}>
  %b = memref.view %pool[%cb][] : memref<{p}xi8> to memref<{nb}x{tb}>
  %c = arith.constant {one} : {ta}
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to {na}) {{
    krnl.store %c, %a[%i] : memref<{na}x{ta}>
  }}
  %m = krnl.define_loops 1
  krnl.iterate(%m) with (%m -> %j = 0 to {nb}) {{
    %v = krnl.load %b[%j] : memref<{nb}x{tb}>
    krnl.store %v, %out[%j] : memref<{nb}x{tb}>
  }}
  memref.dealloc %pool : memref<{p}xi8>
  return
}}
"""

# (element type, byte shift, elements) of the written view, then of the read one.
POOL_CASES = [
    ("f32", 0, 4, "f32", 16, 4),  # side by side: no dependence at all
    ("f32", 0, 4, "f32", 0, 4),  # the same bytes: element i feeds element i
    ("f32", 0, 4, "f32", 4, 4),  # shifted by one element
    ("f32", 0, 4, "f32", 2, 4),  # misaligned: each read overlaps two writes
    ("f64", 0, 2, "f32", 4, 3),  # wider writes
    ("i8", 3, 8, "f32", 0, 4),  # byte writes into float reads
    ("f32", 8, 3, "i16", 6, 6),
    ("i8", 0, 16, "i8", 5, 8),
]


@pytest.mark.parametrize(("ta", "sa", "na", "tb", "sb", "nb"), POOL_CASES)
def test_views_of_one_pool_depend_where_their_bytes_overlap(
    ta: str, sa: int, na: int, tb: str, sb: int, nb: int
) -> None:
    src = POOL.format(ta=ta, sa=sa, na=na, tb=tb, sb=sb, nb=nb, p=32, one=ONE[ta])
    program = poly_program(pk.parse(src)["f"])
    w, r = _statements(program)
    wa, wb = np.dtype(DTYPES[ta]).itemsize, np.dtype(DTYPES[tb]).itemsize
    expected = {
        (i, j)
        for i, j in itertools.product(range(na), range(nb))
        if set(range(sa + wa * i, sa + wa * (i + 1))) & set(range(sb + wb * j, sb + wb * (j + 1)))
    }
    assert _flow_pairs(program, w, r) == expected
    assert not [a for s in program.statements for a in s.approximations]
    # The interpreter and the NumPy kernel read the bytes NumPy's views of one byte
    # buffer give (polykrnl fills a new integer buffer with zeros).
    pool = np.zeros(32, np.int8)
    pool[sa : sa + wa * na].view(DTYPES[ta])[:] = 1
    want = pool[sb : sb + wb * nb].view(DTYPES[tb])
    fn = pk.parse(src)["f"]
    for run in (lambda **kw: pk.run_reference(fn, **kw), pk.compile(fn)):
        out = np.zeros(nb, DTYPES[tb])
        run(out=out)
        np.testing.assert_array_equal(out, want)


def test_temporaries_side_by_side_in_a_pool_leave_the_loops_parallel() -> None:
    # The corpus softmax keeps its row max and row sum in two views of one pool.
    fn = pk.load(Path(__file__).parent.parent / "corpus" / "softmax_pool_view.mlir")
    report = pk.check(fn["softmax"])
    verdicts = {lv.loop: lv.status for lv in report.loops}
    assert "reduction" in verdicts.values() and "forward" not in verdicts.values(), verdicts
    assert not report.approximations


def test_a_view_at_a_shift_known_only_at_run_time_is_exact_too() -> None:
    src = """
func.func @f(%s: index, %out: memref<4xf32>) {
  %pool = memref.alloc() : memref<64xi8>
  %a = memref.view %pool[%s][] : memref<64xi8> to memref<4xf32>
  %c = arith.constant 1.0 : f32
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 4) {
    krnl.store %c, %a[%i] : memref<4xf32>
    %v = krnl.load %a[%i] : memref<4xf32>
    krnl.store %v, %out[%i] : memref<4xf32>
  }
  return
}
"""
    report = pk.check(pk.parse(src)["f"])
    assert [lv.status for lv in report.loops] == ["parallel"]
    assert not report.approximations


# ------------------------------------------------------------------ reshape, reinterpret_cast,
# subview and cast of one buffer

VIEWS = """
func.func @f(%buf: memref<{shape}xf32>, %out: memref<{rshape}xf32>) {{
  %c = arith.constant 1.0 : f32
{wdef}
{rdef}
  %l:{wrank} = krnl.define_loops {wrank}
  krnl.iterate({wloops}) with ({wranges}) {{
    krnl.store %c, %w[{wsubs}] : {wtype}
  }}
  %m:{rrank} = krnl.define_loops {rrank}
  krnl.iterate({rloops}) with ({rranges}) {{
    %v = krnl.load %r[{rsubs}] : {rtype}
    krnl.store %v, %out[{rsubs}] : memref<{rshape}xf32>
  }}
  return
}}
"""

#: a view named %NAME of %buf: its definition and its type
View = tuple[str, str]


def _dims(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape))


def _list(xs: tuple[int, ...]) -> str:
    return ", ".join(map(str, xs))


def _reshape(name: str, to: tuple[int, ...]) -> View:
    # The shape operand as onnx-mlir builds it: an alloc filled by affine.store.
    t = f"memref<{_dims(to)}xf32>"
    st = f"memref<{len(to)}xindex>"
    lines = [f"  %{name}_shape = memref.alloc() : {st}"]
    for d, n in enumerate(to):
        lines.append(f"  %{name}_{d} = arith.constant {n} : index")
        lines.append(f"  affine.store %{name}_{d}, %{name}_shape[{d}] : {st}")
    lines.append(
        f"  %{name} = memref.reshape %buf(%{name}_shape) : "
        f"(memref<{_dims(SHAPE)}xf32>, {st}) -> {t}"
    )
    return "\n".join(lines), t


def _reinterpret(name: str, off: int, to: tuple[int, ...], strides: tuple[int, ...]) -> View:
    t = f"memref<{_dims(to)}xf32, strided<[{_list(strides)}], offset: {off}>>"
    return (
        f"  %{name} = memref.reinterpret_cast %buf to offset: [{off}], sizes: [{_list(to)}], "
        f"strides: [{_list(strides)}] : memref<{_dims(SHAPE)}xf32> to {t}",
        t,
    )


def _subview(name: str, offs: tuple[int, ...], to: tuple[int, ...], steps: tuple[int, ...]) -> View:
    lin = [int(np.prod(SHAPE[d + 1 :])) for d in range(len(SHAPE))]
    off = sum(o * s for o, s in zip(offs, lin, strict=True))
    strides = tuple(s * k for s, k in zip(lin, steps, strict=True))
    t = f"memref<{_dims(to)}xf32, strided<[{_list(strides)}], offset: {off}>>"
    return (
        f"  %{name} = memref.subview %buf[{_list(offs)}] [{_list(to)}] [{_list(steps)}] : "
        f"memref<{_dims(SHAPE)}xf32> to {t}",
        t,
    )


def _cast(name: str) -> View:
    t = f"memref<{_dims(SHAPE)}xf32>"
    return f"  %{name} = memref.cast %buf : {t} to {t}", t


# Each view as polykrnl reads it and as NumPy builds it from the buffer's element numbers.
SHAPE = (2, 3, 4)
IDS = np.arange(24).reshape(SHAPE)
FLAT = IDS.reshape(-1)
VIEW_KINDS: dict[str, tuple[Callable[[str], View], np.ndarray]] = {
    "reshape 2x12": (lambda n: _reshape(n, (2, 12)), IDS.reshape(2, 12)),
    "reshape 6x4": (lambda n: _reshape(n, (6, 4)), IDS.reshape(6, 4)),
    "reshape 24": (lambda n: _reshape(n, (24,)), FLAT),
    "transpose cast": (
        lambda n: _reinterpret(n, 0, (4, 6), (1, 4)),
        np.lib.stride_tricks.as_strided(FLAT, (4, 6), (8, 32)),
    ),
    "offset cast": (
        lambda n: _reinterpret(n, 5, (3, 5), (6, 1)),
        np.lib.stride_tricks.as_strided(FLAT[5:], (3, 5), (48, 8)),
    ),
    "subview": (lambda n: _subview(n, (1, 0, 1), (1, 3, 3), (1, 1, 1)), IDS[1:2, 0:3, 1:4]),
    "strided subview": (
        lambda n: _subview(n, (0, 1, 0), (2, 2, 2), (1, 1, 2)),
        IDS[0:2, 1:3, 0:4:2],
    ),
    "cast": (_cast, IDS),
}


def _loops(handle: str, iv: str, shape: tuple[int, ...]) -> dict[str, str]:
    return {
        "loops": ", ".join(f"%{handle}#{d}" for d in range(len(shape))),
        "ranges": ", ".join(f"%{handle}#{d} -> %{iv}{d} = 0 to {s}" for d, s in enumerate(shape)),
        "subs": ", ".join(f"%{iv}{d}" for d in range(len(shape))),
    }


@pytest.mark.parametrize(
    ("write", "read"),
    [
        ("reshape 2x12", "reshape 6x4"),
        ("reshape 24", "transpose cast"),
        ("transpose cast", "offset cast"),
        ("subview", "reshape 2x12"),
        ("strided subview", "subview"),
        ("offset cast", "cast"),
        ("cast", "strided subview"),
    ],
)
def test_views_of_one_buffer_depend_where_their_elements_are_the_same(
    write: str, read: str
) -> None:
    make_w, wids = VIEW_KINDS[write]
    make_r, rids = VIEW_KINDS[read]
    (wdef, wtype), (rdef, rtype) = make_w("w"), make_r("r")
    wshape, rshape = wids.shape, rids.shape
    wl, rl = _loops("l", "i", wshape), _loops("m", "j", rshape)
    src = VIEWS.format(
        shape=_dims(SHAPE),
        rshape=_dims(rshape),
        wrank=len(wshape),
        rrank=len(rshape),
        wdef=wdef,
        rdef=rdef,
        wtype=wtype,
        rtype=rtype,
        wloops=wl["loops"],
        wranges=wl["ranges"],
        wsubs=wl["subs"],
        rloops=rl["loops"],
        rranges=rl["ranges"],
        rsubs=rl["subs"],
    )
    fn = pk.parse(src)["f"]
    program = poly_program(fn)
    w, r = _statements(program)
    expected = {
        (*wi, *ri)
        for wi in np.ndindex(*wshape)
        for ri in np.ndindex(*rshape)
        if wids[wi] == rids[ri]
    }
    assert _flow_pairs(program, w, r) == expected
    assert not [a for s in program.statements for a in s.approximations]
    # The interpreter reads what the views name too.
    buf = np.arange(24, dtype=np.float32).reshape(SHAPE)
    out = np.zeros(rshape, np.float32)
    pk.run_reference(fn, buf=buf, out=out)
    np.testing.assert_array_equal(out, np.where(np.isin(rids, wids), 1.0, rids))


def test_a_view_with_a_dynamic_stride_is_the_whole_buffer() -> None:
    src = """
func.func @f(%buf: memref<24xf32>, %s: index, %out: memref<4xf32>) {
  %c = arith.constant 1.0 : f32
  %v = memref.reinterpret_cast %buf to offset: [0], sizes: [4], strides: [%s]
    : memref<24xf32> to memref<4xf32, strided<[?]>>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 4) {
    krnl.store %c, %v[%i] : memref<4xf32, strided<[?]>>
    %x = krnl.load %buf[%i] : memref<24xf32>
    krnl.store %x, %out[%i] : memref<4xf32>
  }
  return
}
"""
    report = pk.check(pk.parse(src)["f"])
    assert [lv.status for lv in report.loops] != ["parallel"]
    assert any(
        "through a view" in a and "memref.reinterpret_cast has no exact map" in a
        for a in report.approximations
    ), report.approximations
