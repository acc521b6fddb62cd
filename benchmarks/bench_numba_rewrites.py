"""Benchmark: what each rewrite of the Numba target's AST buys, against the same kernel
without it, in one process.

Each case is a Krnl program at a realistic size, compiled twice from fresh schedules: as
polykrnl writes it, and with one rewrite turned off (its function replaced by one that
changes nothing, or for exp and tanh the function left out of vector_math.HELPERS). Both
kernels are checked equal (bit for bit, any NaN for a NaN), then timed interleaved
(`--rounds` rounds, each kernel 5 calls a round; the median call); a NumPy one-liner of
the same result is timed beside them for scale. Reported: the medians and their ratio
(without / with, higher is better).

* vector exp (targets/numba/vector_math.py): an elementwise float32 exp, 4096x1024;
* vector tanh (same module): an elementwise float32 tanh, 4096x1024;
* min/max keys (targets/numba/minmax_keys.py): a row max (`arith.maxnumf`), 4096x1024;
* flat lanes (targets/numba/lanes.py): onnx-mlir's -O3 relu and tanh, 2**22 + 5 floats
  in vector<16xf32> / vector<8xf32> tiles.

    python benchmarks/bench_numba_rewrites.py [--rounds N]

With --winners FILE (the --json of bench_tune.py), the schedules it tuned instead: each
program's one-thread winner on one thread and its parallel winner on --threads threads,
at the sizes it was tuned at, each timed with and without every rewrite of the Numba
target's AST in turn (`REWRITES`; only those that change the kernel's code are timed).
A rewrite made for one program may slow another's winner down: the twelfth session's
signed subscripts made the stencils' tiles in wavefronts twice as slow, unnoticed for
two sessions, because it was timed on the onnx programs only.

    python benchmarks/bench_numba_rewrites.py --winners tune.json [--kernels mvt,gemver]
"""

from __future__ import annotations

import argparse
import ast
import functools
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

import polykrnl as pk
from polykrnl.targets.numba import kernel as numba_kernel
from polykrnl.targets.numba import minmax_keys, vector_math
from polykrnl.tuning.measure import refilled

sys.path.insert(0, str(Path(__file__).resolve().parent))
import onnx_shapes
from _common import import_path

ELEMENTWISE = """
func.func @each(%x: memref<4096x1024xf32>) -> memref<4096x1024xf32> {
  %out = memref.alloc() : memref<4096x1024xf32>
  %l:2 = krnl.define_loops 2
  krnl.iterate(%l#0, %l#1) with (%l#0 -> %i = 0 to 4096, %l#1 -> %j = 0 to 1024) {
    %v = krnl.load %x[%i, %j] : memref<4096x1024xf32>
    %e = math.FUNCTION %v : f32
    krnl.store %e, %out[%i, %j] : memref<4096x1024xf32>
  }
  return %out : memref<4096x1024xf32>
}
"""

ROW_MAX = """
func.func @rowmax(%x: memref<4096x1024xf32>, %t: memref<4096xf32>) -> memref<4096xf32> {
  %a:2 = krnl.define_loops 2
  krnl.iterate(%a#0, %a#1) with (%a#0 -> %i = 0 to 4096, %a#1 -> %j = 0 to 1024) {
    %v = krnl.load %x[%i, %j] : memref<4096x1024xf32>
    %m = krnl.load %t[%i] : memref<4096xf32>
    %n = arith.maxnumf %m, %v : f32
    krnl.store %n, %t[%i] : memref<4096xf32>
  }
  return %t : memref<4096xf32>
}
"""


@contextmanager
def without(module: Any, name: str, unchanged: Any) -> Iterator[None]:
    real = getattr(module, name)
    setattr(module, name, unchanged)
    try:
        yield
    finally:
        setattr(module, name, real)


def _cases(rng: np.random.Generator) -> list[tuple[str, str, Any, dict[str, Any], Any]]:
    """(name, Krnl text, the context that turns the rewrite off, arguments, NumPy)."""
    x = rng.standard_normal((4096, 1024)).astype(np.float32) * 4
    flat = rng.standard_normal(2**22 + 5).astype(np.float32) * 4
    return [
        (
            "vector exp (elementwise, 4096x1024)",
            ELEMENTWISE.replace("FUNCTION", "exp"),
            without(vector_math, "HELPERS", {"tanh": vector_math.HELPERS["tanh"]}),
            {"x": x},
            lambda x: np.exp(x),
        ),
        (
            "vector tanh (elementwise, 4096x1024)",
            ELEMENTWISE.replace("FUNCTION", "tanh"),
            without(vector_math, "HELPERS", {"exp": vector_math.HELPERS["exp"]}),
            {"x": x},
            lambda x: np.tanh(x),
        ),
        (
            "min/max keys (row max, 4096x1024)",
            ROW_MAX,
            without(minmax_keys, "use_minmax_keys", lambda fn: False),
            {"x": x, "t": np.full(4096, -np.inf, np.float32)},
            lambda x, t: np.fmax(t, x.max(axis=1)),
        ),
        (
            "flat lanes (onnx-mlir -O3 relu, 2^22+5)",
            onnx_shapes.relu_text(2**22 + 5),
            without(numba_kernel, "flatten_lanes", lambda fn: None),
            {"a": flat},
            lambda a: np.maximum(a, 0),
        ),
        (
            "flat lanes (onnx-mlir -O3 tanh, 2^22+5)",
            onnx_shapes.tanh_text(2**22 + 5),
            without(numba_kernel, "flatten_lanes", lambda fn: None),
            {"a": flat},
            lambda a: np.tanh(a),
        ),
    ]


def _same(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    ints = a.view(np.int32) == b.view(np.int32)
    return bool((ints | (np.isnan(a) & np.isnan(b))).all())


def _medians(calls: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """The median call of each, in ms, the calls interleaved round by round."""
    samples: dict[str, list[float]] = {label: [] for label in calls}
    for _ in range(rounds):
        for label, f in calls.items():
            for _ in range(5):
                t = time.perf_counter()
                f()
                samples[label].append(time.perf_counter() - t)
    return {label: 1000 * statistics.median(v) for label, v in samples.items()}


def _skip(f: ast.FunctionDef, *_: Any) -> None:
    """A rewrite of an AST that changes nothing."""


#: the rewrites of the Numba target's AST that --winners turns off one at a time, each
#: by the name kernel.py calls it by (its entry's rewrites, then every function's)
REWRITES: dict[str, Callable[[], Any]] = {
    **{
        name: functools.partial(without, numba_kernel, name, _skip)
        for name in (
            "unbox_set_once",
            "localize_per_iteration",
            "unroll_accumulator_lanes",
            "hoist_views",
            "merge_views",
            "forward_loads",
            "promote_invariants",
            "hoist_scalars",
            "split_sums",
            "flatten_lanes",
            "sign_invariant_subscripts",
        )
    },
    "vector_math": functools.partial(without, vector_math, "HELPERS", {}),
    "minmax_keys": functools.partial(without, minmax_keys, "use_minmax_keys", lambda f: False),
}


def _winners(
    path: str, kernels: set[str] | None
) -> Iterator[tuple[str, Callable[[], Any], dict[str, Any]]]:
    """(label, a function that makes the schedule, arguments) of each winner in
    bench_tune.py's --json `path`: a schedule keeps the kernels it built, so each
    kernel is built from a schedule of its own."""
    from polykrnl.tuning import Candidate

    here = Path(__file__).resolve().parent
    sizes = import_path("polybench_sizes", here / "polybench" / "sizes.py")
    for row in json.loads(Path(path).read_text())["rows"]:
        name = row["kernel"]
        if kernels is not None and name not in kernels:
            continue
        if name in onnx_shapes.BY_NAME:
            program = onnx_shapes.BY_NAME[name]
            module = pk.parse(program.text(*program.big))
            args = onnx_shapes.inputs_of(module.functions[0], np.random.default_rng(0))
        else:
            module = pk.load(str(here / "polybench" / f"{name}.mlir"))
            args = sizes.arguments(name, row["dataset"], seed=1)
        for threads, text in ((False, row["winner"]), (True, row["parallel"].get("winner"))):
            if text is None:
                continue
            function, candidate = text.split(": ", 1)
            fn = module[function.removeprefix("@")]
            moves = Candidate.parse(candidate)
            label = f"{name} {'threads' if threads else 'one thread'}"
            yield label, functools.partial(_made, moves, fn), args


def _made(candidate: Any, fn: pk.Function) -> Any:
    from polykrnl.tuning.space import starting_schedules

    return candidate.schedule(*starting_schedules(fn))


def _run(
    kernel: Any,
    args: dict[str, Any],
    threads: int,
    buffers: dict[str, Any],
    written: frozenset[str],
) -> float:
    """One call's seconds on `threads` threads, on `args` copied into `buffers` (the
    copy not timed, only of the arrays in `written` after the first; a short call after
    an untimed one, its threads awake), as pk.tune times."""
    import numba

    numba.set_num_threads(threads)
    if threads > 1:
        kernel(**refilled(args, buffers, written))
    a = refilled(args, buffers, written)
    t = time.perf_counter()
    kernel(**a)
    return time.perf_counter() - t


def _outputs(kernel: Any, args: dict[str, Any], threads: int) -> list[Any]:
    """What a call of `kernel` leaves: its arguments' arrays, then its results."""
    import numba

    numba.set_num_threads(threads)
    a = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    result = kernel(**a)
    results = [] if result is None else list(result) if isinstance(result, tuple) else [result]
    return [v for v in a.values() if isinstance(v, np.ndarray)] + results


def _close(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if np.issubdtype(a.dtype, np.floating):
        return bool(np.allclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=True))
    return bool((a == b).all())


def winners(path: str, kernels: set[str] | None, threads: int, rounds: int) -> int:
    """Time every rewrite on and off on the winners of `path` (see the module)."""
    print("| winner | rewrite | without (ms) | with (ms) | without / with |")
    print("|---|---|---:|---:|---:|")
    buffers: dict[str, Any] = {}
    for label, make, args in _winners(path, kernels):
        n = threads if label.endswith("threads") else 1
        sched = make()
        written = sched.program.written_arguments()
        with_it = sched.to_numba(parallel=n > 1, cache=False)
        for rewrite, off in REWRITES.items():
            with off():
                without_it = make().to_numba(parallel=n > 1, cache=False)
            if with_it.function_source == without_it.function_source:
                continue
            got = (_outputs(k, args, n) for k in (with_it, without_it))
            if not all(_close(a, b) for a, b in zip(*got, strict=True)):
                print(f"| {label} | {rewrite} | results differ | | |")
                return 1
            times: dict[str, list[float]] = {"with": [], "without": []}
            for _ in range(rounds):
                for key, k in (("with", with_it), ("without", without_it)):
                    times[key].append(_run(k, args, n, buffers, written))
            t = {key: 1000 * statistics.median(v) for key, v in times.items()}
            ratio = t["without"] / t["with"]
            print(f"| {label} | {rewrite} | {t['without']:.2f} | {t['with']:.2f} | {ratio:.2f} |")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--winners", help="bench_tune.py's --json: time its winners")
    parser.add_argument("--kernels", help="with --winners: only these programs (a,b,...)")
    parser.add_argument("--threads", type=int, default=2, help="with --winners: the parallel's")
    args = parser.parse_args(argv)
    if args.winners:
        only = set(args.kernels.split(",")) if args.kernels else None
        return winners(args.winners, only, args.threads, args.rounds)
    rng = np.random.default_rng(0)
    print("| rewrite | without (ms) | with (ms) | without / with | NumPy (ms) |")
    print("|---|---:|---:|---:|---:|")
    for name, text, off, arguments, numpy in _cases(rng):
        fn = pk.parse(text).functions[0]
        with_it = pk.schedule(fn).to_numba(parallel=False, boundscheck=False, cache=False)
        with off:
            without_it = pk.schedule(fn).to_numba(parallel=False, boundscheck=False, cache=False)
        if with_it.function_source == without_it.function_source:
            print(f"| {name} | the rewrite changed nothing | | | |")
            continue
        results = [k(**{n: v.copy() for n, v in arguments.items()}) for k in (with_it, without_it)]
        if not _same(*results):
            print(f"| {name} | results differ | | | |")
            return 1
        times = _medians(
            {
                "with": functools.partial(with_it, **arguments),
                "without": functools.partial(without_it, **arguments),
                "numpy": functools.partial(numpy, **arguments),
            },
            args.rounds,
        )
        print(
            f"| {name} | {times['without']:.2f} | {times['with']:.2f} | "
            f"{times['without'] / times['with']:.2f} | {times['numpy']:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
