"""pk.tune on PolyBench: the tuned schedule against the natural order, the hand recipe and C.

For each kernel, `pk.tune` searches the loops of `@<kernel>` and of `@<kernel>_tiled`
as written (its nests distributed by hand; the search offers distribution only inside
tiles) with its recipe as a seed, the two searches and the choice between their winners
within --budget seconds (`searched`), Numba one thread, on a local pool; with --threads
N > 1, a second such search with threads (`pk.tune(..., threads=True)`), each function
from its own one-thread winner. Then a fresh process (--processes of them, one after
another, when a round is shorter than SHORT_ROUND_SECONDS: medians across them of each
kernel's median) times, in rounds interleaved across them and on copies of the same
inputs (only the arrays the program writes copied again before each call; a kernel
whose call is shorter than WARM_SECONDS right after an untimed call of its own, its
threads awake), the Numba
kernels (`parallel=False`, one thread) of `@<kernel>` in its natural order, of `@<kernel>_tiled`'s
recipe and of the winner, the C version of benchmarks/polybench/hand.c (gcc -O3, one
thread), and with --threads the parallel winner on N threads and C OpenMP on N threads;
medians of the rounds (each round starting one kernel further on; --rounds of them, a
program whose rounds are short gets more, up to MORE_ROUNDS times as many within
ROUNDS_SECONDS). Prints Markdown tables (ratios measured in this one run) and appends
nothing anywhere: copy them into benchmarks/RESULTS.md.

    python benchmarks/bench_tune.py --quick   # gemm, two_mm, jacobi_2d at MEDIUM, 30 s each
    python benchmarks/bench_tune.py --kernels all --dataset LARGE --budget 120 --json out.json
    python benchmarks/bench_tune.py --kernels gemm,syrk --dataset LARGE --threads 2
    python benchmarks/bench_tune.py --onnx softmax,layernorm,conv,matmul --budget 120

With --onnx, the programs of benchmarks/onnx_shapes.py at their timed sizes against
onnx_shapes.c (gcc -O3; with --threads, its OpenMP build on N threads too).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import import_path, machine  # noqa: E402

import polykrnl as pk  # noqa: E402
from polykrnl.tuning import Candidate  # noqa: E402
from polykrnl.tuning.measure import WARM_SECONDS, refilled  # noqa: E402
from polykrnl.tuning.space import starting_schedules  # noqa: E402

sizes = import_path("polybench_sizes", HERE / "polybench" / "sizes.py")
c_kernels = import_path("polybench_c_kernels", HERE / "polybench" / "c_kernels.py")
onnx_shapes = import_path("onnx_shapes", HERE / "onnx_shapes.py")
onnx_shapes_c = import_path("onnx_shapes_c", HERE / "onnx_shapes_c.py")
core_probe = import_path("core_probe", HERE / "core_probe.py")

QUICK = ("gemm", "two_mm", "jacobi_2d")


def run_params(args: dict[str, Any], fn: pk.Function) -> dict[str, float]:
    """The --param sizes of `args` (index arguments, dynamic dimensions of arrays)."""
    out: dict[str, float] = {}
    for a in fn.arguments:
        v = args[a.name]
        if isinstance(v, np.ndarray):
            dims = str(a.type).split("<", 1)[1].split("x")[: v.ndim]
            out.update({f"{a.name}.{d}": int(n) for d, n in enumerate(v.shape) if dims[d] == "?"})
        elif isinstance(v, int):
            out[a.name] = v
    return out


def one_thread(k: Any) -> Callable[[dict[str, Any]], None]:
    def call(a: dict[str, Any]) -> None:
        numba_module().set_num_threads(1)
        k(**a)

    return call


def numba_module() -> Any:
    import numba

    return numba


@dataclass(frozen=True)
class Program:
    """One benchmarked program, made the same in every process that times it: its
    functions (`@K` and `@K_tiled`, or an onnx-mlir program's one), the arguments,
    the natural and recipe schedules, C's one-thread call and (with threads) OpenMP's."""

    fns: list[pk.Function]
    args: dict[str, Any]
    natural: pk.Schedule
    recipe: pk.Schedule
    c: Callable[[dict[str, Any]], Any]
    c_parallel: Callable[[dict[str, Any]], Any] | None
    label: dict[str, str]


def polybench(kernel: str, dataset: str, threads: int) -> Program:
    """PolyBench's `kernel` (`@K`, `@K_tiled`, hand.c) at `dataset`."""
    mod = pk.load(str(HERE / "polybench" / f"{kernel}.mlir"))
    tiled = mod[f"{kernel}_tiled"]
    c_one = c_kernels.c_kernel(kernel)
    c_par = c_kernels.c_kernel(kernel, True, threads=threads) if threads > 1 else None
    return Program(
        [mod[kernel], tiled],
        sizes.arguments(kernel, dataset, seed=1),
        natural=pk.schedule(mod[kernel]),
        recipe=pk.schedule(tiled),
        c=lambda a: c_one(**a),
        c_parallel=(lambda a: c_par(**a)) if c_par is not None else None,
        label={"kernel": kernel, "dataset": dataset},
    )


def onnx_program(name: str, seed: int, threads: int) -> Program:
    """An onnx-mlir-shaped program of onnx_shapes.py at its timed size: the loops as
    written ("natural"), onnx-mlir's own recipe ("recipe"), and onnx_shapes.c."""
    program = onnx_shapes.BY_NAME[name]
    fn = pk.parse(program.text(*program.big)).functions[0]
    args = onnx_shapes.inputs_of(fn, np.random.default_rng(seed))
    names = [a.name for a in fn.arguments]
    expected = program.hand(*(args[n] for n in names))
    c_fn = onnx_shapes_c.c_function(name, program.big, expected.shape)
    c_par = (
        onnx_shapes_c.c_function(name, program.big, expected.shape, threads=threads)
        if threads > 1
        else None
    )
    # As pk.tune starts: a program whose statements only mean something in its blocked
    # nest (the SIMD form, krnl.matmul in tile loops) starts from its recipe.
    natural, recipe = starting_schedules(fn)
    return Program(
        [fn],
        args,
        natural=natural,
        recipe=recipe or natural,
        c=lambda a: c_fn(*(a[n] for n in names)),
        c_parallel=(lambda a: c_par(*(a[n] for n in names))) if c_par is not None else None,
        label={"kernel": name, "dataset": "x".join(map(str, program.big))},
    )


def make_program(spec: dict[str, Any]) -> Program:
    """The program a `--time-row` spec names (made again in the timing process)."""
    if spec["onnx"]:
        return onnx_program(spec["kernel"], spec["seed"], spec["threads"])
    return polybench(spec["kernel"], spec["dataset"], spec["threads"])


@dataclass(frozen=True)
class Settings:
    budget: float
    rounds: int
    seed: int
    threads: int
    processes: int = 3  # fresh processes timing the rounds (`tuned_row`)


#: of a program's budget with two functions (@K, @K_tiled), the share kept to time their
#: winners side by side; the rest is shared by their two searches
COMPARE_SHARE = 0.1


def searched(
    fns: list[pk.Function],
    args: dict[str, Any],
    settings: Settings,
    threads: bool,
    starts: dict[str, Any] | None = None,
) -> tuple[Any, float, str, dict[str, Any]]:
    """pk.tune of each function of `fns` (one program: PolyBench's natural `@K` and its
    hand-distributed `@K_tiled`), within one budget: the searches share all but
    `COMPARE_SHARE` of it, then the two winners are timed side by side in rounds (up to
    three, as many as the budget has room for; none: the faster by the searches' own
    final rounds). The result, the seconds it all took, the function it came from, and
    each function's own result by name. `starts`: by function name, a result to start
    that function's search from (its one-thread winner)."""
    start = time.perf_counter()
    share = settings.budget * (1 - COMPARE_SHARE) / len(fns) if len(fns) > 1 else settings.budget
    results = []
    for fn in fns:
        t0 = time.perf_counter()
        results.append(
            pk.tune(
                fn,
                run_params(args, fn),
                budget=share,
                seed=settings.seed,
                repeats=3,
                threads=threads,
                start=[starts[fn.name]] if starts and fn.name in starts else [],
            )
        )
        SPLITS.append((fn.name, threads, time.perf_counter() - t0))
    best = min(range(len(results)), key=lambda i: results[i].seconds)
    if len(results) > 1:
        t0 = time.perf_counter()
        best = side_by_side(results, args, threads, start + settings.budget, best)
        SPLITS.append(("side by side", threads, time.perf_counter() - t0))
    own = {fn.name: r for fn, r in zip(fns, results, strict=True)}
    return results[best], time.perf_counter() - start, fns[best].name, own


#: where each program's search time went: (pk.tune's function or "side by side",
#: threads, seconds), reset per program and kept in its row
SPLITS: list[tuple[str, bool, float]] = []


def side_by_side(
    results: list[Any], args: dict[str, Any], threads: bool, deadline: float, best: int
) -> int:
    """The index of the faster winner of `results`, timed in rounds in this process while
    a round fits before `deadline` (perf_counter), after making their kernels again (as
    long as their searches took to: a wavefront of skewed tiles takes seconds of isl's
    AST); `best` when none does."""
    prepare = sum(_prepare_seconds(r) for r in results)
    if time.perf_counter() + prepare + 1.5 * sum(r.seconds for r in results) > deadline:
        return best
    kernels = [r.schedule.to_numba(parallel=threads) for r in results]
    written = written_by(r.schedule for r in results)
    for k in kernels:
        k.compile(**args)
    times: list[list[float]] = [[] for _ in kernels]
    round_time = sum(r.seconds for r in results)
    for _ in range(3):
        if time.perf_counter() + 1.5 * round_time > deadline:
            break
        t_round = time.perf_counter()
        for i, k in enumerate(kernels):
            a = fresh(args, written)
            t0 = time.perf_counter()
            k(**a)
            times[i].append(time.perf_counter() - t0)
        round_time = time.perf_counter() - t_round
    if not times[0]:
        return best
    return min(range(len(kernels)), key=lambda i: statistics.median(times[i]))


def _prepare_seconds(result: Any) -> float:
    """What making `result`'s winning kernel took its search (legality, code, compile)."""
    won = result.candidate
    made = [t.outcome.prepare_seconds for t in result.tried if t.outcome.candidate == won]
    return max(made, default=0.0)


def tuned_row(prog: Program, settings: Settings, spec: dict[str, Any]) -> dict[str, Any]:
    """Tune `prog`'s functions (one thread; with threads, again with threads), then time
    natural, recipe, the winners and C in rounds in a fresh process (`--time-row`, `spec`
    naming the program), and when a round is shorter than SHORT_ROUND_SECONDS in
    `settings.processes` of them: medians across them of each kernel's median. What one
    process leaves weighs on all of its rounds alike (the placement of its arrays in
    memory, what ran before in it): mvt's parallel winner timed 1.92 ms in rounds after
    five other programs' in one process, 1.34-1.51 in processes of its own."""
    numba_module().set_num_threads(1)
    SPLITS.clear()
    result, seconds, source, own = searched(prog.fns, prog.args, settings, threads=False)
    winners = {"tuned": (source, str(result.candidate))}
    parallel: dict[str, Any] = {}
    if settings.threads > 1 and prog.c_parallel is not None:
        numba_module().set_num_threads(settings.threads)
        # Each function's threaded search starts from its own one-thread winner: the
        # other function's may be the one whose threads scale (mvt: @mvt's rows, hoisted
        # outermost, 1.6x on two threads; @mvt_tiled's, 1.4x).
        par, par_seconds, par_source, _ = searched(
            prog.fns, prog.args, settings, threads=True, starts=own
        )
        parallel = {"searched": par_seconds, "winner": f"@{par_source}: {par.candidate}"}
        parallel["tried"], parallel["pruned"] = len(par.tried), par.pruned
        winners["tuned parallel"] = (par_source, str(par.candidate))
    processes = [timed_elsewhere(spec, winners, settings)]
    if sum(processes[0]["median"].values()) < SHORT_ROUND_SECONDS:
        processes += [
            timed_elsewhere(spec, winners, settings) for _ in range(settings.processes - 1)
        ]
    names = processes[0]["median"]
    return {
        **prog.label,
        "median": {n: statistics.median(p["median"][n] for p in processes) for n in names},
        "processes": [p["median"] for p in processes],
        "rounds": min(p["rounds"] for p in processes),
        "tried": len(result.tried),
        "pruned": result.pruned,
        "searched": seconds,
        "final_rounds": result.final_rounds,
        "winner": f"@{source}: {result.candidate}",
        "verdict": result.verdict,
        "parallel": parallel,
        "load_average": list(os.getloadavg()),
        "search_splits": list(SPLITS),
    }


def timed_elsewhere(
    spec: dict[str, Any], winners: dict[str, tuple[str, str]], settings: Settings
) -> dict[str, Any]:
    """`timed_rounds` of the program `spec` names with `winners`, in a fresh process."""
    order = {**spec, "winners": winners, "rounds": settings.rounds}
    done = subprocess.run(
        [sys.executable, __file__, "--time-row", json.dumps(order)],
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def timed_rounds(order: dict[str, Any]) -> dict[str, Any]:
    """The medians of the natural order, the recipe, the winners (`order["winners"]`:
    kernel -> function and candidate text) and C, timed in interleaved rounds in this
    process (`--time-row`)."""
    prog = make_program(order)
    threads = order["threads"]
    by_name = {f.name: f for f in prog.fns}

    def winner(which: str, parallel: bool) -> Any:
        source, text = order["winners"][which]
        fn = by_name[source]
        return Candidate.parse(text).schedule(*starting_schedules(fn)).to_numba(parallel=parallel)

    kernels = {
        "natural": prog.natural.to_numba(parallel=False),
        "recipe": prog.recipe.to_numba(parallel=False),
        "tuned": winner("tuned", False),
    }
    for k in kernels.values():
        k.compile(**prog.args)
    calls = {name: one_thread(k) for name, k in kernels.items()}
    calls["C -O3"] = prog.c
    if "tuned parallel" in order["winners"] and prog.c_parallel is not None:
        tuned_par = winner("tuned parallel", True)
        tuned_par.compile(**prog.args)

        def call_par(a: dict[str, Any]) -> None:
            numba_module().set_num_threads(threads)
            tuned_par(**a)

        calls["tuned parallel"] = call_par
        calls["C OpenMP"] = prog.c_parallel
    return rounds_of(calls, prog.args, written_by([prog.natural, prog.recipe]), order["rounds"])


def rounds_of(
    calls: dict[str, Callable[[dict[str, Any]], Any]],
    args: dict[str, Any],
    written: frozenset[str],
    rounds: int,
) -> dict[str, Any]:
    """The median time of each of `calls` in interleaved rounds, and how many rounds."""
    short: set[str] = set()
    for name, call in calls.items():
        t0 = time.perf_counter()
        call(fresh(args, written))  # warm-up (and the C library's build)
        if time.perf_counter() - t0 < WARM_SECONDS:
            short.add(name)
    times: dict[str, list[float]] = {name: [] for name in calls}
    t_rounds = time.perf_counter()
    while len(times["tuned"]) < rounds or (
        len(times["tuned"]) < MORE_ROUNDS * rounds
        and time.perf_counter() - t_rounds < ROUNDS_SECONDS
    ):
        # Each round starts one kernel further on: a kernel always timed after the same
        # one carries what that one leaves (mvt's parallel kernel after C's 16 ms on one
        # thread: 1.75 ms, after its own one-thread form: 1.48).
        names = list(calls)
        turn = len(times["tuned"]) % len(names)
        for name in names[turn:] + names[:turn]:
            call = calls[name]
            if name in short:
                # A call of a fraction of a millisecond after the others' is a cold start
                # of the threads (OpenMP's sleep after its spin: conv's parallel kernel
                # 0.18 ms after 10 ms idle, 0.12 after 2 ms), and C's OpenMP kernel ran
                # right after ours on its threads, still spinning: each such call is
                # timed after one untimed call of its own, alike for all.
                call(fresh(args, written))
            a = fresh(args, written)
            t0 = time.perf_counter()
            call(a)
            times[name].append(time.perf_counter() - t0)
    unchanged(args, written)
    return {
        "median": {name: statistics.median(t) for name, t in times.items()},
        "rounds": len(times["tuned"]),
    }


#: a program whose round (each kernel once) is shorter is timed in `Settings.processes`
#: fresh processes (a longer one in one: a round of seidel-2d's kernels takes seconds)
SHORT_ROUND_SECONDS = 1.0

#: short kernels get more rounds than --rounds: up to MORE_ROUNDS times as many, while
#: the rounds so far took less than ROUNDS_SECONDS (the median of 5 calls of mvt's 1.5 ms
#: parallel kernel moved by 0.2 ms between runs on a 2-vCPU VM)
MORE_ROUNDS = 5
ROUNDS_SECONDS = 10.0

_BUFFERS: dict[str, Any] = {}


def fresh(args: dict[str, Any], written: frozenset[str]) -> dict[str, Any]:
    """`args` copied into buffers made once per argument, as pk.tune's timings copy them
    (`measure.refilled`: a new copy per call gave the kernel's own output fresh pages,
    whose faults depended on the order of the calls in a round); only the arrays in
    `written` again at each call, as pk.tune's timings do."""
    return refilled(args, _BUFFERS, written)


def written_by(schedules: Iterable[pk.Schedule]) -> frozenset[str]:
    """The arguments a call of any of `schedules`' functions may change."""
    return frozenset().union(*(s.program.written_arguments() for s in schedules))


def unchanged(args: dict[str, Any], written: frozenset[str]) -> None:
    """Fail unless the buffers of the arrays outside `written` still hold `args`: every
    kernel timed on them (the C ones too) left them as they were, so no call was timed
    on another call's output."""
    for name, (source, buf) in _BUFFERS.items():
        kept = name not in written and source is args.get(name)
        if kept and not np.array_equal(buf, source, equal_nan=buf.dtype.kind in "fc"):
            raise AssertionError(f"%{name} changed, but no statement writes it")


def geo(xs: list[float]) -> float:
    return math.exp(statistics.mean(math.log(x) for x in xs)) if xs else float("nan")


def table(rows: list[dict[str, Any]], info: dict[str, Any] | None = None) -> str:
    """The Markdown tables of the rows (ratios measured in one run, per kernel), with the
    core probe of `info` (the run's machine) under the threads table."""
    out = [
        "| kernel | dataset | C -O3 ms | natural ms | recipe ms | tuned ms "
        "| tuned / best of the two | tuned / C | tried | pruned | search s | winner |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    best, vs_c = [], []
    for r in rows:
        m = r["median"]
        ratio = m["tuned"] / min(m["natural"], m["recipe"])
        best.append(ratio)
        vs_c.append(m["tuned"] / m["C -O3"])
        out.append(
            f"| {r['kernel']} | {r['dataset']} | {m['C -O3'] * 1e3:.4g} | "
            f"{m['natural'] * 1e3:.4g} | {m['recipe'] * 1e3:.4g} | {m['tuned'] * 1e3:.4g} | "
            f"{ratio:.2f} | {vs_c[-1]:.2f} | {r['tried']} | {r['pruned']} | "
            f"{r['searched']:.0f} | `{r['winner']}` |"
        )
    out += [
        "",
        f"geometric means: tuned / best of natural and recipe **{geo(best):.2f}** "
        f"(worst {max(best):.2f}); tuned / C -O3 **{geo(vs_c):.2f}**",
    ]
    par = [r for r in rows if r["parallel"]]
    if par:
        out += [
            "",
            "| kernel | tuned parallel ms | tuned 1 thread ms | speedup | C OpenMP speedup "
            "| tried | pruned | winner |",
            "|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for r in par:
            m, p = r["median"], r["parallel"]
            out.append(
                f"| {r['kernel']} | {m['tuned parallel'] * 1e3:.4g} | {m['tuned'] * 1e3:.4g} "
                f"| {m['tuned'] / m['tuned parallel']:.2f} | {m['C -O3'] / m['C OpenMP']:.2f} "
                f"| {p['tried']} | {p['pruned']} | `{p['winner']}` |"
            )
        if info and "core_probe" in info:
            out += ["", core_probe.describe(info["core_probe"], info["threads"])]
    return "\n".join(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kernels", default=",".join(QUICK), help="comma-separated, or 'all'")
    p.add_argument("--dataset", default="MEDIUM")
    p.add_argument("--budget", type=float, default=60.0)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="> 1: also tune with threads")
    p.add_argument("--quick", action="store_true", help="the default kernels, 30 s each")
    p.add_argument(
        "--onnx",
        help="comma-separated programs of onnx_shapes.py (softmax,layernorm,conv,matmul) "
        "instead of PolyBench kernels",
    )
    p.add_argument("--json", help="also write the rows (and the machine) here")
    p.add_argument("--table-from", help="print the tables of a --json file, run nothing")
    p.add_argument(
        "--processes", type=int, default=3, help="fresh processes timing each program's rounds"
    )
    p.add_argument("--time-row", help=argparse.SUPPRESS)  # a timing process's order (JSON)
    a = p.parse_args()
    if a.time_row:
        print(json.dumps(timed_rounds(json.loads(a.time_row))))
        return
    if a.table_from:
        saved = json.loads(Path(a.table_from).read_text())
        print(table(saved["rows"], saved.get("machine")))
        return
    budget = 30.0 if a.quick else a.budget
    names = sizes.KERNELS if a.kernels == "all" else a.kernels.split(",")
    if a.onnx:
        names = a.onnx.split(",")
    rows = []
    info = machine()
    if a.threads > 1:
        # Before any search: what a second thread can add here, for the threads table.
        info.update(threads=a.threads, core_probe=core_probe.probe(a.threads))
    settings = Settings(budget, a.rounds, a.seed, a.threads, a.processes)
    for kernel in names:
        spec = {"kernel": kernel, "dataset": a.dataset, "onnx": bool(a.onnx)}
        spec.update(seed=a.seed, threads=a.threads)
        prog = make_program(spec)
        r = tuned_row(prog, settings, spec)
        print(f"{kernel}: {r}", file=sys.stderr, flush=True)
        rows.append(r)
        if a.json:  # after every kernel: a long run cut short keeps what it measured
            Path(a.json).write_text(json.dumps({"machine": info, "rows": rows}, indent=1))
    print(f"\n`python benchmarks/bench_tune.py {' '.join(sys.argv[1:])}`, budget {budget:g} s\n")
    print(table(rows, info))


if __name__ == "__main__":
    main()
