# ruff: noqa: E501  (Krnl programs are written one op per line, as in .mlir files)
"""The concrete loop nest of a Krnl recipe, checked against hand-derived nests.

Each expected nest below was written by hand from the rules of
docs/krnl-semantics.md (tile loop: same bounds, step T; point
loop: from the tile IV to min(tile + T, UB); an unused point handle runs once;
permute scatters; bodies go into the loop of the last listed handle) and agrees
with what onnx-mlir's convert-krnl-to-affine produces for the same programs.
The dump format is this test's own: one loop per line, `stmt:` lines list the
ops of a statement chunk.
"""

from __future__ import annotations

from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineMap

from polykrnl.ir import Function
from polykrnl.nest.loops import (
    Chain,
    IVBound,
    Loop,
    LoopNest,
    MapBound,
    Stmt,
    YieldPoint,
    build_nest,
)
from polykrnl.reader.parser import parse


def _value(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else "%?"


def _map_results(m: AffineMap, operands: tuple[SSAValue, ...]) -> list[str]:
    names = [_value(v) for v in operands]
    out = []
    for r in m.results:
        text = str(r)
        # substitute symbols first: s0 may not clash with d0 names
        for i in reversed(range(m.num_symbols)):
            text = text.replace(f"s{i}", names[m.num_dims + i])
        for i in reversed(range(m.num_dims)):
            text = text.replace(f"d{i}", names[i])
        out.append(text.replace("(", "").replace(")", ""))
    return out


def _bounds(bounds: tuple[MapBound | IVBound, ...], kind: str) -> str:
    parts: list[str] = []
    for b in bounds:
        if isinstance(b, IVBound):
            name = f"%{b.loop.handle.name_hint}"
            parts.append(f"{name} + {b.offset}" if b.offset else name)
        else:
            parts += _map_results(b.map, b.operands)
    return parts[0] if len(parts) == 1 else f"{kind}({', '.join(parts)})"


def _dump_loop(loop: Loop, nest: LoopNest, depth: int, out: list[str]) -> None:
    pad = "  " * depth
    head = f"{pad}for %{loop.handle.name_hint}"
    if loop.trivial:
        head += " = 0 to 1 (runs once)"
    else:
        head += f" = {_bounds(loop.lbs, 'max')} to {_bounds(loop.ubs, 'min')}"
        if loop.step != 1:
            head += f" step {loop.step}"
    if loop.parallel:
        head += " parallel"
    if loop.unroll:
        head += " unroll"
    out.append(head)
    for item in loop.body():
        if isinstance(item, Loop):
            _dump_loop(item, nest, depth + 1, out)
        elif isinstance(item, Stmt):
            out.append(f"{pad}  stmt: {', '.join(op.name for op in item.ops)}")
        elif isinstance(item, Chain):
            root = nest.roots.get(item.iterate)
            if root is not None:
                _dump_loop(root, nest, depth + 1, out)
        elif isinstance(item, YieldPoint):
            out.append(f"{pad}  yield")


def dump(fn: Function) -> str:
    nest = build_nest(fn)
    assert not nest.diagnostics, [d.message for d in nest.diagnostics]
    out: list[str] = []
    seen_inner = {it.iterate for lp in nest.loops() for it in lp.items if isinstance(it, Chain)}
    for it, root in nest.roots.items():
        if it not in seen_inner:
            _dump_loop(root, nest, 0, out)
    return "\n".join(out)


def nest_of(body: str, args: str = "") -> str:
    mod = parse(f"func.func @f({args}) {{\n{body}\n  return\n}}\n")
    return dump(mod["f"])


LOOP = "!krnl.loop"
BLOCK_T = f"({LOOP}) -> ({LOOP}, {LOOP})"


def test_block_divisible_and_partial() -> None:
    # 10 by 4: the last tile is partial, so the point loop is bounded by min(tile + 4, 10).
    got = nest_of(
        f"""  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : {BLOCK_T}
  krnl.iterate(%ib, %il) with (%ii -> %i = 0 to 10) {{
    %x = arith.addi %i, %i : index
  }}"""
    )
    assert got == (
        "for %ib = 0 to 10 step 4\n  for %il = %ib to min(%ib + 4, 10)\n    stmt: arith.addi"
    )


def test_block_point_loop_again() -> None:
    # Blocking the point loop by 2: min(%ilb + 2, %ib + 4, 10) (docs/krnl-semantics.md, "Blocking a point loop again").
    got = nest_of(
        f"""  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : {BLOCK_T}
  %ilb, %ill = krnl.block %il 2 : {BLOCK_T}
  krnl.iterate(%ib, %ilb, %ill) with (%ii -> %i = 0 to 10) {{
    %x = arith.addi %i, %i : index
  }}"""
    )
    assert got == (
        "for %ib = 0 to 10 step 4\n"
        "  for %ilb = %ib to min(%ib + 4, 10) step 2\n"
        "    for %ill = %ilb to min(%ilb + 2, %ib + 4, 10)\n"
        "      stmt: arith.addi"
    )


def test_permute_scatter_1_2_0() -> None:
    # permute(%i, %j, %k) [1, 2, 0]: loop k goes first, then i, then j.
    got = nest_of(
        f"""  %ii, %jj, %kk = krnl.define_loops 3
  krnl.permute(%ii, %jj, %kk) [1, 2, 0] : {LOOP}, {LOOP}, {LOOP}
  krnl.iterate(%kk, %ii, %jj) with (%ii -> %i = 0 to 10, %jj -> %j = 0 to 20, %kk -> %k = 0 to 30) {{
    %x = arith.addi %i, %j : index
  }}"""
    )
    assert got == (
        "for %kk = 0 to 30\n  for %ii = 0 to 10\n    for %jj = 0 to 20\n      stmt: arith.addi"
    )


def test_3d_tiling_permute() -> None:
    # The op reference's example: [0, 3, 1, 4, 2, 5] puts the three tile loops outside.
    got = nest_of(
        f"""  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 4 : {BLOCK_T}
  %jb, %jl = krnl.block %jj 4 : {BLOCK_T}
  %kb, %kl = krnl.block %kk 4 : {BLOCK_T}
  krnl.permute(%ib, %il, %jb, %jl, %kb, %kl) [0, 3, 1, 4, 2, 5] : {LOOP}, {LOOP}, {LOOP}, {LOOP}, {LOOP}, {LOOP}
  krnl.iterate(%ib, %jb, %kb, %il, %jl, %kl) with (%ii -> %i = 0 to 1024, %jj -> %j = 0 to 2048, %kk -> %k = 0 to 4096) {{
    %x = arith.addi %i, %k : index
  }}"""
    )
    assert got == (
        "for %ib = 0 to 1024 step 4\n"
        "  for %jb = 0 to 2048 step 4\n"
        "    for %kb = 0 to 4096 step 4\n"
        "      for %il = %ib to min(%ib + 4, 1024)\n"
        "        for %jl = %jb to min(%jb + 4, 2048)\n"
        "          for %kl = %kb to min(%kb + 4, 4096)\n"
        "            stmt: arith.addi"
    )


def test_imperfect_2d_tiling_statements_at_tile_level() -> None:
    # alloc runs once per (ib, jb) tile before the point loops, dealloc after them.
    got = nest_of(
        f"""  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii 5 : {BLOCK_T}
  %jb, %jl = krnl.block %jj 4 : {BLOCK_T}
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : {LOOP}, {LOOP}, {LOOP}, {LOOP}
  krnl.iterate(%ib, %jb) with (%ii -> %i = 0 to 10, %jj -> %j = 0 to 20) {{
    %alloc = memref.alloc() : memref<10xf32>
    krnl.iterate(%il, %jl) with () {{
      %a, %b = krnl.get_induction_var_value(%il, %jl) : ({LOOP}, {LOOP}) -> (index, index)
      %x = arith.addi %a, %b : index
    }}
    memref.dealloc %alloc : memref<10xf32>
  }}"""
    )
    assert got == (
        "for %ib = 0 to 10 step 5\n"
        "  for %jb = 0 to 20 step 4\n"
        "    stmt: memref.alloc\n"
        "    for %il = %ib to min(%ib + 5, 10)\n"
        "      for %jl = %jb to min(%jb + 4, 20)\n"
        "        stmt: krnl.get_induction_var_value, arith.addi\n"
        "    stmt: memref.dealloc"
    )


def test_unused_point_handle_runs_once() -> None:
    # The strided-loop idiom: only the tile handle is used.
    got = nest_of(
        f"""  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 8 : {BLOCK_T}
  krnl.iterate(%ib) with (%ii -> %i = 0 to %N) {{
    %t = krnl.get_induction_var_value(%ib) : ({LOOP}) -> index
  }}""",
        args="%N: index",
    )
    assert got == (
        "for %ib = 0 to %N step 8\n"
        "  stmt: krnl.get_induction_var_value\n"
        "  for %il = 0 to 1 (runs once)"
    )


def test_triangular_nested_iterate_and_parallel_unroll_marks() -> None:
    got = nest_of(
        f"""  %ii = krnl.define_loops 1
  krnl.parallel %ii : {LOOP}
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {{
    %jj = krnl.define_loops 1
    krnl.unroll %jj : {LOOP}
    krnl.iterate(%jj) with (%jj -> %j = 0 to min affine_map<(d0) -> (d0 + 1, 4)>(%i)) {{
      %x = arith.addi %i, %j : index
    }}
  }}""",
        args="%N: index",
    )
    assert got == (
        "for %ii = 0 to %N parallel\n"
        "  stmt: krnl.define_loops, krnl.unroll\n"
        "  for %jj = 0 to min(%i + 1, 4) unroll\n"
        "    stmt: arith.addi"
    )


def test_matmul_panel_example_structure() -> None:
    # The op reference's krnl.matmul example: C tile copies at (ib, jb), A/B copies at kb,
    # the matmul in klb; the three loops it consumes are not loops any more.
    got = nest_of(
        f"""  %c40 = arith.constant 40 : index
  %c80 = arith.constant 80 : index
  %c60 = arith.constant 60 : index
  %f0 = arith.constant 0.0 : f32
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 10 : {BLOCK_T}
  %jb, %jl = krnl.block %jj 8 : {BLOCK_T}
  %kb, %kl = krnl.block %kk 10 : {BLOCK_T}
  %ilb, %ill = krnl.block %il 5 : {BLOCK_T}
  %jlb, %jll = krnl.block %jl 4 : {BLOCK_T}
  %klb, %kll = krnl.block %kl 5 : {BLOCK_T}
  krnl.permute(%ib, %ilb, %ill, %jb, %jlb, %jll, %kb, %klb, %kll) [0, 3, 6, 1, 4, 7, 2, 5, 8] : {", ".join([LOOP] * 9)}
  krnl.iterate(%ib, %jb) with (%ii -> %i = 0 to 40, %jj -> %j = 0 to 80, %kk -> %k = 0 to 60) {{
    %i1, %j1 = krnl.get_induction_var_value(%ib, %jb) : ({LOOP}, {LOOP}) -> (index, index)
    %Cb = memref.alloca() : memref<10x8xf32>
    krnl.copy_to_tile_buffer %Cb, %C[%i1, %j1], %f0 : memref<10x8xf32>, memref<40x80xf32>
    krnl.iterate(%kb) with () {{
      %k1 = krnl.get_induction_var_value(%kb) : ({LOOP}) -> index
      %Ab = memref.alloca() : memref<10x10xf32>
      %Bb = memref.alloca() : memref<10x8xf32>
      krnl.copy_to_tile_buffer %Ab, %A[%i1, %k1], %f0 : memref<10x10xf32>, memref<40x60xf32>
      krnl.copy_to_tile_buffer %Bb, %B[%k1, %j1], %f0 : memref<10x8xf32>, memref<60x80xf32>
      krnl.iterate(%ilb, %jlb, %klb) with () {{
        %i2, %j2, %k2 = krnl.get_induction_var_value(%ilb, %jlb, %klb) : ({LOOP}, {LOOP}, {LOOP}) -> (index, index, index)
        krnl.matmul %Ab[%i1, %k1], %Bb[%k1, %j1], %Cb[%i1, %j1], (%ill, %jll, %kll), (%i2, %j2, %k2), (%c40, %c80, %c60) {{computeTileSize = [5, 4, 5]}} : memref<10x10xf32>, memref<10x8xf32>, memref<10x8xf32>, ({LOOP}, {LOOP}, {LOOP})
      }}
    }}
    krnl.copy_from_tile_buffer %Cb, %C[%i1, %j1] : memref<10x8xf32>, memref<40x80xf32>
  }}""",
        args="%A: memref<40x60xf32>, %B: memref<60x80xf32>, %C: memref<40x80xf32>",
    )
    assert got == (
        "for %ib = 0 to 40 step 10\n"
        "  for %jb = 0 to 80 step 8\n"
        "    stmt: krnl.get_induction_var_value, memref.alloca, krnl.copy_to_tile_buffer\n"
        "    for %kb = 0 to 60 step 10\n"
        "      stmt: krnl.get_induction_var_value, memref.alloca, memref.alloca, "
        "krnl.copy_to_tile_buffer, krnl.copy_to_tile_buffer\n"
        "      for %ilb = %ib to min(%ib + 10, 40) step 5\n"
        "        for %jlb = %jb to min(%jb + 8, 80) step 4\n"
        "          for %klb = %kb to min(%kb + 10, 60) step 5\n"
        "            stmt: krnl.get_induction_var_value, krnl.matmul\n"
        "    stmt: krnl.copy_from_tile_buffer"
    )


def test_iter_args_yield_in_destination_loop() -> None:
    got = nest_of(
        f"""  %f0 = arith.constant 0.0 : f32
  %ii = krnl.define_loops 1
  %ib, %il = krnl.block %ii 4 : {BLOCK_T}
  %r = krnl.iterate(%ib, %il) with (%ii -> %i = 0 to 16) iter_args(%acc = %f0) -> (f32) {{
    %v = krnl.load %A[%i] : memref<16xf32>
    %s = arith.addf %acc, %v : f32
    krnl.yield %s : f32
  }}""",
        args="%A: memref<16xf32>",
    )
    assert got == (
        "for %ib = 0 to 16 step 4\n"
        "  for %il = %ib to min(%ib + 4, 16)\n"
        "    stmt: krnl.load, arith.addf\n"
        "    yield"
    )
