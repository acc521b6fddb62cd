"""krnl.specialized_kernel in the Python targets: what the interpreter does, nothing.

onnx-mlir's Krnl-to-affine lowering erases the loops the op names and leaves the op,
with no operands, for a later pass to substitute a kernel. polykrnl's interpreter runs
neither the loops nor the op; the kernels must do the same and keep what the body does
around them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk

PROGRAM = (Path(__file__).parent.parent / "corpus" / "specialized_kernel_blocked.mlir").read_text()


def _targets() -> list[str]:
    try:
        import numba  # noqa: F401
    except ImportError:
        return ["numpy"]
    return ["numpy", "numba"]


@pytest.mark.parametrize("target", _targets())
def test_the_kernel_runs_what_surrounds_the_op_and_not_its_loops(target: str) -> None:
    fn = pk.parse(PROGRAM)["spec"]
    a = np.ones((8, 6), np.float32)
    ref = np.full(8, 7, np.float32)
    pk.run_reference(fn, a=a, out=ref)
    # the tile-level store, once per tile of 4: out[0] and out[4]
    np.testing.assert_array_equal(ref, [0, 7, 7, 7, 0, 7, 7, 7])
    got = np.full(8, 7, np.float32)
    pk.compile(fn, target=target)(a=a, out=got)
    np.testing.assert_array_equal(got, ref)


def test_the_model_has_no_statement_for_the_op() -> None:
    from polykrnl.poly.builder import poly_program

    program = poly_program(pk.parse(PROGRAM)["spec"])
    ops = {op.name for s in program.statements for op in s.ops}
    assert "krnl.specialized_kernel" not in ops
    assert len(program.statements) == 1
