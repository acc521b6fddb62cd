"""``C[i, j] += A[i, k] * B[k, j]`` over a k loop: the cube's tile flow (TLOAD to Mat
tiles, TMOV to Left/Right, TMATMUL for the first k tile then TMATMUL_ACC, TSTORE from Acc).

The accumulator in L0C starts from the first product: pto-isa's TLOAD fills only Vec and Mat
tiles and TMOV reaches Acc from no other buffer, so C's old values cannot start it. When C
is set to 0 first (in the nest, or by a ``krnl.memset`` right before a ``krnl.matmul``),
the store from L0C overwrites C; otherwise C keeps its values and the store adds the
product to them (``TSTORE<..., AtomicType::AtomicAdd>``, the fixpipe's atomic add into
global memory).
"""

from __future__ import annotations

import sympy  # type: ignore[import-untyped]
from xdsl.ir import BlockArgument, Operation, OpResult

from polykrnl.dialect.krnl import MatMulOp, MemsetOp
from polykrnl.poly import Statement
from polykrnl.targets.pto.dtypes import ALIGN_BYTES
from polykrnl.targets.pto.krnl_ops import (
    constant_value,
    is_add,
    is_load,
    is_mul,
    is_store,
    loop_of_value,
    unwrap_extf,
)
from polykrnl.targets.pto.loop_bounds import bounds_expr, int_symbol
from polykrnl.targets.pto.lowering_state import Axis, KernelBuilder, lowering_error, round_up
from polykrnl.targets.pto.program import GlobalView, Instr, Item, Loop, SetValid
from polykrnl.targets.pto.types import (
    BLayout,
    Loc,
    SLayout,
    TileType,
    acc_tile,
    left_tile,
    right_tile,
)
from polykrnl.transforms.core import LoopInfo

__all__ = [
    "check_krnl_matmul",
    "cube_flow",
    "krnl_matmul_of",
    "lower_matmul",
    "matmul_form",
    "zero_memset",
]


def lower_matmul(
    b: KernelBuilder, axes: dict[str, Axis], order: list[str], statements: list[Statement]
) -> list[Item]:
    """C[i, j] = 0, then C[i, j] += A[i, k] * B[k, j] over k: the cube's tile flow."""
    if not statements:
        return []
    update = statements[-1]
    form = matmul_form(b, update)
    if form is None:
        raise lowering_error(update, "a 3-deep nest that is not C[i, j] += A[i, k] * B[k, j]")
    c_name, a_name, b_name, (i, j, kk) = form
    inits = statements[:-1]
    if len(inits) > 1 or (inits and not _zero_store(b, inits[0], c_name, i, j)):
        raise lowering_error(
            update,
            f"the matmul into {c_name} follows another statement than {c_name}[{i}, {j}] = 0 "
            "in the (i, j) loops",
            hint=f"store 0.0 into {c_name}[{i}, {j}] before the k loop, or nothing (then the "
            f"product is added to what {c_name} holds)",
        )
    if order.index(kk) != 2:
        raise lowering_error(update, f"the reduction loop {kk} is not innermost of the point loops")
    names = (a_name, b_name, c_name)
    return cube_flow(b, update, names, (axes[i], axes[j], axes[kk]), accumulate=not inits)


def cube_flow(
    b: KernelBuilder,
    update: Statement,
    names: tuple[str, str, str],
    axes: tuple[Axis, Axis, Axis],
    accumulate: bool = False,
) -> list[Item]:
    """C[i, j] = sum over k of A[i, k] * B[k, j] for one (i, j) tile, starting from zero:
    the k tiles through L1 and L0A/L0B into L0C (TMATMUL, then TMATMUL_ACC), one TSTORE;
    with `accumulate` the store adds the sum to C's values (C[i, j] += ...)."""
    a_name, b_name, c_name = names
    ai, aj, ak = axes
    i, j, kk = ai.origin, aj.origin, ak.origin
    ta, tb, tc = (b.tensors[x].dtype for x in (a_name, b_name, c_name))
    allowed = {("f16", "f32"), ("bf16", "f32"), ("f32", "f32"), ("i8", "i32")}
    if ta != tb or (ta.name, tc.name) not in allowed:
        raise lowering_error(
            update,
            f"matmul of {ta} x {tb} into {tc}: the cube computes f32 from f16, bf16 or f32, "
            "and i32 from i8",
        )
    m, n, kd = ai.size, aj.size, ak.size
    for what, v in (("m", m), ("n", n), ("k", kd)):
        if not 1 <= v <= 4095:
            raise lowering_error(update, f"matmul tile {what} = {v} is outside [1, 4095]")
    c0 = 16
    mm, nn = round_up(m, c0), round_up(n, c0)
    # k is the column count of A's boxes (32 bytes) and the row count of B's (16 rows)
    kk_size = round_up(kd, max(ALIGN_BYTES // ta.size, 16))
    a_l1 = b.tile(
        "a_l1_",
        TileType(Loc.Mat, ta, mm, kk_size, BLayout.ColMajor, None, None, SLayout.RowMajor),
        "mat",
    )
    b_l1 = b.tile(
        "b_l1_",
        TileType(Loc.Mat, tb, kk_size, nn, BLayout.ColMajor, None, None, SLayout.RowMajor),
        "mat",
    )
    a_l0 = b.tile("a_l0_", left_tile(ta, mm, kk_size, b.arch.name, None, None), "left")
    b_l0 = b.tile("b_l0_", right_tile(tb, kk_size, nn, None, None), "right")
    c_l0 = b.tile("c_l0_", acc_tile(tc, mm, nn, None, None), "acc")
    A, B, C = b.tensors[a_name], b.tensors[b_name], b.tensors[c_name]
    vm, vn = ai.extent, aj.extent

    def step(k_start: sympy.Expr, vk: sympy.Expr, first: bool) -> list[Item]:
        return [
            SetValid(a_l1, vm, vk),
            SetValid(b_l1, vk, vn),
            SetValid(a_l0, vm, vk),
            SetValid(b_l0, vk, vn),
            Instr(
                "TLOAD",
                a_l1,
                (GlobalView.of(A, ai.start, k_start, vm, vk),),
                comment=f"{update.name}: {a_name}[{i}, {kk}]",
            ),
            Instr(
                "TLOAD",
                b_l1,
                (GlobalView.of(B, k_start, aj.start, vk, vn),),
                comment=f"{update.name}: {b_name}[{kk}, {j}]",
            ),
            Instr("TMOV", a_l0, (a_l1,)),
            Instr("TMOV", b_l0, (b_l1,)),
            Instr(
                "TMATMUL" if first else "TMATMUL_ACC",
                c_l0,
                (a_l0, b_l0),
                comment=f"{update.name}: {c_name} += {a_name} * {b_name}",
            ),
        ]

    items: list[Item] = [SetValid(c_l0, vm, vn)]
    k_lo = ak.start if ak.tile_loop is None else bounds_expr(ak.tile_loop.lbs, {}, "k", True)
    k_hi = (
        (ak.start + ak.extent)
        if ak.tile_loop is None
        else bounds_expr(ak.tile_loop.ubs, {}, "k", False)
    )
    if ak.tile_loop is None:
        items += step(k_lo, ak.extent, True)
    else:
        var = int_symbol(ak.tile_loop.name)
        vk = sympy.Min(kd, k_hi - var)
        # The first k tile (TMATMUL, not _ACC) is a loop of one iteration over the same
        # variable, so that its tiles live in loops over k only and can be double-buffered
        # like the others (polykrnl.targets.pto.pipeline).
        name = ak.tile_loop.name
        items.append(Loop(name, k_lo, k_lo + kd, kd, step(var, vk, True), f"first tile of {kk}"))
        items.append(Loop(name, k_lo + kd, k_hi, kd, step(var, vk, False), f"tiles of {kk}"))
    note = f"{update.name}: {c_name}[{i}, {j}]" + (" += the sum" if accumulate else "")
    view = GlobalView.of(C, ai.start, aj.start, vm, vn)
    return [*items, Instr("TSTORE", view, (c_l0,), comment=note, atomic_add=accumulate)]


def matmul_form(
    b: KernelBuilder, s: Statement
) -> tuple[str, str, str, tuple[str, str, str]] | None:
    anchor = s.anchor
    if not is_store(anchor):
        return None
    val = anchor.operands[0]
    if not isinstance(val, OpResult) or not is_add(val.op):
        return None
    add = val.op
    nest = b.sched.program.nest

    def loops_of(op: Operation) -> list[str] | None:
        out: list[str] = []
        first = 2 if op is anchor else 1  # a store's value and memref come first
        for v in op.operands[first:]:
            origin = nest.origin_of_iv.get(v) if isinstance(v, BlockArgument) else None
            if origin is None or origin.carrier is None:
                return None
            out.append(
                b.sched.loop(b.sched.program.loop_names[origin.carrier]).origin
                if b.sched.program.loop_names[origin.carrier] in b.sched.loop_names()
                else b.sched.program.loop_names[origin.carrier]
            )
        return out

    c_store = loops_of(anchor)
    for old, prod in ((add.operands[0], add.operands[1]), (add.operands[1], add.operands[0])):
        if not (isinstance(old, OpResult) and is_load(old.op)):
            continue
        if old.op.operands[0] is not anchor.operands[1] or loops_of(old.op) != c_store:
            continue
        if not (isinstance(prod, OpResult) and is_mul(prod.op)):
            continue
        fa, fb = (unwrap_extf(x) for x in prod.op.operands)
        if not (isinstance(fa, OpResult) and isinstance(fb, OpResult)):
            continue
        if not all(is_load(x.op) for x in (fa, fb)):
            continue
        la, lb = loops_of(fa.op), loops_of(fb.op)
        if c_store is None or la is None or lb is None or len(c_store) != 2:
            return None
        i, j = c_store
        ks = [x for x in la if x not in (i, j)]
        if len(ks) != 1 or la != [i, ks[0]] or lb != [ks[0], j]:
            return None
        names = [b.tensor_of_value.get(x.op.operands[0]) for x in (old, fa, fb)]
        if None in names:
            return None
        return names[0], names[1], names[2], (i, j, ks[0])  # type: ignore[return-value]
    return None


def _zero_store(b: KernelBuilder, s: Statement, c_name: str, i: str, j: str) -> bool:
    anchor = s.anchor
    if not is_store(anchor):
        return False
    if b.tensor_of_value.get(anchor.operands[1]) != c_name:
        return False
    return constant_value(anchor.operands[0]) == 0


def krnl_matmul_of(b: KernelBuilder, statements: list[Statement]) -> MatMulOp | None:
    """The krnl.matmul a nest's one statement is, if it is one."""
    if len(statements) == 1 and isinstance(statements[0].anchor, MatMulOp):
        return statements[0].anchor
    return None


def check_krnl_matmul(
    b: KernelBuilder,
    s: Statement,
    op: MatMulOp,
    tile_loops: list[LoopInfo],
    axes: dict[str, Axis],
) -> tuple[tuple[str, str, str], tuple[Axis, Axis, Axis]]:
    """onnx-mlir's matmul: `krnl.matmul` on whole tensors (memory starts 0) at the tile
    loops of i, j and k (k innermost), its compute tile the blocks, its bounds the loops'."""
    a_name, b_name, c_name = (b.tensor_of_value.get(x) for x in (op.A, op.B, op.C))
    if a_name is None or b_name is None or c_name is None:
        raise lowering_error(s, "a krnl.matmul on a buffer that is not a tensor of the kernel")
    starts = [*op.aGlobalIndexMemStart, *op.bGlobalIndexMemStart, *op.cGlobalIndexMemStart]
    if any(constant_value(x) != 0 for x in starts):
        raise lowering_error(
            s, "a krnl.matmul on tile buffers (memory starts other than 0): only the form on "
            "whole tensors is lowered to the cube",
            hint="write the matmul on the tensors themselves, as onnx-mlir does",
        )  # fmt: skip
    program = b.sched.program
    loops: list[LoopInfo] = []
    starts = [op.iGlobalIndexComputeStart, op.jGlobalIndexComputeStart]
    for v in (*starts, op.kGlobalIndexComputeStart):
        lp = loop_of_value(program.nest, v)
        name = program.loop_names.get(lp) if lp is not None else None
        info = next((x for x in tile_loops if x.name == name), None)
        if info is None:
            raise lowering_error(
                s, "krnl.matmul's compute starts are not the values of the nest's tile loops"
            )
        loops.append(info)
    if tile_loops[-1] is not loops[2]:
        raise lowering_error(s, f"the k tile loop {loops[2].name} is not the innermost loop")
    sizes = [int(x.value.data) for x in op.computeTileSize.data] if op.computeTileSize else []
    if sizes != [x.tile_size for x in loops]:
        raise lowering_error(
            s, f"computeTileSize {sizes} is not the blocking of the tile loops "
            f"({', '.join(f'{x.name}: {x.tile_size}' for x in loops)})",
        )  # fmt: skip
    for ub, info in zip((op.iGlobalUB, op.jGlobalUB, op.kGlobalUB), loops, strict=True):
        mine = bounds_expr(info.ubs, {}, info.name, False)
        theirs = constant_value(ub)
        if theirs is None and ub in program.symbols:
            theirs = int_symbol(program.symbols[ub])
        if theirs is None or sympy.simplify(mine - theirs) != 0:
            raise lowering_error(s, f"krnl.matmul's bound for {info.name} is not the loop's")
    a = tuple(axes[x.origin] for x in loops)
    return (a_name, b_name, c_name), (a[0], a[1], a[2])


def zero_memset(b: KernelBuilder, s: Statement) -> str | None:
    """The tensor a `krnl.memset` of 0 fills, if `s` is one."""
    op = s.anchor
    if isinstance(op, MemsetOp) and constant_value(op.value) == 0:
        return b.tensor_of_value.get(op.dest)
    return None
