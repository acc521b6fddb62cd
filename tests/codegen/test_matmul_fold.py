"""onnx-mlir's -O3 MatMul: tile loops around one krnl.matmul (codegen/matmul.py,
transforms/matmul_fold.py).

Where isl proves the tiles partition a box, each C element's k ascending, the NumPy
kernel is one `C[box] += A[box] @ B[box]` (allclose to the interpreter, the sum
reassociated) or with reassociate=False one rank-1 update per k (bit for bit), and the
Numba kernel scalar loops over the whole box (bit for bit). Tiles that overlap or leave
gaps keep a krnl.matmul per tile, the reason in the kernel; Numba computes each tile as
scalar loops, bit for bit too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.errors import UnsupportedError
from tests.scripts import onnx_shapes

# C = memset 0, then (i, j, k) blocked by (BI, BJ, BK), the point loops innermost,
# krnl.matmul on the compute tile TILE. The i loop runs from I0; A's and C's memory
# starts along i are MI (the buffers hold rows from MI on).
MATMUL = """
func.func @mm(%A: memref<{AR}x{K}xf32>, %B: memref<{K}x{N}xf32>) -> memref<{AR}x{N}xf32> {{
  %c0 = arith.constant 0 : index
  %mi = arith.constant {MI} : index
  %cM = arith.constant {M} : index
  %cN = arith.constant {N} : index
  %cK = arith.constant {K} : index
  %zero = arith.constant 0.000000e+00 : f32
  %res = memref.alloc() : memref<{AR}x{N}xf32>
  krnl.memset %res, %zero : memref<{AR}x{N}xf32>
  %l:3 = krnl.define_loops 3
  %it, %ip = krnl.block %l#0 {BI} : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jt, %jp = krnl.block %l#1 {BJ} : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kt, %kp = krnl.block %l#2 {BK} : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%it, %ip, %jt, %jp, %kt, %kp) [0, 3, 1, 4, 2, 5]
    : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%it, %jt, %kt) with (%l#0 -> %i = {I0} to {M}, %l#1 -> %j = 0 to {N},
      %l#2 -> %k = 0 to {K}) {{
    %v:3 = krnl.get_induction_var_value(%it, %jt, %kt)
      : (!krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index)
    krnl.matmul %A[%mi, %c0], %B[%c0, %c0], %res[%mi, %c0], (%ip, %jp, %kp),
      (%v#0, %v#1, %v#2), (%cM, %cN, %cK)
      {{aTileSize = [], bTileSize = [], cTileSize = [], computeTileSize = {TILE}}}
      : memref<{AR}x{K}xf32>, memref<{K}x{N}xf32>, memref<{AR}x{N}xf32>,
        (!krnl.loop, !krnl.loop, !krnl.loop)
  }}
  return %res : memref<{AR}x{N}xf32>
}}
"""

# A batch loop around the tiles: the memory starts of the leading dimension are its value.
BATCHED = """
func.func @bmm(%A: memref<3x{M}x{K}xf32>, %B: memref<3x{K}x{N}xf32>,
    %C: memref<3x{M}x{N}xf32>) {{
  %c0 = arith.constant 0 : index
  %cM = arith.constant {M} : index
  %cN = arith.constant {N} : index
  %cK = arith.constant {K} : index
  %lb = krnl.define_loops 1
  krnl.iterate(%lb) with (%lb -> %b = 0 to 3) {{
    %l:3 = krnl.define_loops 3
    %it, %ip = krnl.block %l#0 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    %jt, %jp = krnl.block %l#1 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    %kt, %kp = krnl.block %l#2 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    krnl.permute(%it, %ip, %jt, %jp, %kt, %kp) [0, 3, 1, 4, 2, 5]
      : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
    krnl.iterate(%it, %jt, %kt) with (%l#0 -> %i = 0 to {M}, %l#1 -> %j = 0 to {N},
        %l#2 -> %k = 0 to {K}) {{
      %v:3 = krnl.get_induction_var_value(%it, %jt, %kt)
        : (!krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index)
      krnl.matmul %A[%b, %c0, %c0], %B[%b, %c0, %c0], %C[%b, %c0, %c0], (%ip, %jp, %kp),
        (%v#0, %v#1, %v#2), (%cM, %cN, %cK)
        {{aTileSize = [], bTileSize = [], cTileSize = [], computeTileSize = [4, 8, 8]}}
        : memref<3x{M}x{K}xf32>, memref<3x{K}x{N}xf32>, memref<3x{M}x{N}xf32>,
          (!krnl.loop, !krnl.loop, !krnl.loop)
    }}
  }}
  return
}}
"""


def matmul(
    m: int,
    n: int,
    k: int,
    blocks: tuple[int, int, int] = (4, 8, 8),
    tile: tuple[int, int, int] = (4, 8, 8),
    start: int = 0,
) -> pk.Function:
    text = MATMUL.format(
        M=m,
        N=n,
        K=k,
        AR=m - start,
        MI=start,
        I0=start,
        BI=blocks[0],
        BJ=blocks[1],
        BK=blocks[2],
        TILE=list(tile),
    )
    return pk.parse(text, "<matmul>")["mm"]


def batched(m: int, n: int, k: int) -> pk.Function:
    return pk.parse(BATCHED.format(M=m, N=n, K=k), "<bmm>")["bmm"]


def _inputs(fn: pk.Function, seed: int) -> dict[str, np.ndarray[Any, Any]]:
    rng = np.random.default_rng(seed)
    shapes = {a.name: tuple(a.type.get_shape()) for a in fn.arguments}  # type: ignore[attr-defined]
    return {name: rng.standard_normal(s).astype(np.float32) for name, s in shapes.items()}


def _outputs(fn: pk.Function, run: Any, args: dict[str, np.ndarray[Any, Any]]) -> list[Any]:
    """The returned arrays and the arguments after the run (C is updated in place)."""
    mine = {name: a.copy() for name, a in args.items()}
    got = run(**mine)
    results = [] if got is None else list(got) if isinstance(got, tuple) else [got]
    return [np.asarray(r) for r in results] + [mine[name] for name in sorted(mine)]


def _compare(fn: pk.Function, kernel: Any, exact: bool) -> None:
    for seed in (1, 2):
        args = _inputs(fn, seed)
        ref = _outputs(fn, lambda **a: pk.run_reference(fn, **a), args)
        got = _outputs(fn, kernel, args)
        assert len(ref) == len(got)
        for r, g in zip(ref, got, strict=True):
            if exact:
                np.testing.assert_array_equal(g, r)
            else:
                np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-5)


FOLDED = [
    pytest.param(matmul(64, 64, 64), id="square-64"),
    pytest.param(matmul(13, 21, 10), id="13x21x10"),
    pytest.param(matmul(15, 21, 10, start=2), id="memory-start-offset"),
    pytest.param(batched(13, 21, 10), id="batch-loop"),
]


@pytest.mark.parametrize("fn", FOLDED)
def test_numpy_default_is_one_matmul(fn: pk.Function) -> None:
    kernel = pk.schedule(fn).to_numpy()
    assert " @ " in kernel.source and "_pk_matmul" not in kernel.source, kernel.source
    assert "krnl.matmul's tiles partition its box (isl), one matmul" in kernel.source
    assert not kernel.exact  # the sum over k reassociated: allclose only
    _compare(fn, kernel, exact=False)


@pytest.mark.parametrize("fn", FOLDED)
def test_numpy_exact_is_rank_one_updates_bit_for_bit(fn: pk.Function) -> None:
    kernel = pk.schedule(fn).to_numpy(reassociate=False)
    assert " @ " not in kernel.source and "_pk_matmul" not in kernel.source, kernel.source
    assert "reassociate=False keeps the interpreter's order of the sum over k" in kernel.source
    assert kernel.exact
    _compare(fn, kernel, exact=True)


def test_memory_start_offset_slices() -> None:
    # A and C hold rows from 2 on: global rows 2..14 are their rows 0..12.
    source = pk.schedule(matmul(15, 21, 10, start=2)).to_numpy().source
    assert "[0:13, 0:21] += A[0:13, 0:10] @ B[0:10, 0:21]" in source, source


def test_batch_loop_stays_around_the_matmul() -> None:
    source = pk.schedule(batched(13, 21, 10)).to_numpy().source
    assert "for b in range(3):" in source, source
    assert "C[b, 0:13, 0:21] += A[b, 0:13, 0:10] @ B[b, 0:10, 0:21]" in source, source


NOT_FOLDED = [
    # blocks of 2 along i with compute tiles of 4: every row computed twice
    pytest.param(matmul(13, 21, 10, blocks=(2, 8, 8)), "the tiles overlap", id="overlap"),
    # blocks of 8 along i with compute tiles of 4: rows 4..7 of each block never
    pytest.param(matmul(16, 21, 10, blocks=(8, 8, 8)), "the tiles leave gaps", id="gaps"),
]


@pytest.mark.parametrize(("fn", "why"), NOT_FOLDED)
def test_tiles_that_do_not_partition_a_box_stay_tiles(fn: pk.Function, why: str) -> None:
    # The i tile loop stays, with the reason; inside one of its iterations the j and k
    # tiles still partition a box, and fold.
    for reassociate in (True, False):
        kernel = pk.schedule(fn).to_numpy(reassociate=reassociate)
        assert f"# loops it, jt, kt stay krnl.matmul's tiles: {why}" in kernel.source
        assert "for it in range(" in kernel.source, kernel.source
        assert "# loops jt, kt: krnl.matmul's tiles partition its box (isl)" in kernel.source
        assert kernel.exact == (not reassociate)
        _compare(fn, kernel, exact=not reassociate)


def test_tiles_along_k_that_overlap_stay_per_tile() -> None:
    # k blocked by 4, compute tiles of 8 along k: every k summed twice, no loop folds.
    fn = matmul(13, 21, 10, blocks=(4, 8, 4))
    kernel = pk.schedule(fn).to_numpy()
    assert "_pk_matmul(" in kernel.source, kernel.source
    assert "stay krnl.matmul's tiles: the tiles overlap" in kernel.source
    assert kernel.exact
    _compare(fn, kernel, exact=True)


def test_the_fold_is_proven_for_the_schedule_order() -> None:
    # k's tile loop outermost: each C element still takes its k in ascending order.
    fn = matmul(13, 21, 10)
    sched = pk.schedule(fn).reorder(["kt", "it", "jt"])
    kernel = sched.to_numpy(reassociate=False)
    assert "rank-1 updates" in kernel.source, kernel.source
    _compare(fn, kernel, exact=True)


def _benchmark(name: str, m: int, n: int, k: int) -> pk.Function:
    """The benchmark's own -O3 program (gemm_matmul: the bias nest after the matmul)."""
    text = getattr(onnx_shapes(), f"{name}_text")(m, n, k)
    return pk.parse(text, f"<{name}>")[name]


BENCHMARK = [
    pytest.param(name, size, id=f"{name}-{'x'.join(map(str, size))}")
    for name in ("matmul", "gemm_matmul")
    for size in ((64, 64, 64), (13, 21, 10))
]


@pytest.mark.parametrize(("name", "size"), BENCHMARK)
def test_benchmark_programs_fold_in_numpy(name: str, size: tuple[int, int, int]) -> None:
    fn = _benchmark(name, *size)
    m, n, k = size
    default = pk.schedule(fn).to_numpy()
    assert f"res_2[0:{m}, 0:{n}] += A[0:{m}, 0:{k}] @ B[0:{k}, 0:{n}]" in default.source
    _compare(fn, default, exact=False)
    exact = pk.schedule(fn).to_numpy(reassociate=False)
    assert "rank-1 updates" in exact.source and "_pk_matmul" not in exact.source
    _compare(fn, exact, exact=True)


numba = pytest.importorskip("numba", reason="the Numba target needs polykrnl[numba]")


@pytest.mark.parametrize(
    "fn",
    [
        pytest.param(matmul(13, 21, 10), id="13x21x10"),
        pytest.param(matmul(15, 21, 10, start=2), id="memory-start-offset", marks=pytest.mark.slow),
        pytest.param(batched(13, 21, 10), id="batch-loop", marks=pytest.mark.slow),
        pytest.param(matmul(64, 64, 64), id="square-64", marks=pytest.mark.slow),
    ],
)
def test_numba_folded_loops_bit_for_bit(fn: pk.Function) -> None:
    kernel = pk.schedule(fn).to_numba(cache=False)
    assert "for it in" not in kernel.source, kernel.source  # the tile loops are folded
    assert "for k in range(" in kernel.source
    _compare(fn, kernel, exact=True)


@pytest.mark.slow
@pytest.mark.parametrize(("fn", "why"), NOT_FOLDED)
def test_numba_tile_loops_bit_for_bit(fn: pk.Function, why: str) -> None:
    kernel = pk.schedule(fn).to_numba(cache=False)
    assert "for it in" in kernel.source, kernel.source  # the i tiles stay a loop
    _compare(fn, kernel, exact=True)


@pytest.mark.slow
def test_numba_one_compute_tile_per_iteration_bit_for_bit() -> None:
    fn = matmul(13, 21, 10, blocks=(4, 8, 4))
    kernel = pk.schedule(fn).to_numba(cache=False)
    assert "for kt in" in kernel.source, kernel.source
    _compare(fn, kernel, exact=True)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "size"), BENCHMARK)
def test_numba_benchmark_programs_bit_for_bit(name: str, size: tuple[int, int, int]) -> None:
    fn = _benchmark(name, *size)
    kernel = pk.schedule(fn).to_numba(cache=False)
    assert "for it in" not in kernel.source and "for k in range(" in kernel.source
    _compare(fn, kernel, exact=True)


@pytest.mark.parametrize("loop", ["it", "jt"])
def test_numba_folded_loops_run_their_rows_on_threads_when_a_tile_loop_is_parallel(
    loop: str,
) -> None:
    """A parallel tile loop around krnl.matmul (its mark proven legal) is folded with the
    others: the folded nest's rows of C, independent whichever tile loop was marked
    (C shares no memory with A or B), run as a prange; bit for bit on threads."""
    fn = matmul(40, 21, 10)
    sched = pk.schedule(fn).parallel(loop)
    kernel = sched.to_numba(parallel=True, cache=False)
    assert kernel.parallel_loops == {loop: "prange (the folded krnl.matmul's rows)"}
    assert "for it in" not in kernel.source and " in prange(" in kernel.source
    assert f"{loop}: prange (the folded krnl.matmul's rows) (threads)" in kernel.source
    _compare(fn, kernel, exact=True)


def test_numba_refuses_a_matmul_into_its_own_a() -> None:
    """C[i, j] += A[i, k] B[k, j] into A itself: the interpreter computes a tile from the
    values before its update, scalar loops would read what they wrote. Refused, located
    (NumPy's block product reads first: equal to the interpreter)."""
    text = MATMUL.format(
        AR=16, M=16, N=16, K=16, MI=0, I0=0, BI=4, BJ=8, BK=8, TILE="[4, 8, 8]"
    ).replace("%res[%mi, %c0], (%ip", "%A[%mi, %c0], (%ip")
    fn = pk.parse(text)["mm"]
    with pytest.raises(UnsupportedError, match=r"krnl\.matmul writing into its own A or B"):
        pk.schedule(fn).to_numba(cache=False)
    _compare(fn, pk.schedule(fn).to_numpy(), exact=False)
