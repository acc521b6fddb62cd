"""When the tile loops around a krnl.matmul compute one matmul over a box, proven with isl.

onnx-mlir's -O3 MatMul blocks i, j and k, and the body of its tile loops is one
`krnl.matmul` on the tile the loops' values start. Each instance computes, for the
(i, j, k) of its tile (clipped by the global upper bounds),
`C[i, j] = A[i, k] * B[k, j] + C[i, j]`, k ascending (the interpreter's meaning). If
the instances of the folded loops compute each point of a box exactly once, and every
C element gets its k in ascending order across the instances as the schedule runs
them, the loops compute `C[box] += A[box] @ B[box]` with the interpreter's roundings
when the sum keeps that order: `fold_box` proves it (or says why not), and the Python
targets write that (codegen/matmul.py). The memory starts must be the same for every
instance of the folded loops (they may depend on the loops around: a batch loop).
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import BlockArgument, OpResult, SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.ir import const_int, int_list
from polykrnl.poly import PolyProgram, Statement
from polykrnl.poly.domains import parse_map
from polykrnl.poly.table import model_of


def compute_tile(op: k.MatMulOp) -> list[int]:
    """The compute tile's sizes (i, j, k): the attribute, or C's tile then A's columns."""
    shape_a = list(op.A.type.get_shape())  # type: ignore[attr-defined]
    shape_c = list(op.C.type.get_shape())  # type: ignore[attr-defined]
    a_tile = int_list(op.aTileSize) or shape_a[-2:]
    c_tile = int_list(op.cTileSize) or shape_c[-2:]
    return int_list(op.computeTileSize) or [c_tile[0], c_tile[1], a_tile[1]]


def matmul_of(s: Statement) -> k.MatMulOp | None:
    """The statement's krnl.matmul, when it is its only op that is not a pure value."""
    mm = [op for op in s.ops if isinstance(op, k.MatMulOp)]
    if len(mm) != 1 or s.exports or s.imports:
        return None
    others = [op for op in s.ops if op is not mm[0]]
    if any(model_of(op) is None or not model_of(op).pure for op in others):  # type: ignore[union-attr]
        return None
    return mm[0]


class _LoopExprs:
    """Index values as isl expressions of the statement's loop values (`_l0`, ...):
    constants, parameters, loop values, and what the model's index table computes from
    them (affine.apply, arith on indices)."""

    def __init__(self, program: PolyProgram, s: Statement) -> None:
        self.program = program
        self.s = s

    def loop_var(self, loop: str | None) -> str | None:
        if loop is None or loop not in self.s.loops:
            return None
        return f"_l{self.s.loops.index(loop)}"

    def of(self, v: SSAValue) -> str | None:
        c = const_int(v)
        if c is not None:
            return str(c)
        program = self.program
        if v in program.symbols:
            return program.symbols[v]
        if isinstance(v, BlockArgument):
            origin = program.nest.origin_of_iv.get(v)
            if origin is None or origin.carrier is None:
                return None
            return self.loop_var(program.loop_names.get(origin.carrier))
        assert isinstance(v, OpResult)
        op = v.op
        if isinstance(op, k.GetInductionVarValueOp):
            return self.loop_var(program.handle_names.get(op.loops[v.index]))
        model = model_of(op)
        if model is not None and model.index is not None:
            return model.index(op, self)
        return None


@dataclass(frozen=True)
class FoldBox:
    """The box the folded loops compute, per value of the loops around them.

    isl sets and functions over the parameters and `__o0`, `__o1`, ... (the values of
    the statement's loops around the folded ones, in order): `runs` where the box is not
    empty; `lo`/`hi` the first and last i, j and k; `mems` the memory starts of A, B and
    C (each a list, one per dimension). The box is `lo <= (i, j, k) <= hi`, and instance
    by instance C[i, j] takes its k in ascending order."""

    outer: tuple[str, ...]  # the loops around, whose values are `__o0`, ...
    around: isl.Set  # the values for which the loops around run
    runs: isl.Set
    lo: tuple[isl.PwAff, isl.PwAff, isl.PwAff]
    hi: tuple[isl.PwAff, isl.PwAff, isl.PwAff]
    mems: tuple[tuple[isl.PwAff, ...], tuple[isl.PwAff, ...], tuple[isl.PwAff, ...]]


def fold_box(
    program: PolyProgram, s: Statement, folded: frozenset[str], order: isl.Map
) -> FoldBox | str:
    """The box the loops `folded` (the innermost loops of `s`, any order) compute with
    the krnl.matmul of `s`, run in the order `order` (`s`'s instances -> time), or why
    they do not compute one matmul."""
    op = matmul_of(s)
    if op is None:
        return "the body is not one krnl.matmul"
    n_out = len(s.loops) - len(folded)
    if set(s.loops[n_out:]) != folded:
        return "the loops are not the innermost loops of the krnl.matmul"
    arrays = {a.array for a in s.accesses if not a.write and a.op is op}
    written = {a.array for a in s.accesses if a.write}
    if any(a.may for a in s.accesses) or len(written) != 1 or len(arrays) != 3:
        return "A, B and C are not three distinct arrays accessed exactly"
    ex = _LoopExprs(program, s)
    starts = [
        ex.of(v)
        for v in (
            op.iGlobalIndexComputeStart,
            op.jGlobalIndexComputeStart,
            op.kGlobalIndexComputeStart,
        )
    ]
    ubs = [ex.of(v) for v in (op.iGlobalUB, op.jGlobalUB, op.kGlobalUB)]
    mem_values = [op.aGlobalIndexMemStart, op.bGlobalIndexMemStart, op.cGlobalIndexMemStart]
    mems = [[ex.of(v) for v in vs] for vs in mem_values]
    flat = [*starts, *ubs, *(m for ms in mems for m in ms)]
    if any(x is None for x in flat):
        return "a start or bound of the krnl.matmul is not affine"
    for v, ms in zip((op.A, op.B, op.C), mems, strict=True):
        t = v.type
        if not isinstance(t, MemRefType) or len(t.get_shape()) != len(ms) or len(ms) < 2:
            return "an operand's rank does not match its memory starts"
    tile = compute_tile(op)
    if len(tile) != 3 or any(n <= 0 for n in tile):
        return "the compute tile is empty"
    params = "[" + ", ".join(program.params) + "]"
    lvars = ", ".join(f"_l{n}" for n in range(len(s.loops)))
    outer = [f"_l{n}" for n in range(n_out)]
    cons = " and ".join(
        f"{s0} <= {x} < ({s0}) + {n} and {x} < {ub}"
        for x, s0, n, ub in zip(("_i", "_j", "_k"), starts, tile, ubs, strict=True)
    )
    vals = s.loop_values
    points = vals.apply_range(
        parse_map(
            f"{params} -> {{ [{lvars}] -> [{', '.join([*outer, '_i', '_j', '_k'])}] : {cons} }}"
        )
    )
    at = vals.apply_range(parse_map(f"{params} -> {{ [{lvars}] -> [{', '.join(outer)}] }}"))
    fixed = vals.apply_range(
        parse_map(
            f"{params} -> {{ [{lvars}] -> [{', '.join(str(m) for ms in mems for m in ms)}] }}"
        )
    )
    if not at.reverse().apply_range(fixed).is_single_valued():
        return "a memory start changes inside the loops"
    if not points.is_injective():
        return "the tiles overlap"
    # k ascending for each C element: an instance computing (i, j, k) runs before every
    # instance computing (i, j, k') with k < k'.
    n = n_out + 3
    later_k = parse_map(
        f"{params} -> {{ [{', '.join(f'_x{d}' for d in range(n))}] -> "
        f"[{', '.join(f'_x{d}' for d in range(n - 1))}, _y] : _y > _x{n - 1} }}"
    )
    pairs = points.apply_range(later_k).apply_range(points.reverse())
    # An instance's own k run in ascending order inside it: the pairs of one instance
    # (distance 0) need no order.
    late = pairs.intersect(order.lex_ge_map(order)).deltas()
    xs = [f"_x{d}" for d in range(len(s.dims))]
    moved = f"{params} -> {{ {s.name}[{', '.join(xs)}] : {' or '.join(f'{x} != 0' for x in xs)} }}"
    if xs and not late.intersect(isl.Set(moved)).is_empty():
        return "the schedule does not run each C element's k in ascending order"
    n_params = len(program.params)
    box = _outer_as_params(points.range(), n_params, n_out).coalesce()
    sides = _sides(box, params)
    if isinstance(sides, str):
        return sides
    fixed_set = at.reverse().apply_range(fixed).wrap().flatten()
    fixed_set = _outer_as_params(fixed_set, n_params, n_out)
    starts_of = [fixed_set.dim_min(d) for d in range(len(flat) - 6)]
    cut = [len(m) for m in mems]
    grouped = (
        tuple(starts_of[: cut[0]]),
        tuple(starts_of[cut[0] : cut[0] + cut[1]]),
        tuple(starts_of[cut[0] + cut[1] :]),
    )
    # Where the loops around run, the box is empty only where this says.
    around = _outer_as_params(at.range(), n_params, n_out)
    return FoldBox(
        tuple(s.loops[:n_out]),
        around.params(),
        box.params().gist(around.params()),
        (sides[0].dim_min(0), sides[1].dim_min(0), sides[2].dim_min(0)),
        (sides[0].dim_max(0), sides[1].dim_max(0), sides[2].dim_max(0)),
        grouped,
    )


def _outer_as_params(s: isl.Set, n_params: int, n_out: int) -> isl.Set:
    """`s` with its first `n_out` dimensions (the loops around) as the parameters
    `__o0`, ... after the program's `n_params`."""
    s = s.move_dims(isl.dim_type.param, n_params, isl.dim_type.set, 0, n_out)
    for d in range(n_out):
        s = s.set_dim_name(isl.dim_type.param, n_params + d, f"__o{d}")
    return s


def _sides(box: isl.Set, params: str) -> list[isl.Set] | str:
    """The box's i, j and k sides, each an interval for every value of the parameters,
    whose product it is; or why it is not a box."""
    sides: list[isl.Set] = []
    for d in range(3):
        side = box.project_out(isl.dim_type.set, 0, d).project_out(isl.dim_type.set, 1, 2 - d)
        side = side.coalesce()
        # An interval: every point between two of its points is in it.
        up = parse_map(f"{params} -> {{ [_a] -> [_b] : _b >= _a }}").align_params(side.get_space())
        between = side.apply(up).intersect(side.apply(up.reverse()))
        if not between.is_subset(side):
            return "the tiles leave gaps"
        sides.append(side)
    if not box.is_equal(sides[0].flat_product(sides[1]).flat_product(sides[2])):
        return "the tiles do not cover a box"
    return sides
