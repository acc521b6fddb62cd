"""Property tests of the legality checks (issue 4): verdicts and witnesses, checked.

Programs (:class:`Prog`) are random Krnl nests written as text: one
``krnl.iterate`` binding 2-3 loops ``i, j, k`` with constant bounds (lower
bound 0..2, 2..6 iterations), and 1-2 ``krnl.store`` statements in its body,
each storing into ``A`` or ``B`` (2-D or 3-D memrefs of ``i64``, sometimes
``f32``) a sum of 1-2 loads of ``A`` / ``B`` and maybe of an induction
variable. Every subscript is ``c``, ``x + c``, ``x + y + c`` or ``2 * x + c``
over the induction variables, written with ``affine.apply`` (``A[i - 1][j +
2]``); offsets run from -2 to 2 where the loop's lower bound allows a negative
one, and the arrays are sized so that every access is in bounds. Some
statements are reductions ``X[f] = X[f] + e``.

Transformations (:class:`Prim`) are 1-4 primitives applied to
``Schedule.from_function(fn, recipe=False)`` with ``force=True``: block (by
1-3) of any loop, reorder or permute of a chain of loops, parallel of any loop
(a choice the primitives refuse with a plain ScheduleError is skipped).

Oracles written here in plain Python, independent of polykrnl's analysis:

* :class:`Model` tracks the loop chain and every loop's value for each point
  through the primitives (tiles start at the lower bound and step by the tile
  size), and gives each statement instance's reads and writes;
* :func:`conflicts` enumerates the original instances in order and finds the
  memory-based RAW / WAR / WAW pairs that a new order reverses, or that a
  parallel loop carries (same values of the enclosing loops, different values
  of the parallel loop).

Properties:

1. legal -> ``run_reference`` in the new order gives exactly the original arrays;
2. illegal -> every witness is real (the two instances touch one element with
   the roles of its kind, the source runs first originally, and the new order
   runs the sink first, or the parallel loop separates them inside one
   iteration of the enclosing loops); and the verdict itself agrees with the
   brute-force pairs: an "order" violation is reported exactly when some pair
   is reversed in ``s.trace()`` (so a legal verdict reverses none), and, when
   none is, a parallel violation on a loop exactly when some pair is carried by
   it (polykrnl's RAW are value-based, the pairs here memory-based: with the
   order kept, a carried memory pair implies a carried direct one); the trace
   itself follows the Model's loop values;
3. a primitive without ``force`` raises ``IllegalTransformError`` exactly when
   its forced result is illegal and the schedule before it was legal (else it
   returns the forced result).

STENCIL / TILE_BOTH (a (1, -1) dependence under rectangular tiling) and
REDUCTION / PARALLEL_K (a reduction loop made parallel) are explicit examples,
checked on every run whatever Hypothesis draws. Each property draws 60 examples,
or FEW in the fast tier (tests/property_tiers.py).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Literal

import numpy as np
from hypothesis import HealthCheck, Phase, event, example, settings
from hypothesis import strategies as st

import polykrnl as pk
from polykrnl.transforms.legality_report import LegalityReport, Violation
from tests.property_tiers import tiered

IVS = ("i", "j", "k")
NAME = "f"
ARRAYS = ("A", "B")

PROPERTY = settings(
    max_examples=60,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
    report_multiple_bugs=False,
    suppress_health_check=[HealthCheck.too_slow],
)
FEW = 5  # examples per property in the fast tier (tests/property_tiers.py)

# ------------------------------------------------------------------ programs


@dataclass(frozen=True)
class Sub:
    """One subscript: sum(coefs[x] * iv_x) + c."""

    coefs: tuple[int, ...]
    c: int

    def at(self, p: tuple[int, ...]) -> int:
        return sum(a * v for a, v in zip(self.coefs, p, strict=True)) + self.c


@dataclass(frozen=True)
class Access:
    array: str
    subs: tuple[Sub, ...]

    def at(self, p: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(s.at(p) for s in self.subs)


@dataclass(frozen=True)
class Stmt:
    """target = reads[0] + reads[1] + ... (+ iv); a reduction adds to target's old value."""

    target: Access
    reads: tuple[Access, ...]
    iv: int | None = None  # add the value of this induction variable
    reduction: bool = False  # reads[0] == target, stored = old + (rest)
    sub: bool = False  # subtract instead of add the last term


@dataclass(frozen=True)
class Prog:
    lbs: tuple[int, ...]
    ubs: tuple[int, ...]
    ranks: tuple[int, ...]  # of A and B
    elem: Literal["i64", "f32"]
    stmts: tuple[Stmt, ...]

    @property
    def ivs(self) -> tuple[str, ...]:
        return IVS[: len(self.lbs)]

    def points(self) -> list[tuple[int, ...]]:
        return list(
            itertools.product(*(range(a, b) for a, b in zip(self.lbs, self.ubs, strict=True)))
        )

    def shape(self, array: str) -> tuple[int, ...]:
        rank = self.ranks[ARRAYS.index(array)]
        size = [1] * rank
        hi = tuple(u - 1 for u in self.ubs)  # coefficients are >= 0: maxima at the top
        for s in self.stmts:
            for a in (s.target, *s.reads):
                if a.array == array:
                    for d, x in enumerate(a.at(hi)):
                        size[d] = max(size[d], x + 1)
        return tuple(size)


@st.composite
def subscripts(draw: st.DrawFn, lbs: tuple[int, ...]) -> Sub:
    depth = len(lbs)
    form = draw(st.sampled_from(["iv", "iv", "iv", "iv", "const", "sum", "double"]))
    coefs = [0] * depth
    if form == "iv":
        coefs[draw(st.integers(0, depth - 1))] = 1
    elif form == "sum":
        for x in draw(st.lists(st.integers(0, depth - 1), min_size=2, max_size=2, unique=True)):
            coefs[x] = 1
    elif form == "double":
        coefs[draw(st.integers(0, depth - 1))] = 2
    low = sum(a * lb for a, lb in zip(coefs, lbs, strict=True))  # the smallest value
    return Sub(tuple(coefs), draw(st.integers(max(-2, -low), 2)))


@st.composite
def accesses(draw: st.DrawFn, lbs: tuple[int, ...], ranks: tuple[int, ...], array: str) -> Access:
    rank = ranks[ARRAYS.index(array)]
    return Access(array, tuple(draw(subscripts(lbs)) for _ in range(rank)))


@st.composite
def nearby(draw: st.DrawFn, a: Access, lbs: tuple[int, ...]) -> Access:
    """`a` with its offsets moved by -2..2 (within the array)."""
    subs = []
    for s in a.subs:
        low = sum(x * lb for x, lb in zip(s.coefs, lbs, strict=True))
        subs.append(Sub(s.coefs, draw(st.integers(max(-2, -low), 2))))
    return Access(a.array, tuple(subs))


@st.composite
def programs(draw: st.DrawFn) -> Prog:
    depth = draw(st.integers(2, 3))
    lbs = tuple(draw(st.integers(0, 2)) for _ in range(depth))
    ubs = tuple(lb + draw(st.integers(2, 6)) for lb in lbs)
    ranks = tuple(draw(st.sampled_from([2, 3])) for _ in ARRAYS)
    arrays = st.sampled_from(ARRAYS[: draw(st.sampled_from([1, 1, 2]))])
    stmts: list[Stmt] = []
    for _ in range(draw(st.integers(1, 2))):
        target = draw(accesses(lbs, ranks, draw(arrays)))
        reduction = draw(st.integers(0, 3)) == 0
        reads = [target] if reduction else []
        n_reads = draw(st.integers(1, 2)) - (1 if reduction else 0)
        for _ in range(n_reads):
            if draw(st.booleans()):  # near the target: a dependence at a small distance
                reads.append(draw(nearby(target, lbs)))
            else:
                reads.append(draw(accesses(lbs, ranks, draw(arrays))))
        iv = draw(st.none() | st.integers(0, depth - 1))
        if reduction and len(reads) == 1 and iv is None:
            iv = 0  # something to add
        stmts.append(Stmt(target, tuple(reads), iv, reduction, draw(st.booleans())))
    elem: Literal["i64", "f32"] = draw(st.sampled_from(["i64", "i64", "i64", "f32"]))
    return Prog(lbs, ubs, ranks, elem, tuple(stmts))


def _affine(sub: Sub, ivs: tuple[str, ...]) -> tuple[str, str]:
    """(the SSA operands, the affine map) of a subscript."""
    used = [x for x, a in enumerate(sub.coefs) if a]
    terms = [f"d{n}" if sub.coefs[x] == 1 else f"d{n} * {sub.coefs[x]}" for n, x in enumerate(used)]
    expr = " + ".join(terms) if terms else ""
    if sub.c or not terms:
        expr = f"{expr} {'-' if sub.c < 0 else '+'} {abs(sub.c)}" if terms else str(sub.c)
    dims = ", ".join(f"d{n}" for n in range(len(used)))
    ops = ", ".join(f"%{ivs[x]}" for x in used)
    return ops, f"affine_map<({dims}) -> ({expr})>"


def krnl_text(prog: Prog) -> str:
    ivs = prog.ivs
    ty = prog.elem
    f = ty == "f32"
    add, sub = ("arith.addf", "arith.subf") if f else ("arith.addi", "arith.subi")
    body: list[str] = []
    counter = itertools.count()

    def fresh(base: str) -> str:
        return f"%{base}{next(counter)}"

    def mt(array: str) -> str:
        return "memref<" + "x".join(map(str, prog.shape(array))) + f"x{ty}>"

    def index(a: Access) -> str:
        names = []
        for s in a.subs:
            ops, amap = _affine(s, ivs)
            v = fresh("x")
            body.append(f"    {v} = affine.apply {amap}({ops})")
            names.append(v)
        return ", ".join(names)

    for s in prog.stmts:
        terms: list[str] = []
        for r in s.reads:
            v = fresh("v")
            body.append(f"    {v} = krnl.load %{r.array}[{index(r)}] : {mt(r.array)}")
            terms.append(v)
        if s.iv is not None:
            n = fresh("n")
            body.append(f"    {n} = arith.index_cast %{ivs[s.iv]} : index to i64")
            if f:
                m = fresh("n")
                body.append(f"    {m} = arith.sitofp {n} : i64 to f32")
                n = m
            terms.append(n)
        # reduction: old + (e1 + e2 ...), so that the stored value is `old op e`
        rest = terms[1:] if s.reduction else terms
        acc = rest[0]
        for k, t in enumerate(rest[1:], 1):
            v = fresh("s")
            op = sub if s.sub and k == len(rest) - 1 else add
            body.append(f"    {v} = {op} {acc}, {t} : {ty}")
            acc = v
        if s.reduction:
            v = fresh("s")
            body.append(f"    {v} = {add} {terms[0]}, {acc} : {ty}")
            acc = v
        body.append(
            f"    krnl.store {acc}, %{s.target.array}[{index(s.target)}] : {mt(s.target.array)}"
        )
    handles = ", ".join(f"%{x}{x}" for x in ivs)
    with_list = ", ".join(
        f"%{x}{x} -> %{x} = {lb} to {ub}" for x, lb, ub in zip(ivs, prog.lbs, prog.ubs, strict=True)
    )
    args = ", ".join(f"%{a}: {mt(a)}" for a in ARRAYS)
    return (
        f"func.func @{NAME}({args}) {{\n"
        f"  {handles} = krnl.define_loops {len(ivs)}\n"
        f"  krnl.iterate({handles}) with ({with_list}) {{\n" + "\n".join(body) + "\n  }\n"
        "  return\n}\n"
    )


@cache
def _function(text: str) -> pk.Function:
    mod = pk.parse(text)
    pk.verify(mod)
    return mod[NAME]


def function(prog: Prog) -> pk.Function:
    return _function(krnl_text(prog))


def original(prog: Prog) -> pk.Schedule:
    return pk.Schedule.from_function(function(prog), recipe=False)


# ------------------------------------------------------------------ primitives


@dataclass(frozen=True)
class Prim:
    """One primitive; loops are picked by position in the current chain.

    block: loop `at` by `size`; reorder / permute: the `size` (>= 2) loops from
    position `at`, `order` ranks them (the new order, or permute's operand order),
    `perm` ranks permute's map positions; parallel: loop `at`.
    """

    kind: Literal["block", "reorder", "permute", "parallel"]
    at: int = 0
    size: int = 2
    order: tuple[int, ...] = (0, 0, 0, 0, 0, 0)
    perm: tuple[int, ...] = (0, 0, 0, 0, 0, 0)


def _ranked(items: list[str], keys: tuple[int, ...]) -> list[str]:
    return [items[r] for r in sorted(range(len(items)), key=lambda x: (keys[x], x))]


keys = st.tuples(*(st.integers(0, 5) for _ in range(6)))
prim_lists = st.lists(
    st.builds(
        Prim,
        kind=st.sampled_from(["block", "reorder", "reorder", "permute", "parallel"]),
        at=st.integers(0, 8),
        size=st.integers(1, 6),
        order=keys,
        perm=keys,
    ),
    min_size=1,
    max_size=4,
).map(tuple)

Fn = Callable[[tuple[int, ...]], int]


def _coordinate(n: int) -> Fn:
    return lambda p: p[n]


def _constant(c: int) -> Fn:
    return lambda _p: c


class Model:
    """The loop chain and every loop's value at each point, in plain Python
    (docs/krnl-semantics.md)."""

    def __init__(self, prog: Prog) -> None:
        self.chain: list[str] = list(prog.ivs)
        self.value: dict[str, Fn] = {}
        self.lower: dict[str, Fn] = {}
        self.step: dict[str, int] = {}
        self.parallel: set[str] = set()
        for n, (x, lb) in enumerate(zip(prog.ivs, prog.lbs, strict=True)):
            self.value[x] = _coordinate(n)
            self.lower[x] = _constant(lb)
            self.step[x] = 1

    def block(self, loop: str, size: int, tile: str) -> None:
        s, v, lb = self.step[loop] * size, self.value[loop], self.lower[loop]

        def tv(p: tuple[int, ...], s: int = s, v: Fn = v, lb: Fn = lb) -> int:
            return lb(p) + s * ((v(p) - lb(p)) // s)

        self.value[tile], self.lower[tile], self.step[tile] = tv, lb, s
        self.lower[loop] = tv
        pos = self.chain.index(loop)
        self.chain[pos : pos + 1] = [tile, loop]

    def reorder(self, old: list[str], new: list[str]) -> None:
        a = self.chain.index(old[0])
        assert self.chain[a : a + len(old)] == old
        self.chain[a : a + len(old)] = new

    def key(self, p: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(self.value[x](p) for x in self.chain)


def step(
    sched: pk.Schedule, model: Model | None, prim: Prim, force: bool
) -> tuple[pk.Schedule, Callable[[Model], None]] | None:
    """`prim` applied to `sched` (None: a choice the primitive refuses as misuse).

    Returns the new schedule and how to update a Model the same way.
    """
    loops = sched.loop_names()
    at = loops[prim.at % len(loops)]
    try:
        if prim.kind == "block":
            size = prim.size % 3 + 1
            new = sched.block(at, size, force=force)
            (tile,) = set(new.loop_names()) - set(loops)
            return new, lambda m: m.block(at, size, tile)
        if prim.kind == "parallel":
            new = sched.parallel(at, force=force)
            return new, lambda m: m.parallel.add(at)
        a = prim.at % (len(loops) - 1)
        sub = loops[a : a + max(2, prim.size)]
        if prim.kind == "reorder":
            order = _ranked(sub, prim.order)
            new = sched.reorder(order, force=force)
        else:
            operands = _ranked(sub, prim.order)
            positions = _ranked([str(n) for n in range(len(sub))], prim.perm)
            krnl_map = [positions.index(str(n)) for n in range(len(sub))]
            new = sched.permute(operands, krnl_map, force=force)
            order = [""] * len(sub)
            for n, x in enumerate(operands):
                order[krnl_map[n]] = x
        return new, lambda m: m.reorder(sub, order)
    except pk.IllegalTransformError:
        raise
    except pk.ScheduleError:
        return None


def transformed(prog: Prog, prims: tuple[Prim, ...]) -> tuple[pk.Schedule, Model]:
    """The forced schedule and its Model (checked to agree on the loop chain)."""
    sched = original(prog)
    model = Model(prog)
    for prim in prims:
        done = step(sched, model, prim, force=True)
        if done is None:
            continue
        sched, update = done
        update(model)
        assert model.chain == sched.loop_names()
    return sched, model


# ------------------------------------------------------------------ explicit examples


def _iv(depth: int, x: int, c: int = 0) -> Sub:
    return Sub(tuple(int(n == x) for n in range(depth)), c)


# A[i][j] = A[i - 1][j + 1] + i: RAW distance (1, -1); tiling i and j by 2 reverses it.
STENCIL = Prog(
    (1, 0),
    (6, 5),
    (2, 2),
    "i64",
    (Stmt(Access("A", (_iv(2, 0), _iv(2, 1))), (Access("A", (_iv(2, 0, -1), _iv(2, 1, 1))),), 0),),
)
TILE_BOTH = (
    Prim("block", at=0, size=1),  # i by 2: i_t, i, j
    Prim("block", at=2, size=1),  # j by 2: i_t, i, j_t, j
    Prim("reorder", at=1, size=2, order=(1, 0, 0, 0, 0, 0)),  # i_t, j_t, i, j
)
# A[i][j] = A[i][j] + B[i][k]: a reduction carried by k; parallel k is refused as such.
REDUCTION = Prog(
    (0, 0, 0),
    (3, 3, 4),
    (2, 2),
    "i64",
    (
        Stmt(
            Access("A", (_iv(3, 0), _iv(3, 1))),
            (Access("A", (_iv(3, 0), _iv(3, 1))), Access("B", (_iv(3, 0), _iv(3, 2)))),
            reduction=True,
        ),
    ),
)
PARALLEL_K = (Prim("parallel", at=2),)


# ------------------------------------------------------------------ brute force

Inst = tuple[int, tuple[int, ...]]  # (statement index, point)


def touched(
    prog: Prog, inst: Inst
) -> tuple[set[tuple[str, tuple[int, ...]]], tuple[str, tuple[int, ...]]]:
    """(elements read, element written) by one statement instance."""
    s = prog.stmts[inst[0]]
    return {(r.array, r.at(inst[1])) for r in s.reads}, (s.target.array, s.target.at(inst[1]))


def original_order(prog: Prog) -> list[Inst]:
    return [(n, p) for p in prog.points() for n in range(len(prog.stmts))]


def positions(prog: Prog, sched: pk.Schedule) -> dict[Inst, int]:
    """Instance -> its position in sched.trace()."""
    out: dict[Inst, int] = {}
    for pos, (name, point) in enumerate(sched.trace()):
        out[(int(name[1:]), tuple(point[x] for x in prog.ivs))] = pos
    return out


@dataclass
class Conflicts:
    reversed: list[tuple[Inst, Inst]]  # dependence pairs the new order runs sink first
    carried: dict[str, tuple[Inst, Inst]]  # parallel loop -> a dependence pair it carries


def conflicts(prog: Prog, model: Model, pos: dict[Inst, int]) -> Conflicts:
    """Memory-based RAW/WAR/WAW pairs reversed by `pos`, and carried by parallel loops."""
    par = [(x, model.chain.index(x)) for x in sorted(model.parallel)]
    # element -> earlier writes / earlier accesses, as (new position, instance), and per
    # parallel loop: (values of the enclosing loops) -> {value of the loop: an instance}
    last_w: dict[tuple[str, tuple[int, ...]], tuple[int, Inst]] = {}
    last_a: dict[tuple[str, tuple[int, ...]], tuple[int, Inst]] = {}
    seen_w: dict[tuple[str, tuple[int, ...], str, tuple[int, ...]], dict[int, Inst]] = {}
    seen_a: dict[tuple[str, tuple[int, ...], str, tuple[int, ...]], dict[int, Inst]] = {}
    out = Conflicts([], {})
    for inst in original_order(prog):
        reads, write = touched(prog, inst)
        me = pos[inst]
        key = model.key(inst[1])
        for elem, earlier in [(e, last_w) for e in reads] + [(write, last_a)]:
            hit = earlier.get(elem)
            if hit is not None and hit[0] > me:
                out.reversed.append((hit[1], inst))
        for x, q in par:
            for elem, earlier_p in [(e, seen_w) for e in reads] + [(write, seen_a)]:
                other = earlier_p.get((*elem, x, key[:q]), {})
                src = next((i for v, i in other.items() if v != key[q]), None)
                if src is not None and x not in out.carried:
                    out.carried[x] = (src, inst)
        # this instance's accesses become "earlier" for the next ones
        for elem in (*reads, write):
            if elem not in last_a or last_a[elem][0] < me:
                last_a[elem] = (me, inst)
            for x, q in par:
                seen_a.setdefault((*elem, x, key[:q]), {}).setdefault(key[q], inst)
        if write not in last_w or last_w[write][0] < me:
            last_w[write] = (me, inst)
        for x, q in par:
            seen_w.setdefault((*write, x, key[:q]), {}).setdefault(key[q], inst)
    return out


def check_witness(
    prog: Prog, sched: pk.Schedule, model: Model, pos: dict[Inst, int], v: Violation
) -> None:
    assert v.array in ARRAYS, str(v)
    assert not v.params, str(v)
    src: Inst = (int(v.source.stmt[1:]), tuple(v.source.point[x] for x in prog.ivs))
    snk: Inst = (int(v.sink.stmt[1:]), tuple(v.sink.point[x] for x in prog.ivs))
    src_r, src_w = touched(prog, src)
    snk_r, snk_w = touched(prog, snk)
    src_set = {src_w} if v.kind in ("RAW", "WAW") else src_r
    snk_set = {snk_w} if v.kind in ("WAR", "WAW") else snk_r
    common = {e for e in src_set & snk_set if e[0] == v.array}
    assert common, f"{v}: the two instances share no element of {v.array} as a {v.kind} pair"
    assert (src[1], src[0]) < (snk[1], snk[0]), f"{v}: the source does not run first originally"
    if v.reason == "order":
        assert pos[snk] < pos[src], f"{v}: the new order does not run the sink first"
        return
    loop = v.loop
    assert loop is not None and loop in model.parallel, str(v)
    assert sched.loop_info[loop].parallel, str(v)
    q = model.chain.index(loop)
    a, b = model.key(src[1]), model.key(snk[1])
    assert a[:q] == b[:q], f"{v}: different iterations of the loops around '{loop}'"
    assert a[q] != b[q], f"{v}: the same iteration of the parallel loop '{loop}'"


def arguments(prog: Prog, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    dtype = np.int64 if prog.elem == "i64" else np.float32
    return {a: rng.integers(-9, 10, prog.shape(a)).astype(dtype) for a in ARRAYS}


def run(
    prog: Prog, args: dict[str, np.ndarray], sched: pk.Schedule | None
) -> dict[str, np.ndarray]:
    copies = {a: x.copy() for a, x in args.items()}
    pk.run_reference(function(prog), schedule=sched, **copies)
    return copies


def label(report: LegalityReport) -> None:
    reasons = sorted({v.reason for v in report.violations})
    event("legal" if report.legal else "illegal: " + ", ".join(reasons))


# ------------------------------------------------------------------ 1. legal -> same results


@tiered(PROPERTY, FEW, prog=programs(), prims=prim_lists, seed=st.integers(0, 2**16))
@example(prog=STENCIL, prims=TILE_BOTH[:2], seed=0)
@example(prog=REDUCTION, prims=(Prim("reorder", at=0, size=3, order=(2, 1, 0, 0, 0, 0)),), seed=0)
def test_legal_schedules_compute_the_same_arrays(
    prog: Prog, prims: tuple[Prim, ...], seed: int
) -> None:
    sched, _ = transformed(prog, prims)
    report = sched.check()
    label(report)
    if not report.legal:
        return
    args = arguments(prog, seed)
    want = run(prog, args, None)
    got = run(prog, args, sched)
    for a in ARRAYS:
        np.testing.assert_array_equal(got[a], want[a], err_msg=f"{a}\n{report}")


# ------------------------------------------------------------------ 2. witnesses and verdicts


@tiered(PROPERTY, FEW, prog=programs(), prims=prim_lists)
@example(prog=STENCIL, prims=TILE_BOTH)
@example(prog=REDUCTION, prims=PARALLEL_K)
def test_witnesses_are_real_and_the_verdict_agrees_with_brute_force(
    prog: Prog, prims: tuple[Prim, ...]
) -> None:
    sched, model = transformed(prog, prims)
    report = sched.check()
    label(report)
    pos = positions(prog, sched)
    # The trace is the order of the model's loop values (statements in textual order).
    assert sorted(pos, key=lambda i: (model.key(i[1]), i[0])) == sorted(pos, key=pos.__getitem__)
    for v in report.violations:
        check_witness(prog, sched, model, pos, v)
    found = conflicts(prog, model, pos)
    order = [v for v in report.violations if v.reason == "order"]
    assert bool(order) == bool(found.reversed), f"reversed pairs {found.reversed[:3]}\n{report}"
    if not order:
        flagged = {v.loop for v in report.violations if v.reason != "order"}
        assert flagged == set(found.carried), f"carried {found.carried}\n{report}"


# ------------------------------------------------------------------ 3. refusal without force


@tiered(PROPERTY, FEW, prog=programs(), prims=prim_lists)
@example(prog=STENCIL, prims=TILE_BOTH)
@example(prog=REDUCTION, prims=PARALLEL_K)
def test_primitives_refuse_exactly_what_makes_a_legal_schedule_illegal(
    prog: Prog, prims: tuple[Prim, ...]
) -> None:
    sched = original(prog)
    for prim in prims:
        done = step(sched, None, prim, force=True)
        if done is None:
            continue
        forced = done[0]
        before, after = sched.check().legal, forced.check().legal
        should_refuse = before and not after
        event(f"legal before: {before}, after: {after}")
        try:
            unforced = step(sched, None, prim, force=False)
        except pk.IllegalTransformError as e:
            assert should_refuse, f"refused {prim} (legal before: {before}, after: {after}): {e}"
        else:
            assert not should_refuse, f"{prim} was not refused\n{forced.check()}"
            assert unforced is not None
            assert str(unforced[0].loops()) == str(forced.loops())
            assert unforced[0].trace() == forced.trace()
        sched = forced
