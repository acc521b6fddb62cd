"""Fewer temporaries in array code (codegen/destination.py): a stored value's first
operand computed into the destination op after op, and a temporary read by one op only
given to that op as its output. Each end-to-end kernel is checked bit for bit against
the interpreter (the kernels keep the program's order of operations); the rules that
keep a rewrite from reading overwritten memory are checked on hand-written code too,
run before and after the rewrite."""

from __future__ import annotations

import ast
import textwrap
from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.codegen.destination import Destinations

LAYERNORM = """
func.func @ln(%x: memref<6x10xf32>) -> (memref<6x10xf32>, memref<6xf32>) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 10.0 : f32
  %eps = arith.constant 1.0e-05 : f32
  %m = memref.alloc() : memref<6xf32>
  %q = memref.alloc() : memref<6xf32>
  %out = memref.alloc() : memref<6x10xf32>
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 6) {
    krnl.store %zero, %m[%i] : memref<6xf32>
    krnl.store %zero, %q[%i] : memref<6xf32>
  }
  %a:2 = krnl.define_loops 2
  krnl.iterate(%a#0, %a#1) with (%a#0 -> %i = 0 to 6, %a#1 -> %j = 0 to 10) {
    %v = krnl.load %x[%i, %j] : memref<6x10xf32>
    %s = krnl.load %m[%i] : memref<6xf32>
    %t = arith.addf %s, %v : f32
    krnl.store %t, %m[%i] : memref<6xf32>
  }
  %b:2 = krnl.define_loops 2
  krnl.iterate(%b#0, %b#1) with (%b#0 -> %i = 0 to 6, %b#1 -> %j = 0 to 10) {
    %v = krnl.load %x[%i, %j] : memref<6x10xf32>
    %s = krnl.load %m[%i] : memref<6xf32>
    %mean = arith.divf %s, %n : f32
    %d = arith.subf %v, %mean : f32
    %d2 = arith.mulf %d, %d : f32
    %w = krnl.load %q[%i] : memref<6xf32>
    %w2 = arith.addf %w, %d2 : f32
    krnl.store %w2, %q[%i] : memref<6xf32>
  }
  %c:2 = krnl.define_loops 2
  krnl.iterate(%c#0, %c#1) with (%c#0 -> %i = 0 to 6, %c#1 -> %j = 0 to 10) {
    %v = krnl.load %x[%i, %j] : memref<6x10xf32>
    %s = krnl.load %m[%i] : memref<6xf32>
    %mean = arith.divf %s, %n : f32
    %w = krnl.load %q[%i] : memref<6xf32>
    %var = arith.divf %w, %n : f32
    %ve = arith.addf %var, %eps : f32
    %sd = math.sqrt %ve : f32
    %d = arith.subf %v, %mean : f32
    %r = arith.divf %d, %sd : f32
    krnl.store %r, %out[%i, %j] : memref<6x10xf32>
  }
  return %out, %q : memref<6x10xf32>, memref<6xf32>
}
"""

# a[i] = (b[i] + a[i]) * a[i]: the other operand of the stored op reads the destination
IN_PLACE = """
func.func @f(%a: memref<64xf32>, %b: memref<64xf32>) {
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 64) {
    %x = krnl.load %b[%i] : memref<64xf32>
    %y = krnl.load %a[%i] : memref<64xf32>
    %s = arith.addf %x, %y : f32
    %p = arith.mulf %s, %y : f32
    krnl.store %p, %a[%i] : memref<64xf32>
  }
  return
}
"""


def _exact_kernel(text: str, **inputs: np.ndarray) -> tuple[str, Any]:
    fn = pk.parse(text).functions[0]
    kernel = pk.schedule(fn).to_numpy(reassociate=False)
    ref_inputs = {k: v.copy() for k, v in inputs.items()}
    ref = pk.run_reference(fn, **ref_inputs)
    got_inputs = {k: v.copy() for k, v in inputs.items()}
    got = kernel(**got_inputs)
    for g, r in zip(
        got if isinstance(got, tuple) else [got],
        ref if isinstance(ref, tuple) else [ref],
        strict=True,
    ):
        if r is not None:
            np.testing.assert_array_equal(g, r)
    for k in inputs:
        np.testing.assert_array_equal(got_inputs[k], ref_inputs[k])
    return str(kernel.source).split("\ndef kernel", 1)[1], got


def test_layernorm_computes_into_the_result_and_squares_in_place() -> None:
    x = np.random.default_rng(3).standard_normal((6, 10)).astype(np.float32)
    body, _ = _exact_kernel(LAYERNORM, x=x)
    assert "np.multiply(d, d, out=d)" in body, body
    # The sqrt is computed before the subtraction writes the result, then divides it.
    sqrt = body.index("np.sqrt(")
    sub = body.index("np.subtract(")
    div = body.index("np.divide(out")
    assert sqrt < sub < div, body


def test_an_operand_that_reads_the_destination_is_not_chained() -> None:
    rng = np.random.default_rng(4)
    a = rng.standard_normal(64).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    body, _ = _exact_kernel(IN_PLACE, a=a, b=b)
    assert "np.multiply(" in body and "np.add(" not in body, body


# -- the rules on hand-written code ------------------------------------------------------

F32 = np.dtype(np.float32)
SHAPE = ("n_i",)


def _mark_ops(tree: ast.Module) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            node._op = True  # type: ignore[attr-defined]


def _reuse(source: str, temps: tuple[str, ...] = ("d",), other_shape: bool = False) -> str:
    tree = ast.parse(textwrap.dedent(source))
    dests = Destinations()
    _mark_ops(tree)
    for node in ast.walk(tree):
        target = node.targets[0] if isinstance(node, ast.Assign) else None
        if isinstance(target, ast.Name) and target.id in temps:
            assert isinstance(node, ast.Assign)
            dests.value(target.id, node.value, F32, SHAPE)
            node.value._op = False  # type: ignore[attr-defined]
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and getattr(node, "_op", False):
            dests.value("_", node, F32, ("other",) if other_shape else SHAPE)
    names = iter(f"h{i}" for i in range(100))
    body = dests.rewrite(tree.body, lambda _base: next(names))
    return ast.unparse(ast.Module(body, []))


def _run(code: str) -> dict[str, Any]:
    a = np.arange(8, dtype=np.float32)
    b = np.linspace(1, 2, 8, dtype=np.float32)
    env: dict[str, Any] = {"np": np, "a": a, "b": b}
    exec(code, env)
    return env


ONE_READER = """
d = a - b
r = np.sum(d * d)
"""


def test_a_temporary_read_by_one_op_becomes_its_output() -> None:
    out = _reuse(ONE_READER)
    assert "np.sum(np.multiply(d, d, out=d))" in out, out
    assert _run(out)["r"] == _run(ONE_READER)["r"]


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("d = a - b\nr = np.sum(d * d)\nu = d + b\n", "read again by a later statement"),
        ("d = a - b\nr = np.sum(d * b) + np.sum(d)\n", "read outside the op"),
        (
            "d = a - b\nr = np.float32(0)\nfor k in range(3):\n    r = r + np.sum(d * d)\n",
            "read in a loop: the second iteration would read the square",
        ),
    ],
)
def test_a_temporary_read_elsewhere_is_kept(source: str, why: str) -> None:
    out = _reuse(source)
    assert "out=" not in out, why
    before, after = _run(source), _run(out)
    np.testing.assert_array_equal(after["r"], before["r"])


def test_an_op_of_another_shape_does_not_reuse() -> None:
    # (a broadcast op: its result is larger than the temporary)
    assert "out=" not in _reuse(ONE_READER, other_shape=True)
