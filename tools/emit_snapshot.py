"""Everything polykrnl emits for the programs of tests/ and benchmarks/, one file each.

Run it before and after a change that should not change behaviour, then diff:

    python tools/emit_snapshot.py /tmp/before        # on the old commit
    python tools/emit_snapshot.py /tmp/after         # on the new one
    diff -r /tmp/before /tmp/after

Per .mlir file: the printed module (custom and generic forms), the verifier's
verdict, and per function the loop tree (text and JSON), the legality report,
to_krnl(), the NumPy kernels (default, reassociate=False, parallel=True), the
Numba kernel's source, the PTO kernels and tmp sizes for both architectures, and the
recipe-less loops and kernel; errors are written as `!! ErrorClass: message` (paths relative to the
checkout, so two checkouts compare equal).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

import polykrnl as pk

ROOT = Path(__file__).resolve().parent.parent


def _error(e: pk.PolykrnlError) -> str:
    return f"!! {type(e).__name__}: {e}".replace(str(ROOT) + "/", "")


def _attempt(f: Callable[[], object]) -> str:
    try:
        return str(f())
    except pk.PolykrnlError as e:
        return _error(e)
    except Exception as e:  # a crash is what this is here to show
        return f"!! CRASH {type(e).__name__}: {e}"


def _function(fn: pk.Function) -> list[str]:
    out = [f"#### {fn.name}"]
    try:
        s = pk.schedule(fn)
    except pk.PolykrnlError as e:
        return [*out, "schedule " + _error(e)]
    parts: dict[str, Callable[[], object]] = {
        "loops": s.loops,
        "loops json": lambda: s.loops().to_json(),
        "check": s.check,
        "to_krnl": s.to_krnl,
        "numpy": lambda: s.to_numpy().source,
        "numpy exact": lambda: s.to_numpy(reassociate=False).source,
        "numpy parallel": lambda: s.to_numpy(parallel=True).source,
        "numba": lambda: s.to_numba(cache=False).source,
    }

    def pto(arch: str, what: str) -> object:
        return getattr(s.to_pto(arch), what)

    for arch in ("a2a3", "a5"):
        parts[f"pto {arch}"] = partial(pto, arch, "source")
        parts[f"pto tmp {arch}"] = partial(pto, arch, "tmp_sizes")
    out += [f"== {name}\n{_attempt(f)}" for name, f in parts.items()]
    try:
        s0 = pk.Schedule.from_function(fn, recipe=False)
    except pk.PolykrnlError as e:
        return [*out, "recipe=False " + _error(e)]
    out.append("== recipe=False loops\n" + _attempt(s0.loops))
    out.append("== recipe=False numpy\n" + _attempt(lambda: s0.to_numpy().source))
    return out


def main(out_dir: str) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = sorted(p for d in ("tests", "benchmarks") for p in (ROOT / d).rglob("*.mlir"))
    for path in files:
        rel = str(path.relative_to(ROOT))
        lines: list[str] = []
        try:
            mod = pk.load(path)
        except pk.PolykrnlError as e:
            lines.append("parse " + _error(e))
        else:
            lines.append("== print\n" + _attempt(mod.print))
            lines.append("== generic\n" + _attempt(partial(mod.print, generic=True)))
            lines.append("== verify " + _attempt(partial(pk.verify, mod)))
            for fn in mod.functions:
                lines += _function(fn)
        (out / (rel.replace("/", "__") + ".txt")).write_text("\n".join(lines) + "\n")
    print(f"{len(files)} files written to {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "snapshot")
