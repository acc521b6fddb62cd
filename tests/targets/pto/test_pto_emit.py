"""End to end: Krnl kernels lowered to PTO tiles, simulated, against pk.run_reference
(softmax over rows, transposes in f32/f16 with full and partial tiles, a tiled matmul, a
layer-norm-like kernel, elementwise ops, tile-buffer copies), on both architectures."""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.targets.pto import tmp_rules
from polykrnl.targets.pto.types import arch as arch_of
from tests.targets.pto.pto_cases import (
    CASES,
    HERE,
    KERNELS,
    PtoCase,
    _elementwise,
    _matmul,
    _rows,
    _transpose,
    close,
    inputs_and_reference,
    pto_kernel,
)

# The reference interpreter takes seconds on these (40 x 50 x 70 and 32 x 32 x 32 products);
# matmul_small keeps a matmul in the fast tier.
SLOW = {"matmul_partial", "matmul_full"}


def _simulated(cases: list[PtoCase]) -> list[Any]:
    return [
        pytest.param(c, id=c.name, marks=[pytest.mark.slow] if c.name in SLOW else [])
        for c in cases
    ]


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
@pytest.mark.parametrize("case", _simulated(CASES))
def test_simulation_matches_the_reference(case: PtoCase, arch: str) -> None:
    args, expected = inputs_and_reference(case, 7)
    pto_kernel(case, arch).simulate(**args)
    for name, value in expected.items():
        if isinstance(value, np.ndarray) and name not in case.scratch:
            assert close(args[name], value, case), (name, np.nanmax(np.abs(args[name] - value)))


def _brute_ttrans(n: int, m: int, tr: int, tc: int, elem: int) -> int:
    """Max over the tiles of the always-enough TTRANS tmp (docs/pto.md), by plain loops: a tile
    of A is H = min(tr, n - i) rows by W = min(tc, m - j) columns."""
    rs = 32 if elem == 1 else 16
    b = 32 // elem
    best = 0
    for i in range(0, n, tr):
        for j in range(0, m, tc):
            h, w = min(tr, n - i), min(tc, m - j)
            best = max(best, -(-w // b) * b * (-(-h // rs) * rs) * elem)
    return best


@pytest.mark.parametrize(
    ("function", "tile", "elem"), [("transpose_f32", (16, 16), 4), ("transpose_f16", (16, 32), 2)]
)
def test_transpose_tmp_bytes_are_the_max_over_tiles(
    function: str, tile: tuple[int, int], elem: int
) -> None:
    kernel = pk.schedule(KERNELS[function]).to_pto()
    (name,) = kernel.tmp_sizes
    declared = next(t.type.bytes for t in kernel.tiles if t.name == name)
    for n in (1, 3, 15, 16, 17, 33, 40):
        for m in (1, 7, 16, 31, 32, 33, 50):
            want = _brute_ttrans(n, m, *tile, elem)
            assert kernel.tmp_bytes(N=n, M=m)[name] == want, (n, m)
            assert declared >= want
    # the documented formula is smaller than the always-enough one when W is not a multiple
    # of 32 / sizeof(T) (f32: 8); e.g. a 16 x 15 f32 tile (by hand: 960 vs 1024 bytes)
    assert tmp_rules.ttrans_tmp_documented(16, 15, 4) < tmp_rules.ttrans_tmp_always_enough(
        16, 15, 4
    )


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_source_declares_tiles_once_within_the_buffers(case: PtoCase) -> None:
    k = pto_kernel(case, "a2a3")
    src = k.source
    assert f"void {case.function}(" in src
    capacity = arch_of("a2a3")
    for t in k.tiles:
        if t.pingpong is None:
            assert src.count(f"TASSIGN({t.name}, ") == 1
        else:  # two copies, one after the other
            assert src.count(f"TASSIGN({t.name}[0], 0x{t.offset:x});") == 1
            assert src.count(f"TASSIGN({t.name}[1], 0x{t.offset + t.stride:x});") == 1
        assert t.offset % 32 == 0
        assert t.end <= capacity.usable(t.buffer)
    assert src.count("{") == src.count("}")


# More sizes of the same kernels: full tiles only, and below one tile (blocks: elementwise
# 8 x 32, softmax and layer norm 8 rows, transpose f16 16 x 32, matmul 32 x 32 x 32).
MORE_SIZES = [
    PtoCase("scale_add_relu_full", "scale_add_relu", "kernels", _elementwise(16, 64)),
    PtoCase("scale_add_relu_small", "scale_add_relu", "kernels", _elementwise(3, 5)),
    PtoCase("softmax_small", "softmax", "kernels", _rows(5, 40), 1e-6, 1e-7),
    PtoCase("layer_norm_full", "layer_norm", "kernels", _rows(16, 64), 1e-5, 1e-6),
    PtoCase("layer_norm_small", "layer_norm", "kernels", _rows(3, 64), 1e-5, 1e-6),
    PtoCase("transpose_f16_full", "transpose_f16", "kernels", _transpose(32, 64, np.float16)),
    PtoCase("transpose_f16_small", "transpose_f16", "kernels", _transpose(7, 9, np.float16)),
    # one full 32 x 32 x 32 tile; f16 products summed in f32 over 32 terms of magnitude <= 1
    PtoCase("matmul_full", "matmul", "kernels", _matmul(32, 32, 32), 1e-5, 1e-5),
]


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
@pytest.mark.parametrize("case", _simulated(MORE_SIZES))
def test_more_sizes_match_the_reference(case: PtoCase, arch: str) -> None:
    test_simulation_matches_the_reference(case, arch)


MORE = pk.load(HERE / "krnl" / "pto_more.mlir")


def _u(rng: np.random.Generator, *shape: int) -> np.ndarray[Any, Any]:
    return rng.uniform(-3, 3, shape).astype(np.float32)


@dataclass(frozen=True)
class MoreCase(PtoCase):
    """A case of krnl/pto_more.mlir (static shapes: the arguments are the arrays)."""

    def fn(self) -> pk.Function:
        return MORE[self.function]


def _arrays(*names: str, shape: tuple[int, int]) -> Any:
    return lambda r: {n: _u(r, *shape) for n in names}


# for the optional CPU-simulator test (test_pto_kernel_cpu_sim.py); tolerances as below
ONE_TILE = [
    MoreCase("softmax_16x40", "softmax_16x40", "more", _arrays("X", "Y", shape=(16, 40)), 1e-6),
    MoreCase("sub_mul_max_6x24", "sub_mul_max_6x24", "more", _arrays("X", "Z", "Y", shape=(6, 24))),
]


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
@pytest.mark.parametrize(
    ("function", "shape", "rtol"),
    # softmax: exp and the row sum in another order than the reference, a few ulps;
    # sub/mul/max: one f32 rounding per op, the same in both, so bit for bit
    [("softmax_16x40", (16, 40), 1e-6), ("sub_mul_max_6x24", (6, 24), 0.0)],
)
def test_an_unblocked_nest_is_one_static_tile(
    function: str, shape: tuple[int, int], rtol: float, arch: str
) -> None:
    fn = MORE[function]
    kernel = pk.schedule(fn).to_pto(arch)
    rows, cols = shape
    assert "for (" not in kernel.source  # one tile: no loop over tiles
    assert kernel.params == {}
    for t in kernel.tiles:
        if t.type.cols == cols:  # the data tiles (not the per-row or tmp ones)
            assert (t.type.valid_row, t.type.valid_col) == (rows, cols)
            assert t.type.rows >= rows
    rng = np.random.default_rng(5)
    args = {a.name: _u(rng, rows, cols) for a in fn.arguments}
    expected = copy.deepcopy(args)
    pk.run_reference(fn, **expected)
    kernel.simulate(**args)
    for name, want in expected.items():
        if rtol == 0:
            assert np.array_equal(args[name], want), name
        else:
            assert np.allclose(args[name], want, rtol=rtol, atol=1e-7), name


@pytest.mark.parametrize("arch", ["a2a3", "a5"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_tiles_fit_each_architecture(case: PtoCase, arch: str) -> None:
    capacity = arch_of(arch)
    # tiles of one scope (one group of nests) never share bytes; scopes run one after the
    # other and may (their order is the race checker's to check)
    by_buffer: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for t in pto_kernel(case, arch).tiles:
        assert t.offset % 32 == 0 and t.end <= capacity.usable(t.buffer)
        by_buffer.setdefault((t.buffer.name, t.scope), []).append((t.offset, t.end))
    for spans in by_buffer.values():
        spans.sort()
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert end <= start, "two tiles of one buffer overlap"
