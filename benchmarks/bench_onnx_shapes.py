"""Benchmark: onnx-mlir-shaped Krnl programs, generated NumPy and Numba against hand NumPy and C.

The programs (onnx_shapes.py) have the shapes onnx-mlir's --convert-onnx-to-krnl writes,
one or more per op family: elementwise at -O3 (add, relu, tanh, a row broadcast: a
krnl.block tile loop of vector<8xf32> / vector<16xf32> loads, ops and stores plus a
scalar remainder), reductions (ReduceSum over the last axis with a vector accumulator,
ReduceMax / ReduceSum over a middle axis into a krnl.memset result), softmax and
layernorm (row temporaries in views of an i8 pool), matmul (krnl.memset + krnl.matmul
over 4 x 8 x 8 tiles), gemm with a bias (the same + a bias nest, and the (i, j) nest with
a k reduction into an alloca), a 3 x 3 convolution, MaxPool 2 x 2 and 3 x 3 with stride
2 (a scalar accumulator in an alloca), a 4-D transpose, a gather by an index input, and
a concat of three inputs. Each at a realistic size (a few ms of hand NumPy) and a small
one.

Per program, in one process:

1. at the small size, against the reference interpreter (``pk.run_reference``): the
   generated NumPy kernel with ``reassociate=False`` and the Numba kernel bit for bit;
   the default kernel (``pk.compile``) bit for bit unless the program sums floats (it
   may reassociate them: allclose); the C version and the hand NumPy allclose;
2. at the timed size: the compile time (``pk.compile``, median of 3) and the Numba
   compile time (first call, apart), each kernel's result allclose to the hand NumPy's,
   then generated NumPy, hand NumPy, Numba (``to_numba(parallel=False,
   boundscheck=False)``) and C (onnx_shapes.c, gcc -O3 -march=native, via ctypes) run
   interleaved: inputs made once, ``gc.collect()`` before each call; in each round each
   kernel runs for about 50 ms (1 to 20 calls, each a sample); at least 5 rounds (3
   with ``--quick``), more until 2 s (0.5 s), at most 41; the median of the samples.

Everything runs on one thread: OPENBLAS_NUM_THREADS is 1 unless set (hand NumPy's
matmul). A kernel polykrnl refuses (or fails to build) stays in the table with the refusal text
instead of a time. Reported: gen/hand = T_generated / T_hand and Numba/C = T_Numba / T_C
(lower is better), also Numba/hand and C/hand, and the geometric means; then the same
ratios of the minima (less disturbed by other processes on a shared machine).

    python benchmarks/bench_onnx_shapes.py [--quick] [--only NAME,...] [--json out.json]
    python benchmarks/bench_onnx_shapes.py --table-from out.json   # the tables again
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Hand NumPy's matmul on one BLAS thread, like the other columns (Numba and C run on one
# thread): on a shared machine OpenBLAS's second thread waits for a busy core and its
# times spread over two orders of magnitude. Set before NumPy loads OpenBLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

import polykrnl as pk

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    # The benchmark helpers are scripts beside this one, not a package.
    sys.path.insert(0, str(HERE))

import onnx_shapes as shapes  # noqa: E402
import onnx_shapes_c  # noqa: E402
from _common import machine  # noqa: E402

Array = np.ndarray[Any, Any]
Kernel = Callable[[], Any]
COLUMNS = ("generated", "hand", "numba", "c")
ROUND_S = 0.05  # seconds a kernel runs in each round, at least one call


def _copies(inputs: dict[str, Array]) -> dict[str, Array]:
    return {k: v.copy() for k, v in inputs.items()}


def _refusal(exc: BaseException) -> str:
    """One line for the table: the exception's class and the first line of its text."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first}"


def _builders(fn: pk.Function, numba: bool) -> dict[str, Any]:
    """The kernels of `fn` by column, built now (a refusal is kept as its text)."""
    out: dict[str, Any] = {}
    makers: dict[str, Callable[[], Any]] = {
        "exact": lambda: pk.schedule(fn).to_numpy(reassociate=False),
        "generated": lambda: pk.compile(fn),
    }
    if numba:
        makers["numba"] = lambda: pk.schedule(fn).to_numba(parallel=False, boundscheck=False)
    for column, make in makers.items():
        try:
            out[column] = make()
        except Exception as exc:
            out[column] = _refusal(exc)
    return out


def check_small(
    program: shapes.Program, rng: np.random.Generator, numba: bool = True
) -> dict[str, str]:
    """Each kernel at the small size against the interpreter: 'exact', 'close' or the
    refusal text (the Numba kernel only if `numba`: its compilation takes seconds).
    Raises AssertionError when a kernel that runs gives another result."""
    fn = pk.parse(program.text(*program.small)).functions[0]
    inputs = shapes.inputs_of(fn, rng)
    ref = pk.run_reference(fn, **_copies(inputs))
    status: dict[str, str] = {}
    kernels = _builders(fn, numba)
    kernels["hand"] = lambda **kw: program.hand(*(kw[a.name] for a in fn.arguments))
    c = onnx_shapes_c.c_function(program.name, program.small, ref.shape)
    kernels["c"] = lambda **kw: c(*(kw[a.name] for a in fn.arguments))
    # Bit for bit where the kernel keeps the program's order of operations and computes
    # math functions as the interpreter does (`exact`; the default NumPy kernel may
    # reassociate sums and compute float32 math in float32).
    generated = kernels.get("generated")
    must_be_exact = {"exact": True, "numba": True, "generated": getattr(generated, "exact", True)}
    for column, kernel in kernels.items():
        if isinstance(kernel, str):
            status[column] = kernel
            continue
        try:
            got = kernel(**_copies(inputs))
        except Exception as exc:
            status[column] = _refusal(exc)
            continue
        if np.array_equal(ref, got):
            status[column] = "exact"
        else:
            assert not must_be_exact.get(column, False), f"{program.name}: {column} != interpreter"
            assert np.allclose(ref, got, rtol=1e-5, atol=1e-5), f"{program.name}: {column}"
            status[column] = "close"
    return status


def _call_time(f: Kernel) -> float:
    gc.collect()
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def _timed_kernels(
    program: shapes.Program, rng: np.random.Generator, quick: bool
) -> tuple[dict[str, Kernel | str], dict[str, Any]]:
    """The kernels at the timed size, as calls without arguments (or refusal texts),
    each checked against the hand NumPy; and the compile times."""
    text = program.text(*program.big)
    fn = pk.parse(text).functions[0]
    inputs = shapes.inputs_of(fn, rng)
    args = [inputs[a.name] for a in fn.arguments]
    expected = program.hand(*args)
    info: dict[str, Any] = {"compile_ms": None, "numba_compile_s": None, "first_s": {}}
    calls: dict[str, Kernel | str] = {"hand": lambda: program.hand(*args)}
    try:
        compile_times = []
        for _ in range(1 if quick else 3):
            start = time.perf_counter()
            kernel = pk.compile(pk.parse(text).functions[0])
            compile_times.append(time.perf_counter() - start)
        info["compile_ms"] = 1e3 * statistics.median(compile_times)
        calls["generated"] = lambda: kernel(**inputs)
    except Exception as exc:
        calls["generated"] = _refusal(exc)
    try:
        jit = pk.schedule(fn).to_numba(parallel=False, boundscheck=False)
        info["numba_compile_s"] = jit.compile(**inputs)
        calls["numba"] = lambda: jit(**inputs)
    except Exception as exc:
        calls["numba"] = _refusal(exc)
    c = onnx_shapes_c.c_function(program.name, program.big, expected.shape)
    calls["c"] = lambda: c(*args)
    for column, call in list(calls.items()):
        if isinstance(call, str):
            continue
        try:
            start = time.perf_counter()
            got = call()
            info["first_s"][column] = time.perf_counter() - start
        except Exception as exc:
            calls[column] = _refusal(exc)
            continue
        assert np.allclose(got, expected, rtol=1e-4, atol=1e-4), f"{program.name}: {column}"
    return calls, info


def measure(program: shapes.Program, rng: np.random.Generator, quick: bool) -> dict[str, Any]:
    """One row of the table: the small-size check, then the interleaved timings."""
    row: dict[str, Any] = {"program": program.name, "title": program.title}
    row["small"] = check_small(program, rng)
    calls, info = _timed_kernels(program, rng, quick)
    row.update(info)
    runnable = {k: v for k, v in calls.items() if not isinstance(v, str)}
    # Calls per round: a kernel of a few ms runs several times in its turn (each call a
    # sample) so that it has as many samples as noise on a shared machine needs, while
    # a round still interleaves all kernels; one call for the slow ones.
    reps = {k: max(1, min(20, int(ROUND_S / max(info["first_s"][k], 1e-6)))) for k in runnable}
    times: dict[str, list[float]] = {k: [] for k in runnable}
    rounds = 0
    deadline = time.perf_counter() + (0.5 if quick else 2.0)
    while rounds < (3 if quick else 5) or time.perf_counter() < deadline:
        for column in COLUMNS:
            for _ in range(reps.get(column, 0)):
                times[column].append(_call_time(runnable[column]))
        rounds += 1
        if rounds >= 41:
            break
    for column in COLUMNS:
        call = calls[column]
        row[f"{column}_ms"] = 1e3 * statistics.median(times[column]) if column in times else None
        row[f"{column}_min_ms"] = 1e3 * min(times[column]) if column in times else None
        row[f"{column}_samples"] = len(times.get(column, []))
        row[f"{column}_refused"] = call if isinstance(call, str) else None
    row["rounds"] = rounds
    add_ratios(row)
    return row


RATIOS = (
    ("gen_over_hand", "generated", "hand"),
    ("numba_over_c", "numba", "c"),
    ("numba_over_hand", "numba", "hand"),
    ("c_over_hand", "c", "hand"),
)


def add_ratios(row: dict[str, Any]) -> None:
    """The ratios of the medians (``gen_over_hand``...) and of the minima
    (``gen_over_hand_min``...; on a shared machine the minima are disturbed less)."""
    for key, num, den in RATIOS:
        for suffix, kind in (("", "_ms"), ("_min", "_min_ms")):
            a, b = row.get(f"{num}{kind}"), row.get(f"{den}{kind}")
            row[key + suffix] = a / b if a is not None and b is not None else None


def geomean(values: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values))


def _ms(v: float | None, refused: str | None) -> str:
    if v is not None:
        return f"{v:.2f}"
    # The whole text is in the JSON; the table keeps its start.
    text = refused or ""
    return f"refused ({text[:100]}{'...' if len(text) > 100 else ''})"


def _ratio(v: float | None) -> str:
    return f"{v:.2f}" if v is not None else "-"


def table(rows: list[dict[str, Any]]) -> str:
    """The Markdown table of the rows, then the geometric means of the ratios."""
    lines = [
        "| program | compile (ms) | generated (ms) | hand NumPy (ms) | Numba (ms) | C -O3 (ms) "
        "| gen/hand | Numba/C | Numba/hand | C/hand | Numba compile (s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        compile_ms = f"{r['compile_ms']:.1f}" if r["compile_ms"] is not None else "-"
        numba_s = f"{r['numba_compile_s']:.2f}" if r["numba_compile_s"] is not None else "-"
        cells = [_ms(r[f"{c}_ms"], r[f"{c}_refused"]) for c in COLUMNS]
        ratios = [_ratio(r[k]) for k in ("gen_over_hand", "numba_over_c")]
        ratios += [_ratio(r[k]) for k in ("numba_over_hand", "c_over_hand")]
        lines.append(f"| {r['title']} | {compile_ms} | " + " | ".join(cells + ratios))
        lines[-1] += f" | {numba_s} |"
    lines += ["", _means(rows, ""), "", min_table(rows), "", _means(rows, "_min")]
    return "\n".join(lines)


def _means(rows: list[dict[str, Any]], suffix: str) -> str:
    means = []
    for key, _, _ in RATIOS:
        values = [r[key + suffix] for r in rows if r[key + suffix] is not None]
        if values:
            means.append(f"{key}{suffix} {geomean(values):.2f} (over {len(values)})")
    return "Geometric means: " + ", ".join(means) + "."


def min_table(rows: list[dict[str, Any]]) -> str:
    """The ratios of the minima, program by program."""
    lines = [
        "| program (ratios of minima) | gen/hand | Numba/C | Numba/hand | C/hand |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        cells = [_ratio(r[key + "_min"]) for key, _, _ in RATIOS]
        lines.append(f"| {r['title']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds and compile runs")
    ap.add_argument("--only", type=str, help="comma-separated program names")
    ap.add_argument("--json", type=str, help="also write the rows and the machine here")
    ap.add_argument("--table-from", type=str, help="print the tables of a --json file, run nothing")
    args = ap.parse_args()
    if args.table_from:
        with open(args.table_from) as f:
            saved = json.load(f)["rows"]
        for row in saved:
            add_ratios(row)
        print(table(saved))
        return
    programs = list(shapes.PROGRAMS)
    if args.only:
        names = args.only.split(",")
        unknown = [n for n in names if n not in shapes.BY_NAME]
        if unknown:
            ap.error(f"unknown program(s) {unknown}; known: {', '.join(shapes.BY_NAME)}")
        programs = [shapes.BY_NAME[n] for n in names]
    reason = onnx_shapes_c.available()
    if reason is not None:
        sys.exit(f"the C versions do not build: {reason}")
    # The commit and the load when the measurements start (the load again at the end).
    started = machine()
    rng = np.random.default_rng(0)
    rows = []
    for program in programs:
        rows.append(measure(program, rng, args.quick))
        print(f"# {program.name}: small-size check {rows[-1]['small']}", flush=True)
    print(table(rows))
    if args.json:
        with open(args.json, "w") as f:
            end = machine()["load_average"]
            json.dump({"machine": started, "load_at_end": end, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
