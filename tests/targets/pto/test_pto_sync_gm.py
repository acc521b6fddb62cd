"""Synchronization through global memory: a TLOAD of what a TSTORE on another pipe wrote
waits for it (MTE3 -> MTE2), while the same window in the next iteration of a loop that
moves it is another window (no wait). Before, only tiles were followed: two nests
passing a tensor through GM had no flag between the store and the load."""

from __future__ import annotations

import polykrnl as pk
from polykrnl.targets.pto.program import GlobalView, Instr, Pipe, WaitFlag, walk
from tests.targets.pto.pto_cases import FUSED

INPLACE = """
func.func @inplace(%N: index, %X: memref<?x16xf32>) {
  %a0, %a1 = krnl.define_loops 2
  %ab, %al = krnl.block %a0 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%ab, %al, %a1) with (%a0 -> %i = 0 to %N, %a1 -> %j = 0 to 16) {
    %x = krnl.load %X[%i, %j] : memref<?x16xf32>
    %e = math.exp %x : f32
    krnl.store %e, %X[%i, %j] : memref<?x16xf32>
  }
  return
}
"""


def _gm(it: object, op: str, tensor: str) -> bool:
    if not isinstance(it, Instr) or it.op != op:
        return False
    view = it.dst if op == "TSTORE" else it.srcs[0]
    return isinstance(view, GlobalView) and view.tensor == tensor


def test_a_load_of_a_stored_tensor_waits_for_the_store() -> None:
    # through_array: the fused loop stores Y, the third nest's loop loads it
    kernel = pk.schedule(FUSED["through_array"]).to_pto("a2a3")
    items = list(walk(kernel.program.body))
    store = max(i for i, it in enumerate(items) if _gm(it, "TSTORE", "Y"))
    load = next(i for i, it in enumerate(items) if _gm(it, "TLOAD", "Y"))
    assert store < load
    waits = [it for it in items[store:load] if isinstance(it, WaitFlag)]
    assert any((w.src, w.dst) == (Pipe.MTE3, Pipe.MTE2) for w in waits), waits


def test_the_same_window_in_the_next_iteration_does_not_wait() -> None:
    # X[tile] loaded, exp, stored back: the next iteration's load reads the next tile
    kernel = pk.schedule(pk.parse(INPLACE)["inplace"]).to_pto("a2a3")
    waits = [it for it in walk(kernel.program.body) if isinstance(it, WaitFlag)]
    assert waits and (Pipe.MTE3, Pipe.MTE2) not in {(w.src, w.dst) for w in waits}
