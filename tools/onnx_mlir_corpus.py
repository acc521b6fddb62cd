"""How polykrnl handles what onnx-mlir writes: counts over an onnx-mlir checkout.

    ONNX_MLIR_ROOT=~/onnx-mlir python tools/onnx_mlir_corpus.py [--details] [--json]

Two corpora, read from the checkout (nothing of it is copied anywhere):

- **lit inputs**: the cases of test/mlir/krnl/*.mlir and
  test/mlir/conversion/krnl_to_affine/*.mlir, split at `// -----` (cases with
  no op at all, such as a file's trailing comments, are left out). Each goes
  through `print` (and the printed text must print the same again), `verify`,
  `check`, `emit numpy`, and `run --verify` of every function.
- **real output**: the functions onnx-mlir's `--convert-onnx-to-krnl` writes, as
  the CHECK lines of test/mlir/conversion/onnx_to_krnl/**/*.mlir show them.
  FileCheck variables become SSA names (`[[X:%.+]]` defines %X, `[[X]]` uses
  it), `{{.}}` the brackets it stands for, `{{.*}}` nothing. A function whose
  text cannot be rebuilt (a value matched by a pattern, a use of a value the
  CHECK lines never define, unbalanced braces) is counted apart, as not
  reconstructable, not as a polykrnl failure. Each function goes through
  `verify`, `emit numpy` and `run --verify`.

Every command runs in a worker process with a time limit; an exception that
escapes the CLI is a traceback and is counted (the target is none).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

# tools/ holds scripts, not a package: the shared helper is a sibling file.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_calls import call

LIT_DIRS = ("test/mlir/krnl", "test/mlir/conversion/krnl_to_affine")
REAL_DIR = "test/mlir/conversion/onnx_to_krnl"
SPLIT = re.compile(r"^// -----\s*$", re.M)


@dataclass
class Case:
    corpus: str  # "lit" or "real"
    name: str  # file (relative to the checkout) and case or function
    text: str | None  # None: not reconstructable
    why: str = ""  # why not reconstructable


@dataclass
class Result:
    corpus: str
    name: str
    reconstructable: bool
    ok: dict[str, bool] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    tracebacks: list[str] = field(default_factory=list)
    timeouts: list[str] = field(default_factory=list)


# ------------------------------------------------------------------ lit inputs


def lit_cases(root: Path) -> Iterator[Case]:
    for d in LIT_DIRS:
        for f in sorted((root / d).glob("*.mlir")):
            for n, part in enumerate(SPLIT.split(f.read_text())):
                code = [
                    x for x in part.splitlines() if x.strip() and not x.strip().startswith("//")
                ]
                if code:
                    yield Case("lit", f"{d}/{f.name}#{n}", part)


# ------------------------------------------------------------------ CHECK lines

_CHECK = re.compile(r"^\s*//\s*CHECK(-DAG|-NEXT|-SAME|-LABEL|-NOT|-EMPTY)?:(.*)$")
_DEF = re.compile(r"\[\[(\w+):([^\]]*)\]\]")
_USE = re.compile(r"\[\[(\w+)\]\]")
_VALUE = re.compile(r"%([\w$.-]+)")
_RESULTS = re.compile(r"(?:^|[\s(,])((?:%[\w$.-]+(?::\d+)?\s*,\s*)*%[\w$.-]+(?::\d+)?)\s*=", re.M)
_BOUND = re.compile(r"(?:->|for|parallel)\s*%([\w$.-]+)\s*=")
_BLOCK_ARGS = re.compile(r"\^\w+\(([^)]*)\)")
_MAP_DEF = re.compile(r"\s*\[\[(\w+):#[^\]]*\]\]\s*=\s*(affine_map<.*>|affine_set<.*>)\s*$")
_SUFFIXED = re.compile(r"\[\[(\w+?)_\]\]_(\d+)")
_VALUE_DEF = re.compile(r"%([\w$.-]+)(?::\d+)?\s*(?:,\s*%[\w$.-]+\s*)*=")


def _brackets(line: str) -> str:
    """{{.}} stands for `[` or `]` (FileCheck cannot write `[[`): open, or close an open one."""
    out: list[str] = []
    opened = 0
    rest = line
    while (at := rest.find("{{.}}")) >= 0:
        head = rest[:at]
        opened -= min(opened, head.count("]") - head.count("["))
        if opened > 0:
            out.append(head + "]")
            opened -= 1
        else:
            out.append(head + "[")
            opened += 1
        rest = rest[at + 5 :]
    return "".join(out) + rest


def _rebuild(lines: Sequence[tuple[str, str]], maps: dict[str, str]) -> tuple[str | None, str]:
    """MLIR text from one function's CHECK lines, or (None, why not)."""
    text: list[str] = []
    for kind, body in lines:
        if kind == "-NOT":
            continue
        if kind == "-SAME" and text:
            text[-1] += body
        else:
            text.append(body)
    out: list[str] = []
    names = itertools.count()
    for line in text:
        line = line.replace("{{\\[}}", "[").replace("{{\\]}}", "]")
        line = line.replace("{{[0-9]+}}", "0")
        line = _brackets(line)
        # {{.*}} hides an alloc's attributes (dropped) or a global's name (made up).
        line = re.sub(r"\)\s*\{\{\.\*\}\}\s*:", ") :", line)
        line = re.sub(r"name = \{\{\.\*\}\}", lambda _: f'name = "pk_global_{next(names)}"', line)
        if "{{" in line:
            return None, f"a pattern stands for text: {line.strip()[:80]}"
        # The generator of those CHECK lines wrote %alloc_2 as [[RES_]]_2 when %alloc
        # was [[RES_]]: the value it defined as [[RES_2_]].
        line = _SUFFIXED.sub(lambda m: f"%{m[1]}_{m[2]}_", line)
        line = _DEF.sub(lambda m: ("#" if m[2].startswith("#") else "%") + m[1], line)
        line = _USE.sub(lambda m: ("#" if m[1] in maps else "%") + m[1], line)
        if "[[" in line:
            return None, f"a FileCheck variable is left: {line.strip()[:80]}"
        out.append(line.strip())
    body = "\n".join(out)
    depth = body.count("{") - body.count("}")
    if depth < 0:
        return None, "unbalanced braces"
    body += "\n}" * depth
    defined = {m[1] for m in re.finditer(r"%([\w$.-]+)", body.split("{", 1)[0])}
    for m in re.finditer(
        r"(?:^|[\s(,])((?:%[\w$.-]+(?::\d+)?\s*,\s*)*%[\w$.-]+(?::\d+)?)\s*=", body, re.M
    ):
        defined |= {x.split(":")[0] for x in re.findall(r"%([\w$.-]+(?::\d+)?)", m[1])}
    defined |= {m[1] for m in re.finditer(r"->\s*%([\w$.-]+)\s*=", body)}  # iterate IVs
    defined |= {m[1] for m in re.finditer(r"%([\w$.-]+)\s*=\s*%", body)}  # iter_args
    defined |= {
        m[1]
        for m in re.finditer(r"\^\w+\(([^)]*)\)", body)
        for m in re.finditer(r"%([\w$.-]+)", m[1])
    }
    for m in re.finditer(r"(?:for|parallel)\s+%([\w$.-]+)\s*=", body):
        defined.add(m[1])
    used = set(_VALUE.findall(body))
    missing = sorted(u for u in used - defined if not u[0].isdigit() or u not in defined)
    missing = [u for u in missing if u.split("#")[0] not in defined]
    if missing:
        return None, f"uses values the CHECK lines never define: {', '.join(missing[:4])}"
    if body.count("\n") < 2:
        return None, "the CHECK lines hold no body"
    head = "".join(f"#{name} = {value}\n" for name, value in maps.items())
    return head + body + "\n", ""


def real_cases(root: Path) -> Iterator[Case]:
    for f in sorted((root / REAL_DIR).rglob("*.mlir")):
        rel = f"{REAL_DIR}/{f.relative_to(root / REAL_DIR)}"
        for part in SPLIT.split(f.read_text()):
            maps: dict[str, str] = {}
            current: list[tuple[str, str]] | None = None
            name = ""
            functions: list[tuple[str, list[tuple[str, str]]]] = []
            for raw in part.splitlines():
                m = _CHECK.match(raw)
                if m is None:
                    continue
                kind, body = m[1] or "", m[2]
                md = re.match(
                    r"\s*\[\[(\w+):#[^\]]*\]\]\s*=\s*(affine_map<.*>|affine_set<.*>)\s*$", body
                )
                if md is not None and current is None:
                    maps[md[1]] = md[2]
                    continue
                if kind == "-LABEL":
                    if "func" not in body:
                        current = None
                        continue
                    found = re.search(r"@([\w$.-]+)", body)
                    name = found[1] if found else f"f{len(functions)}"
                    current = []
                    functions.append((name, current))
                    kind = ""
                    # Older tests label `func @f(...)`: the op is func.func.
                    body = re.sub(r"^(\s*)func\s+(private\s+)?@", r"\1func.func \2@", body)
                if current is not None:
                    current.append((kind, body))
            for fname, lines in functions:
                text, why = _rebuild(lines, maps)
                yield Case("real", f"{rel}:@{fname}", text, why)


# ------------------------------------------------------------------ running


def _functions(path: str) -> list[str]:
    from polykrnl.reader.parser import load

    try:
        return [f.name for f in load(path).functions if f.op.body.blocks]
    except Exception:
        return []


def run_case(case: Case, tmp: str, limit: int) -> Result:
    res = Result(case.corpus, case.name, case.text is not None)
    if case.text is None:
        res.errors["reconstruct"] = case.why
        return res
    path = os.path.join(tmp, re.sub(r"[^\w.-]", "_", case.name) + ".mlir")
    Path(path).write_text(case.text)

    def one(verb: str, argv: list[str]) -> bool:
        status, first, escaped = call(argv, limit)
        if status is None:
            res.timeouts.append(verb)
            res.errors[verb] = "timeout"
            return False
        if escaped is not None:
            res.tracebacks.append(f"{verb}: {escaped[0]} at {escaped[1]}")
            res.errors[verb] = f"TRACEBACK {escaped[0]}"
            return False
        # `check` gives a verdict by its exit code: 1 (illegal, or an array out of bounds
        # for every size) and 4 (not proven) are answers, not failures.
        answered = status == 0 or (verb == "check" and status in (1, 4))
        if not answered:
            res.errors[verb] = first.split(": ", 2)[-1] if first.startswith("error:") else first
        return answered

    verbs = (
        ["verify", "emit numpy"]
        if case.corpus == "real"
        else ["print", "verify", "check", "emit numpy"]
    )
    for verb in verbs:
        res.ok[verb] = one(verb, [*verb.split(), path])
    if case.corpus == "lit" and res.ok["print"]:
        res.ok["print"] = _round_trip(path)
        if not res.ok["print"]:
            res.errors["print"] = "printed text prints differently"
    fns = _functions(path)
    res.ok["run --verify"] = bool(fns) and all(
        one("run --verify", ["run", "--verify", "--func", fn, path]) for fn in fns
    )
    return res


def _round_trip(path: str) -> bool:
    from polykrnl.reader.parser import load, parse

    try:
        first = load(path).print()
        return parse(first, path).print() == first
    except Exception:
        return False


def measure(root: Path, jobs: int, limit: int) -> list[Result]:
    cases = [*lit_cases(root), *real_cases(root)]
    with (
        tempfile.TemporaryDirectory(prefix="polykrnl-onnx-mlir-") as tmp,
        ProcessPoolExecutor(max_workers=jobs) as pool,
    ):
        return list(pool.map(run_case, cases, [tmp] * len(cases), [limit] * len(cases)))


def table(results: Sequence[Result]) -> str:
    columns = ["print", "verify", "check", "emit numpy", "run --verify"]
    lines = [
        "| corpus | cases | reconstructable | "
        + " | ".join(columns)
        + " | tracebacks | timeouts |",
        "|---" * (len(columns) + 5) + "|",
    ]
    for corpus in ("lit", "real"):
        rs = [r for r in results if r.corpus == corpus]
        ok = [r for r in rs if r.reconstructable]
        cells = [_count(ok, verb) for verb in columns]
        lines.append(
            f"| {corpus} | {len(rs)} | {len(ok)} | " + " | ".join(cells) + " | "
            f"{sum(len(r.tracebacks) for r in rs)} | {sum(len(r.timeouts) for r in rs)} |"
        )
    return "\n".join(lines)


def _count(results: Sequence[Result], verb: str) -> str:
    if not any(verb in r.ok for r in results):
        return "-"
    n = sum(r.ok.get(verb, False) for r in results)
    return f"{n} ({100 * n / max(1, len(results)):.0f}%)"


_NUMBERS = re.compile(r"%[\w#.$-]+|\d+")


def details(results: Sequence[Result], top: int = 25) -> str:
    out: list[str] = []
    for corpus in ("lit", "real"):
        groups: Counter[str] = Counter()
        example: dict[str, str] = {}
        for r in results:
            if r.corpus != corpus:
                continue
            for verb, msg in r.errors.items():
                key = f"{verb}: {_NUMBERS.sub('_', msg)[:110]}"
                groups[key] += 1
                example.setdefault(key, r.name)
        out.append(f"\n{corpus}: the most frequent failures (verb: message, count, an example)")
        for key, n in groups.most_common(top):
            out.append(f"  {n:4d}  {key}\n        e.g. {example[key]}")
        for r in results:
            for tb in r.tracebacks if r.corpus == corpus else ():
                out.append(f"  TRACEBACK {r.name}: {tb}")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=os.environ.get("ONNX_MLIR_ROOT"))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--limit", type=int, default=20, help="seconds per command")
    ap.add_argument("--details", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--dump", type=Path, help="write the reconstructed cases to this directory")
    args = ap.parse_args(argv)
    if args.root is None or not (Path(args.root) / LIT_DIRS[0]).is_dir():
        print("error: give an onnx-mlir checkout with --root or ONNX_MLIR_ROOT", file=sys.stderr)
        return 2
    root = Path(args.root)
    if args.dump is not None:
        args.dump.mkdir(parents=True, exist_ok=True)
        for c in [*lit_cases(root), *real_cases(root)]:
            if c.text is not None:
                (args.dump / (re.sub(r"[^\w.-]", "_", c.name) + ".mlir")).write_text(c.text)
    results = measure(root, args.jobs, args.limit)
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=1))
        return 0
    print(table(results))
    if args.details:
        print(details(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
