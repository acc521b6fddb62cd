"""Schedule.script(): Python that rebuilds a schedule, one line per primitive."""

from __future__ import annotations

from pathlib import Path

import polykrnl as pk

JACOBI = """
func.func @jacobi(%A: memref<5x10xf32>) {
  %three = arith.constant 3.0 : f32
  %tt, %ii = krnl.define_loops 2
  krnl.iterate(%tt, %ii) with (%tt -> %t = 0 to 4, %ii -> %i = 1 to 9) {
    %t1 = affine.apply affine_map<(d0) -> (d0 + 1)>(%t)
    %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
    %a = krnl.load %A[%t, %im] : memref<5x10xf32>
    %b = krnl.load %A[%t, %i] : memref<5x10xf32>
    %c = krnl.load %A[%t, %ip] : memref<5x10xf32>
    %s = arith.addf %a, %b : f32
    %u = arith.addf %s, %c : f32
    %v = arith.divf %u, %three : f32
    krnl.store %v, %A[%t1, %i] : memref<5x10xf32>
  }
  return
}
"""


def _run(script: str, fn: pk.Function) -> pk.Schedule:
    env: dict[str, object] = {"pk": pk, "fn": fn}
    exec(script, env)
    out = env["s"]
    assert isinstance(out, pk.Schedule)
    return out


def test_a_skewed_tiling_replays() -> None:
    fn = pk.parse(JACOBI)["jacobi"]
    s = pk.Schedule.from_function(fn, recipe=False)
    s = s.skew("i", "t", 1).block("t", 2).block("i", 4).reorder(["t_t", "i_t", "t", "i"])
    assert s.script().splitlines() == [
        "s = pk.Schedule.from_function(fn, recipe=False)",
        "s = s.skew('i', 't', 1)",
        "s = s.block('t', 2, names=('t_t', 't'))",
        "s = s.block('i', 4, names=('i_t', 'i'))",
        "s = s.permute(['t_t', 't', 'i_t', 'i'], [0, 2, 1, 3])",
    ]
    again = _run(s.script(), fn)
    assert again.steps == s.steps and str(again.loops()) == str(s.loops())


def test_a_forced_step_replays_with_force() -> None:
    fn = pk.parse(JACOBI)["jacobi"]
    s = pk.Schedule.from_function(fn, recipe=False)
    tiled = s.block("t", 2).block("i", 4).reorder(["t_t", "i_t", "t", "i"], force=True)
    assert not tiled.check().legal
    assert tiled.script().splitlines()[-1].endswith("[0, 2, 1, 3], force=True)")
    again = _run(tiled.script(), fn)
    assert str(again.loops()) == str(tiled.loops())
    # Without force the same line is refused: the script says what was forced.
    unforced = tiled.script().replace(", force=True", "")
    try:
        _run(unforced, fn)
    except pk.IllegalTransformError:
        pass
    else:
        raise AssertionError("the unforced replay of an illegal tiling was accepted")


def test_a_krnl_recipe_is_the_starting_point() -> None:
    fn = pk.load(Path(__file__).parent.parent / "corpus" / "tile_3d_permute.mlir").functions[0]
    s = pk.schedule(fn)
    assert s.script() == "s = pk.schedule(fn)"
    par = s.parallel(s.loop_names()[0])
    assert par.script().splitlines() == [
        "s = pk.schedule(fn)",
        f"s = s.parallel('{s.loop_names()[0]}')",
    ]
