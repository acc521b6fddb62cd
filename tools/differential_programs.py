"""Random well-formed Krnl programs for tools/differential.py, and what they do.

A :class:`Prog` is a function of 1-3 loop nests in sequence over the arrays
``A``, ``B``, ``C`` and an index argument ``%N``; :func:`generate` draws one,
:func:`krnl_text` writes it (with a :class:`TextRecipe`: Krnl recipe ops), and
:func:`statements` / :func:`instances` give polykrnl's statements (a store, a
reduction's init, its yield) and every instance in the program's order with
the elements it reads and writes, computed here in plain Python.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

ARRAYS = ("A", "B", "C")
IV_GROUPS = (("i", "j", "k"), ("p", "q", "r"), ("u", "v", "w"))
Env = dict[str, int]
Elem = tuple[str, tuple[int, ...]]

# ------------------------------------------------------------------ programs


@dataclass
class Aff:
    """sum(coef * var) + c over induction variables and "N"."""

    coefs: dict[str, int]
    c: int = 0

    def at(self, env: Env) -> int:
        return sum(a * env[x] for x, a in self.coefs.items()) + self.c


@dataclass
class Loop:
    iv: str
    lbs: list[Aff]  # the lower bound is their max
    ubs: list[Aff]  # the upper bound is their min

    def range(self, env: Env) -> range:
        return range(max(a.at(env) for a in self.lbs), min(a.at(env) for a in self.ubs))


@dataclass
class Access:
    array: str
    subs: list[Aff]

    def at(self, env: Env) -> Elem:
        return self.array, tuple(s.at(env) for s in self.subs)


@dataclass
class Store:
    """target = terms combined by add (the last one maybe subtracted)."""

    target: Access
    reads: list[Access]
    iv: str | None = None  # add this induction variable's value
    acc: int | None = None  # add the result of the reduction of this number
    sub: bool = False


@dataclass
class Reduce:
    """An inner iterate carrying acc<n> = 0 + sum of its loads (iter_args, krnl.yield)."""

    n: int
    loops: list[Loop]
    reads: list[Access]


@dataclass
class Nest:
    loops: list[Loop]
    body: list[Store | Reduce | Nest]


@dataclass
class Prog:
    elem: str  # "f32" or "i64"
    nests: list[Nest]
    n: int  # the value of N the program runs with
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)


# A statement of polykrnl's model, in program order: a store, a reduction's init or its yield.
@dataclass
class Stmt:
    kind: str  # "store", "init", "yield"
    item: Store | Reduce
    scope: tuple[str, ...]  # induction variables around it
    outer: tuple[str, ...] = ()  # for init / yield: the ivs around the reduction

    def touched(self, env: Env) -> tuple[set[Elem], set[Elem]]:
        """(elements read, elements written); a reduction's value is acc<n>[outer ivs]."""
        it = self.item
        if isinstance(it, Reduce):
            acc = (f"acc{it.n}", tuple(env[x] for x in self.outer))
            if self.kind == "init":
                return set(), {acc}
            return {acc, *(r.at(env) for r in it.reads)}, {acc}
        reads = {r.at(env) for r in it.reads}
        if it.acc is not None:
            reads.add((f"acc{it.acc}", tuple(env[x] for x in self.scope)))
        return reads, {it.target.at(env)}


def statements(prog: Prog) -> list[Stmt]:
    out: list[Stmt] = []

    def go(items: list[Store | Reduce | Nest], scope: tuple[str, ...]) -> None:
        for it in items:
            if isinstance(it, Nest):
                go(it.body, scope + tuple(lp.iv for lp in it.loops))
            elif isinstance(it, Reduce):
                out.append(Stmt("init", it, scope, scope))
                out.append(Stmt("yield", it, scope + tuple(lp.iv for lp in it.loops), scope))
            else:
                out.append(Stmt("store", it, scope))

    go(list(prog.nests), ())
    return out


Inst = tuple[int, tuple[tuple[str, int], ...]]  # statement number, its point


def instances(prog: Prog, n: int) -> Iterator[tuple[Inst, tuple[int, ...], Env]]:
    """Every statement instance in the program's order: (instance, order key, env)."""
    counter = itertools.count()
    numbers: dict[int, int] = {}  # id(item) -> first statement number
    for s in statements(prog):
        numbers.setdefault(id(s.item), next(counter))

    def loops(
        ls: list[Loop], env: Env, key: tuple[int, ...], inner: Callable[..., Iterator[Any]]
    ) -> Iterator[Any]:
        if not ls:
            yield from inner(env, key)
            return
        for v in ls[0].range(env):
            yield from loops(ls[1:], {**env, ls[0].iv: v}, (*key, v), inner)

    def body(items: list[Store | Reduce | Nest], env: Env, key: tuple[int, ...]) -> Iterator[Any]:
        for pos, it in enumerate(items):
            k = (*key, pos)
            if isinstance(it, Nest):
                yield from loops(it.loops, env, k, lambda e, kk, it=it: body(it.body, e, kk))
            elif isinstance(it, Reduce):
                first = numbers[id(it)]
                yield (first, point(env)), (*k, 0), env
                yield from loops(
                    it.loops,
                    env,
                    (*k, 1),
                    lambda e, kk, first=first: iter([((first + 1, point(e)), kk, e)]),
                )
            else:
                yield (numbers[id(it)], point(env)), k, env

    def point(env: Env) -> tuple[tuple[str, int], ...]:
        return tuple((x, v) for x, v in env.items() if x != "N")

    yield from body(list(prog.nests), {"N": n}, ())


# ------------------------------------------------------------------ generation


class Gen:
    def __init__(self, rng: random.Random) -> None:
        self.r = rng
        self.ranks = {a: rng.choice([1, 2, 2, 3]) for a in ARRAYS}
        self.n_red = 0

    def sub(self, scope: tuple[str, ...]) -> Aff:
        r = self.r
        form = r.choice(["iv", "iv", "iv", "iv", "const", "sum", "double"])
        if not scope or form == "const":
            return Aff({}, r.randint(0, 3))
        if form == "sum" and len(scope) >= 2:
            return Aff(dict.fromkeys(r.sample(scope, 2), 1), r.randint(-1, 2))
        return Aff({r.choice(scope): 2 if form == "double" else 1}, r.randint(-2, 2))

    def access(self, scope: tuple[str, ...], near: Access | None = None) -> Access:
        if near is not None and self.r.random() < 0.5:  # a dependence at a small distance
            return Access(
                near.array, [Aff(dict(s.coefs), s.c + self.r.randint(-1, 1)) for s in near.subs]
            )
        a = self.r.choice(ARRAYS)
        return Access(a, [self.sub(scope) for _ in range(self.ranks[a])])

    def bound(self, outer: tuple[str, ...], upper: bool) -> list[Aff]:
        r = self.r
        forms = ["const", "const", "N"] + (["iv", "iv", "ivN"] if outer else [])
        form = r.choice(forms)
        if form == "const":
            return [Aff({}, r.randint(4, 7) if upper else r.randint(0, 2))]
        if form == "N":
            if upper:
                return r.choice([[Aff({"N": 1})], [Aff({}, r.randint(3, 6)), Aff({"N": 1})]])
            return [Aff({"N": 1}, -r.randint(4, 6)), Aff({}, r.randint(0, 1))]
        x = r.choice(outer)
        if form == "iv":  # triangular
            return [Aff({x: 1}, r.randint(1, 2))] if upper else [Aff({x: 1}, -r.randint(0, 1))]
        if upper:
            return [Aff({x: 1}, r.randint(1, 3)), Aff({"N": 1})]
        return [Aff({x: 1}, -2), Aff({}, 0)]

    def loops(self, ivs: list[str], outer: tuple[str, ...]) -> list[Loop]:
        return [Loop(x, self.bound(outer, False), self.bound(outer, True)) for x in ivs]

    def store(self, scope: tuple[str, ...], acc: int | None = None) -> Store:
        r = self.r
        target = self.access(scope)
        reads = [target] if r.random() < 0.3 else []
        for _ in range(r.randint(0 if acc is not None else 1, 2) - len(reads)):
            reads.append(self.access(scope, target))
        iv = (
            r.choice(scope)
            if scope and (r.random() < 0.3 or not (reads or acc is not None))
            else None
        )
        if not reads and acc is None and iv is None:
            reads.append(self.access(scope, target))
        return Store(target, reads, iv, acc, r.random() < 0.3)

    def nest(self, group: tuple[str, ...], outer: tuple[str, ...]) -> Nest:
        r = self.r
        if r.random() < 0.4:  # perfect: one iterate of 1-3 loops
            ivs = list(group[: r.randint(1 if outer else 2, 3)])
            scope = outer + tuple(ivs)
            return Nest(self.loops(ivs, outer), [self.store(scope) for _ in range(r.randint(1, 2))])
        ivs = list(group[: r.randint(1, 2)])
        scope = outer + tuple(ivs)
        rest = group[len(ivs) :]
        inner_ivs = list(rest[: r.randint(1, len(rest))])
        before = [self.store(scope) for _ in range(r.randint(0, 1))]
        if r.random() < 0.5:
            n = self.n_red
            self.n_red += 1
            inner_scope = scope + tuple(inner_ivs)
            red = Reduce(
                n,
                self.loops(inner_ivs, scope),
                [self.access(inner_scope) for _ in range(r.randint(1, 2))],
            )
            return Nest(self.loops(ivs, outer), [*before, red, self.store(scope, acc=n)])
        inner = Nest(
            self.loops(inner_ivs, scope),
            [self.store(scope + tuple(inner_ivs)) for _ in range(r.randint(1, 2))],
        )
        after = [self.store(scope) for _ in range(r.randint(0 if before else 1, 1))]
        return Nest(self.loops(ivs, outer), [*before, inner, *after])


def generate(rng: random.Random) -> Prog:
    g = Gen(rng)
    nests = [g.nest(IV_GROUPS[n], ()) for n in range(rng.choice([1, 1, 2, 2, 3]))]
    prog = Prog(rng.choice(["f32", "i64"]), nests, rng.randint(2, 8))
    # Keep every subscript in bounds at N: shift it up where it goes negative, then
    # size the arrays to the largest element touched.
    accesses: list[tuple[Access, Stmt]] = []
    stmts = statements(prog)
    for s in stmts:
        it = s.item
        if isinstance(it, Store):
            accesses += [(a, s) for a in [it.target, *it.reads]]
        elif s.kind == "yield":
            accesses += [(a, s) for a in it.reads]
    subs = {id(x): x for a, _ in accesses for x in a.subs}
    lows: dict[int, int] = {}
    highs: dict[str, list[int]] = {a: [1] * g.ranks[a] for a in ARRAYS}
    for (sn, _), _k, env in instances(prog, prog.n):
        for a, s in accesses:
            if s is stmts[sn]:
                for x in a.subs:
                    lows[id(x)] = min(lows.get(id(x), 0), x.at(env))
    for key, x in subs.items():
        x.c -= lows.get(key, 0)
    for (sn, _), _k, env in instances(prog, prog.n):
        for a, s in accesses:
            if s is stmts[sn]:
                for d, v in enumerate(a.at(env)[1]):
                    highs[a.array][d] = max(highs[a.array][d], v + 1)
    prog.shapes = {a: tuple(h) for a, h in highs.items()}
    return prog


# ------------------------------------------------------------------ Krnl text


@dataclass
class TextRecipe:
    blocks: dict[str, int] = field(default_factory=dict)  # iv -> tile size
    permutes: dict[int, list[int]] = field(default_factory=dict)  # iterate number -> map
    parallel: list[str] = field(default_factory=list)  # loop names
    unroll: list[str] = field(default_factory=list)


def loop_handles(loops: list[Loop], recipe: TextRecipe) -> list[str]:
    """The loop names of one iterate's loops after its blocks, outermost first."""
    out: list[str] = []
    for lp in loops:
        out += [f"{lp.iv}_t", f"{lp.iv}_p"] if lp.iv in recipe.blocks else [lp.iv]
    return out


def iterates(prog: Prog) -> list[list[Loop]]:
    out: list[list[Loop]] = []

    def go(items: list[Store | Reduce | Nest]) -> None:
        for it in items:
            if isinstance(it, Nest):
                out.append(it.loops)
                go(it.body)
            elif isinstance(it, Reduce):
                out.append(it.loops)

    go(list(prog.nests))
    return out


def krnl_text(prog: Prog, recipe: TextRecipe) -> str:
    ty = prog.elem
    f = ty == "f32"
    add, sub = ("arith.addf", "arith.subf") if f else ("arith.addi", "arith.subi")
    lines: list[str] = []
    fresh = itertools.count()
    loop_lists = iterates(prog)
    order: dict[int, list[str]] = {}  # id(loops) -> handles in the iterate's first list

    def mt(a: str) -> str:
        return "memref<" + "x".join(map(str, prog.shapes[a])) + f"x{ty}>"

    def amap(affs: list[Aff]) -> tuple[str, str]:
        """(the map, its operands) of affine expressions."""
        dims = sorted({x for a in affs for x in a.coefs if x != "N"})
        syms = ["N"] if any("N" in a.coefs for a in affs) else []
        names = {x: f"d{n}" for n, x in enumerate(dims)} | {"N": "s0"}

        def expr(a: Aff) -> str:
            terms = [names[x] if c == 1 else f"{names[x]} * {c}" for x, c in a.coefs.items()]
            if not terms:
                return str(a.c)
            s = " + ".join(terms)
            return s + (f" + {a.c}" if a.c > 0 else f" - {-a.c}" if a.c < 0 else "")

        dim_s = ", ".join(names[x] for x in dims)
        sym_s = f"[{', '.join(names[x] for x in syms)}]" if syms else ""
        ops = f"({', '.join('%' + x for x in dims)})" + (
            f"[{', '.join('%' + x for x in syms)}]" if syms else ""
        )
        return f"affine_map<({dim_s}){sym_s} -> ({', '.join(expr(a) for a in affs)})>", ops

    def bound(affs: list[Aff], upper: bool) -> str:
        if len(affs) == 1 and not affs[0].coefs:
            return str(affs[0].c)
        if len(affs) == 1 and affs[0].coefs == {"N": 1} and affs[0].c == 0:
            return "%N"
        m, ops = amap(affs)
        return ("min " if upper else "max ") * (len(affs) > 1) + m + ops

    def index(a: Access, ind: str) -> str:
        names = []
        for s in a.subs:
            if s.coefs and list(s.coefs.values()) == [1] and s.c == 0:
                names.append("%" + next(iter(s.coefs)))
                continue
            m, ops = amap([s])
            v = f"%x{next(fresh)}"
            lines.append(f"{ind}{v} = affine.apply {m}{ops}")
            names.append(v)
        return ", ".join(names)

    def load(a: Access, ind: str) -> str:
        idx = index(a, ind)
        v = f"%v{next(fresh)}"
        lines.append(f"{ind}{v} = krnl.load %{a.array}[{idx}] : {mt(a.array)}")
        return v

    def combine(terms: list[str], last_sub: bool, ind: str) -> str:
        acc = terms[0]
        for k, t in enumerate(terms[1:], 1):
            v = f"%s{next(fresh)}"
            op = sub if last_sub and k == len(terms) - 1 else add
            lines.append(f"{ind}{v} = {op} {acc}, {t} : {ty}")
            acc = v
        return acc

    def with_list(loops: list[Loop]) -> str:
        return ", ".join(
            f"%h{lp.iv} -> %{lp.iv} = {bound(lp.lbs, False)} to {bound(lp.ubs, True)}"
            for lp in loops
        )

    def first_list(loops: list[Loop]) -> str:
        return ", ".join(f"%{h}" for h in order[id(loops)])

    def body(items: list[Store | Reduce | Nest], ind: str) -> None:
        for it in items:
            if isinstance(it, Nest):
                lines.append(
                    f"{ind}krnl.iterate({first_list(it.loops)}) with ({with_list(it.loops)}) {{"
                )
                body(it.body, ind + "  ")
                lines.append(f"{ind}}}")
            elif isinstance(it, Reduce):
                lines.append(
                    f"{ind}%red{it.n} = krnl.iterate({first_list(it.loops)}) with "
                    f"({with_list(it.loops)}) iter_args(%acc{it.n} = %zero) -> ({ty}) {{"
                )
                i2 = ind + "  "
                terms = [f"%acc{it.n}"] + [load(a, i2) for a in it.reads]
                lines.append(f"{i2}krnl.yield {combine(terms, False, i2)} : {ty}")
                lines.append(f"{ind}}}")
            else:
                terms = [load(a, ind) for a in it.reads]
                if it.acc is not None:
                    terms.append(f"%red{it.acc}")
                if it.iv is not None:
                    c = f"%c{next(fresh)}"
                    lines.append(f"{ind}{c} = arith.index_cast %{it.iv} : index to i64")
                    if f:
                        c2 = f"%c{next(fresh)}"
                        lines.append(f"{ind}{c2} = arith.sitofp {c} : i64 to f32")
                        c = c2
                    terms.append(c)
                v = combine(terms, it.sub, ind)
                idx = index(it.target, ind)
                lines.append(
                    f"{ind}krnl.store {v}, %{it.target.array}[{idx}] : {mt(it.target.array)}"
                )

    zero = "0.0 : f32" if f else "0 : i64"
    lines.append(f"  %zero = arith.constant {zero}")
    for n, loops in enumerate(loop_lists):
        hs = ", ".join(f"%h{lp.iv}" for lp in loops)
        lines.append(f"  {hs} = krnl.define_loops {len(loops)}")
        for lp in loops:
            if lp.iv in recipe.blocks:
                lines.append(
                    f"  %{lp.iv}_t, %{lp.iv}_p = krnl.block %h{lp.iv} {recipe.blocks[lp.iv]} : "
                    "(!krnl.loop) -> (!krnl.loop, !krnl.loop)"
                )
        handles = [h if "_" in h else f"h{h}" for h in loop_handles(loops, recipe)]
        perm = recipe.permutes.get(n)
        if perm is not None:
            ops = ", ".join(f"%{h}" for h in handles)
            types = ", ".join(["!krnl.loop"] * len(handles))
            lines.append(f"  krnl.permute({ops}) {perm} : {types}")
            placed = [""] * len(handles)
            for k, h in enumerate(handles):
                placed[perm[k]] = h
            handles = placed
        order[id(loops)] = handles
        names = {h: h[1:] if h.startswith("h") else h for h in handles}
        # krnl.parallel comes last (the verifier's rule)
        lines += [f"  krnl.unroll %{h} : !krnl.loop" for h in handles if names[h] in recipe.unroll]
        lines += [
            f"  krnl.parallel(%{h}) : !krnl.loop" for h in handles if names[h] in recipe.parallel
        ]
    body(list(prog.nests), "  ")
    args = ", ".join(f"%{a}: {mt(a)}" for a in ARRAYS)
    return f"func.func @f({args}, %N: index) {{\n" + "\n".join(lines) + "\n  return\n}\n"
