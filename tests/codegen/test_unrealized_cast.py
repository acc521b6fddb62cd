"""builtin.unrealized_conversion_cast between integers of one width (onnx-mlir's
ui8 <-> i8 around signless arithmetic): the bits are kept, the reading changes.

The oracle is NumPy's own `view` of the input bytes in the other signedness.
"""

from __future__ import annotations

import numpy as np
import pytest

import polykrnl as pk

SIGNEDNESS = """
func.func @f(%x: memref<6xui8>, %y: memref<6xf32>, %z: memref<6xui8>) {
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to 6) {
    %a = krnl.load %x[%i] : memref<6xui8>
    %s = builtin.unrealized_conversion_cast %a : ui8 to i8
    %f = arith.sitofp %s : i8 to f32
    krnl.store %f, %y[%i] : memref<6xf32>
    %one = arith.constant 1 : i8
    %t = arith.addi %s, %one : i8
    %u = builtin.unrealized_conversion_cast %t : i8 to ui8
    krnl.store %u, %z[%i] : memref<6xui8>
  }
  return
}
"""


def _inputs() -> dict[str, np.ndarray]:
    return {
        "x": np.array([0, 1, 127, 128, 200, 255], dtype=np.uint8),
        "y": np.zeros(6, dtype=np.float32),
        "z": np.zeros(6, dtype=np.uint8),
    }


def test_a_change_of_signedness_keeps_the_bits() -> None:
    fn = pk.parse(SIGNEDNESS)["f"]
    expected_y = _inputs()["x"].view(np.int8).astype(np.float32)  # 200 -> -56
    expected_z = (_inputs()["x"].view(np.int8) + np.int8(1)).view(np.uint8)  # wraps
    ref = _inputs()
    pk.run_reference(fn, **ref)
    assert np.array_equal(ref["y"], expected_y) and np.array_equal(ref["z"], expected_z)
    for kernel in (pk.schedule(fn).to_numpy(), pk.schedule(fn).to_numpy(vectorize=False)):
        got = _inputs()
        kernel(**got)
        assert np.array_equal(got["y"], expected_y) and np.array_equal(got["z"], expected_z)


def test_a_cast_between_other_types_is_refused_at_its_line() -> None:
    fn = pk.parse(SIGNEDNESS.replace("ui8 to i8", "ui8 to i16").replace(": i8", ": i16"))["f"]
    with pytest.raises(pk.UnsupportedError, match="conversion_cast from ui8 to i16") as e:
        pk.run_reference(fn, **_inputs())
    assert e.value.location is not None and e.value.location.line == 6
    with pytest.raises(pk.UnsupportedError, match="unrealized_conversion_cast"):
        pk.schedule(fn).to_numpy()
