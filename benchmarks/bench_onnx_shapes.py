"""Benchmark: generated NumPy kernels of onnx-mlir-shaped programs against hand NumPy.

The programs have the shapes onnx-mlir's --convert-onnx-to-krnl writes (several nests,
temporaries in views of an i8 pool, results allocated and returned, SIMD main loops
with a scalar remainder), at realistic sizes:

* ``softmax``: rows of a 4096 x 1024 f32 matrix (max, exp and sum, divide), row
  temporaries in views of one i8 pool;
* ``layernorm``: rows of a 4096 x 1024 f32 matrix (mean, variance, normalize with
  epsilon 1e-5), row temporaries in views of one i8 pool;
* ``conv``: a 3 x 3 valid convolution of a 64 x 64 image with 16 output channels
  (weights a krnl.global-free argument), the result allocated;
* ``simd_add``: a 1-D add of 2^20 + 3 elements, vector<8xf32> main loop over the
  tile loop and a scalar remainder (the remainder is 3 elements).

For each, in one process: the compile time (``pk.compile``, median of 3), then the
generated kernel and the hand-written NumPy run interleaved (fresh inputs untimed,
``gc.collect()`` before each call; median of at least 5 rounds, more until 2 s).
Before timing, each kernel is checked against the hand NumPy (allclose) and, at a
small size, against the reference interpreter (bit for bit with
``reassociate=False``; the timed default kernel may reassociate sums), and so is the
Numba kernel (``to_numba(parallel=False, boundscheck=False)``, timed beside them, its
first-call compilation apart). Reported: the medians and ``gen/hand`` =
T_generated / T_hand (lower is better), the same for Numba.

    python benchmarks/bench_onnx_shapes.py [--quick] [--json out.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import polykrnl as pk

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

SOFTMAX_BODY = """
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to {R}) {{
    krnl.store %ninf, %t0[%i] : memref<{R}xf32>
    krnl.store %zero, %t1[%i] : memref<{R}xf32>
  }}
  %a:2 = krnl.define_loops 2
  krnl.iterate(%a#0, %a#1) with (%a#0 -> %i = 0 to {R}, %a#1 -> %j = 0 to {C}) {{
    %v = krnl.load %x[%i, %j] : memref<{R}x{C}xf32>
    %m = krnl.load %t0[%i] : memref<{R}xf32>
    %n = arith.maxnumf %m, %v : f32
    krnl.store %n, %t0[%i] : memref<{R}xf32>
  }}
  %b:2 = krnl.define_loops 2
  krnl.iterate(%b#0, %b#1) with (%b#0 -> %i = 0 to {R}, %b#1 -> %j = 0 to {C}) {{
    %v = krnl.load %x[%i, %j] : memref<{R}x{C}xf32>
    %m = krnl.load %t0[%i] : memref<{R}xf32>
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    krnl.store %e, %out[%i, %j] : memref<{R}x{C}xf32>
    %s = krnl.load %t1[%i] : memref<{R}xf32>
    %t = arith.addf %s, %e : f32
    krnl.store %t, %t1[%i] : memref<{R}xf32>
  }}
  %c:2 = krnl.define_loops 2
  krnl.iterate(%c#0, %c#1) with (%c#0 -> %i = 0 to {R}, %c#1 -> %j = 0 to {C}) {{
    %e = krnl.load %out[%i, %j] : memref<{R}x{C}xf32>
    %s = krnl.load %t1[%i] : memref<{R}xf32>
    %r = arith.divf %e, %s : f32
    krnl.store %r, %out[%i, %j] : memref<{R}x{C}xf32>
  }}"""

LAYERNORM_BODY = """
  %zero = arith.constant 0.0 : f32
  %n = arith.constant {C}.0 : f32
  %eps = arith.constant 1.0e-05 : f32
  %l = krnl.define_loops 1
  krnl.iterate(%l) with (%l -> %i = 0 to {R}) {{
    krnl.store %zero, %t0[%i] : memref<{R}xf32>
    krnl.store %zero, %t1[%i] : memref<{R}xf32>
  }}
  %a:2 = krnl.define_loops 2
  krnl.iterate(%a#0, %a#1) with (%a#0 -> %i = 0 to {R}, %a#1 -> %j = 0 to {C}) {{
    %v = krnl.load %x[%i, %j] : memref<{R}x{C}xf32>
    %s = krnl.load %t0[%i] : memref<{R}xf32>
    %t = arith.addf %s, %v : f32
    krnl.store %t, %t0[%i] : memref<{R}xf32>
  }}
  %b:2 = krnl.define_loops 2
  krnl.iterate(%b#0, %b#1) with (%b#0 -> %i = 0 to {R}, %b#1 -> %j = 0 to {C}) {{
    %v = krnl.load %x[%i, %j] : memref<{R}x{C}xf32>
    %s = krnl.load %t0[%i] : memref<{R}xf32>
    %mean = arith.divf %s, %n : f32
    %d = arith.subf %v, %mean : f32
    %d2 = arith.mulf %d, %d : f32
    %q = krnl.load %t1[%i] : memref<{R}xf32>
    %q2 = arith.addf %q, %d2 : f32
    krnl.store %q2, %t1[%i] : memref<{R}xf32>
  }}
  %c:2 = krnl.define_loops 2
  krnl.iterate(%c#0, %c#1) with (%c#0 -> %i = 0 to {R}, %c#1 -> %j = 0 to {C}) {{
    %v = krnl.load %x[%i, %j] : memref<{R}x{C}xf32>
    %s = krnl.load %t0[%i] : memref<{R}xf32>
    %mean = arith.divf %s, %n : f32
    %q = krnl.load %t1[%i] : memref<{R}xf32>
    %var = arith.divf %q, %n : f32
    %ve = arith.addf %var, %eps : f32
    %sd = math.sqrt %ve : f32
    %d = arith.subf %v, %mean : f32
    %r = arith.divf %d, %sd : f32
    krnl.store %r, %out[%i, %j] : memref<{R}x{C}xf32>
  }}"""

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

SIMD_ADD = """
func.func @simd_add(%a: memref<{N}xf32>, %b: memref<{N}xf32>) -> memref<{N}xf32> {{
  %out = memref.alloc() {{alignment = 16 : i64}} : memref<{N}xf32>
  %l = krnl.define_loops 1
  %t, %p = krnl.block %l 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%t) with (%l -> %i = 0 to {main}) {{
    %i0 = krnl.get_induction_var_value(%t) : (!krnl.loop) -> index
    %x = vector.load %a[%i0] : memref<{N}xf32>, vector<8xf32>
    %y = vector.load %b[%i0] : memref<{N}xf32>, vector<8xf32>
    %s = arith.addf %x, %y : vector<8xf32>
    vector.store %s, %out[%i0] : memref<{N}xf32>, vector<8xf32>
  }}
  %r = krnl.define_loops 1
  krnl.iterate(%r) with (%r -> %j = {main} to {N}) {{
    %x = krnl.load %a[%j] : memref<{N}xf32>
    %y = krnl.load %b[%j] : memref<{N}xf32>
    %s = arith.addf %x, %y : f32
    krnl.store %s, %out[%j] : memref<{N}xf32>
  }}
  return %out : memref<{N}xf32>
}}
"""


def softmax_text(rows: int, cols: int) -> str:
    body = SOFTMAX_BODY.format(R=rows, C=cols)
    return POOL_ROWS.format(name="softmax", R=rows, C=cols, B=4 * rows, P=8 * rows, body=body)


def layernorm_text(rows: int, cols: int) -> str:
    body = LAYERNORM_BODY.format(R=rows, C=cols)
    return POOL_ROWS.format(name="layernorm", R=rows, C=cols, B=4 * rows, P=8 * rows, body=body)


def conv_text(h: int, w: int, k: int) -> str:
    return CONV.format(H=h, W=w, K=k, Ho=h - 2, Wo=w - 2)


def simd_text(n: int) -> str:
    return SIMD_ADD.format(N=n, main=n - n % 8)


def hand_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def hand_layernorm(x: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + np.float32(1e-5))


def hand_conv(img: np.ndarray, w: np.ndarray) -> np.ndarray:
    ho, wo = img.shape[0] - 2, img.shape[1] - 2
    out = np.zeros((w.shape[0], ho, wo), np.float32)
    for r in range(3):
        for s in range(3):
            out += w[:, r, s, None, None] * img[None, r : r + ho, s : s + wo]
    return out


def hand_add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a + b


Case = tuple[str, Callable[..., str], tuple[int, ...], tuple[int, ...], Callable[..., Any]]
CASES: list[Case] = [
    ("softmax 4096x1024", softmax_text, (4096, 1024), (6, 10), hand_softmax),
    ("layernorm 4096x1024", layernorm_text, (4096, 1024), (6, 10), hand_layernorm),
    ("conv 64x64, 16 channels", conv_text, (64, 64, 16), (8, 9, 2), hand_conv),
    ("simd_add 2^20+3", simd_text, (2**20 + 3,), (27,), hand_add),
]


def _inputs(fn: pk.Function, rng: np.random.Generator) -> dict[str, np.ndarray]:
    out = {}
    for arg in fn.arguments:
        shape = tuple(int(d) for d in str(arg.type).split("<")[1].split("x")[:-1])
        out[arg.name] = rng.standard_normal(shape).astype(np.float32)
    return out


def _median_time(f: Callable[[], object]) -> float:
    gc.collect()
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def run(quick: bool) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    rng = np.random.default_rng(0)
    for title, text_of, big, small, hand in CASES:
        small_fn = pk.parse(text_of(*small)).functions[0]
        small_in = _inputs(small_fn, rng)
        ref = pk.run_reference(small_fn, **{k: v.copy() for k, v in small_in.items()})
        # The order-keeping kernel is bit for bit the interpreter; the default one may sum
        # in another order (reassociated reductions), so it is compared with a tolerance.
        exact = pk.schedule(small_fn).to_numpy(reassociate=False)
        got = exact(**{k: v.copy() for k, v in small_in.items()})
        assert np.array_equal(ref, got), f"{title}: kernel != interpreter at the small size"
        fast = pk.compile(small_fn)(**{k: v.copy() for k, v in small_in.items()})
        assert np.allclose(ref, fast, rtol=1e-5, atol=1e-6), title
        # The Numba kernel keeps the schedule's order: the interpreter's bits.
        compiled = pk.schedule(small_fn).to_numba(parallel=False, boundscheck=False)
        got = compiled(**{k: v.copy() for k, v in small_in.items()})
        assert np.array_equal(ref, got), f"{title}: Numba kernel != interpreter"
        text = text_of(*big)
        compile_times = []
        kernel = None
        for _ in range(3):
            start = time.perf_counter()
            kernel = pk.compile(pk.parse(text).functions[0])
            compile_times.append(time.perf_counter() - start)
        assert kernel is not None
        fn = pk.parse(text).functions[0]
        inputs = _inputs(fn, rng)
        args = [inputs[a.name] for a in fn.arguments]
        expected = hand(*args)
        assert np.allclose(kernel(**inputs), expected, rtol=1e-4, atol=1e-5), title
        jit = pk.schedule(fn).to_numba(parallel=False, boundscheck=False)
        numba_compile = jit.compile(**inputs)
        assert np.allclose(jit(**inputs), expected, rtol=1e-4, atol=1e-5), title
        gen_t, hand_t, jit_t = [], [], []
        deadline = time.perf_counter() + (0.5 if quick else 2.0)
        while len(gen_t) < (3 if quick else 5) or time.perf_counter() < deadline:
            gen_t.append(_median_time(lambda k=kernel, i=inputs: k(**i)))
            hand_t.append(_median_time(lambda h=hand, a=args: h(*a)))
            jit_t.append(_median_time(lambda j=jit, i=inputs: j(**i)))
            if len(gen_t) >= 41:
                break
        g, h, j = statistics.median(gen_t), statistics.median(hand_t), statistics.median(jit_t)
        rows.append(
            {
                "program": title,
                "compile_ms": 1e3 * statistics.median(compile_times),
                "generated_ms": 1e3 * g,
                "hand_ms": 1e3 * h,
                "gen_over_hand": g / h,
                "numba_ms": 1e3 * j,
                "numba_over_hand": j / h,
                "numba_compile_s": numba_compile,
                "rounds": len(gen_t),
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", type=str)
    args = ap.parse_args()
    rows = run(args.quick)
    print(
        "| program | compile (ms) | generated (ms) | hand NumPy (ms) | gen/hand "
        "| Numba 1 thread (ms) | Numba/hand | Numba compile (s) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['program']} | {r['compile_ms']:.1f} | {r['generated_ms']:.2f} | "
            f"{r['hand_ms']:.2f} | {r['gen_over_hand']:.2f} | {r['numba_ms']:.2f} | "
            f"{r['numba_over_hand']:.2f} | {r['numba_compile_s']:.2f} |"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
