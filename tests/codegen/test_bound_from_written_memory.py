"""A parameter computed from memory the function writes, outside every loop (NonZero).

The kernel cannot compute it at its start: it reads the count after the nest that
counts, as the program does, and checks the accesses bounded by it right there. The
interpreter is the oracle; NumPy checks the interpreter.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk

PROGRAM = (Path(__file__).parent.parent / "corpus" / "bound_from_written_memory.mlir").read_text()


def _targets() -> list[str]:
    try:
        import numba  # noqa: F401
    except ImportError:
        return ["numpy"]
    return ["numpy", "numba"]


@pytest.mark.parametrize("target", _targets())
def test_the_count_bounds_the_later_loop(target: str) -> None:
    fn = pk.parse(PROGRAM)["count"]
    x = np.array([1, -1, 2, 0, 3, -5, 4, 0], np.float32)
    ref = np.zeros(8, np.float32)
    pk.run_reference(fn, x=x, out=ref)
    np.testing.assert_array_equal(ref, np.where(np.arange(8) < 4, x, 0))
    got = np.zeros(8, np.float32)
    kernel = pk.compile(fn, target=target)
    kernel(x=x, out=got)
    np.testing.assert_array_equal(got, ref)


def test_the_kernel_computes_the_count_after_the_nest_that_writes_it() -> None:
    source = pk.compile(pk.parse(PROGRAM)["count"]).source
    body = source[source.index("def kernel_count") :]
    assert body.index("np.sum") < body.index("n_2 = int(") < body.index("if n_2 >= 9")


def test_a_count_beyond_the_arrays_is_refused_before_the_loop_runs() -> None:
    small = PROGRAM.replace("%out: memref<8xf32>", "%out: memref<4xf32>").replace(
        "%out[%j] : memref<8xf32>", "%out[%j] : memref<4xf32>"
    )
    fn = pk.parse(small)["count"]
    out = np.full(4, 7, np.float32)
    with pytest.raises(pk.BoundsError):
        pk.compile(fn)(x=np.ones(8, np.float32), out=out)
    np.testing.assert_array_equal(out, 7)
