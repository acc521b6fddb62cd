"""`polykrnl demo`: the tour of polykrnl on built-in examples, printed for a terminal.

1. A tiled matmul in Krnl: its loop nest after the recipe, its legality verdict,
   the generated NumPy kernel run and compared with the reference interpreter
   (max error), timed beside NumPy's own product; the compile time is a second
   compile's (the first also imports islpy, xDSL and the code generator).
2. A stencil (jacobi-1d with a time loop): a rectangular tiling refused with the
   violated dependence and a concrete pair of iterations, then fixed by the skew
   the report suggests, the kernel run against the reference interpreter.
3. A row softmax lowered to the PTO tile ISA: the C++ kernel, its tmp tiles' sizes
   as formulas and numbers, and its NumPy simulation against the reference.

Each part checks its numbers; the demo exits 1 if any check fails.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import TextIO

import numpy as np

TILED_MATMUL = """\
// C += A * B, blocked 8x8 on i and j with a 4-wide k, tiles outermost,
// the i tile loop marked parallel.
func.func @matmul(%A: memref<30x20xf32>, %B: memref<20x25xf32>, %C: memref<30x25xf32>) {
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 4 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl, %kb, %kl) [0, 3, 1, 4, 2, 5]
      : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.parallel %ib : !krnl.loop
  krnl.iterate(%ib, %jb, %kb, %il, %jl, %kl)
      with (%ii -> %i = 0 to 30, %jj -> %j = 0 to 25, %kk -> %k = 0 to 20) {
    %a = krnl.load %A[%i, %k] : memref<30x20xf32>
    %b = krnl.load %B[%k, %j] : memref<20x25xf32>
    %c = krnl.load %C[%i, %j] : memref<30x25xf32>
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    krnl.store %s, %C[%i, %j] : memref<30x25xf32>
  }
  return
}
"""


STENCIL = """\
// jacobi-1d with a time loop over a time-expanded array:
// A[t + 1][i] = (A[t][i - 1] + A[t][i] + A[t][i + 1]) / 3
func.func @jacobi_1d(%A: memref<65x130xf32>) {
  %three = arith.constant 3.0 : f32
  %tt, %ii = krnl.define_loops 2
  krnl.iterate(%tt, %ii) with (%tt -> %t = 0 to 64, %ii -> %i = 1 to 129) {
    %tn = affine.apply affine_map<(d0) -> (d0 + 1)>(%t)
    %im = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    %ip = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
    %l = krnl.load %A[%t, %im] : memref<65x130xf32>
    %c = krnl.load %A[%t, %i] : memref<65x130xf32>
    %r = krnl.load %A[%t, %ip] : memref<65x130xf32>
    %s1 = arith.addf %l, %c : f32
    %s2 = arith.addf %s1, %r : f32
    %v = arith.divf %s2, %three : f32
    krnl.store %v, %A[%tn, %i] : memref<65x130xf32>
  }
  return
}
"""

SOFTMAX = """\
// Softmax over the rows of X (N x 40), 8 rows per tile, as onnx-mlir lowers it.
func.func @softmax(%N: index, %X: memref<?x40xf32>, %Y: memref<?x40xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %rows = krnl.define_loops 1
  %rb, %rl = krnl.block %rows 8 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.iterate(%rb, %rl) with (%rows -> %i = 0 to %N) {
    %l0, %l1, %l2 = krnl.define_loops 3
    %mx = krnl.iterate(%l0) with (%l0 -> %j = 0 to 40) iter_args(%m = %ninf) -> (f32) {
      %v = krnl.load %X[%i, %j] : memref<?x40xf32>
      %nm = arith.maximumf %m, %v : f32
      krnl.yield %nm : f32
    }
    %sum = krnl.iterate(%l1) with (%l1 -> %j = 0 to 40) iter_args(%s = %zero) -> (f32) {
      %v = krnl.load %X[%i, %j] : memref<?x40xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      %ns = arith.addf %s, %e : f32
      krnl.yield %ns : f32
    }
    krnl.iterate(%l2) with (%l2 -> %j = 0 to 40) {
      %v = krnl.load %X[%i, %j] : memref<?x40xf32>
      %d = arith.subf %v, %mx : f32
      %e = math.exp %d : f32
      %r = arith.divf %e, %sum : f32
      krnl.store %r, %Y[%i, %j] : memref<?x40xf32>
    }
  }
  return
}
"""


def _section(out: TextIO, title: str) -> None:
    out.write(f"\n== {title} {'=' * max(0, 70 - len(title))}\n")


def _indent(text: str, first: int | None = None) -> str:
    lines = text.rstrip("\n").splitlines()
    shown = lines if first is None else lines[:first]
    more = [f"    ... ({len(lines) - first} more lines)"] if first and len(lines) > first else []
    return "\n".join("    " + x for x in shown) + ("\n" + more[0] if more else "") + "\n"


def _ms(t: float) -> str:
    return f"{t * 1e3:.3f} ms" if t < 1e-2 else f"{t * 1e3:.2f} ms"


def _best(run: Callable[[], object], reps: int = 20) -> float:
    # the fastest of several runs: one run of a sub-millisecond kernel is mostly noise
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t)
    return best


_SKEW = re.compile(r"skew\('(\w+)', '(\w+)', (-?\d+)\)")


def _matmul_tour(out: TextIO, rng: np.random.Generator) -> list[tuple[str, bool]]:
    """A tiled matmul: its loops, legality, kernel and times, against the interpreter."""
    import polykrnl as pk

    checks: list[tuple[str, bool]] = []
    # 1. tiled matmul
    _section(out, "1. a tiled matmul in Krnl")
    out.write(TILED_MATMUL)
    t0 = time.perf_counter()
    fn = pk.parse(TILED_MATMUL, "<demo:matmul>")["matmul"]
    sched = pk.schedule(fn)
    _section(out, "its loop nest after the recipe (block, permute, parallel)")
    out.write(_indent(str(sched.loops())))
    report = sched.check()
    _section(out, "legality")
    out.write(_indent(str(report)))
    checks.append(("the matmul recipe is legal", report.legal))
    kernel = sched.to_numpy()
    t1 = time.perf_counter()
    # The first compile also imports islpy, xDSL and the code generator (about a
    # second); a second one, from the text again, is what compiling costs.
    t2 = time.perf_counter()
    pk.schedule(pk.parse(TILED_MATMUL, "<demo:matmul>")["matmul"]).to_numpy()
    t_compile = time.perf_counter() - t2
    _section(out, "the generated NumPy kernel")
    body = kernel.source[kernel.source.index("\ndef kernel_") + 1 :]
    out.write(_indent(body, 14))
    a = rng.standard_normal((30, 20)).astype(np.float32)
    b = rng.standard_normal((20, 25)).astype(np.float32)
    c = rng.standard_normal((30, 25)).astype(np.float32)
    want = c.copy()
    t3 = time.perf_counter()
    pk.run_reference(fn, A=a, B=b, C=want)
    t_ref = time.perf_counter() - t3
    got = c.copy()
    kernel(A=a, B=b, C=got)
    err = float(np.max(np.abs(got - want)))
    scratch = c.copy()  # the timed runs accumulate into it; only the time matters
    t_kernel = _best(lambda: kernel(A=a, B=b, C=scratch))
    t_numpy = _best(lambda: scratch.__iadd__(a @ b))
    out.write(
        f"compiled (parse, model, recipe, legality, code) in {_ms(t_compile)} (a second "
        f"compile; the first, which also imports polykrnl's libraries, took "
        f"{_ms(t1 - t0)}); ran in {_ms(t_kernel)} (NumPy's C += A @ B: {_ms(t_numpy)}; "
        f"best of 20 runs each, the kernel's time includes checking its arguments); "
        f"reference interpreter: {_ms(t_ref)}; max |error| vs the reference "
        f"{err:.1e} ({'exact' if kernel.exact else 'sums reassociated'})\n"
    )
    # A reassociated float sum of 20 products may differ from the program's order in
    # the last bits; the program's order itself must match bit for bit.
    checks.append(
        (
            "the matmul kernel matches the reference interpreter",
            err == 0 if kernel.exact else err < 1e-4,
        )
    )
    return checks


def _stencil_tour(out: TextIO, rng: np.random.Generator) -> list[tuple[str, bool]]:
    """A stencil: the rectangular tiling refused, the suggested skew, the legal tiling."""
    import polykrnl as pk

    checks: list[tuple[str, bool]] = []
    # 2. stencil: illegal tiling, skew, legal tiling
    _section(out, "2. a stencil: jacobi-1d with a time loop")
    out.write(STENCIL)
    stencil = pk.parse(STENCIL, "<demo:stencil>")["jacobi_1d"]
    plain = pk.Schedule.from_function(stencil, recipe=False)
    _section(out, "legality of the program's order")
    before = plain.check()
    out.write(_indent(str(before)))
    band = next((b for b in before.bands if set(b.loops) == {"t", "i"}), None)
    suggestion = band.suggestion if band is not None else ()
    checks.append(
        ("the (t, i) band is not tilable as written", band is not None and not band.permutable)
    )
    _section(out, "rectangular 8 x 16 tiles of (t, i): refused")
    try:
        plain.block("t", 8).block("i", 16).reorder(["t_t", "i_t", "t", "i"])
        out.write("accepted (unexpected)\n")
        checks.append(("the rectangular tiling is refused", False))
    except pk.IllegalTransformError as e:
        out.write(_indent(str(e)))
        checks.append(("the rectangular tiling is refused", "S0(t=" in str(e)))
    # apply the skews the report suggested (not a hard-coded one), then the same tiles
    skews = [m for m in (_SKEW.fullmatch(x) for x in suggestion) if m is not None]
    checks.append(("the report suggests a skew", bool(skews) and len(skews) == len(suggestion)))
    _section(
        out,
        f"{', then '.join(suggestion) or 'no skew'} (the report's suggestion), then the same tiles",
    )
    skewed = plain
    for m in skews:
        skewed = skewed.skew(m.group(1), m.group(2), int(m.group(3)))
    try:  # without force: the primitives themselves accept the tiling
        tiled = skewed.block("t", 8).block("i", 16).reorder(["t_t", "i_t", "t", "i"])
    except pk.IllegalTransformError as e:
        out.write(_indent(str(e)))
        # go on (force=True) to show what the refused tiling would compute
        tiled = (
            skewed.block("t", 8, force=True)
            .block("i", 16, force=True)
            .reorder(["t_t", "i_t", "t", "i"], force=True)
        )
    out.write(_indent(str(tiled.loops())))
    after = tiled.check()
    out.write(_indent(str(after)))
    checks.append(("the skewed tiling is legal", after.legal))
    grid = rng.standard_normal((65, 130)).astype(np.float32)
    expected = grid.copy()
    t5 = time.perf_counter()
    pk.run_reference(stencil, A=expected)
    t6 = time.perf_counter()
    got_s = grid.copy()
    sk = tiled.to_numpy()
    sk(A=got_s)
    err_s = float(np.max(np.abs(got_s - expected)))
    # row 0 is the input and row t + 1 depends only on row t: re-running rewrites the same values
    t_sk = _best(lambda: sk(A=got_s), 5)
    out.write(
        f"generated kernel of the skewed, tiled schedule: {_ms(t_sk)} (best of 5); reference "
        f"interpreter: {_ms(t6 - t5)}; max |error| {err_s:.1e} ("
        f"{'bit for bit' if err_s == 0 else 'differs'})\n"
    )
    checks.append(("the tiled stencil matches the reference", err_s == 0))
    return checks


def _pto_tour(out: TextIO, rng: np.random.Generator) -> list[tuple[str, bool]]:
    """A row softmax on the PTO tile ISA: the C++, the tmp sizes, the simulation."""
    import polykrnl as pk

    checks: list[tuple[str, bool]] = []
    # 3. PTO
    _section(out, "3. a row softmax on the PTO tile ISA (Ascend A2/A3)")
    out.write(SOFTMAX)
    soft = pk.parse(SOFTMAX, "<demo:softmax>")["softmax"]
    pto = pk.schedule(soft).to_pto("a2a3")
    _section(out, "the C++ kernel (first lines of the tile loop)")
    src = pto.source
    out.write(_indent(src[src.index("    for (") :], 16))
    _section(out, "tmp tiles: bytes needed (max over the tiles) and at N = 19")
    at = pto.tmp_bytes(N=19)
    for name, expr in pto.tmp_sizes.items():
        out.write(f"    {name}: {expr}  ->  {at[name]} bytes\n")
    x = rng.uniform(-1, 1, (19, 40)).astype(np.float32)
    y_ref = np.zeros_like(x)
    pk.run_reference(soft, N=19, X=x, Y=y_ref)
    y_sim = np.zeros_like(x)
    pto.simulate(N=19, X=x, Y=y_sim)
    err_p = float(np.max(np.abs(y_sim - y_ref)))
    out.write(
        f"simulated (NumPy model of the PTO instructions), 19 rows = 2 full tiles + 3 rows: "
        f"max |error| vs the reference {err_p:.1e}\n"
    )
    checks.append(("the PTO simulation matches the reference", err_p < 1e-6))
    return checks


def run_demo(out: TextIO) -> int:
    """Print the tour; returns the exit status (1 if a check fails)."""
    rng = np.random.default_rng(0)
    checks = [
        *_matmul_tour(out, rng),
        *_stencil_tour(out, rng),
        *_pto_tour(out, rng),
    ]
    _section(out, "checks")
    for what, ok in checks:
        out.write(f"    {'ok    ' if ok else 'FAILED'} {what}\n")
    good = all(ok for _, ok in checks)
    out.write("\n" + ("demo finished: all checks passed\n" if good else "demo FAILED\n"))
    return 0 if good else 1
