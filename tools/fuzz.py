"""Mutation fuzzing of the CLI: every bad input must end in a located error, never a traceback.

Each mutant is a program of the corpus (tests/corpus, benchmarks/polybench and
any directory given) with one mutation: a line deleted, duplicated or swapped,
a number changed, a token dropped, an op name replaced by another, a type
changed, a recipe changed (block sizes 0, 1, huge or negative, permute maps
of the wrong length, parallel on any loop), or hostile text: a function symbol
(as a quoted `@"..."`, with its calls) or a string attribute replaced by text
that holds Python creating a file `PWNED` after line breaks of every kind,
quotes, triple quotes, backslashes, `*/`, `??/` or an encoding declaration,
often in the file's name too. Every CLI verb runs on it in a worker process
with a time limit, in the mutant's own directory; `run --verify` runs when a
kernel came out, and the module `emit numpy` writes is imported from its file.
A `PWNED` file appearing there is a finding: input text ran as code.

    python tools/fuzz.py --mutants 300 --seed 0        # the bounded run CI makes
    python tools/fuzz.py --mutants 5000 --seed 7 -j 2  # a long campaign

The report groups the tracebacks by exception and innermost polykrnl frame, and
lists the commands that ran past the time limit and those that ran input text.
The exit status is 1 when any traceback, timeout or executed text was found.
Mutants are written to a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import runpy
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import asdict, dataclass, field
from pathlib import Path

# tools/ holds scripts, not a package: the shared helper is a sibling file.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_calls import ROOT, call, rel

CORPORA = (ROOT / "tests" / "corpus", ROOT / "benchmarks" / "polybench")

#: the verbs each mutant goes through (argv after the file name is added)
VERBS: tuple[tuple[str, ...], ...] = (
    ("print",),
    ("print", "--generic"),
    ("verify",),
    ("check",),
    ("lower",),
    ("emit", "numpy"),
    ("emit", "pto"),
    ("emit", "numba"),
)
# Sizes of 8: at the default 16, the reference interpreter alone takes 20 s on
# heat_3d (a 2-vCPU machine): a legitimate run, not a hang, but over the limit.
RUN = ("run", "--verify", "--seed", "0", "--size", "8")

_NUMBER = re.compile(r"(?<![\w%#.])-?\d+(?![\w.])")
_OP = re.compile(r"\b(?:krnl|arith|math|memref|affine|scf|func|vector)\.[a-z_]+\b")
_TYPE = re.compile(r"\b(?:f16|f32|f64|i1|i8|i16|i32|i64|index)\b")
_BLOCK = re.compile(r"(krnl\.block\s+%[\w#]+\s+)(\d+)")
_PERM = re.compile(r"(krnl\.permute\([^)]*\)\s*)\[([\d,\s]*)\]")
_TYPES = ("f32", "f64", "i1", "i8", "i32", "i64", "index")
_SYMBOL = re.compile(r"func\.func\s+(?:private\s+)?@([\w$.]+)")
_STRING = re.compile(r'(=\s*)"((?:[^"\\\n]|\\.)*)"')

#: what hostile text runs, if it ever becomes code: it creates this file in the working
#: directory (each mutant runs in its own)
MARKER = "PWNED"
_CMD = f"open({MARKER!r}, 'w').close()"
#: names and strings that end a line, a comment or a literal for Python or C++
HOSTILE = (
    f"\n{_CMD}\n#",
    f"\r{_CMD}\r#",
    f'"""\n{_CMD}\n"""',
    f"'''\n{_CMD}\n'''#",
    f"\\\n{_CMD}\n\\",
    f"*/\n{_CMD}\n/*",
    f"??/\n{_CMD}",
    f"\x0b{_CMD}\x0c",
    f"\x1c{_CMD}\x1e",
    f"\x85{_CMD}",
    f"\u2028{_CMD}\u2029",
    f"\u00e9\u202e{_CMD}",
    f" -*- coding: utf-7 -*- +AAo-{_CMD}",
    "a b",
    "a.b",
    "if",
    "1x",
)


def mlir_string(text: str) -> str:
    """`text` inside an MLIR string literal. xDSL reads `\\XX` escapes only in ASCII
    strings, so non-ASCII text is written raw, its quotes, backslashes and line ends
    dropped."""
    if text.isascii():
        return "".join(
            f"\\{ord(c):02X}" if c in '"\\' or ord(c) < 0x20 or ord(c) == 0x7F else c for c in text
        )
    return "".join(c for c in text if c not in '"\\\n\r\x0b\x0c')


@dataclass(frozen=True)
class Mutant:
    source: str  # the corpus file, relative to the checkout
    mutation: str
    text: str
    file_name: str = ""  # hostile text in the mutant's file name (no `/`)


@dataclass
class Outcome:
    source: str
    mutation: str
    path: str
    tracebacks: list[tuple[str, str, str]] = field(default_factory=list)  # verb, kind, frame
    timeouts: list[str] = field(default_factory=list)
    exits: dict[str, int] = field(default_factory=dict)
    executed: list[str] = field(default_factory=list)  # commands after which PWNED appeared


# ------------------------------------------------------------------ mutations


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _mutations(text: str, rng: random.Random, op_names: Sequence[str]) -> Iterator[tuple[str, str]]:
    """Candidate (description, mutated text) pairs for one program, in random order."""
    lines = _lines(text)
    code = [n for n, x in enumerate(lines) if x.strip() and not x.strip().startswith("//")]
    kinds = [
        "delete",
        "duplicate",
        "swap",
        "number",
        "token",
        "op",
        "type",
        "block",
        "permute",
        "parallel",
        "symbol",
        "string",
    ]
    rng.shuffle(kinds)
    for kind in kinds:
        if kind in ("delete", "duplicate", "swap") and code:
            n = rng.choice(code)
            new = list(lines)
            if kind == "delete":
                del new[n]
            elif kind == "duplicate":
                new.insert(n, lines[n])
            else:
                at = rng.choice(code)
                new[n], new[at] = lines[at], lines[n]
                kind = f"swap {at + 1}"
            yield f"{kind} line {n + 1}", "\n".join(new)
        elif kind == "number":
            found = list(_NUMBER.finditer(text))
            if found:
                m = rng.choice(found)
                value = rng.choice([0, 1, -1, 2, 3, 7, 1 << 20, 1 << 40, -(1 << 31), int(m[0]) + 1])
                yield (
                    f"number {m[0]} -> {value} at offset {m.start()}",
                    text[: m.start()] + str(value) + text[m.end() :],
                )
        elif kind == "token" and code:
            n = rng.choice(code)
            tokens = lines[n].split(" ")
            if len(tokens) > 1:
                k = rng.randrange(len(tokens))
                new = list(lines)
                new[n] = " ".join(tokens[:k] + tokens[k + 1 :])
                yield f"drop token {tokens[k]!r} of line {n + 1}", "\n".join(new)
        elif kind == "op":
            found = list(_OP.finditer(text))
            if found and op_names:
                m = rng.choice(found)
                other = rng.choice(op_names)
                yield (
                    f"op {m[0]} -> {other} at offset {m.start()}",
                    text[: m.start()] + other + text[m.end() :],
                )
        elif kind == "type":
            found = list(_TYPE.finditer(text))
            if found:
                m = rng.choice(found)
                other = rng.choice([t for t in _TYPES if t != m[0]])
                yield (
                    f"type {m[0]} -> {other} at offset {m.start()}",
                    text[: m.start()] + other + text[m.end() :],
                )
        elif kind == "block":
            found = list(_BLOCK.finditer(text))
            if found:
                m = rng.choice(found)
                size = rng.choice([0, 1, -4, 3, 1 << 31, 1 << 62])
                yield (
                    f"block size {m[2]} -> {size}",
                    text[: m.start(2)] + str(size) + text[m.end(2) :],
                )
        elif kind == "permute":
            found = list(_PERM.finditer(text))
            if found:
                m = rng.choice(found)
                n_loops = len([x for x in m[2].split(",") if x.strip()])
                length = rng.choice([n_loops - 1, n_loops + 1, n_loops])
                perm = [rng.randrange(-1, n_loops + 1) for _ in range(max(length, 0))]
                yield (
                    f"permute map [{m[2]}] -> {perm}",
                    text[: m.start(2)] + ", ".join(map(str, perm)) + text[m.end(2) :],
                )
        elif kind == "parallel":
            handles = re.findall(r"krnl\.iterate\((%[\w#]+)", text)
            lines_it = [n for n, x in enumerate(lines) if "krnl.iterate(" in x]
            if handles and lines_it:
                n = lines_it[0]
                h = rng.choice(handles)
                new = list(lines)
                new.insert(n, f"  krnl.parallel {h} : !krnl.loop")
                yield f"parallel {h} before line {n + 1}", "\n".join(new)
        elif kind == "symbol":
            symbols = sorted(set(_SYMBOL.findall(text)))
            if symbols:
                name = rng.choice(symbols)
                bad = rng.choice(HOSTILE)
                uses = re.compile(rf"@{re.escape(name)}(?![\w$.])")
                quoted = f'@"{mlir_string(bad)}"'
                yield f"symbol @{name} -> {bad!r}", uses.sub(quoted.replace("\\", "\\\\"), text)
        elif kind == "string":
            found = list(_STRING.finditer(text))
            if found:
                m = rng.choice(found)
                bad = rng.choice(HOSTILE)
                yield (
                    f"string {m[0]!r} -> {bad!r}",
                    text[: m.start(2)] + mlir_string(bad) + text[m.end(2) :],
                )


def mutants(files: Sequence[Path], count: int, seed: int) -> list[Mutant]:
    rng = random.Random(seed)
    texts = {f: f.read_text() for f in files}
    op_names = sorted({m for t in texts.values() for m in _OP.findall(t)})
    out: list[Mutant] = []
    seen: set[str] = set()
    attempts = 0
    while len(out) < count and attempts < count * 20:
        attempts += 1
        f = rng.choice(files)
        for what, new in _mutations(texts[f], rng, op_names):
            if new != texts[f] and new not in seen:
                seen.add(new)
                hostile = what.startswith(("symbol", "string")) and rng.random() < 0.5
                name = rng.choice(HOSTILE).replace("/", "|") if hostile else ""
                out.append(Mutant(rel(f), what, new, name))
                break
    return out


# ------------------------------------------------------------------ running


def run_mutant(path: str, source: str, mutation: str, limit: int) -> Outcome:
    outcome = Outcome(source, mutation, path)
    # In the mutant's own directory: hostile text that ran leaves its marker there.
    here = Path(path).parent
    os.chdir(here)

    def ran(command: str) -> None:
        if (here / MARKER).exists():
            outcome.executed.append(command)
            (here / MARKER).unlink()

    for verb in VERBS:
        argv = [*verb, path]
        status, _, escaped = call(argv, limit)
        name = " ".join(verb)
        ran(name)
        if status is None:
            outcome.timeouts.append(name)
            continue
        outcome.exits[name] = status
        if escaped is not None:
            outcome.tracebacks.append((name, *escaped))
    if outcome.exits.get("emit numpy") == 0:
        module = here / "kernels.py"
        status, _, _ = call(["emit", "numpy", path, "-o", str(module)], limit)
        if status == 0:
            try:  # from the file, as `import` reads it (with its encoding declaration)
                runpy.run_path(str(module))
            except Exception as e:
                outcome.tracebacks.append(("(import kernels.py)", type(e).__name__, str(module)))
            ran("emit numpy -o kernels.py, then import kernels.py")
    if outcome.exits.get("emit numpy") == 0:
        from polykrnl.reader.parser import load

        try:
            names = [f.name for f in load(path).functions if f.op.body.blocks]
        except Exception:
            names = []
        for fn in names[:3]:
            name = f"run --verify --func {fn}"
            status, _, escaped = call([*RUN, "--func", fn, path], limit)
            ran(name)
            if status is None:
                outcome.timeouts.append(name)
            elif escaped is not None:
                outcome.tracebacks.append((name, *escaped))
            else:
                outcome.exits[name] = status
    return outcome


def campaign(
    files: Sequence[Path],
    count: int,
    seed: int,
    jobs: int,
    limit: int,
    progress: Callable[[int], None] | None = None,
) -> list[Outcome]:
    found = mutants(files, count, seed)
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="polykrnl-fuzz-") as tmp:
        paths = []
        for n, m in enumerate(found):
            own = Path(tmp) / f"m{n:05d}"
            own.mkdir()
            p = own / f"m{n:05d}_{Path(m.source).stem}{m.file_name}.mlir"
            p.write_text(m.text)
            paths.append(p)
        pool = ProcessPoolExecutor(max_workers=jobs)
        try:
            futures = [
                pool.submit(run_mutant, str(p), m.source, m.mutation, limit)
                for p, m in zip(paths, found, strict=True)
            ]
            budget = limit * (len(VERBS) + 4) + 30
            for n, (fut, p, m) in enumerate(zip(futures, paths, found, strict=True)):
                try:
                    outcomes.append(fut.result(timeout=budget))
                except FutureTimeout:
                    # Stuck in native code, beyond the alarm: record it, start over.
                    outcomes.append(Outcome(m.source, m.mutation, str(p), timeouts=["(hung)"]))
                    for proc in list(getattr(pool, "_processes", {}).values()):
                        proc.kill()
                    pool.shutdown(wait=False, cancel_futures=True)
                    pool = ProcessPoolExecutor(max_workers=jobs)
                    rest = list(zip(paths[n + 1 :], found[n + 1 :], strict=True))
                    futures[n + 1 :] = [
                        pool.submit(run_mutant, str(q), x.source, x.mutation, limit)
                        for q, x in rest
                    ]
                if progress is not None:
                    progress(n + 1)
                for o in outcomes[-1:]:
                    if o.tracebacks or o.timeouts or o.executed:
                        keep = ROOT / ".fuzz-findings"
                        keep.mkdir(exist_ok=True)
                        dest = keep / Path(o.path).name
                        dest.write_text(Path(o.path).read_text())
                        o.path = rel(dest)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    return outcomes


def _shown(text: str) -> str:
    """`text` on one line of the report: hostile names as Python literals."""
    return text if text.isprintable() else repr(text)


def report(outcomes: Sequence[Outcome]) -> str:
    groups: dict[tuple[str, str], list[tuple[Outcome, str]]] = defaultdict(list)
    for o in outcomes:
        for verb, kind, frame in o.tracebacks:
            groups[(kind.split(":")[0], frame)].append((o, verb))
    lines = [
        f"{len(outcomes)} mutants, "
        f"{sum(len(o.exits) for o in outcomes)} commands; "
        f"{sum(len(o.tracebacks) for o in outcomes)} tracebacks in {len(groups)} places; "
        f"{sum(len(o.timeouts) for o in outcomes)} timeouts; "
        f"{sum(len(o.executed) for o in outcomes)} commands ran input text"
    ]
    for (kind, frame), hits in sorted(groups.items(), key=lambda g: -len(g[1])):
        o, verb = hits[0]
        lines.append(f"  {len(hits):4d} x {kind} at {frame}")
        lines.append(
            f"         e.g. `polykrnl {_shown(verb)} {_shown(o.path)}` ({o.mutation} of {o.source})"
        )
    for o in outcomes:
        for verb in o.timeouts:
            lines.append(
                f"  timeout: `polykrnl {_shown(verb)} {_shown(o.path)}` "
                f"({o.mutation} of {o.source})"
            )
        for verb in o.executed:
            lines.append(
                f"  input text ran: `polykrnl {_shown(verb)} {_shown(o.path)}` "
                f"({o.mutation} of {o.source})"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="*", type=Path, help="more directories of .mlir programs")
    ap.add_argument("--mutants", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--limit", type=int, default=10, help="seconds per command")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    files = sorted(p for d in (*CORPORA, *args.dirs) for p in d.glob("*.mlir"))
    start = time.monotonic()

    def progress(done: int) -> None:
        if done % 100 == 0 or done == args.mutants:
            elapsed = time.monotonic() - start
            print(f"{done}/{args.mutants} mutants, {elapsed:.0f} s", file=sys.stderr)

    outcomes = campaign(files, args.mutants, args.seed, args.jobs, args.limit, progress)
    if args.json:
        print(json.dumps([asdict(o) for o in outcomes], indent=1))
    else:
        print(report(outcomes))
    return 1 if any(o.tracebacks or o.timeouts or o.executed for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
