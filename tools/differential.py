"""Differential testing of polykrnl's backends on random well-formed Krnl programs.

Each program is one function of 1-3 loop nests in sequence, sharing the arrays
``A``, ``B``, ``C`` (all ``f32`` or all ``i64``) and an index argument ``%N``.
A nest is a ``krnl.iterate`` of 1-3 loops whose body holds stores and, in an
imperfect nest, an inner ``krnl.iterate`` between them: loops with their own
stores, or a reduction carried by ``iter_args`` / ``krnl.yield`` whose result
a store after it uses. Bounds are integers, ``%N`` or affine maps of the
enclosing induction variables and of ``%N`` (triangular ``j < i + 1``,
``min``/``max`` of several results). Subscripts are affine and kept in bounds
(the arrays are sized from the instances at the chosen value of ``N``).

Each program gets random recipes: Krnl recipe ops in the text (``krnl.block``,
``krnl.permute``, ``krnl.parallel``, ``krnl.unroll``) and/or Schedule primitives
applied with ``force=True`` (a choice refused with a plain ScheduleError is
skipped and counted). Oracles, per program and recipe:

1. legal: ``run_reference`` in the schedule's order gives exactly the arrays of
   the program's order, ``to_numpy(reassociate=False)`` the same bits, and
   ``to_numpy()`` the same within a tolerance (reassociated sums), and with
   ``--numba`` ``to_numba()`` the same bits (scalar loops in the schedule's order,
   krnl.parallel loops on threads);
2. illegal: every witness is real, judged on accesses computed here: the two
   instances exist, touch one element (with the roles of the dependence kind),
   the source runs first in the program's order (enumerated here), and the
   sink first in ``trace()`` (or the parallel loop separates them: same values
   of the loops around it, values computed here from the blocks applied);
3. the verdict: a legal schedule reverses no memory dependence in ``trace()``
   at the chosen ``N`` and no parallel loop carries one;
4. any exception outside the ``pk.PolykrnlError`` hierarchy is a traceback;
   ``UnsupportedError`` from ``to_numpy`` counts as refused.

    python tools/differential.py --seed 0 --programs 200 [--recipes 2] [--numba] [--json]

Exit status 1 when any disagreement or traceback was found.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import polykrnl as pk
from polykrnl.inputs import make_inputs

# tools/ holds scripts, not a package: the program generator is a sibling file.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from differential_programs import (
    ARRAYS,
    Elem,
    Env,
    Inst,
    Loop,
    Prog,
    TextRecipe,
    generate,
    instances,
    iterates,
    krnl_text,
    loop_handles,
    statements,
)

# ------------------------------------------------------------------ recipes


def text_recipe(prog: Prog, rng: random.Random) -> TextRecipe:
    rec = TextRecipe()
    if rng.random() < 0.4:
        return rec
    its = iterates(prog)
    for lp in (lp for ls in its for lp in ls):
        if rng.random() < 0.3:
            rec.blocks[lp.iv] = rng.randint(2, 3)
    for n, ls in enumerate(its):
        hs = loop_handles(ls, rec)
        if len(hs) > 1 and rng.random() < 0.4:
            pos = list(range(len(hs)))
            rng.shuffle(pos)
            for k, h in enumerate(hs):  # a point loop stays inside its tile loop
                if h.endswith("_t") and pos[k] > pos[k + 1]:
                    pos[k], pos[k + 1] = pos[k + 1], pos[k]
            rec.permutes[n] = pos
        fixed = [lp.iv for lp in ls if lp.iv not in rec.blocks and constant(lp)]
        if rng.random() < 0.25:
            rec.parallel.append(rng.choice(hs))
        fixed = [x for x in fixed if x not in rec.parallel]  # unrolled or parallel, not both
        if fixed and rng.random() < 0.15:  # Krnl unrolls only constant trip counts
            rec.unroll.append(rng.choice(fixed))
    return rec


def constant(lp: Loop) -> bool:
    return all(not a.coefs for a in lp.lbs + lp.ubs)


def params(prog: Prog, n: int) -> dict[str, int]:
    """The parameters of the model: N where a bound uses it."""
    used = any("N" in a.coefs for ls in iterates(prog) for lp in ls for a in lp.lbs + lp.ubs)
    return {"N": n} if used else {}


def _coordinate(x: str) -> Callable[[Env], int]:
    return lambda e: e[x]


def _lower_bound(lp: Loop) -> Callable[[Env], int]:
    return lambda e: max(a.at(e) for a in lp.lbs)


class Values:
    """Every loop's value at an instance, in plain Python: tiles start at the loop's
    lower bound and step by the tile size (docs/krnl-semantics.md)."""

    def __init__(self, prog: Prog) -> None:
        self.value: dict[str, Callable[[Env], int]] = {}
        self.lower: dict[str, Callable[[Env], int]] = {}
        self.step: dict[str, int] = {}
        for ls in iterates(prog):
            for lp in ls:
                self.value[lp.iv] = _coordinate(lp.iv)
                self.lower[lp.iv] = _lower_bound(lp)
                self.step[lp.iv] = 1

    def block(self, loop: str, size: int, tile: str, point: str) -> None:
        s, v, lb = self.step[loop] * size, self.value[loop], self.lower[loop]

        def tv(e: Env) -> int:
            return lb(e) + s * ((v(e) - lb(e)) // s)

        self.value[tile], self.lower[tile], self.step[tile] = tv, lb, s
        self.value[point], self.lower[point], self.step[point] = v, tv, self.step[loop]


def apply_text_blocks(values: Values, rec: TextRecipe) -> None:
    for iv, size in rec.blocks.items():
        values.block(iv, size, f"{iv}_t", f"{iv}_p")


@dataclass
class Tally:
    refused_primitives: Counter[str] = field(default_factory=Counter)


def python_steps(
    sched: pk.Schedule, values: Values, rng: random.Random, tally: Tally
) -> pk.Schedule:
    """0-3 random primitives applied with force=True (refused misuse is skipped, counted)."""
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        loops = sched.loop_names()
        if not loops:
            break
        kind = rng.choice(["block", "block", "reorder", "permute", "parallel", "unroll"])
        at = rng.choice(loops)
        try:
            if kind == "block":
                size = rng.randint(2, 3)
                new = sched.block(at, size, force=True)
                (tile,) = set(new.loop_names()) - set(loops)
                values.block(at, size, tile, at)
            elif kind == "parallel":
                new = sched.parallel(at, force=True)
            elif kind == "unroll":
                new = sched.unroll(at, force=True)
            else:
                a = rng.randrange(len(loops))
                sub = loops[a : a + rng.randint(2, 3)]
                if len(sub) < 2:
                    continue
                perm = list(range(len(sub)))
                rng.shuffle(perm)
                if kind == "reorder":
                    new = sched.reorder([sub[k] for k in perm], force=True)
                else:
                    new = sched.permute(sub, perm, force=True)
        except pk.IllegalTransformError as e:
            raise Disagreement("forced primitive refused as illegal", str(e)) from None
        except pk.ScheduleError as e:
            tally.refused_primitives[f"{kind}: {e.message.split(':')[0][:60]}"] += 1
            continue
        sched = new
    return sched


# ------------------------------------------------------------------ oracles


class Disagreement(Exception):
    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(kind)
        self.kind = kind
        self.detail = detail


def ancestors(sched: pk.Schedule) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """loop -> the loops around it (outermost first); statement -> the loops around it."""
    loops: dict[str, list[str]] = {}
    stmts: dict[str, list[str]] = {}

    def go(nodes: list[dict[str, Any]], path: list[str]) -> None:
        for n in nodes:
            if "loop" in n:
                loops[n["loop"]] = path
                go(n["body"], [*path, n["loop"]])
            else:
                stmts[n["stmt"]] = path

    go(sched.loops().to_json()["body"], [])
    return loops, stmts


class Oracle:
    """Instances, accesses and orders of one program, computed here."""

    def __init__(self, prog: Prog) -> None:
        self.prog = prog
        self.stmts = statements(prog)
        self._orders: dict[int, dict[Inst, tuple[tuple[int, ...], Env]]] = {}

    def order(self, n: int) -> dict[Inst, tuple[tuple[int, ...], Env]]:
        if n not in self._orders:
            self._orders[n] = {i: (k, e) for i, k, e in instances(self.prog, n)}
        return self._orders[n]

    @staticmethod
    def inst(name: str, point: dict[str, int]) -> Inst:
        return int(name[1:]), tuple(point.items())

    def check_original_trace(self, sched: pk.Schedule) -> None:
        n = self.prog.n
        mine = list(self.order(n))
        theirs = [self.inst(s, p) for s, p in sched.trace(**params(self.prog, n))]
        if mine != theirs:
            first = next(
                (k for k, (a, b) in enumerate(zip(mine, theirs, strict=False)) if a != b),
                min(len(mine), len(theirs)),
            )
            raise Disagreement(
                "original order differs from trace()",
                f"N={n}, first difference at {first}: "
                f"{mine[first : first + 2]} vs {theirs[first : first + 2]}",
            )

    def witness(self, sched: pk.Schedule, values: Values, v: Any, traces: dict[int, Any]) -> None:
        n = v.params.get("N", self.prog.n)
        order = self.order(n)
        src, snk = self.inst(v.source.stmt, v.source.point), self.inst(v.sink.stmt, v.sink.point)
        if src not in order or snk not in order:
            raise Disagreement("witness instance outside the domain", str(v))
        (ks, es), (kk, ek) = order[src], order[snk]
        rs, ws = self.stmts[src[0]].touched(es)
        rk, wk = self.stmts[snk[0]].touched(ek)
        a = ws if v.kind in ("RAW", "WAW") else rs
        b = wk if v.kind in ("WAR", "WAW") else rk
        if not {e for e in a & b if e[0] == v.array}:
            raise Disagreement("witness touches no common element", str(v))
        if not ks < kk:
            raise Disagreement("witness source does not run first originally", str(v))
        if v.reason == "order":
            if n not in traces:
                traces[n] = {
                    self.inst(s, p): k
                    for k, (s, p) in enumerate(sched.trace(**params(self.prog, n)))
                }
            pos = traces[n]
            if not pos[snk] < pos[src]:
                raise Disagreement("witness sink does not run first in trace()", str(v))
            return
        loops, _ = ancestors(sched)
        if v.loop not in loops or not sched.loop(v.loop).parallel:
            raise Disagreement("parallel witness on a loop that is not parallel", str(v))
        chain = [*loops[v.loop], v.loop]
        va = [values.value[x](es) for x in chain]
        vb = [values.value[x](ek) for x in chain]
        if va[:-1] != vb[:-1] or va[-1] == vb[-1]:
            raise Disagreement(
                "parallel witness not separated by the loop", f"{v}\n{chain}: {va} vs {vb}"
            )

    def verdict(self, sched: pk.Schedule, values: Values, legal: bool) -> None:
        """A legal schedule reverses no memory dependence and no parallel loop carries one."""
        if not legal:
            return
        n = self.prog.n
        pos = {self.inst(s, p): k for k, (s, p) in enumerate(sched.trace(**params(self.prog, n)))}
        loops, around = ancestors(sched)
        par = [x for x in loops if sched.loop(x).parallel]
        last_w: dict[Elem, tuple[int, Inst]] = {}
        last_a: dict[Elem, tuple[int, Inst]] = {}
        seen: dict[tuple[str, Elem, tuple[int, ...]], dict[int, tuple[Inst, bool]]] = {}
        for inst, (_k, env) in self.order(n).items():
            reads, writes = self.stmts[inst[0]].touched(env)
            me = pos[inst]
            for elem, earlier in [(e, last_w) for e in reads] + [(e, last_a) for e in writes]:
                hit = earlier.get(elem)
                if hit is not None and hit[0] > me:
                    raise Disagreement(
                        "legal verdict but trace() reverses a dependence",
                        f"{hit[1]} -> {inst} on {elem}",
                    )
            name = f"S{inst[0]}"
            for x in par:
                if x not in around[name]:
                    continue
                chain = [*loops[x], x]
                key = tuple(values.value[y](env) for y in chain)
                for elem in reads | writes:
                    other = seen.setdefault((x, elem, key[:-1]), {})
                    for val, (o, o_writes) in other.items():
                        if val != key[-1] and (o_writes or elem in writes):
                            raise Disagreement(
                                "legal verdict but a parallel loop carries a dependence",
                                f"loop {x}: {o} -> {inst} on {elem}",
                            )
                    if key[-1] not in other or elem in writes:
                        other[key[-1]] = (inst, elem in writes)
            for elem in reads | writes:
                if elem not in last_a or last_a[elem][0] < me:
                    last_a[elem] = (me, inst)
            for elem in writes:
                if elem not in last_w or last_w[elem][0] < me:
                    last_w[elem] = (me, inst)


def _same(x: Any, y: Any, exact: bool, tol: float = 0.0) -> bool:
    a, b = np.asarray(x), np.asarray(y)
    if a.dtype.kind not in "fc" or exact:
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    tol = max(tol, 64 * float(np.finfo(a.dtype).eps))
    return bool(np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True))


def _sensitivity(fn: pk.Function, args: dict[str, Any], want: dict[str, Any]) -> float:
    """Four times how far the reference's results move when the float inputs move by
    8 eps (relative): the bound for a reassociated sum of the same terms."""
    rng = np.random.default_rng(11)
    moved = copy.deepcopy(args)
    for key, value in moved.items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            eps = float(np.finfo(value.dtype).eps)
            moved[key] = (value * (1 + rng.uniform(-1, 1, value.shape) * 8 * eps)).astype(
                value.dtype
            )
    pk.run_reference(fn, schedule=pk.Schedule.from_function(fn, recipe=False), **moved)
    worst = 0.0
    for key, value in want.items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            worst = max(worst, float(np.nanmax(np.abs(moved[key] - value), initial=0.0)))
    return 4 * worst


def compare_runs(
    fn: pk.Function, sched: pk.Schedule, prog: Prog, seed: int, numba: NumbaLeg | None = None
) -> bool:
    """Oracle 1 on a legal schedule; False when to_numpy refused (UnsupportedError)."""
    args = make_inputs(fn, {"N": prog.n}, seed=seed)
    want = copy.deepcopy(args)
    # The order legality is judged against: the program without its krnl.permute ops
    # (run_reference(fn) alone runs the recipe's order).
    pk.run_reference(fn, schedule=pk.Schedule.from_function(fn, recipe=False), **want)
    got = copy.deepcopy(args)
    pk.run_reference(fn, schedule=sched, **got)
    for a in ARRAYS:
        if not _same(want[a], got[a], True):
            raise Disagreement(
                "run_reference in the schedule's order differs from the original order",
                f"array {a}",
            )
    try:
        kernels = [sched.to_numpy(reassociate=False), sched.to_numpy()]
    except pk.UnsupportedError:
        return False
    if not kernels[0].exact:
        raise Disagreement("to_numpy(reassociate=False) is not exact", kernels[0].source)
    for kernel in kernels:
        got = copy.deepcopy(args)
        kernel(**got)
        tol = 0.0
        if not kernel.exact and not all(_same(want[a], got[a], False) for a in ARRAYS):
            tol = _sensitivity(fn, args, want)
        for a in ARRAYS:
            if not _same(want[a], got[a], kernel.exact, tol):
                what = "to_numpy(reassociate=False)" if kernel is kernels[0] else "to_numpy()"
                raise Disagreement(
                    f"{what} differs from the interpreter",
                    f"array {a}: max |diff| "
                    f"{float(np.max(np.abs(want[a].astype(float) - got[a].astype(float))))}"
                    f"\n{kernel.source}",
                )
    if numba is not None:
        try:
            compiled = sched.to_numba(cache=False)
            got = copy.deepcopy(args)
            compiled(**got)
        except pk.UnsupportedError:
            numba.refused += 1
            return True
        numba.compared += 1
        for a in ARRAYS:
            if not _same(want[a], got[a], True):
                raise Disagreement(
                    "to_numba() differs from the interpreter",
                    f"array {a}: max |diff| "
                    f"{float(np.max(np.abs(want[a].astype(float) - got[a].astype(float))))}"
                    f"\n{compiled.source}",
                )
    return True


@dataclass
class NumbaLeg:
    """The Numba kernels of legal schedules (with --numba): they keep the schedule's
    order, so they must equal the interpreter bit for bit."""

    compared: int = 0
    refused: int = 0  # UnsupportedError (an op Numba cannot run)


# ------------------------------------------------------------------ the campaign


@dataclass
class Finding:
    kind: str
    detail: str
    text: str
    script: str
    n: int
    program: str  # seed:number, to rerun with --only


@dataclass
class Results:
    programs: int = 0
    recipes: int = 0
    legal: int = 0
    illegal: int = 0
    witnesses: int = 0
    refused_recipes: int = 0  # the text recipe refused (ScheduleError)
    refused_numpy: int = 0  # to_numpy raised UnsupportedError on a legal schedule
    tally: Tally = field(default_factory=Tally)
    refusals: Counter[str] = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)
    tracebacks: list[Finding] = field(default_factory=list)
    elapsed: float = 0.0
    numba: NumbaLeg | None = None

    def to_json(self) -> dict[str, Any]:
        groups: dict[str, list[Finding]] = defaultdict(list)
        for f in self.findings:
            groups[f.kind].append(f)
        tb: dict[str, list[Finding]] = defaultdict(list)
        for f in self.tracebacks:
            tb[f.kind].append(f)
        return {
            "programs": self.programs,
            "recipes": self.recipes,
            "legal": self.legal,
            "illegal": self.illegal,
            "witnesses_checked": self.witnesses,
            "refused": {
                "text recipes": self.refused_recipes,
                "to_numpy": self.refused_numpy,
                "primitives": sum(self.tally.refused_primitives.values()),
            },
            "refusal_reasons": dict(self.refusals + self.tally.refused_primitives),
            "numba": asdict(self.numba) if self.numba else None,
            "disagreements": len(self.findings),
            "tracebacks": len(self.tracebacks),
            "elapsed_seconds": round(self.elapsed, 2),
            "by_kind": {k: _group(v) for k, v in groups.items()},
            "tracebacks_by_kind": {k: _group(v) for k, v in tb.items()},
        }


def _group(fs: list[Finding]) -> dict[str, Any]:
    """The count and the smallest reproducer of one kind of finding."""
    f = min(fs, key=lambda f: (len(f.text) + len(f.script), f.program))
    return {
        "count": len(fs),
        "program": f.program,
        "N": f.n,
        "detail": f.detail,
        "krnl": f.text,
        "script": f.script,
    }


def one_recipe(
    prog: Prog, oracle: Oracle, rng: random.Random, res: Results, seed: int, now: list[str]
) -> None:
    """One recipe through the oracles; `now` holds its Krnl text and script (for reports)."""
    rec = text_recipe(prog, rng)
    text = now[0] = krnl_text(prog, rec)
    now[1] = ""
    mod = pk.parse(text)
    try:
        pk.verify(mod)
    except pk.VerifyError as e:
        raise Disagreement("generator: invalid program (a bug in this tool)", e.render()) from None
    fn = mod["f"]
    values = Values(prog)
    apply_text_blocks(values, rec)
    try:
        sched = pk.schedule(fn, force=True)
    except pk.ScheduleError as e:
        res.refused_recipes += 1
        res.refusals[f"text recipe: {e.message.split(':')[0][:60]}"] += 1
        return
    sched = python_steps(sched, values, rng, res.tally)
    now[1] = sched.script()
    report = sched.check()
    res.recipes += 1
    if report.legal:
        res.legal += 1
        oracle.verdict(sched, values, True)
        if not compare_runs(fn, sched, prog, seed, res.numba):
            res.refused_numpy += 1
    else:
        res.illegal += 1
        traces: dict[int, Any] = {}
        for v in report.violations:
            res.witnesses += 1
            oracle.witness(sched, values, v, traces)


def run_program(seed: int, number: int, recipes: int, res: Results) -> None:
    rng = random.Random(f"{seed}:{number}")
    prog = generate(rng)
    oracle = Oracle(prog)
    res.programs += 1
    label = f"{seed}:{number}"
    now = [krnl_text(prog, TextRecipe()), ""]
    try:
        fn = pk.parse(now[0])["f"]
        oracle.check_original_trace(pk.Schedule.from_function(fn, recipe=False))
        for _ in range(recipes):
            one_recipe(prog, oracle, rng, res, number, now)
    except Disagreement as d:
        res.findings.append(Finding(d.kind, d.detail, now[0], now[1], prog.n, label))
    except pk.PolykrnlError as e:
        res.findings.append(
            Finding(f"unexpected {type(e).__name__}", str(e), now[0], now[1], prog.n, label)
        )
    except Exception as e:
        frames = [f for f in traceback.extract_tb(e.__traceback__) if "polykrnl" in f.filename]
        # one group for every line of a generated kernel, one per line of polykrnl's code
        last = frames[-1] if frames else None
        where = (
            "?"
            if last is None
            else "a generated NumPy kernel"
            if last.filename.startswith("<polykrnl kernel")
            else f"{last.filename.split('polykrnl/')[-1]}:{last.lineno}"
        )
        res.tracebacks.append(
            Finding(
                f"{type(e).__name__} at {where}",
                traceback.format_exc(),
                now[0],
                now[1],
                prog.n,
                label,
            )
        )


def campaign(
    seed: int, programs: int, recipes: int = 2, only: int | None = None, numba: bool = False
) -> Results:
    res = Results(numba=NumbaLeg() if numba else None)
    start = time.perf_counter()
    for number in [only] if only is not None else range(programs):
        run_program(seed, number, recipes, res)
    res.elapsed = time.perf_counter() - start
    return res


def report(res: Results) -> str:
    j = res.to_json()
    out = [
        f"programs {j['programs']}, recipes {j['recipes']} (legal {j['legal']}, "
        f"illegal {j['illegal']}, witnesses checked {j['witnesses_checked']})",
        "refused: " + ", ".join(f"{k} {v}" for k, v in j["refused"].items()),
        *(
            [f"Numba kernels compared {j['numba']['compared']}, refused {j['numba']['refused']}"]
            if j["numba"]
            else []
        ),
        f"disagreements {j['disagreements']}, tracebacks {j['tracebacks']}, "
        f"elapsed {j['elapsed_seconds']} s",
    ]
    for title, key in (("disagreement", "by_kind"), ("traceback", "tracebacks_by_kind")):
        for kind, f in j[key].items():
            out += [
                "",
                f"== {title}: {kind} ({f['count']}x); smallest: program {f['program']}, N={f['N']}",
                f["detail"].rstrip(),
                "-- Krnl:",
                f["krnl"].rstrip(),
                "-- primitives:",
                f["script"].rstrip() or "(none)",
            ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--programs", type=int, default=100)
    ap.add_argument("--recipes", type=int, default=2, help="recipes per program")
    ap.add_argument("--only", type=int, help="run program number ONLY of the seed")
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--numba",
        action="store_true",
        help="also compare the Numba kernel of each legal schedule (needs polykrnl[numba])",
    )
    a = ap.parse_args(argv)
    res = campaign(a.seed, a.programs, a.recipes, a.only, numba=a.numba)
    print(json.dumps(res.to_json(), indent=1) if a.json else report(res))
    return 1 if res.findings or res.tracebacks else 0


if __name__ == "__main__":
    sys.exit(main())
