"""A tile loop of vector lanes written as one flat loop (targets/numba/lanes.py): the
rewrite on small ASTs, and onnx-mlir's SIMD forms against the reference interpreter, bit
for bit."""

from __future__ import annotations

import ast
import textwrap

import numpy as np
import pytest

import polykrnl as pk
from polykrnl.targets.numba.lanes import flatten_lanes
from tests.scripts import onnx_shapes

numba = pytest.importorskip("numba")


def flattened(source: str) -> str:
    fn = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    flatten_lanes(fn)
    ast.fix_missing_locations(fn)
    return ast.unparse(fn)


# The shape the kernel writer gives onnx-mlir's -O3 tile loop of vector<8xf32> ops.
TILES = """
def k(a, out):
    for t in range(0, 40, 8):
        if 8 > 0:
            out_1 = out
            for lane in range(8):
                x = a[np.uint64(t + lane)]
                out_1[np.uint64(t + lane)] = np.float32(x + x)
"""


def test_a_tile_loop_of_lanes_becomes_one_loop_in_the_same_order() -> None:
    out = flattened(TILES)
    assert "for t in range(0, 40):" in out and "lane" not in out and "if 8 > 0" not in out
    assert "out_1[np.uint64(t)] = np.float32(x + x)" in out
    # the copy once, before the loop: in it, a reference count's changes per element
    assert out.index("out_1 = out") < out.index("for t in")


def test_a_last_partial_tile_still_runs_all_its_lanes() -> None:
    partial = TILES.replace("range(0, 40, 8)", "range(0, 33, 8)")
    assert "for t in range(0, 40):" in flattened(partial)


def test_symbolic_bounds_round_up_to_whole_tiles() -> None:
    out = flattened(TILES.replace("range(0, 40, 8)", "range(s, n, 8)"))
    assert "for t in range(s, s + (n - s + 7) // 8 * 8):" in out
    for s, n in ((0, 40), (3, 36), (5, 5), (9, 2), (0, 1)):
        tiles = [t + lane for t in range(s, n, 8) for lane in range(8)]
        assert tiles == list(range(s, s + (n - s + 7) // 8 * 8)), (s, n)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (("x = a[np.uint64(t + lane)]", "x = a[np.uint64(lane)]"), "a lane alone"),
        (("x = a[np.uint64(t + lane)]", "x = a[np.uint64(t)]"), "the tile alone"),
        (("x = a[np.uint64(t + lane)]", "x = a[np.uint64(t + 2 * lane)]"), "a stride"),
        (("for lane in range(8)", "for lane in range(4)"), "lanes fewer than the step"),
        (("if 8 > 0:", "if n > 0:"), "a guard of its own"),
        (("out_1 = out\n", "out_1 = out[1:]\n"), "not a copy of a name"),
        (("(x + x)", "(x + x)\n                t = 0"), "assigns the tile variable"),
        (("out_1 = out\n", "out_1 = out\n            y = t\n"), "reads the tile first"),
        (("(x + x)", "(x + x)\n                out_1 = a"), "assigns a copy"),
        (("(x + x)", "(x + x)\n                out = a"), "assigns what is copied"),
    ],
)
def test_other_lane_loops_stay_as_they_are(change: tuple[str, str], why: str) -> None:
    source = TILES.replace(*change)
    assert source != TILES
    assert "lane" in flattened(source), why


@pytest.mark.parametrize("after", ["out[0] = lane", "out[0] = t", "y = out_1"])
def test_names_read_after_the_loops_keep_them(after: str) -> None:
    """A copy would run before the flat loop even with no tile to run."""
    assert "lane" in flattened(TILES + f"    {after}\n")


@pytest.mark.parametrize("name", ["add", "relu", "tanh", "add_row", "reduce_sum_last"])
def test_onnx_mlirs_simd_forms_equal_the_interpreter(name: str) -> None:
    shapes = onnx_shapes()
    program = next(p for p in shapes.PROGRAMS if p.name == name)
    fn = pk.parse(program.text(*program.small)).functions[0]
    rng = np.random.default_rng(12)
    args = {
        p.name: (rng.standard_normal(p.type.get_shape()) * 4).astype(np.float32)
        for p in fn.arguments
    }
    first = next(iter(args.values()))
    first.flat[:4] = [np.nan, -0.0, np.inf, -np.inf]
    kernel = pk.schedule(fn).to_numba(cache=False)
    want = pk.run_reference(fn, **{k: v.copy() for k, v in args.items()})
    got = kernel(**{k: v.copy() for k, v in args.items()})
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    # every lane loop flattened; reduce_sum_last's, whose accumulator is indexed by the
    # lane alone, written out instead (lane_accumulators.py)
    assert "for lane in range(" not in kernel.function_source
