"""Krnl programs the PTO emitter refuses: a PtoError naming the statement and the reason,
with a hint; never a kernel emitted wrongly. One test per reason (krnl/pto_errors.mlir)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import polykrnl as pk

MOD = pk.load(Path(__file__).parent / "krnl" / "pto_errors.mlir")

# function -> pieces of the message (the statement's op is named in each)
CASES = {
    "symbolic_range": ["runs over N elements, a symbolic number", "S0 (krnl.store"],
    "erf": ["math.erf has no PTO instruction", "S0 (krnl.store"],
    "triangular": ["uses the value of loop", "not a tile loop"],
    "outside_loops": ["a statement outside every loop", "S0 (krnl.store"],
    "scalar_argument": ["takes the scalar argument a (f32)"],
    # two 1024 x 1024 f32 tiles (X's and the result), by hand: 2 * 4 MiB = 8388608 bytes
    "too_big": ["tiles do not fit UB on a2a3: 8388608 bytes needed", "S0 (krnl.store"],
    "prefix_sum": ["loop j carries a dependence", "statement after statement"],
    "store_constant": ["a store of a constant"],
    "row_product": ["a reduction that is not +, max or min", "krnl.yield"],
    "constant_minus": ["a constant minus a tile has no PTO instruction"],
    "matmul_other_init": ["follows another statement than C[i, j] = 0"],
    "tile_into_row_window": ["a tile of the nest stored into T[i], one value per row"],
    "matmul_f16_out": ["matmul of f16 x f16 into f16", "f32 from f16"],
    "element_type": ["argument X has element type f64, which PTO tiles do not hold"],
    "mixed_dtypes": ["values of f32 and f16 in one nest", "S1 (krnl.store"],
    "shifted": ["a subscript that is not a loop's induction variable", "S0 (krnl.store"],
    "diagonal": ["X[i, i] is not a window of rows i and columns j", "S0 (krnl.store"],
    "column_ranges": ["column loops j and k run over different ranges", "S0 (krnl.store"],
    "exp_constant": ["TEXP of a constant", "S0 (krnl.store"],
    "constants_only": ["arithmetic on constants only", "S0 (krnl.store"],
    "row_value_to_window": ["a per-row value stored into a tile window", "S2 (krnl.store"],
    "row_value_minus_tile": ["a per-row value sub a tile has no PTO instruction"],
    "pad_to_next": ["padToNext (TFILLPAD pads the whole tile)", "krnl.copy_to_tile_buffer"],
    "buffer_3d": ["a tile buffer of shape (8, 8, 8) (PTO tiles are 2-D", "memref.alloca"],
    "column_value_minus_tile": ["a per-column value sub a tile has no PTO instruction"],
    "outer_product": ["a per-row value and a per-column value together"],
}


def test_every_function_is_a_case() -> None:
    assert sorted(CASES) == sorted(f.name for f in MOD.functions)


@pytest.mark.parametrize("name", sorted(CASES))
def test_refused_with_reason_and_hint(name: str) -> None:
    with pytest.raises(pk.PtoError) as info:
        pk.schedule(MOD[name]).to_pto()
    err = info.value
    for piece in CASES[name]:
        assert piece in err.message, err.message
    assert err.hint
    assert err.location is not None, "the CLI shows FILE:LINE:COL and a caret from it"


def test_the_programs_are_valid_krnl() -> None:
    # The refusals are PTO's: the module verifies and NumPy code generation takes them.
    pk.verify(MOD)
    for fn in MOD.functions:
        assert pk.schedule(fn).to_numpy().source


def test_sizes_fixed_at_emission_are_the_only_ones_accepted() -> None:
    # symbolic_range is refused without a size; with N fixed, its tile has 40 static rows,
    # so running the kernel (or a harness) at another N would overflow the tile.
    kernel = pk.schedule(MOD["symbolic_range"]).to_pto(params={"N": 40})
    x = np.linspace(-1, 1, 40, dtype=np.float32)
    y = np.zeros(40, np.float32)
    kernel.simulate(N=40, X=x, Y=y)
    assert np.allclose(y, np.exp(x), rtol=1e-6)  # TEXP vs NumPy's exp: a few ulps
    assert "const int64_t N = 40;" in kernel.harness(N=40, **{"X.0": 40, "Y.0": 40})
    big = np.zeros(50, np.float32)
    for run in (
        lambda: kernel.simulate(N=50, X=big, Y=big.copy()),
        lambda: kernel.harness(N=50, **{"X.0": 50, "Y.0": 50}),
    ):
        with pytest.raises(pk.PolykrnlError) as info:
            run()
        assert "emitted for N = 40" in info.value.message and "not N = 50" in info.value.message
        assert info.value.hint


def test_sizes_that_shape_no_tile_stay_free() -> None:
    # The transpose is blocked 16 x 16: N and M given at emission shape no tile, so the
    # kernel still runs at other sizes (a transpose is exact: compared bit for bit).
    fn = pk.load(Path(__file__).parent / "krnl" / "pto_kernels.mlir")["transpose_f32"]
    kernel = pk.schedule(fn).to_pto(params={"N": 37, "M": 21})
    a = np.arange(5 * 3, dtype=np.float32).reshape(5, 3)
    b = np.zeros((3, 5), np.float32)
    kernel.simulate(N=5, M=3, A=a, B=b)
    assert np.array_equal(b, a.T)
