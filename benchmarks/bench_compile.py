"""Compile time of the whole pipeline (issue 17): by stage, by program size, against loopy.

One process measures, each figure the median of fresh runs (every run parses the text
again, so nothing is cached from an earlier one), the stages of bench_numpy.py's
``compile_once`` (parse, model, recipe, legality, codegen: each instant charged to the
innermost stage running, so they add up to the total):

* **nests**: a function of N sibling 2-D nests (64x64 f32, each blocked 16x16 and
  permuted to ib, jb, il, jl; nest n reads one of two arrays and writes the other,
  alternately, so every pair of nests is linked by dependences), N = 1, 16, 64, 256,
  1024 (``--max-nests``); per stage, the slope of log(time) against log(N) between
  consecutive sizes and over N >= 16 (least squares): 1 is linear, 2 quadratic;
* **polybench**: both functions of every kernel of benchmarks/polybench (natural
  order and ``_tiled`` recipe); the median and the worst of the per-function medians,
  and ``sched.check()`` alone on a fresh schedule (the legality report);
* **onnx**: the onnx-mlir-shaped functions of tests/corpus (``onnx_*.mlir``);
* **gemm vs loopy**: a 32x32x32-tiled gemm over symbolic sizes (``GEMM_TILED``),
  polykrnl's whole pipeline against loopy generating C for the same tiled gemm (split
  i, j, k by 32, tile loops outside), in the same run: loopy needs islpy < 2025.3, so
  it runs in another interpreter given by ``--loopy-python`` (a venv with loopy), which
  reports its own median; caching off (``LOOPY_NO_CACHE``);
* **startup**: process wall time (median of 7) of ``python -c "import polykrnl"``,
  ``polykrnl --help`` and ``polykrnl verify tests/corpus/gemm.mlir``, and of
  ``python -c pass`` as the baseline.

Writes benchmarks/RESULTS_compile.md (``--no-write``: print only).

    python benchmarks/bench_compile.py --loopy-python /tmp/loopyvenv/bin/python
    python benchmarks/bench_compile.py --quick --no-write
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from _common import import_path, machine  # noqa: E402

import polykrnl as pk  # noqa: E402


def _import(name: str) -> ModuleType:
    return import_path(f"bench_{name}", HERE / f"{name}.py")


bench_numpy = _import("bench_numpy")
STAGES = ("parse", "model", "recipe", "legality", "codegen")
NESTS = (1, 16, 64, 256, 1024)
LOOP = "!krnl.loop"
M64 = "memref<64x64xf32>"

# ------------------------------------------------------------------ programs


def nests_program(n: int) -> str:
    """n sibling 64x64 nests, blocked 16x16, alternately A -> B and B -> A."""
    lines = [f"func.func @nests(%A: {M64}, %B: {M64}) {{", "  %c = arith.constant 1.0 : f32"]
    handles = f"{LOOP}, {LOOP}, {LOOP}, {LOOP}"
    block = f"({LOOP}) -> ({LOOP}, {LOOP})"
    for s in range(n):
        src, dst = ("A", "B") if s % 2 == 0 else ("B", "A")
        lines += [
            f"  %i{s}, %j{s} = krnl.define_loops 2",
            f"  %ib{s}, %il{s} = krnl.block %i{s} 16 : {block}",
            f"  %jb{s}, %jl{s} = krnl.block %j{s} 16 : {block}",
            f"  krnl.permute(%ib{s}, %il{s}, %jb{s}, %jl{s}) [0, 2, 1, 3] : {handles}",
            f"  krnl.iterate(%ib{s}, %jb{s}, %il{s}, %jl{s}) with "
            f"(%i{s} -> %x{s} = 0 to 64, %j{s} -> %y{s} = 0 to 64) {{",
            f"    %v{s} = krnl.load %{src}[%x{s}, %y{s}] : {M64}",
            f"    %w{s} = arith.addf %v{s}, %c : f32",
            f"    krnl.store %w{s}, %{dst}[%x{s}, %y{s}] : {M64}",
            "  }",
        ]
    lines += ["  return", "}"]
    return "\n".join(lines) + "\n"


# C += A @ B over symbolic sizes, every loop blocked by 32, tile loops outside: the
# kernel loopy is given below.
GEMM_TILED = """\
func.func @gemm_tiled(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>, \
%M: index, %N: index, %K: index) {
  %ii, %jj, %kk = krnl.define_loops 3
  %ib, %il = krnl.block %ii 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %kb, %kl = krnl.block %kk 32 : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl, %kb, %kl) [0, 3, 1, 4, 2, 5] : \
!krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb, %kb, %il, %jl, %kl) with \
(%ii -> %i = 0 to %M, %jj -> %j = 0 to %N, %kk -> %k = 0 to %K) {
    %a = krnl.load %A[%i, %k] : memref<?x?xf32>
    %b = krnl.load %B[%k, %j] : memref<?x?xf32>
    %c = krnl.load %C[%i, %j] : memref<?x?xf32>
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    krnl.store %s, %C[%i, %j] : memref<?x?xf32>
  }
  return
}
"""

LOOPY_GEMM = r"""
import os, statistics, sys, time, json
os.environ["LOOPY_NO_CACHE"] = "1"
import loopy as lp
lp.set_caching_enabled(False)
import numpy as np

def once():
    t0 = time.perf_counter()
    knl = lp.make_kernel(
        "{ [i, j, k]: 0 <= i < M and 0 <= j < N and 0 <= k < K }",
        "C[i, j] = C[i, j] + A[i, k] * B[k, j]",
        [lp.GlobalArg("A,B,C", np.float32, shape=lp.auto), ...],
        target=lp.CTarget(), lang_version=(2018, 2))
    for v in "ijk":
        knl = lp.split_iname(knl, v, 32, outer_iname=v + "b", inner_iname=v + "l")
    knl = lp.prioritize_loops(knl, "ib,jb,kb,il,jl,kl")
    code = lp.generate_code_v2(knl).device_code()
    assert "for" in code
    return time.perf_counter() - t0

once()
reps = int(sys.argv[1])
times = [once() for _ in range(reps)]
from importlib.metadata import version
print(json.dumps({"median": statistics.median(times), "min": min(times),
                  "loopy": version("loopy"), "islpy": version("islpy")}))
"""


# ------------------------------------------------------------------ measuring


def stages_median(text: str, func: str, reps: int) -> dict[str, float]:
    """Median seconds of each stage and of the total over `reps` fresh runs."""
    bench_numpy.compile_once(text, func)  # warm: imports, isl's first allocations
    runs = [bench_numpy.compile_once(text, func) for _ in range(reps)]
    return {k: statistics.median(r[k] for r in runs) for k in (*STAGES, "total")}


def slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of log(y) against log(x)."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(max(y, 1e-9)) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    den = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / den if den else 0.0


def process_seconds(argv: Sequence[str], reps: int) -> float:
    """Median wall time of running `argv` as a process."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run(argv, cwd=REPO, capture_output=True, check=False)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def functions_of(paths: Sequence[Path]) -> list[tuple[Path, str]]:
    out = []
    for path in paths:
        for fn in pk.load(path).functions:
            out.append((path, fn.name))
    return out


def per_function(cases: Sequence[tuple[Path, str]], reps: int, check: bool) -> list[dict[str, Any]]:
    rows = []
    for path, func in cases:
        text = path.read_text()
        try:
            row: dict[str, Any] = {"function": func, **stages_median(text, func, reps)}
        except pk.PolykrnlError as e:
            rows.append({"function": func, "refused": e.message.splitlines()[0]})
            continue
        if check:
            row["check"] = statistics.median(
                bench_numpy.check_once(text, func) for _ in range(reps)
            )
        rows.append(row)
    return rows


# ------------------------------------------------------------------ report


def ms(x: float) -> str:
    v = x * 1e3
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def nests_section(sizes: Sequence[int], rows: list[dict[str, float]]) -> list[str]:
    keys = (*STAGES, "total")
    lines = [
        "## Sibling nests (whole pipeline, ms, median)",
        "",
        "| nests | " + " | ".join(keys) + " |",
        "|---:|" + "---:|" * len(keys),
    ]
    for n, r in zip(sizes, rows, strict=True):
        lines.append(f"| {n} | " + " | ".join(ms(r[k]) for k in keys) + " |")
    big = [(n, r) for n, r in zip(sizes, rows, strict=True) if n >= 16]
    if len(big) >= 2:
        lines += ["", "Slope of log(time) against log(N), N >= 16 (1: linear, 2: quadratic):", ""]
        lines.append(
            "* "
            + ", ".join(
                f"{k} {slope([n for n, _ in big], [r[k] for _, r in big]):.2f}" for k in keys
            )
        )
        for (n0, r0), (n1, r1) in itertools.pairwise(big):
            lines.append(
                f"* {n0} -> {n1}: "
                + ", ".join(
                    f"{k} {math.log(max(r1[k], 1e-9) / max(r0[k], 1e-9)) / math.log(n1 / n0):.2f}"
                    for k in keys
                )
            )
    return [*lines, ""]


def functions_section(title: str, rows: list[dict[str, Any]]) -> list[str]:
    done = [r for r in rows if "total" in r]
    keys = (*STAGES, "total")
    lines = [f"## {title} (ms, median)", ""]
    if done:
        totals = sorted(r["total"] for r in done)
        worst = max(done, key=lambda r: r["total"])
        lines.append(
            f"* whole pipeline: median {ms(statistics.median(totals))}, worst "
            f"{ms(worst['total'])} ({worst['function']}), over {len(done)} functions"
        )
        checked = [r for r in done if "check" in r]
        if checked:
            wc = max(checked, key=lambda r: r["check"])
            lines.append(
                f"* `sched.check()` on a fresh schedule: median "
                f"{ms(statistics.median(r['check'] for r in checked))}, worst "
                f"{ms(wc['check'])} ({wc['function']})"
            )
        lines.append("")
    extra = " check |" if any("check" in r for r in done) else ""
    lines += [
        "| function | " + " | ".join(keys) + " |" + extra,
        "|---|" + "---:|" * (len(keys) + bool(extra)),
    ]
    for r in rows:
        if "total" not in r:
            lines.append(f"| {r['function']} | refused: {r['refused']} |")
            continue
        cells = [ms(r[k]) for k in keys] + ([ms(r["check"])] if "check" in r else [])
        lines.append(f"| {r['function']} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 runs each, nests up to 256")
    ap.add_argument("--max-nests", type=int, default=None)
    ap.add_argument("--loopy-python", help="an interpreter with loopy installed")
    ap.add_argument("--only", help="sections: nests,polybench,onnx,loopy,startup")
    ap.add_argument("--json", metavar="OUT")
    ap.add_argument("--no-write", action="store_true")
    opts = ap.parse_args(argv)
    reps = 3 if opts.quick else 7
    top = opts.max_nests or (256 if opts.quick else max(NESTS))
    only = set(opts.only.split(",")) if opts.only else None
    wanted: Callable[[str], bool] = lambda s: only is None or s in only  # noqa: E731
    info = machine()
    command = "python benchmarks/bench_compile.py" + (
        " " + " ".join(sys.argv[1:]) if argv is None else ""
    )
    out: list[str] = [
        "# Compile time (issue 17)",
        "",
        "Written by `benchmarks/bench_compile.py` (its docstring has the protocol).",
        "",
        f"* command: `{command}`",
        f"* commit: {info['commit']}{' (polykrnl/ modified)' if info['polykrnl_dirty'] else ''}",
        f"* machine: {info['nproc']} CPUs, {info['processor']}, {info['platform']}; "
        f"CPython {info['python']}, islpy {info['islpy']}, xdsl {info['xdsl']}; "
        f"load average at the start {info['load_average']}",
        "",
    ]
    raw: dict[str, Any] = {"machine": info}
    if wanted("loopy"):
        ours = stages_median(GEMM_TILED, "gemm_tiled", max(reps, 11))
        line = f"* polykrnl whole pipeline of @gemm_tiled (32x32x32 tiles): {ms(ours['total'])} ms"
        raw["gemm"] = ours
        if opts.loopy_python:
            proc = subprocess.run(
                [opts.loopy_python, "-c", LOOPY_GEMM, str(max(reps, 11))],
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode == 0:
                lo = json.loads(proc.stdout.strip().splitlines()[-1])
                raw["loopy"] = lo
                line += (
                    f"; loopy {lo['loopy']} (islpy {lo['islpy']}) C code of the same tiled gemm: "
                    f"{ms(lo['median'])} ms; **ratio {ours['total'] / lo['median']:.2f}**"
                )
            else:
                line += f"; loopy failed: {proc.stderr.strip().splitlines()[-1:]}"
        else:
            line += "; loopy not measured (no --loopy-python)"
        out += ["## Tiled gemm against loopy", "", line, ""]
        print(line, flush=True)
    if wanted("nests"):
        sizes = [n for n in NESTS if n <= top]
        rows = []
        for n in sizes:
            rows.append(stages_median(nests_program(n), "nests", reps if n < 256 else 1))
            print(f"nests {n}: {ms(rows[-1]['total'])} ms", flush=True)
        raw["nests"] = dict(zip(map(str, sizes), rows, strict=True))
        out += nests_section(sizes, rows)
    if wanted("polybench"):
        cases = functions_of(sorted((HERE / "polybench").glob("*.mlir")))
        rows = per_function(cases, reps, check=True)
        raw["polybench"] = rows
        out += functions_section("PolyBench functions", rows)
        print("polybench done", flush=True)
    if wanted("onnx"):
        cases = functions_of(sorted((REPO / "tests" / "corpus").glob("onnx_*.mlir")))
        rows = per_function(cases, reps, check=False)
        raw["onnx"] = rows
        out += functions_section("onnx-mlir-shaped functions (tests/corpus/onnx_*.mlir)", rows)
    if wanted("startup"):
        py = sys.executable
        cli = (
            [py, "-m", "polykrnl.cli"]
            if not Path(py).with_name("polykrnl").exists()
            else [str(Path(py).with_name("polykrnl"))]
        )
        runs = {
            "python -c pass": [py, "-c", "pass"],
            'python -c "import polykrnl"': [py, "-c", "import polykrnl"],
            "polykrnl --help": [*cli, "--help"],
            "polykrnl verify tests/corpus/gemm.mlir": [*cli, "verify", "tests/corpus/gemm.mlir"],
        }
        times = {k: process_seconds(v, 7) for k, v in runs.items()}
        raw["startup"] = times
        out += ["## Process start (s, median of 7)", ""]
        out += [f"* {k}: {v:.3f}" for k, v in times.items()]
        out.append("")
    text = "\n".join(out)
    print(text)
    if opts.json:
        Path(opts.json).write_text(json.dumps(raw, indent=1, default=str))
    if not opts.no_write:
        (HERE / "RESULTS_compile.md").write_text(text)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    raise SystemExit(main())
