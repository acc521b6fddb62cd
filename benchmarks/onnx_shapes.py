"""Krnl programs in the shapes onnx-mlir's --convert-onnx-to-krnl writes, with hand NumPy.

Each `Program` has a Krnl text template (static sizes, written here after the shapes of
onnx-mlir's lit tests, test/mlir/conversion/onnx_to_krnl/: the SIMD elementwise form at
-O3, krnl.memset + krnl.matmul, reductions into a memset result, pooling with a scalar
accumulator in an alloca, gathers that normalize their indices, ...), its sizes (the
timed one and a small one the reference interpreter runs in well under a second), the
obvious vectorized NumPy a user writes, and the name of its C version in
onnx_shapes.c (same loops, gcc -O3; onnx_shapes_c.py loads it).

Used by bench_onnx_shapes.py and tests/benchmarks/test_onnx_shapes.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Array = np.ndarray[Any, Any]


@dataclass(frozen=True)
class Program:
    """One benchmark program: `text(*size)` is its Krnl function, `hand` the NumPy version
    (same arguments, in the function's order), `c` the C function of onnx_shapes.c."""

    name: str
    title: str
    text: Callable[..., str]
    big: tuple[int, ...]
    small: tuple[int, ...]
    hand: Callable[..., Array]
    # Whether the program sums floats: the kernel that may reassociate is then only close.
    reduces: bool


# ----------------------------------------------------------------- SIMD elementwise
# onnx-mlir -O3 (Elementwise_with_canonicalize_O3.mlir, test_relu/test_add): inside an
# empty krnl.iterate() with (), the flat loop blocked by the vector length, only the tile
# loop iterated, vector.load / op / vector.store at its index, up to n - (VL - 1); then a
# scalar remainder loop from n - n mod VL to n.

SIMD_UNARY = """
func.func @{name}({args}) -> memref<{N}xf32> {{
  %out = memref.alloc() {{alignment = 16 : i64}} : memref<{N}xf32>
{consts}
  krnl.iterate() with () {{
    %l = krnl.define_loops 1
    %t, %p = krnl.block %l {VL} : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    krnl.iterate(%t) with (%l -> %i = 0 to {vend}) {{
      %i0 = krnl.get_induction_var_value(%t) : (!krnl.loop) -> index
{vbody}
      vector.store %r, %out[%i0] : memref<{N}xf32>, vector<{VL}xf32>
    }}
    %q = krnl.define_loops 1
    krnl.iterate(%q) with (%q -> %j = {main} to {N}) {{
      %i0 = krnl.get_induction_var_value(%q) : (!krnl.loop) -> index
{sbody}
      krnl.store %r, %out[%i0] : memref<{N}xf32>
    }}
  }}
  return %out : memref<{N}xf32>
}}
"""


def _simd(name: str, n: int, vl: int, inputs: int, op: str, consts: str = "") -> str:
    """A flat elementwise op over `inputs` arrays of n floats, in onnx-mlir's SIMD form.

    `op` is one arith/math line template over %x (and %y) giving %r, with {T} the type.
    """
    names = ["a", "b"][:inputs]
    args = ", ".join(f"%{a}: memref<{n}xf32>" for a in names)

    def body(vector: bool) -> str:
        ty = f"vector<{vl}xf32>" if vector else "f32"
        loads = [
            f"      %{v} = vector.load %{a}[%i0] : memref<{n}xf32>, {ty}"
            if vector
            else f"      %{v} = krnl.load %{a}[%i0] : memref<{n}xf32>"
            for v, a in zip("xy", names, strict=False)
        ]
        zero = "%zv" if vector else "%zs"
        return "\n".join([*loads, "      " + op.format(T=ty, Z=zero)])

    return SIMD_UNARY.format(
        name=name,
        args=args,
        N=n,
        VL=vl,
        vend=n - (vl - 1),
        main=n - n % vl,
        consts=consts,
        vbody=body(True),
        sbody=body(False),
    )


def add_text(n: int) -> str:
    return _simd("add", n, 8, 2, "%r = arith.addf %x, %y : {T}")


def relu_text(n: int) -> str:
    # onnx-mlir's Relu is maxnumf against a zero constant, splat for the vector loop.
    consts = (
        "  %zv = arith.constant dense<0.000000e+00> : vector<16xf32>\n"
        "  %zs = arith.constant 0.000000e+00 : f32"
    )
    return _simd("relu", n, 16, 1, "%r = arith.maxnumf %x, {Z} : {T}", consts)


def tanh_text(n: int) -> str:
    return _simd("tanh", n, 8, 1, "%r = math.tanh %x : {T}")


ADD_ROW = """
func.func @add_row(%x: memref<{R}x{C}xf32>, %b: memref<{C}xf32>) -> memref<{R}x{C}xf32> {{
  %out = memref.alloc() {{alignment = 16 : i64}} : memref<{R}x{C}xf32>
  %rows = krnl.define_loops 1
  krnl.iterate(%rows) with (%rows -> %i = 0 to {R}) {{
    %i0 = krnl.get_induction_var_value(%rows) : (!krnl.loop) -> index
    %l = krnl.define_loops 1
    %t, %p = krnl.block %l 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    krnl.iterate(%t) with (%l -> %j = 0 to {vend}) {{
      %j0 = krnl.get_induction_var_value(%t) : (!krnl.loop) -> index
      %v = vector.load %x[%i0, %j0] : memref<{R}x{C}xf32>, vector<8xf32>
      %w = vector.load %b[%j0] : memref<{C}xf32>, vector<8xf32>
      %s = arith.addf %v, %w : vector<8xf32>
      vector.store %s, %out[%i0, %j0] : memref<{R}x{C}xf32>, vector<8xf32>
    }}
    %q = krnl.define_loops 1
    krnl.iterate(%q) with (%q -> %k = {main} to {C}) {{
      %k0 = krnl.get_induction_var_value(%q) : (!krnl.loop) -> index
      %v = krnl.load %x[%i0, %k0] : memref<{R}x{C}xf32>
      %w = krnl.load %b[%k0] : memref<{C}xf32>
      %s = arith.addf %v, %w : f32
      krnl.store %s, %out[%i0, %k0] : memref<{R}x{C}xf32>
    }}
  }}
  return %out : memref<{R}x{C}xf32>
}}
"""


def add_row_text(rows: int, cols: int) -> str:
    """x + b with b a row broadcast over the rows: SIMD over the columns of each row."""
    return ADD_ROW.format(R=rows, C=cols, vend=cols - 7, main=cols - cols % 8)


# ----------------------------------------------------------------------- reductions

REDUCE_SUM_LAST = """
func.func @reduce_sum_last(%x: memref<{R}x{C}xf32>) -> memref<{R}xf32> {{
  %out = memref.alloc() {{alignment = 16 : i64}} : memref<{R}xf32>
  %zv = arith.constant dense<0.000000e+00> : vector<8xf32>
  %rows = krnl.define_loops 1
  krnl.iterate(%rows) with (%rows -> %i = 0 to {R}) {{
    %i0 = krnl.get_induction_var_value(%rows) : (!krnl.loop) -> index
    %cols = krnl.define_loops 1
    %ct, %cp = krnl.block %cols 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
    %acc = krnl.iterate(%ct) with (%cols -> %j = 0 to {C}) iter_args(%m = %zv) -> (vector<8xf32>) {{
      %j0 = krnl.get_induction_var_value(%ct) : (!krnl.loop) -> index
      %v = vector.load %x[%i0, %j0] : memref<{R}x{C}xf32>, vector<8xf32>
      %n = arith.addf %m, %v : vector<8xf32>
      krnl.yield %n : vector<8xf32>
    }}
    %r = vector.reduction <add>, %acc : vector<8xf32> into f32
    krnl.store %r, %out[%i0] : memref<{R}xf32>
  }}
  return %out : memref<{R}xf32>
}}
"""


def reduce_sum_last_text(rows: int, cols: int) -> str:
    """ReduceSum over the last axis at -O3: a vector<8xf32> accumulator per row carried
    through iter_args, reduced across lanes at the end (cols a multiple of 8, as onnx-mlir
    requires for this form)."""
    assert cols % 8 == 0
    return REDUCE_SUM_LAST.format(R=rows, C=cols)


REDUCE_MAX_MID = """
func.func @reduce_max_mid(%x: memref<{A}x{B}x{C}xf32>) -> memref<{A}x{C}xf32> {{
  %ninf = arith.constant 0xFF800000 : f32
  %out = memref.alloc() {{alignment = 16 : i64}} : memref<{A}x{C}xf32>
  krnl.memset %out, %ninf : memref<{A}x{C}xf32>
  %l:3 = krnl.define_loops 3
  krnl.iterate(%l#0, %l#1, %l#2) with (%l#0 -> %i = 0 to {A}, %l#1 -> %j = 0 to {B},
      %l#2 -> %k = 0 to {C}) {{
    %iv:3 = krnl.get_induction_var_value(%l#0, %l#1, %l#2)
      : (!krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index)
    %v = krnl.load %x[%iv#0, %iv#1, %iv#2] : memref<{A}x{B}x{C}xf32>
    %m = krnl.load %out[%iv#0, %iv#2] : memref<{A}x{C}xf32>
    %n = arith.maxnumf %m, %v : f32
    krnl.store %n, %out[%iv#0, %iv#2] : memref<{A}x{C}xf32>
  }}
  return %out : memref<{A}x{C}xf32>
}}
"""


def reduce_max_mid_text(a: int, b: int, c: int) -> str:
    """ReduceMax over the middle axis (keepdims 0): krnl.memset to -inf, then one nest
    over all three axes (test_reducemax_v13's shape)."""
    return REDUCE_MAX_MID.format(A=a, B=b, C=c)


REDUCE_SUM_MID = (
    REDUCE_MAX_MID.replace("reduce_max_mid", "reduce_sum_mid")
    .replace("arith.maxnumf", "arith.addf")
    .replace("0xFF800000", "0.000000e+00")
    .replace("%ninf", "%zero")
)


def reduce_sum_mid_text(a: int, b: int, c: int) -> str:
    """ReduceSum over the middle axis: the same nest, memset to 0, addf."""
    return REDUCE_SUM_MID.format(A=a, B=b, C=c)


# -------------------------------------------------------------- softmax, layernorm
# Rows of a matrix; the row temporaries (max and sum, mean and variance) are views of one
# i8 pool, as onnx-mlir bundles small allocations; the result is allocated and returned.

POOL_ROWS = """
func.func @{name}(%x: memref<{R}x{C}xf32>) -> memref<{R}x{C}xf32> {{
  %c0 = arith.constant 0 : index
  %cB = arith.constant {B} : index
  %pool = memref.alloc() {{alignment = 16 : i64}} : memref<{P}xi8>
  %t0 = memref.view %pool[%c0][] : memref<{P}xi8> to memref<{R}xf32>
  %t1 = memref.view %pool[%cB][] : memref<{P}xi8> to memref<{R}xf32>
  %out = memref.alloc() {{alignment = 16 : i64}} : memref<{R}x{C}xf32>
{body}
  memref.dealloc %pool : memref<{P}xi8>
  return %out : memref<{R}x{C}xf32>
}}
"""

ROWS2 = "krnl.iterate(%{h}#0, %{h}#1) with (%{h}#0 -> %i = 0 to {{R}}, %{h}#1 -> %j = 0 to {{C}})"

SOFTMAX_BODY = f"""
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to {{R}}) {{{{
    krnl.store %ninf, %t0[%i] : memref<{{R}}xf32>
    krnl.store %zero, %t1[%i] : memref<{{R}}xf32>
  }}}}
  %a:2 = krnl.define_loops 2
  {ROWS2.format(h="a")} {{{{
    %v = krnl.load %x[%i, %j] : memref<{{R}}x{{C}}xf32>
    %m = krnl.load %t0[%i] : memref<{{R}}xf32>
    %n = arith.maxnumf %m, %v : f32
    krnl.store %n, %t0[%i] : memref<{{R}}xf32>
  }}}}
  %b:2 = krnl.define_loops 2
  {ROWS2.format(h="b")} {{{{
    %v = krnl.load %x[%i, %j] : memref<{{R}}x{{C}}xf32>
    %m = krnl.load %t0[%i] : memref<{{R}}xf32>
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    krnl.store %e, %out[%i, %j] : memref<{{R}}x{{C}}xf32>
    %s = krnl.load %t1[%i] : memref<{{R}}xf32>
    %t = arith.addf %s, %e : f32
    krnl.store %t, %t1[%i] : memref<{{R}}xf32>
  }}}}
  %c:2 = krnl.define_loops 2
  {ROWS2.format(h="c")} {{{{
    %e = krnl.load %out[%i, %j] : memref<{{R}}x{{C}}xf32>
    %s = krnl.load %t1[%i] : memref<{{R}}xf32>
    %r = arith.divf %e, %s : f32
    krnl.store %r, %out[%i, %j] : memref<{{R}}x{{C}}xf32>
  }}}}"""

LAYERNORM_BODY = f"""
  %zero = arith.constant 0.0 : f32
  %n = arith.constant {{C}}.0 : f32
  %eps = arith.constant 1.0e-05 : f32
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to {{R}}) {{{{
    krnl.store %zero, %t0[%i] : memref<{{R}}xf32>
    krnl.store %zero, %t1[%i] : memref<{{R}}xf32>
  }}}}
  %a:2 = krnl.define_loops 2
  {ROWS2.format(h="a")} {{{{
    %v = krnl.load %x[%i, %j] : memref<{{R}}x{{C}}xf32>
    %s = krnl.load %t0[%i] : memref<{{R}}xf32>
    %t = arith.addf %s, %v : f32
    krnl.store %t, %t0[%i] : memref<{{R}}xf32>
  }}}}
  %b:2 = krnl.define_loops 2
  {ROWS2.format(h="b")} {{{{
    %v = krnl.load %x[%i, %j] : memref<{{R}}x{{C}}xf32>
    %s = krnl.load %t0[%i] : memref<{{R}}xf32>
    %mean = arith.divf %s, %n : f32
    %d = arith.subf %v, %mean : f32
    %d2 = arith.mulf %d, %d : f32
    %q = krnl.load %t1[%i] : memref<{{R}}xf32>
    %q2 = arith.addf %q, %d2 : f32
    krnl.store %q2, %t1[%i] : memref<{{R}}xf32>
  }}}}
  %c:2 = krnl.define_loops 2
  {ROWS2.format(h="c")} {{{{
    %v = krnl.load %x[%i, %j] : memref<{{R}}x{{C}}xf32>
    %s = krnl.load %t0[%i] : memref<{{R}}xf32>
    %mean = arith.divf %s, %n : f32
    %q = krnl.load %t1[%i] : memref<{{R}}xf32>
    %var = arith.divf %q, %n : f32
    %ve = arith.addf %var, %eps : f32
    %sd = math.sqrt %ve : f32
    %d = arith.subf %v, %mean : f32
    %r = arith.divf %d, %sd : f32
    krnl.store %r, %out[%i, %j] : memref<{{R}}x{{C}}xf32>
  }}}}"""


def softmax_text(rows: int, cols: int) -> str:
    body = SOFTMAX_BODY.format(R=rows, C=cols)
    return POOL_ROWS.format(name="softmax", R=rows, C=cols, B=4 * rows, P=8 * rows, body=body)


def layernorm_text(rows: int, cols: int) -> str:
    body = LAYERNORM_BODY.format(R=rows, C=cols)
    return POOL_ROWS.format(name="layernorm", R=rows, C=cols, B=4 * rows, P=8 * rows, body=body)


# -------------------------------------------------------------------- matmul, gemm
# MatMul_with_canonicalize_O3.mlir (test_matmul1): krnl.memset of the result, the three
# loops blocked 4 / 8 / 8, permuted tile loops first, krnl.matmul on the point loops.

MATMUL = """
func.func @{name}(%A: memref<{M}x{K}xf32>, %B: memref<{K}x{N}xf32>{bias_arg})
    -> memref<{M}x{N}xf32> {{
  %c0 = arith.constant 0 : index
  %cM = arith.constant {M} : index
  %cN = arith.constant {N} : index
  %cK = arith.constant {K} : index
  %zero = arith.constant 0.000000e+00 : f32
  %res = memref.alloc() {{alignment = 16 : i64}} : memref<{M}x{N}xf32>
  krnl.memset %res, %zero : memref<{M}x{N}xf32>
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
    krnl.matmul %A[%c0, %c0], %B[%c0, %c0], %res[%c0, %c0], (%ip, %jp, %kp),
      (%v#0, %v#1, %v#2), (%cM, %cN, %cK)
      {{aTileSize = [], bTileSize = [], cTileSize = [], computeTileSize = [4, 8, 8]}}
      : memref<{M}x{K}xf32>, memref<{K}x{N}xf32>, memref<{M}x{N}xf32>,
        (!krnl.loop, !krnl.loop, !krnl.loop)
  }}
{bias}
  return %res : memref<{M}x{N}xf32>
}}
"""

# Gemm's bias as onnx-mlir adds it after the product (test_gemm_parallel): a second nest
# res[i, j] += beta * C[j].
BIAS_NEST = """  %beta = arith.constant 5.000000e-01 : f32
  %o:2 = krnl.define_loops 2
  krnl.iterate(%o#0, %o#1) with (%o#0 -> %i = 0 to {M}, %o#1 -> %j = 0 to {N}) {{
    %w:2 = krnl.get_induction_var_value(%o#0, %o#1) : (!krnl.loop, !krnl.loop) -> (index, index)
    %r = krnl.load %res[%w#0, %w#1] : memref<{M}x{N}xf32>
    %c = krnl.load %C[%w#1] : memref<{N}xf32>
    %bc = arith.mulf %c, %beta : f32
    %s = arith.addf %r, %bc : f32
    krnl.store %s, %res[%w#0, %w#1] : memref<{M}x{N}xf32>
  }}"""


def matmul_text(m: int, n: int, k: int) -> str:
    return MATMUL.format(name="matmul", M=m, N=n, K=k, bias_arg="", bias="")


def gemm_matmul_text(m: int, n: int, k: int) -> str:
    """Gemm (beta 0.5, bias a row) at -O3: krnl.matmul, then the bias nest."""
    bias = BIAS_NEST.format(M=m, N=n)
    arg = f", %C: memref<{n}xf32>"
    return MATMUL.format(name="gemm_matmul", M=m, N=n, K=k, bias_arg=arg, bias=bias)


GEMM_LOOPS = """
func.func @gemm_loops(%A: memref<{M}x{K}xf32>, %B: memref<{K}x{N}xf32>, %C: memref<{N}xf32>)
    -> memref<{M}x{N}xf32> {{
  %zero = arith.constant 0.000000e+00 : f32
  %beta = arith.constant 5.000000e-01 : f32
  %res = memref.alloc() {{alignment = 16 : i64}} : memref<{M}x{N}xf32>
  %acc = memref.alloca() : memref<f32>
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to {M}, %l#1 -> %j = 0 to {N}) {{
    %w:2 = krnl.get_induction_var_value(%l#0, %l#1) : (!krnl.loop, !krnl.loop) -> (index, index)
    krnl.store %zero, %acc[] : memref<f32>
    %r = krnl.define_loops 1
    krnl.iterate(%r) with (%r -> %k = 0 to {K}) {{
      %kk = krnl.get_induction_var_value(%r) : (!krnl.loop) -> index
      %a = krnl.load %A[%w#0, %kk] : memref<{M}x{K}xf32>
      %b = krnl.load %B[%kk, %w#1] : memref<{K}x{N}xf32>
      %p = arith.mulf %a, %b : f32
      %s = krnl.load %acc[] : memref<f32>
      %t = arith.addf %s, %p : f32
      krnl.store %t, %acc[] : memref<f32>
    }}
    %s = krnl.load %acc[] : memref<f32>
    %c = krnl.load %C[%w#1] : memref<{N}xf32>
    %bc = arith.mulf %c, %beta : f32
    %y = arith.addf %s, %bc : f32
    krnl.store %y, %res[%w#0, %w#1] : memref<{M}x{N}xf32>
  }}
  return %res : memref<{M}x{N}xf32>
}}
"""


def gemm_loops_text(m: int, n: int, k: int) -> str:
    """Gemm with bias as onnx-mlir writes it without krnl.matmul: a scalar alloca before
    the loops, then an (i, j) nest whose body resets it, reduces over k into it and adds
    the bias (polykrnl privatizes the cell: one copy per (i, j), poly/privatize.py)."""
    return GEMM_LOOPS.format(M=m, N=n, K=k)


# ---------------------------------------------------------------- conv and pooling

CONV = """
func.func @conv(%img: memref<{H}x{W}xf32>, %w: memref<{K}x3x3xf32>) -> memref<{K}x{Ho}x{Wo}xf32> {{
  %zero = arith.constant 0.0 : f32
  %out = memref.alloc() {{alignment = 16 : i64}} : memref<{K}x{Ho}x{Wo}xf32>
  %z:3 = krnl.define_loops 3
  krnl.iterate(%z#0, %z#1, %z#2) with (%z#0 -> %k = 0 to {K}, %z#1 -> %i = 0 to {Ho},
                                       %z#2 -> %j = 0 to {Wo}) {{
    krnl.store %zero, %out[%k, %i, %j] : memref<{K}x{Ho}x{Wo}xf32>
  }}
  %l:5 = krnl.define_loops 5
  krnl.iterate(%l#0, %l#1, %l#2, %l#3, %l#4) with (%l#0 -> %k = 0 to {K}, %l#1 -> %r = 0 to 3,
      %l#2 -> %s = 0 to 3, %l#3 -> %i = 0 to {Ho}, %l#4 -> %j = 0 to {Wo}) {{
    %y = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%i, %r)
    %x = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%j, %s)
    %p = krnl.load %img[%y, %x] : memref<{H}x{W}xf32>
    %c = krnl.load %w[%k, %r, %s] : memref<{K}x3x3xf32>
    %o = krnl.load %out[%k, %i, %j] : memref<{K}x{Ho}x{Wo}xf32>
    %m = arith.mulf %p, %c : f32
    %a = arith.addf %o, %m : f32
    krnl.store %a, %out[%k, %i, %j] : memref<{K}x{Ho}x{Wo}xf32>
  }}
  return %out : memref<{K}x{Ho}x{Wo}xf32>
}}
"""


def conv_text(h: int, w: int, k: int) -> str:
    """A 3 x 3 valid convolution of one image into k channels (zeroed result, then a
    five-loop nest accumulating into it)."""
    return CONV.format(H=h, W=w, K=k, Ho=h - 2, Wo=w - 2)


# Pooling_with_canonicalize.mlir: a scalar accumulator allocated (alloca) before the
# output nest and reset as the first op of its body, the window loops inside reading
# x[.., i*s + r, j*s + t].
MAXPOOL = """
func.func @{name}(%x: memref<{N}x{C}x{H}x{W}xf32>) -> memref<{N}x{C}x{Ho}x{Wo}xf32> {{
  %ninf = arith.constant 0xFF800000 : f32
  %out = memref.alloc() {{alignment = 16 : i64}} : memref<{N}x{C}x{Ho}x{Wo}xf32>
  %acc = memref.alloca() : memref<f32>
  %l:4 = krnl.define_loops 4
  krnl.iterate(%l#0, %l#1, %l#2, %l#3) with (%l#0 -> %n = 0 to {N}, %l#1 -> %c = 0 to {C},
      %l#2 -> %i = 0 to {Ho}, %l#3 -> %j = 0 to {Wo}) {{
    %o:4 = krnl.get_induction_var_value(%l#0, %l#1, %l#2, %l#3)
      : (!krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index, index)
    krnl.store %ninf, %acc[] : memref<f32>
    %w:2 = krnl.define_loops 2
    krnl.iterate(%w#0, %w#1) with (%w#0 -> %r = 0 to {KS}, %w#1 -> %s = 0 to {KS}) {{
      %rs:2 = krnl.get_induction_var_value(%w#0, %w#1) : (!krnl.loop, !krnl.loop) -> (index, index)
      %y = affine.apply affine_map<(d0, d1) -> (d0 * {S} + d1)>(%o#2, %rs#0)
      %z = affine.apply affine_map<(d0, d1) -> (d0 * {S} + d1)>(%o#3, %rs#1)
      %v = krnl.load %x[%o#0, %o#1, %y, %z] : memref<{N}x{C}x{H}x{W}xf32>
      %a = krnl.load %acc[] : memref<f32>
      %m = arith.maxnumf %a, %v : f32
      krnl.store %m, %acc[] : memref<f32>
    }}
    %a = krnl.load %acc[] : memref<f32>
    krnl.store %a, %out[%o#0, %o#1, %o#2, %o#3] : memref<{N}x{C}x{Ho}x{Wo}xf32>
  }}
  return %out : memref<{N}x{C}x{Ho}x{Wo}xf32>
}}
"""


def _pool(name: str, n: int, c: int, h: int, w: int, ks: int, s: int) -> str:
    ho, wo = (h - ks) // s + 1, (w - ks) // s + 1
    return MAXPOOL.format(name=name, N=n, C=c, H=h, W=w, Ho=ho, Wo=wo, KS=ks, S=s)


def maxpool2_text(n: int, c: int, h: int, w: int) -> str:
    return _pool("maxpool2", n, c, h, w, 2, 2)


def maxpool3_text(n: int, c: int, h: int, w: int) -> str:
    return _pool("maxpool3", n, c, h, w, 3, 2)


# ------------------------------------------------------- transpose, gather, concat

TRANSPOSE = """
func.func @transpose(%x: memref<{A}x{B}x{C}x{D}xf32>) -> memref<{A}x{C}x{D}x{B}xf32> {{
  %out = memref.alloc() {{alignment = 16 : i64}} : memref<{A}x{C}x{D}x{B}xf32>
  %l:4 = krnl.define_loops 4
  krnl.iterate(%l#0, %l#1, %l#2, %l#3) with (%l#0 -> %i = 0 to {A}, %l#1 -> %j = 0 to {B},
      %l#2 -> %k = 0 to {C}, %l#3 -> %m = 0 to {D}) {{
    %v:4 = krnl.get_induction_var_value(%l#0, %l#1, %l#2, %l#3)
      : (!krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index, index)
    %e = krnl.load %x[%v#0, %v#1, %v#2, %v#3] : memref<{A}x{B}x{C}x{D}xf32>
    krnl.store %e, %out[%v#0, %v#2, %v#3, %v#1] : memref<{A}x{C}x{D}x{B}xf32>
  }}
  return %out : memref<{A}x{C}x{D}x{B}xf32>
}}
"""


def transpose_text(a: int, b: int, c: int, d: int) -> str:
    """Transpose NCHW -> NHWC (perm 0, 2, 3, 1): one nest in the input's order."""
    return TRANSPOSE.format(A=a, B=b, C=c, D=d)


# Gather.mlir / Gather_safe.mlir: the index loaded from an i64 input, cast, a negative
# index counted from the end (cmpi + addi + select), then clamped into range.
GATHER = """
func.func @gather(%x: memref<{V}x{D}xf32>, %idx: memref<{B}x{S}xi64>) -> memref<{B}x{S}x{D}xf32> {{
  %c0 = arith.constant 0 : index
  %cV = arith.constant {V} : index
  %cL = arith.constant {L} : index
  %res = memref.alloc() {{alignment = 16 : i64}} : memref<{B}x{S}x{D}xf32>
  %l:3 = krnl.define_loops 3
  krnl.iterate(%l#0, %l#1, %l#2) with (%l#0 -> %i = 0 to {B}, %l#1 -> %j = 0 to {S},
      %l#2 -> %k = 0 to {D}) {{
    %iv:3 = krnl.get_induction_var_value(%l#0, %l#1, %l#2)
      : (!krnl.loop, !krnl.loop, !krnl.loop) -> (index, index, index)
    %a = krnl.load %idx[%iv#0, %iv#1] : memref<{B}x{S}xi64>
    %b = arith.index_cast %a : i64 to index
    %neg = arith.cmpi slt, %b, %c0 : index
    %up = arith.addi %b, %cV : index
    %n = arith.select %neg, %up, %b : index
    %low = arith.cmpi slt, %n, %c0 : index
    %n1 = arith.select %low, %c0, %n : index
    %high = arith.cmpi sge, %n1, %cV : index
    %row = arith.select %high, %cL, %n1 : index
    %v = krnl.load %x[%row, %iv#2] : memref<{V}x{D}xf32>
    krnl.store %v, %res[%iv#0, %iv#1, %iv#2] : memref<{B}x{S}x{D}xf32>
  }}
  return %res : memref<{B}x{S}x{D}xf32>
}}
"""


def gather_text(v: int, d: int, b: int, s: int) -> str:
    """Gather along axis 0 (an embedding lookup): rows of a V x D table by a B x S index."""
    return GATHER.format(V=v, D=d, B=b, S=s, L=v - 1)


CONCAT_PART = """  %l{p}:2 = krnl.define_loops 2
  krnl.iterate(%l{p}#0, %l{p}#1) with (%l{p}#0 -> %i = 0 to {R}, %l{p}#1 -> %j = 0 to {W}) {{
    %v{p}:2 = krnl.get_induction_var_value(%l{p}#0, %l{p}#1)
      : (!krnl.loop, !krnl.loop) -> (index, index)
    %e{p} = krnl.load %{a}[%v{p}#0, %v{p}#1] : memref<{R}x{W}xf32>
    %o{p} = affine.apply affine_map<(d0) -> (d0 + {off})>(%v{p}#1)
    krnl.store %e{p}, %out[%v{p}#0, %o{p}] : memref<{R}x{T}xf32>
  }}"""


def concat_text(rows: int, c1: int, c2: int, c3: int) -> str:
    """Concat of three matrices along axis 1: one copy nest per input, each storing at its
    column offset (Concat_with_canonicalize.mlir)."""
    total = c1 + c2 + c3
    parts, offset = [], 0
    for p, (a, w) in enumerate(zip("abc", (c1, c2, c3), strict=True)):
        parts.append(CONCAT_PART.format(p=p, a=a, R=rows, W=w, off=offset, T=total))
        offset += w
    args = ", ".join(
        f"%{a}: memref<{rows}x{w}xf32>" for a, w in zip("abc", (c1, c2, c3), strict=True)
    )
    return (
        f"func.func @concat({args}) -> memref<{rows}x{total}xf32> {{\n"
        f"  %out = memref.alloc() {{alignment = 16 : i64}} : memref<{rows}x{total}xf32>\n"
        + "\n".join(parts)
        + f"\n  return %out : memref<{rows}x{total}xf32>\n}}\n"
    )


# ------------------------------------------------------------------- hand NumPy


def hand_add(a: Array, b: Array) -> Array:
    return a + b


def hand_relu(a: Array) -> Array:
    return np.maximum(a, np.float32(0))


def hand_tanh(a: Array) -> Array:
    return np.tanh(a)


def hand_add_row(x: Array, b: Array) -> Array:
    return x + b


def hand_reduce_sum_last(x: Array) -> Array:
    return x.sum(axis=-1)


def hand_reduce_max_mid(x: Array) -> Array:
    return x.max(axis=1)


def hand_reduce_sum_mid(x: Array) -> Array:
    return x.sum(axis=1)


def hand_softmax(x: Array) -> Array:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def hand_layernorm(x: Array) -> Array:
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + np.float32(1e-5))


def hand_matmul(a: Array, b: Array) -> Array:
    return a @ b


def hand_gemm(a: Array, b: Array, c: Array) -> Array:
    return a @ b + np.float32(0.5) * c


def hand_conv(img: Array, w: Array) -> Array:
    ho, wo = img.shape[0] - 2, img.shape[1] - 2
    out = np.zeros((w.shape[0], ho, wo), np.float32)
    for r in range(3):
        for s in range(3):
            out += w[:, r, s, None, None] * img[None, r : r + ho, s : s + wo]
    return out


def hand_maxpool2(x: Array) -> Array:
    n, c, h, w = x.shape
    ho, wo = h // 2, w // 2
    return x[:, :, : 2 * ho, : 2 * wo].reshape(n, c, ho, 2, wo, 2).max(axis=(3, 5))


def hand_maxpool3(x: Array) -> Array:
    ho, wo = (x.shape[2] - 3) // 2 + 1, (x.shape[3] - 3) // 2 + 1
    out = x[:, :, 0 : 2 * ho : 2, 0 : 2 * wo : 2].copy()
    for r in range(3):
        for s in range(3):
            np.maximum(out, x[:, :, r : r + 2 * ho : 2, s : s + 2 * wo : 2], out=out)
    return out


def hand_transpose(x: Array) -> Array:
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1))


def hand_gather(x: Array, idx: Array) -> Array:
    # np.take with mode="clip" clamps, but a negative index counts from the end first.
    return np.take(x, np.where(idx < 0, idx + x.shape[0], idx), axis=0, mode="clip")


def hand_concat(a: Array, b: Array, c: Array) -> Array:
    return np.concatenate((a, b, c), axis=1)


# Sizes: the timed size takes about 1 to 10 ms of hand NumPy on one core of this machine
# (the memory-bound ops stay near 1 ms: larger ones would make the Python loops of the
# generated SIMD forms take seconds a call); the small one has partial vector tiles or
# remainders where the program has them.
PROGRAMS: tuple[Program, ...] = (
    Program("add", "add 2^22+3 (vector<8xf32>)", add_text, (2**22 + 3,), (27,), hand_add, False),
    Program(
        "relu",
        "relu 2^22+5 (maxnumf, vector<16xf32>)",
        relu_text,
        (2**22 + 5,),
        (37,),
        hand_relu,
        False,
    ),
    Program(
        "tanh", "tanh 2^22+3 (vector<8xf32>)", tanh_text, (2**22 + 3,), (27,), hand_tanh, False
    ),
    Program(
        "add_row",
        "add row broadcast 4096x1030",
        add_row_text,
        (4096, 1030),
        (3, 21),
        hand_add_row,
        False,
    ),
    Program(
        "reduce_sum_last",
        "ReduceSum last axis 8192x1024 (vector acc)",
        reduce_sum_last_text,
        (8192, 1024),
        (3, 24),
        hand_reduce_sum_last,
        True,
    ),
    Program(
        "reduce_max_mid",
        "ReduceMax middle axis 128x256x256",
        reduce_max_mid_text,
        (128, 256, 256),
        (2, 5, 3),
        hand_reduce_max_mid,
        False,
    ),
    Program(
        "reduce_sum_mid",
        "ReduceSum middle axis 128x256x256",
        reduce_sum_mid_text,
        (128, 256, 256),
        (2, 5, 3),
        hand_reduce_sum_mid,
        True,
    ),
    Program(
        "softmax", "softmax 4096x1024", softmax_text, (4096, 1024), (6, 10), hand_softmax, True
    ),
    Program(
        "layernorm",
        "layernorm 4096x1024",
        layernorm_text,
        (4096, 1024),
        (6, 10),
        hand_layernorm,
        True,
    ),
    Program(
        "matmul",
        "matmul 512x512x512 (krnl.matmul 4x8x8)",
        matmul_text,
        (512, 512, 512),
        (6, 10, 9),
        hand_matmul,
        True,
    ),
    Program(
        "gemm_matmul",
        "gemm + bias 512x512x512 (krnl.matmul)",
        gemm_matmul_text,
        (512, 512, 512),
        (6, 10, 9),
        hand_gemm,
        True,
    ),
    Program(
        "gemm_loops",
        "gemm + bias 512x512x512 (k loop, alloca acc)",
        gemm_loops_text,
        (512, 512, 512),
        (6, 10, 9),
        hand_gemm,
        True,
    ),
    Program(
        "conv",
        "conv 3x3 128x128, 32 channels",
        conv_text,
        (128, 128, 32),
        (8, 9, 2),
        hand_conv,
        True,
    ),
    Program(
        "maxpool2",
        "MaxPool 2x2 s2 8x32x112x112",
        maxpool2_text,
        (8, 32, 112, 112),
        (1, 2, 6, 8),
        hand_maxpool2,
        False,
    ),
    Program(
        "maxpool3",
        "MaxPool 3x3 s2 8x32x113x113",
        maxpool3_text,
        (8, 32, 113, 113),
        (1, 2, 7, 9),
        hand_maxpool3,
        False,
    ),
    Program(
        "transpose",
        "transpose 0,2,3,1 of 16x64x56x56",
        transpose_text,
        (16, 64, 56, 56),
        (2, 3, 4, 5),
        hand_transpose,
        False,
    ),
    Program(
        "gather",
        "gather axis 0, 32000x256 by 8x2048",
        gather_text,
        (32000, 256, 8, 2048),
        (7, 5, 2, 3),
        hand_gather,
        False,
    ),
    Program(
        "concat",
        "concat axis 1, 4096 x (300+500+224)",
        concat_text,
        (4096, 300, 500, 224),
        (3, 2, 4, 5),
        hand_concat,
        False,
    ),
)

BY_NAME: dict[str, Program] = {p.name: p for p in PROGRAMS}


def inputs_of(fn: Any, rng: np.random.Generator) -> dict[str, Array]:
    """Seeded inputs for the arguments of Krnl function `fn`: f32 normals; i64 indices in
    [-V, V) for a V-row table (both signs: the program normalizes negative ones)."""
    out: dict[str, Array] = {}
    for arg in fn.arguments:
        text = str(arg.type)
        shape = tuple(int(d) for d in text.split("<")[1].split("x")[:-1])
        if "xi64" in text:
            rows = next(iter(out.values())).shape[0]
            out[arg.name] = rng.integers(-rows, rows, size=shape, dtype=np.int64)
        else:
            out[arg.name] = rng.standard_normal(shape).astype(np.float32)
    return out
