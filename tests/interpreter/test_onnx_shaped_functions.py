"""Functions shaped as onnx-mlir writes them, run by the interpreter against NumPy.

tests/corpus/onnx_*.mlir: returned allocations, an i8 memory pool with
memref.view, memref.reshape / reinterpret_cast / cast, dynamic shapes. NumPy
computes each expected result independently; the differential test
(tests/codegen/test_numpy_differential.py) holds the NumPy kernels to the
interpreter on the same files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import polykrnl as pk
from tests.parsed import load

CORPUS = Path(__file__).parent.parent / "corpus"
RNG = np.random.default_rng(5)


def _fn(file: str, name: str) -> pk.Function:
    return load(CORPUS / file)[name]


def test_an_allocated_result_is_returned() -> None:
    x = RNG.standard_normal((10, 10)).astype(np.float32)
    out = pk.run_reference(_fn("onnx_returned_alloc.mlir", "exp_result"), arg0=x)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-6)
    fn = _fn("onnx_returned_alloc.mlir", "exp_result")
    # the exact kernel computes exp in float64 rounded once, as the interpreter does
    np.testing.assert_array_equal(pk.compile(fn, reassociate=False)(arg0=x), out)
    np.testing.assert_allclose(pk.compile(fn)(arg0=x), out, rtol=2e-7)


def test_several_results_and_one_buffer_returned_twice() -> None:
    x = RNG.standard_normal(6).astype(np.float32)
    fn = _fn("onnx_returned_alloc.mlir", "split_signs")
    for run in (lambda: pk.run_reference(fn, arg0=x), lambda: pk.compile(fn)(arg0=x)):
        pos, neg, again = run()
        np.testing.assert_array_equal(pos, np.maximum(x, 0))
        np.testing.assert_array_equal(neg, np.minimum(x, 0))
        assert again is pos  # the same buffer, as the function returns it


def test_dynamic_shapes_come_from_the_arguments() -> None:
    fn = _fn("onnx_dynamic_add.mlir", "dynamic_add")
    for shape in [(3, 5), (1, 7), (0, 4)]:
        a = RNG.standard_normal(shape).astype(np.float32)
        b = RNG.standard_normal(shape).astype(np.float32)
        out = pk.run_reference(fn, a=a, b=b)
        assert out.shape == shape
        np.testing.assert_array_equal(out, a + b)
        np.testing.assert_array_equal(pk.compile(fn)(a=a, b=b), out)


def test_softmax_with_its_temporaries_in_an_i8_pool() -> None:
    fn = _fn("onnx_softmax_pool.mlir", "softmax")
    x = RNG.standard_normal((4, 8)).astype(np.float32)
    out = pk.run_reference(fn, x=x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(pk.compile(fn, reassociate=False)(x=x), out)
    np.testing.assert_allclose(pk.compile(fn)(x=x), out, rtol=1e-6)
    # Each element of a view is the 4 bytes of the pool it occupies: the two views do
    # not overlap, so every row loop is parallel and nothing is approximated.
    report = pk.check(fn)
    assert report.approximations == ()
    verdicts = [lv.status for lv in report.loops]
    assert verdicts.count("parallel") >= 3 and "reduction" in verdicts


OVERLAPPING_VIEWS = """
func.func @shift(%out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  %pool = memref.alloc() : memref<24xi8>
  %a = memref.view %pool[%c0][] : memref<24xi8> to memref<4xf32>
  %b = memref.view %pool[%c8][] : memref<24xi8> to memref<4xf32>
  %z = krnl.define_loops 1
  krnl.iterate(%z) with (%z -> %i = 0 to 4) {
    krnl.store %one, %a[%i] : memref<4xf32>
  }
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 4) {
    %v = krnl.load %a[%i] : memref<4xf32>
    %w = arith.addf %v, %one : f32
    krnl.store %w, %b[%i] : memref<4xf32>
    krnl.store %w, %out[%i] : memref<4xf32>
  }
  return
}
"""


def test_overlapping_views_of_a_pool_depend_on_each_other() -> None:
    # b starts 8 bytes (2 floats) into a: b[i] is a[i + 2], so iteration i writes what
    # iteration i + 2 reads. The loop must not be parallel.
    fn = pk.parse(OVERLAPPING_VIEWS)["shift"]
    report = pk.check(fn)
    (second,) = [lv for lv in report.loops if lv.loop != "i"]
    assert second.status != "parallel" and (second.distance_min, second.distance_max) == (2, 2)
    out = np.zeros(4, np.float32)
    pk.run_reference(fn, out=out)
    np.testing.assert_array_equal(out, [2, 2, 3, 3])  # a[2], a[3] were b[0], b[1]
    kernel_out = np.zeros(4, np.float32)
    pk.compile(fn)(out=kernel_out)
    np.testing.assert_array_equal(kernel_out, out)


def test_reshape_reads_the_elements_in_row_major_order() -> None:
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    out = pk.run_reference(_fn("onnx_reshape.mlir", "flatten_scale"), arg0=x)
    np.testing.assert_array_equal(out, 2 * x.reshape(2, 12))


def test_reinterpret_cast_strides_and_cast() -> None:
    x = RNG.standard_normal(12).astype(np.float32)
    out = pk.run_reference(_fn("onnx_reshape.mlir", "transpose_view"), arg0=x)
    # strides [1, 3]: element (i, j) is x[i + 3 j], i.e. x seen as 4 x 3, transposed.
    np.testing.assert_array_equal(out, x.reshape(4, 3).T)
    np.testing.assert_array_equal(
        pk.compile(_fn("onnx_reshape.mlir", "transpose_view"))(arg0=x), out
    )


def test_views_beyond_their_buffer_are_refused() -> None:
    src = (CORPUS / "onnx_softmax_pool.mlir").read_text()
    bad = src.replace("%sm = memref.view %pool[%c16][]", "%sm = memref.view %pool[%c0][]", 1)
    bad = bad.replace("%c0 = arith.constant 0 : index", "%c0 = arith.constant 24 : index", 1)
    fn = pk.parse(bad)["softmax"]
    try:
        pk.run_reference(fn, x=np.zeros((4, 8), np.float32))
    except pk.InterpretError as e:
        assert "memref.view of 16 bytes at byte 24 of a buffer of 32 bytes" in e.message
        assert e.location is not None and e.location.line == 8
    else:
        raise AssertionError("a view past the end of its pool ran")


SIZES = """
func.func @sizes(%a: memref<?x?xf32>, %out: memref<4xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 2) {
    %d = memref.dim %a, %i : memref<?x?xf32>
    %e = "krnl.dim"(%a, %i) : (memref<?x?xf32>, index) -> index
    %s = arith.addi %d, %e : index
    krnl.store %d, %out[%i] : memref<4xindex>
    %j = arith.addi %i, %c1 : index
    %k = arith.addi %j, %c1 : index
    krnl.store %s, %out[%k] : memref<4xindex>
  }
  return
}
"""


def test_dimensions_read_inside_the_loops() -> None:
    fn = pk.parse(SIZES)["sizes"]
    a = np.zeros((3, 5), np.float32)
    for run in (pk.run_reference, lambda f, **kw: pk.compile(f)(**kw)):
        out = np.zeros(4, np.int64)
        run(fn, a=a, out=out)
        np.testing.assert_array_equal(out, [3, 5, 6, 10])


BOUNDARY = """
func.func @boundary(%a: memref<4xf32>) -> memref<4xf32> {
  %t = builtin.unrealized_conversion_cast %a : memref<4xf32> to tensor<4xf32>
  %m = builtin.unrealized_conversion_cast %t : tensor<4xf32> to memref<4xf32>
  %out = memref.alloc() : memref<4xf32>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 4) {
    %v = krnl.load %m[%i] : memref<4xf32>
    %w = arith.negf %v : f32
    krnl.store %w, %out[%i] : memref<4xf32>
  }
  return %out : memref<4xf32>
}
"""


def test_unrealized_casts_at_the_boundary_are_the_same_buffer() -> None:
    fn = pk.parse(BOUNDARY)["boundary"]
    a = RNG.standard_normal(4).astype(np.float32)
    out = pk.run_reference(fn, a=a)
    np.testing.assert_array_equal(out, -a)
    np.testing.assert_array_equal(pk.compile(fn)(a=a), out)


BROADCAST_MAX = """
func.func @bcast(%a: memref<?xf32>, %b: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %da = memref.dim %a, %c0 : memref<?xf32>
  %db = memref.dim %b, %c0 : memref<?xf32>
  %n = affine.max affine_map<()[s0, s1] -> (s0, s1)>()[%da, %db]
  %out = memref.alloc(%n) : memref<?xf32>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to affine_map<(d0) -> (d0)>(%n)) {
    %ia = affine.min affine_map<(d0)[s0] -> (d0, s0 - 1)>(%i)[%da]
    %ib = affine.min affine_map<(d0)[s0] -> (d0, s0 - 1)>(%i)[%db]
    %x = krnl.load %a[%ia] : memref<?xf32>
    %y = krnl.load %b[%ib] : memref<?xf32>
    %s = arith.addf %x, %y : f32
    krnl.store %s, %out[%i] : memref<?xf32>
  }
  return %out : memref<?xf32>
}
"""


def test_a_size_that_is_the_max_of_two_dims() -> None:
    # onnx-mlir's broadcasting shape: the result's size is max(dim a, dim b), used for the
    # allocation and, through a map, as a loop bound: a parameter fixed for the call.
    fn = pk.parse(BROADCAST_MAX)["bcast"]
    a = RNG.standard_normal(5).astype(np.float32)
    b = RNG.standard_normal(1).astype(np.float32)
    out = pk.run_reference(fn, a=a, b=b)
    np.testing.assert_array_equal(out, a + b[0])
    np.testing.assert_array_equal(pk.compile(fn)(a=a, b=b), out)
    np.testing.assert_array_equal(pk.compile(fn)(a=b, b=a), out)


RUN_THROUGH_RESHAPE = """
func.func @runs(%buf: memref<4x8xf32>, %out: memref<3xf32>) {
  %c32 = arith.constant 32 : index
  %one = arith.constant dense<1.0> : vector<8xf32>
  %shape = memref.alloc() : memref<1xindex>
  affine.store %c32, %shape[0] : memref<1xindex>
  %flat = memref.reshape %buf(%shape) : (memref<4x8xf32>, memref<1xindex>) -> memref<32xf32>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 3) {
    %c0 = arith.constant 0 : index
    %x = krnl.load %buf[%i, %c0] : memref<4x8xf32>
    krnl.store %x, %out[%i] : memref<3xf32>
    %at = affine.apply affine_map<(d0) -> (d0 * 8 + 4)>(%i)
    vector.store %one, %flat[%at] : memref<32xf32>, vector<8xf32>
  }
  return
}
"""


def test_a_vector_run_through_a_reshape_is_exact_and_sound() -> None:
    # Iteration i reads buf[i, 0] and stores 8 floats at flat 8i + 4: the end of row i
    # and the start of row i + 1, whose first element iteration i + 1 reads (a RAW at
    # distance 1: not parallel), while nothing is approximated.
    fn = pk.parse(RUN_THROUGH_RESHAPE)["runs"]
    report = pk.check(fn)
    assert report.approximations == ()
    (loop,) = report.loops
    assert loop.status != "parallel" and (loop.distance_min, loop.distance_max) == (1, 1)
    buf = np.zeros((4, 8), np.float32)
    out = np.full(3, -1.0, np.float32)
    pk.run_reference(fn, buf=buf, out=out)
    np.testing.assert_array_equal(out, [0, 1, 1])  # rows 1 and 2 start with stored ones
    assert buf[1:, :4].all() and buf[:3, 4:].all() and not buf[0, :4].any()


def _sigmoid(v: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-v))


def _both(fn: pk.Function, **args: np.ndarray) -> list[object]:
    """What the interpreter and the compiled kernel return for the same arguments."""
    return [pk.run_reference(fn, **args), pk.compile(fn)(**args)]


def test_gathers_with_negative_and_clamped_indices() -> None:
    x = RNG.standard_normal((5, 4)).astype(np.float32)
    idx = np.array([[0, -1, 4], [7, -9, 2]], dtype=np.int64)  # 7 and -9 clamp to 4 and 0
    rows = np.clip(np.where(idx < 0, idx + 5, idx), 0, 4)
    for out in _both(_fn("onnx_gather.mlir", "gather_axis0"), x=x, idx=idx):
        np.testing.assert_array_equal(out, x[rows])
    x2 = RNG.standard_normal((3, 6)).astype(np.float32)
    idx2 = np.array([[0, -1], [5, 2], [-6, 3]], dtype=np.int64)
    for out in _both(_fn("onnx_gather.mlir", "gather_elements_axis1"), x=x2, idx=idx2):
        np.testing.assert_array_equal(out, np.take_along_axis(x2, idx2 % 6, axis=1))


def test_padded_convolution_and_average_pooling() -> None:
    x = RNG.standard_normal((1, 2, 5, 7)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(3).astype(np.float32)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    conv = np.zeros((1, 3, 5, 7))
    for kh in range(3):
        for kw in range(3):
            conv += np.einsum("ncij,oc->noij", xp[:, :, kh : kh + 5, kw : kw + 7], w[:, :, kh, kw])
    conv += b[None, :, None, None]
    for out in _both(_fn("onnx_conv_pads.mlir", "conv2d_pads"), x=x, w=w, b=b):
        np.testing.assert_allclose(out, conv, rtol=1e-5, atol=1e-5)
    x8 = RNG.standard_normal((1, 2, 5, 8)).astype(np.float32)
    p = np.pad(x8.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    ones = np.pad(np.ones((5, 8)), 1)
    sums = sum(p[:, :, i : i + 5, j : j + 8] for i in range(3) for j in range(3))
    counts = sum(ones[i : i + 5, j : j + 8] for i in range(3) for j in range(3))
    for out in _both(_fn("onnx_conv_pads.mlir", "avgpool_pads"), x=x8):
        np.testing.assert_allclose(out, sums / counts, rtol=1e-5, atol=1e-6)


def test_layer_normalization() -> None:
    x = RNG.standard_normal((5, 16)).astype(np.float32)
    g, b = RNG.standard_normal(16).astype(np.float32), RNG.standard_normal(16).astype(np.float32)
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1, keepdims=True)
    expected = (x64 - mean) / np.sqrt(x64.var(axis=1, keepdims=True) + 1e-5) * g + b
    for out in _both(_fn("onnx_layernorm.mlir", "layernorm"), x=x, scale=g, bias=b):
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def test_lstm_cell() -> None:
    args = {
        name: RNG.standard_normal(shape).astype(np.float32)
        for name, shape in [
            ("x", (2, 3)),
            ("h", (2, 4)),
            ("c", (2, 4)),
            ("w", (16, 3)),
            ("r", (16, 4)),
            ("bias", (16,)),
        ]
    }
    a = {k: v.astype(np.float64) for k, v in args.items()}
    gates = a["x"] @ a["w"].T + a["h"] @ a["r"].T + a["bias"]
    i, o, f, c = (gates[:, 4 * n : 4 * n + 4] for n in range(4))
    c_new = _sigmoid(f) * a["c"] + _sigmoid(i) * np.tanh(c)
    h_new = _sigmoid(o) * np.tanh(c_new)
    for out in _both(_fn("onnx_lstm_cell.mlir", "lstm_cell"), **args):
        assert isinstance(out, tuple)
        np.testing.assert_allclose(out[0], h_new, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out[1], c_new, rtol=1e-5, atol=1e-6)


def test_gather_with_indices_from_a_krnl_global() -> None:
    x = RNG.standard_normal((3, 2)).astype(np.float32)
    for out in _both(_fn("onnx_gather.mlir", "gather_constant_indices"), x=x):
        np.testing.assert_array_equal(out, x[np.array([[0, 1], [2, 0]])])
