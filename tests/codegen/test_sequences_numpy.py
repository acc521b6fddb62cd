"""ONNX sequences (krnl.seqalloc / seqstore / seqextract / seqdealloc) in NumPy kernels.

A sequence is an object array of arrays; the sequence owns copies of what is stored,
and an extract copies unless `copy = 0`. NumPy is the oracle for the interpreter, the
interpreter for the kernel.
"""

from __future__ import annotations

import numpy as np

import polykrnl as pk

SEQUENCE = """
func.func @seq(%t0: memref<2x3xf32>, %t1: memref<4x3xf32>) -> (memref<?x3xf32>, memref<?x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %seq = "krnl.seqalloc"(%c2) : (index) -> memref<?xmemref<?x3xf32>>
  %a = memref.cast %t0 : memref<2x3xf32> to memref<?x3xf32>
  %b = memref.cast %t1 : memref<4x3xf32> to memref<?x3xf32>
  "krnl.seqstore"(%a, %seq, %c0) : (memref<?x3xf32>, memref<?xmemref<?x3xf32>>, index) -> ()
  "krnl.seqstore"(%b, %seq, %c1) : (memref<?x3xf32>, memref<?xmemref<?x3xf32>>, index) -> ()
  %zero = arith.constant 0.0 : f32
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 2, %l#1 -> %j = 0 to 3) {
    krnl.store %zero, %t0[%i, %j] : memref<2x3xf32>
  }
  %first = "krnl.seqextract"(%seq, %c0) {copy = 1 : ui1}
    : (memref<?xmemref<?x3xf32>>, index) -> memref<?x3xf32>
  %second = "krnl.seqextract"(%seq, %c1) {copy = 0 : ui1}
    : (memref<?xmemref<?x3xf32>>, index) -> memref<?x3xf32>
  "krnl.seqdealloc"(%seq) : (memref<?xmemref<?x3xf32>>) -> ()
  return %first, %second : memref<?x3xf32>, memref<?x3xf32>
}
"""


def test_a_sequence_holds_copies_in_kernels_as_in_the_interpreter() -> None:
    fn = pk.parse(SEQUENCE)["seq"]
    rng = np.random.default_rng(2)
    t0 = rng.standard_normal((2, 3)).astype(np.float32)
    t1 = rng.standard_normal((4, 3)).astype(np.float32)
    for run in (pk.run_reference, lambda f, **kw: pk.compile(f)(**kw)):
        a, b = t0.copy(), t1.copy()
        first, second = run(fn, t0=a, t1=b)
        # The sequence stored a copy of t0 before the loop zeroed it.
        np.testing.assert_array_equal(first, t0)
        assert not a.any()
        np.testing.assert_array_equal(second, t1)
