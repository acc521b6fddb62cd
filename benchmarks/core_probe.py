"""What a second thread adds on this machine: core_probe.c, compiled with gcc and run.

`probe(threads)` returns the speedup of N threads over one on the same total work, for
vectorized arithmetic ("vector") and for a latency-bound scalar chain ("chain"), or a
string saying why it could not run (no gcc, no OpenMP). Two hyperthreads of one core show
as vector ~1 and chain ~2; two physical cores as ~2 and ~2. bench_tune prints it beside
the threads table: where "vector" is about 1, a tuned kernel that keeps the vector units
busy on one thread cannot gain from a second one, whatever C's natural-order loops gain.

    python benchmarks/core_probe.py [THREADS]
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "core_probe.c"
FLAGS = ("-O3", "-march=native", "-ffp-contract=off", "-fopenmp")


def _binary() -> Path | str:
    if shutil.which("gcc") is None:
        return "gcc is not installed"
    key = hashlib.sha256(SOURCE.read_bytes() + " ".join(FLAGS).encode()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / f"polykrnl-core-probe-{key}"
    if path.exists():
        return path
    tmp = path.with_suffix(".tmp")
    proc = subprocess.run(
        ["gcc", *FLAGS, "-o", str(tmp), str(SOURCE)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        return f"gcc could not build core_probe.c: {proc.stderr.strip()}"
    tmp.replace(path)
    return path


def probe(threads: int = 2) -> dict[str, float] | str:
    """Speedups of `threads` threads over one ({"vector": .., "chain": ..}), or why not."""
    binary = _binary()
    if isinstance(binary, str):
        return binary
    proc = subprocess.run([str(binary), str(threads)], capture_output=True, text=True)
    if proc.returncode != 0:
        return f"core_probe failed (exit {proc.returncode}): {proc.stderr.strip()}"
    pairs = (line.split() for line in proc.stdout.splitlines())
    return {name: float(value) for name, value in pairs}


def describe(result: dict[str, float] | str, threads: int) -> str:
    """One line for a table's notes."""
    if isinstance(result, str):
        return f"core probe: not run ({result})"
    return (
        f"core probe (benchmarks/core_probe.c, same work on {threads} threads against 1): "
        f"vectorized arithmetic **{result['vector']:.2f}x**, latency-bound scalar chain "
        f"**{result['chain']:.2f}x**"
    )


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    print(describe(probe(n), n))
