"""The vector dialect: parse, print, verify, the interpreter against NumPy, kernels against it.

Each program computes with vector ops inside a loop; NumPy computes the expected
values independently; the generated kernel (vector values as arrays of lanes in
scalar loops) must equal the interpreter bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

import polykrnl as pk

RNG = np.random.default_rng(7)

LANES = """
func.func @lanes(%a: memref<4x8xf32>, %out: memref<4x8xf32>, %red: memref<4x6xf32>, %x: f32) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant dense<2.0> : vector<4xf32>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 4) {
    %lo = vector.load %a[%i, %c0] : memref<4x8xf32>, vector<4xf32>
    %hi = vector.load %a[%i, %c4] : memref<4x8xf32>, vector<4xf32>
    %f = vector.fma %lo, %hi, %two : vector<4xf32>
    %b = vector.broadcast %x : f32 to vector<4xf32>
    %sp = vector.splat %x : vector<4xf32>
    %s = arith.addf %b, %sp : vector<4xf32>
    %sh = vector.shuffle %lo, %hi [7, 6, 5, 4, 3, 2, 1, 0] : vector<4xf32>, vector<4xf32>
    %sc = vector.shape_cast %sh : vector<8xf32> to vector<2x4xf32>
    %row = vector.extract %sc[1] : vector<4xf32> from vector<2x4xf32>
    %e0 = vector.extract %row[0] : f32 from vector<4xf32>
    %ins = vector.insert %e0, %f [3] : f32 into vector<4xf32>
    %t:4 = vector.to_elements %s : vector<4xf32>
    %fe = vector.from_elements %t#3, %t#2, %t#1, %t#0 : vector<4xf32>
    %mix = arith.mulf %ins, %fe : vector<4xf32>
    vector.store %mix, %out[%i, %c0] : memref<4x8xf32>, vector<4xf32>
    vector.store %row, %out[%i, %c4] : memref<4x8xf32>, vector<4xf32>
    %r0 = vector.reduction <add>, %lo : vector<4xf32> into f32
    %r1 = vector.reduction <mul>, %lo, %x : vector<4xf32> into f32
    %r2 = vector.reduction <maxnumf>, %hi : vector<4xf32> into f32
    %r3 = vector.reduction <minnumf>, %hi : vector<4xf32> into f32
    %r4 = vector.reduction <maximumf>, %lo : vector<4xf32> into f32
    %r5 = vector.reduction <minimumf>, %lo : vector<4xf32> into f32
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    krnl.store %r0, %red[%i, %c0] : memref<4x6xf32>
    krnl.store %r1, %red[%i, %c1] : memref<4x6xf32>
    krnl.store %r2, %red[%i, %c2] : memref<4x6xf32>
    krnl.store %r3, %red[%i, %c3] : memref<4x6xf32>
    krnl.store %r4, %red[%i, %c4] : memref<4x6xf32>
    krnl.store %r5, %red[%i, %c5] : memref<4x6xf32>
  }
  return
}
"""

INTS = """
func.func @ints(%a: memref<3x4xi32>, %red: memref<3x5xi32>) {
  %c0 = arith.constant 0 : index
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 3) {
    %v = vector.load %a[%i, %c0] : memref<3x4xi32>, vector<4xi32>
    %r0 = vector.reduction <maxsi>, %v : vector<4xi32> into i32
    %r1 = vector.reduction <maxui>, %v : vector<4xi32> into i32
    %r2 = vector.reduction <minui>, %v : vector<4xi32> into i32
    %r3 = vector.reduction <xor>, %v : vector<4xi32> into i32
    %r4 = vector.reduction <add>, %v : vector<4xi32> into i32
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    krnl.store %r0, %red[%i, %c0] : memref<3x5xi32>
    krnl.store %r1, %red[%i, %c1] : memref<3x5xi32>
    krnl.store %r2, %red[%i, %c2] : memref<3x5xi32>
    krnl.store %r3, %red[%i, %c3] : memref<3x5xi32>
    krnl.store %r4, %red[%i, %c4] : memref<3x5xi32>
  }
  return
}
"""


def test_vector_ops_print_and_parse_back() -> None:
    for src in (LANES, INTS):
        printed = pk.parse(src).print()
        assert pk.parse(printed).print() == printed
        pk.verify(pk.parse(printed))


def test_vector_value_ops_against_numpy() -> None:
    fn = pk.parse(LANES)["lanes"]
    a = RNG.standard_normal((4, 8)).astype(np.float32)
    a[1, 5] = np.nan  # maxnumf / minnumf skip it, maximumf / minimumf do not (lo half)
    a[2, 1] = np.nan
    x = np.float32(0.75)
    out = np.zeros((4, 8), np.float32)
    red = np.zeros((4, 6), np.float32)
    pk.run_reference(fn, a=a, out=out, red=red, x=x)
    lo, hi = a[:, :4], a[:, 4:]
    fma = (lo.astype(np.longdouble) * hi + 2).astype(np.float32)
    rev = a[:, ::-1]
    ins = fma.copy()
    ins[:, 3] = rev[:, 4]  # row 1 of the shuffle, lane 0
    np.testing.assert_array_equal(out[:, :4], ins * np.float32(1.5))
    np.testing.assert_array_equal(out[:, 4:], rev[:, 4:])
    seq_sum = lo[:, 0] + lo[:, 1] + lo[:, 2] + lo[:, 3]
    np.testing.assert_array_equal(red[:, 0], seq_sum)
    np.testing.assert_array_equal(red[:, 1], x * lo[:, 0] * lo[:, 1] * lo[:, 2] * lo[:, 3])
    np.testing.assert_array_equal(red[:, 2], np.fmax.reduce(hi, axis=1))
    np.testing.assert_array_equal(red[:, 3], np.fmin.reduce(hi, axis=1))
    np.testing.assert_array_equal(red[:, 4], np.maximum.reduce(lo, axis=1))
    assert np.isnan(red[2, 4]) and np.isnan(red[2, 5])
    out_k, red_k = np.zeros_like(out), np.zeros_like(red)
    pk.compile(fn)(a=a, out=out_k, red=red_k, x=x)
    np.testing.assert_array_equal(out_k, out)
    np.testing.assert_array_equal(red_k, red)


def test_integer_reductions_signed_and_unsigned() -> None:
    fn = pk.parse(INTS)["ints"]
    a = np.array([[1, -2, 3, -4], [7, 0, -1, 5], [2**31 - 1, 1, 2, 3]], dtype=np.int32)
    red = np.zeros((3, 5), np.int32)
    pk.run_reference(fn, a=a, red=red)
    u = a.view(np.uint32)
    np.testing.assert_array_equal(red[:, 0], a.max(axis=1))
    np.testing.assert_array_equal(red[:, 1], u.max(axis=1).view(np.int32))
    np.testing.assert_array_equal(red[:, 2], u.min(axis=1).view(np.int32))
    np.testing.assert_array_equal(red[:, 3], np.bitwise_xor.reduce(a, axis=1))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(red[:, 4], a.sum(axis=1, dtype=np.int32))
    red_k = np.zeros_like(red)
    pk.compile(fn)(a=a, red=red_k)
    np.testing.assert_array_equal(red_k, red)


def test_a_vector_load_past_the_end_is_a_located_error() -> None:
    src = LANES.replace("%c4 = arith.constant 4 : index", "%c4 = arith.constant 5 : index")
    fn = pk.parse(src)["lanes"]
    with pytest.raises(pk.InterpretError) as e:
        pk.run_reference(
            fn,
            a=np.zeros((4, 8), np.float32),
            out=np.zeros((4, 8), np.float32),
            red=np.zeros((4, 6), np.float32),
            x=np.float32(0),
        )
    assert "vector.load out of bounds: elements 5..8 of dimension 1 (size 8)" in e.value.message
    assert e.value.location is not None and e.value.location.line == 9


def test_vector_accesses_are_runs_in_the_polyhedral_model() -> None:
    # Each row reads a[i, 0..3] and a[i, 4..7] and writes out[i, 0..7]: rows are
    # independent, so the loop is parallel (a whole-array approximation would not be).
    report = pk.check(pk.parse(LANES)["lanes"])
    assert [lv.status for lv in report.loops] == ["parallel"]
    assert report.approximations == ()


SELECT = """
func.func @relu_like(%a: memref<8xf32>, %m: memref<8xi32>,
                     %out: memref<8xf32>, %pos: memref<8xi32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0.0> : vector<8xf32>
  %izero = arith.constant dense<0> : vector<8xi32>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 1) {
    %v = vector.load %a[%c0] : memref<8xf32>, vector<8xf32>
    %neg = arith.cmpf olt, %v, %zero : vector<8xf32>
    %r = arith.select %neg, %zero, %v : vector<8xi1>, vector<8xf32>
    vector.store %r, %out[%c0] : memref<8xf32>, vector<8xf32>
    %w = vector.load %m[%c0] : memref<8xi32>, vector<8xi32>
    %gt = arith.cmpi ugt, %w, %izero : vector<8xi32>
    %one = arith.constant dense<1> : vector<8xi32>
    %p = arith.select %gt, %one, %izero : vector<8xi1>, vector<8xi32>
    vector.store %p, %pos[%c0] : memref<8xi32>, vector<8xi32>
  }
  return
}
"""


def test_comparisons_and_selects_lane_by_lane() -> None:
    # arith.cmpf / cmpi of vectors give vector<8xi1> (xDSL's own classes give i1), and
    # arith.select takes a vector of conditions in MLIR's two-type syntax.
    printed = pk.parse(SELECT).print()
    assert ": vector<8xi1>, vector<8xf32>" in printed
    assert pk.parse(printed).print() == printed
    fn = pk.parse(SELECT)["relu_like"]
    a = np.array([-1, 2, -0.5, 0, 3, -7, 1, np.nan], np.float32)
    m = np.array([0, 1, -1, 5, 0, -3, 2, 7], np.int32)
    for run in (pk.run_reference, lambda f, **kw: pk.compile(f)(**kw)):
        out, pos = np.zeros(8, np.float32), np.zeros(8, np.int32)
        run(fn, a=a, m=m, out=out, pos=pos)
        np.testing.assert_array_equal(out, np.where(a < 0, 0, a))  # NaN < 0 is false
        np.testing.assert_array_equal(pos, (m.view(np.uint32) > 0).astype(np.int32))


TRANSFERS = """
func.func @transfers(%a: memref<3x10xf32>, %out: memref<3x10xf32>, %col: memref<4x3xf32>,
                     %n: index) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %pad = arith.constant -1.0 : f32
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 3) {
    %v = vector.transfer_read %a[%i, %c6], %pad : memref<3x10xf32>, vector<8xf32>
    %m = vector.create_mask %n : vector<8xi1>
    %w = vector.transfer_read %a[%i, %c0], %pad, %m {in_bounds = [true]} : memref<3x10xf32>, vector<8xf32>
    %s = arith.addf %v, %w : vector<8xf32>
    vector.transfer_write %s, %out[%i, %c0] {in_bounds = [true]} : vector<8xf32>, memref<3x10xf32>
    vector.transfer_write %v, %out[%i, %c4], %m : vector<8xf32>, memref<3x10xf32>
    %c = vector.transfer_read %a[%c0, %i], %pad {permutation_map = affine_map<(d0, d1) -> (d0)>} : memref<3x10xf32>, vector<4xf32>
    vector.transfer_write %c, %col[%c0, %i] {permutation_map = affine_map<(d0, d1) -> (d0)>} : vector<4xf32>, memref<4x3xf32>
  }
  return
}
"""  # noqa: E501


def test_transfers_pad_mask_and_permute_against_numpy() -> None:
    printed = pk.parse(TRANSFERS).print()
    assert pk.parse(printed).print() == printed
    pk.verify(pk.parse(printed))
    fn = pk.parse(TRANSFERS)["transfers"]
    a = RNG.standard_normal((3, 10)).astype(np.float32)
    out, col = np.zeros((3, 10), np.float32), np.zeros((4, 3), np.float32)
    pk.run_reference(fn, a=a, out=out, col=col, n=5)
    pad = np.float32(-1)
    v = np.concatenate([a[:, 6:], np.full((3, 4), pad)], axis=1)  # 4 lanes past the end
    w = np.concatenate([a[:, :5], np.full((3, 3), pad)], axis=1)  # lanes 5.. masked off
    expected = np.zeros((3, 10), np.float32)
    expected[:, :8] = v + w
    expected[:, 4:9] = v[:, :5]  # the masked write: lanes 0..4 only
    np.testing.assert_array_equal(out, expected)
    # col[:, i] = a[0..3, i]: 4 lanes down a column of 3 rows, the last one padded.
    np.testing.assert_array_equal(col, np.concatenate([a[:, :3], np.full((1, 3), pad)]))


def test_a_transfer_past_a_promised_bound_is_a_located_error() -> None:
    src = TRANSFERS.replace(
        "%v = vector.transfer_read %a[%i, %c6], %pad :",
        "%v = vector.transfer_read %a[%i, %c6], %pad {in_bounds = [true]} :",
    )
    fn = pk.parse(src)["transfers"]
    with pytest.raises(pk.InterpretError) as e:
        pk.run_reference(
            fn,
            a=np.zeros((3, 10), np.float32),
            out=np.zeros((3, 10), np.float32),
            col=np.zeros((4, 3), np.float32),
            n=5,
        )
    assert "vector.transfer_read out of bounds: element 10 of dimension 1" in e.value.message
    loc = e.value.location
    assert loc is not None and "%v = vector.transfer_read %a[%i, %c6]" in loc.line_text


def test_transfers_are_boxes_in_the_polyhedral_model() -> None:
    # Rows are independent; only the masked transfers are may-accesses (said so).
    report = pk.check(pk.parse(TRANSFERS)["transfers"])
    assert [lv.status for lv in report.loops] == ["parallel"]
    whys = " ".join(str(a) for a in report.approximations)
    assert len(report.approximations) == 2 and "with a mask" in whys


MASKED = """
func.func @masked(%a: memref<2x6xi32>, %out: memref<2x6xi32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 2) {
    %m = vector.create_mask %n : vector<4xi1>
    %pass = arith.constant dense<7> : vector<4xi32>
    %v = vector.maskedload %a[%i, %c2], %m, %pass : memref<2x6xi32>, vector<4xi1>, vector<4xi32> into vector<4xi32>
    %f = vector.bitcast %v : vector<4xi32> to vector<4xf32>
    %g = vector.bitcast %f : vector<4xf32> to vector<8xi16>
    %h = vector.bitcast %g : vector<8xi16> to vector<4xi32>
    vector.maskedstore %out[%i, %c0], %m, %h : memref<2x6xi32>, vector<4xi1>, vector<4xi32>
  }
  return
}
"""  # noqa: E501


def test_masked_load_store_and_bitcasts_against_numpy() -> None:
    printed = pk.parse(MASKED).print()
    assert pk.parse(printed).print() == printed
    fn = pk.parse(MASKED)["masked"]
    a = RNG.integers(-1000, 1000, (2, 6)).astype(np.int32)
    out = np.zeros((2, 6), np.int32)
    pk.run_reference(fn, a=a, out=out, n=3)
    expected = np.zeros((2, 6), np.int32)
    expected[:, :3] = a[:, 2:5]  # lanes 0..2 on; the pass-through lane 3 is not stored
    np.testing.assert_array_equal(out, expected)
    # A lane that is on past the end is an error; one that is off is never read.
    with pytest.raises(pk.InterpretError, match="lane 3 is on"):
        pk.run_reference(
            pk.parse(MASKED.replace("%c2 = arith.constant 2", "%c2 = arith.constant 3"))["masked"],
            a=a,
            out=out,
            n=4,
        )


LANE_CASTS = """
func.func @casts(%k: memref<8xi32>, %x: memref<8xf32>, %f: memref<4x8xf32>, %i: memref<6x8xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %r = 0 to 1) {
    %n = vector.load %k[%c0] : memref<8xi32>, vector<8xi32>
    %v = vector.load %x[%c0] : memref<8xf32>, vector<8xf32>
    %f0 = arith.sitofp %n : vector<8xi32> to vector<8xf32>
    %f1 = arith.uitofp %n : vector<8xi32> to vector<8xf32>
    %h = arith.truncf %v : vector<8xf32> to vector<8xf16>
    %f2 = arith.extf %h : vector<8xf16> to vector<8xf32>
    %f3 = math.copysign %v, %f0 : vector<8xf32>
    vector.store %f0, %f[%c0, %c0] : memref<4x8xf32>, vector<8xf32>
    vector.store %f1, %f[%c1, %c0] : memref<4x8xf32>, vector<8xf32>
    vector.store %f2, %f[%c2, %c0] : memref<4x8xf32>, vector<8xf32>
    vector.store %f3, %f[%c3, %c0] : memref<4x8xf32>, vector<8xf32>
    %b = arith.trunci %n : vector<8xi32> to vector<8xi8>
    %i0 = arith.extsi %b : vector<8xi8> to vector<8xi32>
    %i1 = arith.extui %b : vector<8xi8> to vector<8xi32>
    %i2 = arith.fptosi %v : vector<8xf32> to vector<8xi32>
    %three = arith.constant dense<3> : vector<8xi32>
    %i3 = arith.shrui %n, %three : vector<8xi32>
    %i4 = arith.muli %n, %n : vector<8xi32>
    %i5 = math.absi %n : vector<8xi32>
    vector.store %i0, %i[%c0, %c0] : memref<6x8xi32>, vector<8xi32>
    vector.store %i1, %i[%c1, %c0] : memref<6x8xi32>, vector<8xi32>
    vector.store %i2, %i[%c2, %c0] : memref<6x8xi32>, vector<8xi32>
    vector.store %i3, %i[%c3, %c0] : memref<6x8xi32>, vector<8xi32>
    vector.store %i4, %i[%c4, %c0] : memref<6x8xi32>, vector<8xi32>
    vector.store %i5, %i[%c5, %c0] : memref<6x8xi32>, vector<8xi32>
  }
  return
}
"""


def test_casts_and_integer_ops_on_vectors_lane_by_lane() -> None:
    printed = pk.parse(LANE_CASTS).print()
    assert "arith.sitofp %n : vector<8xi32> to vector<8xf32>" in printed
    assert pk.parse(printed).print() == printed
    pk.verify(pk.parse(printed))
    fn = pk.parse(LANE_CASTS)["casts"]
    k = np.array([1, -2, 300, -129, 2**31 - 1, -(2**31), 255, 0], np.int32)
    x = np.array([1.5, -2.5, 1e3, -0.0, 7.99, -7.99, 65504, 1e-8], np.float32)
    f, i = np.zeros((4, 8), np.float32), np.zeros((6, 8), np.int32)
    pk.run_reference(fn, k=k, x=x, f=f, i=i)
    np.testing.assert_array_equal(f[0], k.astype(np.float32))
    np.testing.assert_array_equal(f[1], k.view(np.uint32).astype(np.float32))
    np.testing.assert_array_equal(f[2], x.astype(np.float16).astype(np.float32))
    np.testing.assert_array_equal(f[3], np.copysign(x, k.astype(np.float32)))
    np.testing.assert_array_equal(i[0], k.astype(np.int8).astype(np.int32))
    np.testing.assert_array_equal(i[1], k.astype(np.int8).view(np.uint8).astype(np.int32))
    np.testing.assert_array_equal(i[2], np.trunc(x).astype(np.int32))
    np.testing.assert_array_equal(i[3], (k.view(np.uint32) >> 3).view(np.int32))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(i[4], k * k)
    np.testing.assert_array_equal(i[5], np.abs(k))  # abs(INT_MIN) wraps to INT_MIN


@pytest.mark.parametrize(
    ("cast", "message"),
    [
        ("arith.trunci %n : vector<8xi32> to vector<4xi8>", "keeps the shape"),
        ("arith.trunci %n : vector<8xi32> to vector<8xi64>", "must be narrower"),
        ("arith.extsi %n : vector<8xi32> to vector<8xi32>", "must be wider"),
        ("arith.sitofp %n : vector<8xi32> to f32", "keeps the shape"),
    ],
)
def test_lane_casts_verify_shapes_and_widths(cast: str, message: str) -> None:
    src = f"""
func.func @bad(%n: vector<8xi32>) {{
  %b = {cast}
  return
}}
"""
    with pytest.raises(pk.PolykrnlError, match=message):
        pk.verify(pk.parse(src))


INT_LANES = """
func.func @int_lanes(%a: memref<8xi32>, %out: memref<3x8xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ones = arith.constant dense<-1> : vector<8xi32>
  %big = arith.constant dense<2147483647> : vector<8xi32>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 1) {
    %v = vector.load %a[%c0] : memref<8xi32>, vector<8xi32>
    %n = arith.xori %v, %ones : vector<8xi32>
    %s = arith.addi %v, %big : vector<8xi32>
    %p = arith.muli %v, %v : vector<8xi32>
    vector.store %n, %out[%c0, %c0] : memref<3x8xi32>, vector<8xi32>
    vector.store %s, %out[%c1, %c0] : memref<3x8xi32>, vector<8xi32>
    vector.store %p, %out[%c2, %c0] : memref<3x8xi32>, vector<8xi32>
  }
  return
}
"""


def test_integer_lanes_wrap_like_the_scalars() -> None:
    fn = pk.parse(INT_LANES)["int_lanes"]
    a = np.array([0, 1, -1, 5, 2**31 - 1, -(2**31), 65536, -7], np.int32)
    with np.errstate(over="ignore"):
        expected = np.stack([~a, a + np.int32(2**31 - 1), a * a]).astype(np.int32)
    for run in (pk.run_reference, lambda f, **kw: pk.compile(f)(**kw)):
        out = np.zeros((3, 8), np.int32)
        run(fn, a=a, out=out)
        np.testing.assert_array_equal(out, expected)
