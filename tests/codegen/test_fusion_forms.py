"""The fusion the hand-written NumPy has (issue 32, item 2), and why the loops that stay.

A Krnl statement that both stores and accumulates (softmax's exp-and-sum) runs as a
store over the rows and the columns plus a reduction along the columns; a convolution
runs its channel, row and column loops as one array expression and its window loops
r, s outside (exact: the sum keeps its order); a schedule forced against a dependence
runs only the nest of that dependence as written, and each loop kept in Python says
why. The structure of the source is checked, and the results against the interpreter:
bit for bit with `reassociate=False`, within the tolerance of reassociated sums by
default.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

import polykrnl as pk
from tests.scripts import onnx_shapes

RNG = np.random.default_rng(32)

# benchmarks/bench_onnx_shapes.py's softmax_text(6, 10): onnx-mlir's form, row
# temporaries in views of one i8 pool.
SOFTMAX = onnx_shapes().softmax_text(6, 10)

# A direct 3x3 convolution (bench_onnx_shapes.py's conv at 8 x 9, 2 channels); {unroll}
# is nothing or a krnl.unroll of its s loop.
CONV = """
func.func @conv(%img: memref<8x9xf32>, %w: memref<2x3x3xf32>) -> memref<2x6x7xf32> {
  %zero = arith.constant 0.0 : f32
  %out = memref.alloc() {alignment = 16 : i64} : memref<2x6x7xf32>
  %z:3 = krnl.define_loops 3
  krnl.iterate(%z#0, %z#1, %z#2) with (%z#0 -> %k = 0 to 2, %z#1 -> %i = 0 to 6,
                                       %z#2 -> %j = 0 to 7) {
    krnl.store %zero, %out[%k, %i, %j] : memref<2x6x7xf32>
  }
  %l:5 = krnl.define_loops 5
{unroll}  krnl.iterate(%l#0, %l#1, %l#2, %l#3, %l#4) with (%l#0 -> %k = 0 to 2, %l#1 -> %r = 0 to 3,
      %l#2 -> %s = 0 to 3, %l#3 -> %i = 0 to 6, %l#4 -> %j = 0 to 7) {
    %y = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%i, %r)
    %x = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%j, %s)
    %p = krnl.load %img[%y, %x] : memref<8x9xf32>
    %c = krnl.load %w[%k, %r, %s] : memref<2x3x3xf32>
    %o = krnl.load %out[%k, %i, %j] : memref<2x6x7xf32>
    %m = arith.mulf %p, %c : f32
    %a = arith.addf %o, %m : f32
    krnl.store %a, %out[%k, %i, %j] : memref<2x6x7xf32>
  }
  return %out : memref<2x6x7xf32>
}
"""
UNROLL = "  krnl.unroll %l#2 : !krnl.loop\n"


def _inputs(fn: pk.Function) -> dict[str, np.ndarray[Any, Any]]:
    out = {}
    for arg in fn.arguments:
        shape = tuple(int(d) for d in str(arg.type).split("<")[1].split("x")[:-1])
        out[arg.name] = RNG.standard_normal(shape).astype(np.float32)
    return out


def _check(sched: pk.Schedule, fn: pk.Function, *, reassociate: bool) -> str:
    """The kernel's source, after checking its results against the interpreter."""
    kernel = sched.to_numpy(reassociate=reassociate)
    args = _inputs(fn)
    ref = pk.run_reference(fn, **{k: v.copy() for k, v in args.items()})
    got = kernel(**{k: v.copy() for k, v in args.items()})
    if kernel.exact:
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    return str(kernel.source).split("\ndef kernel", 1)[1]


def _loops(body: str) -> list[str]:
    """The iterators of the Python `for` loops of a kernel's body."""
    return re.findall(r"^\s*for (\w+) in ", body, re.M)


def _commented(body: str) -> bool:
    """Whether every Python loop of `body` has a comment right above it, or runs
    inside a loop that has one (the scalar loops of one nest share the reason)."""
    lines = body.splitlines()
    explained: list[int] = []  # indentations of the loops with a reason
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        explained = [x for x in explained if x < indent]
        if not line.lstrip().startswith("for "):
            continue
        if lines[i - 1].lstrip().startswith("#") or explained:
            explained.append(indent)
            continue
        return False
    return True


def test_softmax_exp_and_sum_is_a_store_and_a_reduction() -> None:
    fn = pk.parse(SOFTMAX).functions[0]
    body = _check(pk.schedule(fn), fn, reassociate=True)
    assert _loops(body) == [], body
    # The exp of every element stored at once, the row sums one np.sum along the columns
    # of what was stored (stored_values.py): exp is computed once.
    assert ", out=out_1[0:6, 0:10])" in body, body  # exp computed into the output
    assert "reduction over j_2 as np.sum" in body, body
    assert body.count("np.exp(") == 1, body
    assert "= out_2[0:6, 0:10]\n" in body, body


def test_softmax_exact_keeps_only_the_sum_in_order() -> None:
    fn = pk.parse(SOFTMAX).functions[0]
    body = _check(pk.schedule(fn), fn, reassociate=False)
    # The store runs over rows and columns; the column loop stays for the sum alone.
    assert ", out=out_1[0:6, 0:10])" in body, body  # exp computed into the output
    (loop,) = _loops(body)
    assert "reassociate=False keeps the order of a float reduction" in body, body
    after = body.split(f"for {loop} in ", 1)[1]
    assert "out_" not in after.split("# loops", 1)[0], body  # no store of out in the loop
    assert _commented(body), body


def test_conv_broadcasts_over_channels_and_keeps_the_window_loops() -> None:
    fn = pk.parse(CONV.replace("{unroll}", "")).functions[0]
    for reassociate in (True, False):
        body = _check(pk.schedule(fn), fn, reassociate=reassociate)
        # k, i, j as one array expression; r, s (9 iterations) outside, each a slice.
        assert _loops(body) == ["r", "s"], body
        assert "img[r:6 + r, s:7 + s]" in body, body
        assert "w[0:2, r, s][:, None, None]" in body, body
        assert "out_2[0:2, 0:6, 0:7] += " in body, body
        assert "np.arange" not in body, body  # no gathered window
        assert _commented(body), body
    # The exact kernel is the exact one: the window loops keep the sum's order.
    assert pk.schedule(fn).to_numpy().exact


def test_conv_with_a_forced_order_keeps_the_zeroing_nest_vectorized() -> None:
    fn = pk.parse(CONV.replace("{unroll}", "")).functions[0]
    # s before r: the sum of each output in another order, refused unless forced.
    sched = pk.schedule(fn).reorder(["k_2", "s", "r", "i_2", "j_2"], force=True)
    assert not sched.legal
    kernel = sched.to_numpy(reassociate=False)
    body = str(kernel.source).split("\ndef kernel", 1)[1]
    assert "# loops k, i, j vectorized (parallel)" in body, body
    assert "out_1[0:2, 0:6, 0:7] = np.float32(0.0)" in body, body
    assert "loop k_2 and the loops inside stay loops, in the order forced: RAW S2 -> S2" in body
    assert _loops(body) == ["k_2", "s", "r", "i_2", "j_2"], body
    assert _commented(body), body
    # It runs as the schedule says: the reordered sums, scalar.
    args = _inputs(fn)
    got = kernel(**{k: v.copy() for k, v in args.items()})
    ref = pk.run_reference(fn, **{k: v.copy() for k, v in args.items()})
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_conv_with_an_unrolled_loop_says_why_its_loops_stay() -> None:
    fn = pk.parse(CONV.replace("{unroll}", UNROLL)).functions[0]
    for reassociate in (True, False):
        body = _check(pk.schedule(fn), fn, reassociate=reassociate)
        assert "# loops k, i, j vectorized (parallel)" in body, body
        assert _loops(body) == ["k_2", "r"], body
        assert "loop k_2 stays a loop: loop r carries a dependence between copies of S2" in body
        assert "loop r stays a loop: loop r carries a dependence" in body, body
        assert body.count("img[r:6 + r, ") == 3, body  # the three copies, as slices
        assert _commented(body), body
