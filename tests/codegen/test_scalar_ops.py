"""numpy_ops against the reference interpreter, bit for bit, on edge-case inputs.

Each case is one op on one combination of types. A Krnl function loads the
operands from memrefs element by element, applies the op and stores the
result; ``pk.run_reference`` on it is the oracle. The expression ``emit``
returns for the op is evaluated (a) on the NumPy scalars of each element,
(b) once on whole arrays, contiguous and strided, and (c) for ops with several
operands, with one of them a scalar, and in an outer (2-D) broadcast. Results are
compared bit for bit (floats: NaN for NaN, payloads ignored; `index` results
modulo 2**64, see below), and the type of each result is checked against the
value contract of ``polykrnl.codegen.numpy_ops``.

Inputs where the interpreter raises (undefined behaviour: division by zero,
over-wide shifts, fptosi of NaN, ...) are given by each case's ``defined``
predicate; the interpreter must raise on them, and the emitted expression must
return (or raise) without hanging.

Two documented differences with the interpreter (see numpy_ops' docstring):
- max/min of +0.0 and -0.0 (`arith.maximumf`, `minimumf`, `maxnumf`,
  `minnumf`): the interpreter returns whichever zero NumPy's scalar loop
  picks; generated code orders -0.0 < +0.0 (checked here on those inputs);
- `index` values beyond int64: the interpreter keeps unbounded Python ints,
  generated code wraps at 64 bits. Index results are stored through
  `arith.index_cast` to i64, which compares them modulo 2**64.
"""

from __future__ import annotations

import ast
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pytest
from xdsl.ir import Operation

import polykrnl as pk
from polykrnl.codegen import numpy_ops
from polykrnl.codegen.numpy_ops import HELPER_DEPS, PRELUDE, emit, supported
from polykrnl.interpreter import supported_ops
from polykrnl.reader.parser import context

RNG = np.random.default_rng(20260505)

DTYPES: dict[str, np.dtype[Any]] = {
    "f16": np.dtype(np.float16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "i1": np.dtype(np.bool_),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "ui8": np.dtype(np.uint8),
    "ui16": np.dtype(np.uint16),
    "ui32": np.dtype(np.uint32),
    "ui64": np.dtype(np.uint64),
    "index": np.dtype(np.int64),
    "!krnl.string": np.dtype(object),
}
FLOATS = ("f16", "f32", "f64")
INTS = ("i8", "i16", "i32", "i64")
ALL_INTS = ("i1", *INTS, "index")


def width(t: str) -> int:
    return 64 if t == "index" else int(t.lstrip("ui"))


# ------------------------------------------------------------------ inputs


@cache
def float_values(t: str) -> tuple[Any, ...]:
    dt = DTYPES[t]
    fi = np.finfo(dt)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.5, 3.0, 0.1, -0.7, 0.49999997]
    vals += [100.25, -12345.678, float(fi.max), -float(fi.max), float(fi.tiny)]
    vals += [float(fi.smallest_subnormal), -float(fi.smallest_subnormal), float(fi.tiny) / 2]
    vals += [math.inf, -math.inf, math.nan, *RNG.normal(0, 3, 3)]
    return tuple(np.array(vals, dtype=dt))


@cache
def int_values(t: str) -> tuple[Any, ...]:
    if t == "i1":
        return (False, True)
    w = width(t)
    lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
    vals = [0, 1, -1, 2, -2, 3, 7, -7, w - 1, w, lo, lo + 1, hi, hi - 1, 100 % hi, -(100 % hi)]
    vals += [int(x) for x in RNG.integers(lo, hi, 3, endpoint=True)]
    return tuple(vals)


def values(t: str) -> tuple[Any, ...]:
    if t in FLOATS:
        return float_values(t)
    if t.startswith("ui"):
        return tuple(v % (1 << width(t)) for v in int_values(t[1:]))
    return int_values(t)


def pairs(a: Sequence[Any], b: Sequence[Any]) -> list[tuple[Any, ...]]:
    return list(itertools.product(a, b))


def singles(a: Sequence[Any]) -> list[tuple[Any, ...]]:
    return [(x,) for x in a]


# ------------------------------------------------------------------ cases


def always(*args: Any) -> bool:
    return True


@dataclass
class Case:
    """`op` is the MLIR text of one op from %a0, %a1, ... to %r."""

    id: str
    op: str
    ins: tuple[str, ...]
    out: str
    inputs: list[tuple[Any, ...]]
    defined: Callable[..., bool] = always
    zero_ties: str | None = None  # "max" / "min": ordered -0.0 < +0.0 (not the interpreter)

    def __str__(self) -> str:
        return self.id


def signed(x: int, w: int) -> int:
    x &= (1 << w) - 1
    return x - (1 << w) if x >> (w - 1) else x


def unsigned(x: int, w: int) -> int:
    return int(x) & ((1 << w) - 1)


def int_binary_cases() -> Iterator[Case]:
    ops = [
        "addi",
        "subi",
        "muli",
        "divsi",
        "divui",
        "remsi",
        "remui",
        "floordivsi",
        "ceildivsi",
        "ceildivui",
        "maxsi",
        "minsi",
        "maxui",
        "minui",
        "andi",
        "ori",
        "xori",
        "shli",
        "shrui",
        "shrsi",
    ]
    for t in (*ALL_INTS, "ui8", "ui32"):
        w = 1 if t == "i1" else width(t)
        inputs = pairs(values(t), values(t))
        for name in ops:
            yield Case(
                f"arith.{name}:{t}",
                f"%r = arith.{name} %a0, %a1 : {t}",
                (t, t),
                t,
                inputs,
                int_defined(name, w),
            )
        if t.startswith("ui"):  # xDSL's math.ipowi takes signless integers only
            continue
        yield Case(
            f"math.ipowi:{t}",
            f"%r = math.ipowi %a0, %a1 : {t}",
            (t, t),
            t,
            inputs,
            lambda a, b, w=w: not (signed(int(a), w) == 0 and signed(int(b), w) < 0),
        )


def int_defined(name: str, w: int) -> Callable[..., bool]:
    def defined(a: Any, b: Any) -> bool:
        a, b = int(a), int(b)
        if name in ("divsi", "remsi"):
            return signed(b, w) != 0 and not (
                signed(a, w) == -(1 << (w - 1)) and signed(b, w) == -1
            )
        if name in ("divui", "remui", "ceildivui", "floordivsi", "ceildivsi"):
            return unsigned(b, w) != 0
        if name.startswith("sh"):
            return unsigned(b, w) < w
        return True

    return defined


def int_unary_cases() -> Iterator[Case]:
    for t in ALL_INTS:  # xDSL's math dialect takes signless integers only
        for name in ("absi", "ctlz", "cttz", "ctpop"):
            yield Case(
                f"math.{name}:{t}", f"%r = math.{name} %a0 : {t}", (t,), t, singles(values(t))
            )


def cmpi_cases() -> Iterator[Case]:
    preds = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
    for t in (*ALL_INTS, "ui16"):
        inputs = pairs(values(t), values(t))
        for p in preds:
            yield Case(
                f"arith.cmpi.{p}:{t}", f"%r = arith.cmpi {p}, %a0, %a1 : {t}", (t, t), "i1", inputs
            )


def float_binary_cases() -> Iterator[Case]:
    arith = ["addf", "subf", "mulf", "divf", "maximumf", "minimumf", "maxnumf", "minnumf"]
    for t in FLOATS:
        inputs = pairs(values(t), values(t))
        for name in arith:
            ties = {"maximumf": "max", "maxnumf": "max", "minimumf": "min", "minnumf": "min"}
            yield Case(
                f"arith.{name}:{t}",
                f"%r = arith.{name} %a0, %a1 : {t}",
                (t, t),
                t,
                inputs,
                zero_ties=ties.get(name),
            )
        for name in ("powf", "atan2", "copysign"):
            yield Case(f"math.{name}:{t}", f"%r = math.{name} %a0, %a1 : {t}", (t, t), t, inputs)
        # arith.remf: defined by polykrnl (polykrnl.dialect.std_ext), xDSL lacks it
        yield Case(f"arith.remf:{t}", f"%r = arith.remf %a0, %a1 : {t}", (t, t), t, inputs)
        yield Case(
            f"math.fma:{t}",
            f"%r = math.fma %a0, %a1, %a2 : {t}",
            (t, t, t),
            t,
            fma_inputs(t),
        )


def fma_inputs(t: str) -> list[tuple[Any, ...]]:
    v = values(t)
    dt = DTYPES[t]
    rows = [tuple(v[i] for i in RNG.integers(0, len(v), 3)) for _ in range(300)]
    # products that cancel the addend (rounding of a * b + c shows)
    for a, b in RNG.normal(0, 10, (60, 2)):
        x, y = dt.type(a), dt.type(b)
        rows.append((x, y, -(np.float64(x) * np.float64(y)).astype(dt)))
    return rows


def cmpf_cases() -> Iterator[Case]:
    preds = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord"]
    preds += ["ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"]
    for t in FLOATS:
        inputs = pairs(values(t)[:-3], values(t)[:-3])  # the random values add little here
        for p in preds:
            yield Case(
                f"arith.cmpf.{p}:{t}", f"%r = arith.cmpf {p}, %a0, %a1 : {t}", (t, t), "i1", inputs
            )


UNARY_MATH = [
    *("acos", "acosh", "asin", "asinh", "atan", "atanh", "tan", "erf", "exp", "exp2", "expm1"),
    *("log", "log2", "log10", "log1p", "sqrt", "rsqrt", "cbrt", "tanh", "sin", "cos", "sinh"),
    *("cosh", "absf", "floor", "ceil", "trunc", "round", "roundeven"),
]


@cache
def registered(name: str) -> bool:
    return context().get_optional_op(name) is not None


def float_unary_cases() -> Iterator[Case]:
    for t in FLOATS:
        extra = [*RNG.uniform(-10, 10, 40), *RNG.uniform(-1, 1, 20), 0.5, 1.5, 2.5, -3.5]
        extra += [*np.exp(RNG.uniform(-30, 30, 20)), 1e10, -1e10, 4503599627370497.0]
        inputs = singles(sorted(set(values(t)) | set(np.array(extra, dtype=DTYPES[t])), key=str))
        for name in UNARY_MATH:
            for prefix in ("math", "krnl"):
                op = f"{prefix}.{name}"
                if not registered(op):
                    continue  # Krnl has only some of math's functions (krnl.erf, krnl.tan...)
                text = f"%r = {op} %a0 : {t}" if prefix == "math" else f'%r = "{op}"(%a0)'
                if prefix == "krnl":
                    text += f" : ({t}) -> {t}"
                yield Case(f"{op}:{t}", text, (t,), t, inputs)
        # Krnl spells math.roundeven round_even (ties to even, as math's).
        text = f'%r = "krnl.round_even"(%a0) : ({t}) -> {t}'
        yield Case(f"krnl.round_even:{t}", text, (t,), t, inputs)
        for op in ("math.isinf", "math.isnan", "krnl.isinf", "krnl.isnan", "math.isfinite"):
            text = f'%r = "{op}"(%a0) : ({t}) -> i1'
            yield Case(f"{op}:{t}", text, (t,), "i1", inputs)
        yield Case(f"arith.negf:{t}", f"%r = arith.negf %a0 : {t}", (t,), t, inputs)
        for n in ("i8", "i32", "i64", "index"):
            ns = [v for v in values(n) if abs(int(v)) < 5000]
            ns += [v for v in (-1075, 1024, 40, -40) if abs(v) < 1 << (width(n) - 1)]
            yield Case(
                f"math.fpowi:{t},{n}",
                f"%r = math.fpowi %a0, %a1 : {t}, {n}",
                (t, n),
                t,
                pairs(values(t), ns),
            )


def int_cast_cases() -> Iterator[Case]:
    ints = ("i1", *INTS)
    for s, d in itertools.product(ints, ints):
        if width(s) < width(d):
            for name in ("extsi", "extui"):
                yield Case(
                    f"arith.{name}:{s}->{d}",
                    f"%r = arith.{name} %a0 : {s} to {d}",
                    (s,),
                    d,
                    singles(values(s)),
                )
        if width(s) > width(d):
            yield Case(
                f"arith.trunci:{s}->{d}",
                f"%r = arith.trunci %a0 : {s} to {d}",
                (s,),
                d,
                singles(values(s)),
            )
    for t in ints:
        for name in ("index_cast", "index_castui"):
            yield Case(
                f"arith.{name}:{t}->index",
                f"%r = arith.{name} %a0 : {t} to index",
                (t,),
                "index",
                singles(values(t)),
            )
            yield Case(
                f"arith.{name}:index->{t}",
                f"%r = arith.{name} %a0 : index to {t}",
                ("index",),
                t,
                singles(values("index")),
            )
    # unsigned storage types: the same bits as the signless type
    for name, src, dst in (
        ("extui", "ui8", "i32"),
        ("extsi", "ui8", "i32"),
        ("trunci", "i32", "ui8"),
    ):
        yield Case(
            f"arith.{name}:{src}->{dst}",
            f"%r = arith.{name} %a0 : {src} to {dst}",
            (src,),
            dst,
            singles(values(src)),
        )


def float_cast_cases() -> Iterator[Case]:
    for s, d in itertools.permutations(FLOATS, 2):
        name = "extf" if width(s[1:]) < width(d[1:]) else "truncf"
        yield Case(
            f"arith.{name}:{s}->{d}",
            f"%r = arith.{name} %a0 : {s} to {d}",
            (s,),
            d,
            singles(values(s)),
        )
    for s, d in itertools.product(("i1", *INTS, "ui32"), FLOATS):
        vs = list(values(s))
        if s in ("i32", "i64"):  # where rounding shows (i64 -> f32 rounds twice, as the
            # interpreter does: through float64)
            w = width(s)
            vs += [(1 << 24) + 1, (1 << 24) + 3, -(1 << 24) - 1, 65519, 65520, 2047, 2049]
            if w == 64:
                vs += [(1 << 62) + (1 << 38) + 1, (1 << 53) + 1, -(1 << 62) - (1 << 38) - 1]
        for name in ("sitofp", "uitofp"):
            yield Case(
                f"arith.{name}:{s}->{d}",
                f"%r = arith.{name} %a0 : {s} to {d}",
                (s,),
                d,
                singles(vs),
            )
    for s, d in itertools.product(FLOATS, ("i1", *INTS)):
        vs = list(values(s))
        for w in (1, 8, 16, 32, 64):
            for x in (2.0 ** (w - 1), 2.0**w, -(2.0 ** (w - 1))):
                y = DTYPES[s].type(x)
                vs += [y, np.nextafter(y, DTYPES[s].type(0)), -np.nextafter(y, DTYPES[s].type(0))]
        vs += [DTYPES[s].type(v) for v in (-0.99, 0.99, -1.5, 1.99, 255.5, -128.7)]
        for name in ("fptosi", "fptoui"):
            yield Case(
                f"arith.{name}:{s}->{d}",
                f"%r = arith.{name} %a0 : {s} to {d}",
                (s,),
                d,
                singles(vs),
                fp_to_int_defined(name, d),
            )


def fp_to_int_defined(name: str, t: str) -> Callable[..., bool]:
    w = 1 if t == "i1" else width(t)

    def defined(x: Any) -> bool:
        if not np.isfinite(x):
            return False
        v = int(np.trunc(np.float64(x)))
        if name == "fptosi":
            return -(1 << (w - 1)) <= v <= (1 << (w - 1)) - 1
        return 0 <= v <= (1 << w) - 1

    return defined


def bitcast_cases() -> Iterator[Case]:
    for f, i in (("f16", "i16"), ("f32", "i32"), ("f64", "i64")):
        yield Case(
            f"arith.bitcast:{f}->{i}",
            f"%r = arith.bitcast %a0 : {f} to {i}",
            (f,),
            i,
            singles(values(f)),
        )
        ints = [*values(i), 0x7FC0 if i == "i16" else -1, *(RNG.integers(-(2**15), 2**15, 8))]
        yield Case(
            f"arith.bitcast:{i}->{f}",
            f"%r = arith.bitcast %a0 : {i} to {f}",
            (i,),
            f,
            singles(ints),
        )
    yield Case(
        "arith.bitcast:i1->i1",
        "%r = arith.bitcast %a0 : i1 to i1",
        ("i1",),
        "i1",
        singles(values("i1")),
    )
    yield Case(
        "arith.bitcast:index->i64",
        "%r = arith.bitcast %a0 : index to i64",
        ("index",),
        "i64",
        singles(values("index")),
    )
    yield Case(
        "arith.bitcast:i64->index",
        "%r = arith.bitcast %a0 : i64 to index",
        ("i64",),
        "index",
        singles(values("i64")),
    )
    yield Case(
        "arith.bitcast:ui32->f32",
        "%r = arith.bitcast %a0 : ui32 to f32",
        ("ui32",),
        "f32",
        singles(values("ui32")),
    )


def select_cases() -> Iterator[Case]:
    for t in (*FLOATS, *ALL_INTS, "ui8"):
        rows = [
            (bool(c), a, b)
            for (a, b), c in zip(pairs(values(t), values(t)), itertools.cycle([True, False, False]))
        ]
        yield Case(
            f"arith.select:{t}", f"%r = arith.select %a0, %a1, %a2 : {t}", ("i1", t, t), t, rows
        )


def affine_cases() -> Iterator[Case]:
    maps = {
        "apply_offsets": "affine.apply affine_map<(d0, d1) -> (d0 - d1 * 3 + 7)>",
        "apply_neg": "affine.apply affine_map<(d0, d1) -> (-d0 + d1 - 1)>",
        "apply_div": "affine.apply "
        "affine_map<(d0)[s0] -> (d0 floordiv 4 + s0 mod 3 - d0 ceildiv 5)>",
        "apply_sym": "affine.apply affine_map<(d0)[s0] -> (d0 * 2 + s0 * -5)>",
        "min": "affine.min affine_map<(d0)[s0] -> (d0, s0 * 2, d0 + s0 - 10)>",
        "max": "affine.max affine_map<(d0)[s0] -> (d0 floordiv 2, s0 - 3)>",
    }
    small = [v for v in values("index") if abs(v) < 1 << 40]
    inputs = pairs(small, small)
    for key, text in maps.items():
        operands = "(%a0)[%a1]" if "s0" in text else "(%a0, %a1)"
        yield Case(f"affine.{key}", f"%r = {text}{operands}", ("index", "index"), "index", inputs)


STRINGS = ["", "abc", "abd", "ab", "ab\0cd", "héllo", "zz"]


def string_cases() -> Iterator[Case]:
    s = "!krnl.string"
    yield Case(
        "krnl.strlen", f'%r = "krnl.strlen"(%a0) : ({s}) -> i64', (s,), "i64", singles(STRINGS)
    )
    rows = [(a, b, n) for a, b in pairs(STRINGS, STRINGS) for n in (-1, 0, 2, 100)]
    yield Case(
        "krnl.strncmp",
        f'%r = "krnl.strncmp"(%a0, %a1, %a2) : ({s}, {s}, i64) -> i32',
        (s, s, "i64"),
        "i32",
        rows,
    )


def all_cases() -> list[Case]:
    gens = [
        int_binary_cases,
        int_unary_cases,
        cmpi_cases,
        float_binary_cases,
        cmpf_cases,
        float_unary_cases,
        int_cast_cases,
        float_cast_cases,
        bitcast_cases,
        select_cases,
        affine_cases,
        string_cases,
    ]
    return [c for g in gens for c in g()]


with np.errstate(all="ignore"):  # inputs rounded to small types overflow to inf
    CASES = all_cases()


# ------------------------------------------------------------------ programs


def program(case: Case) -> tuple[pk.Function, Operation]:
    store = "i64" if case.out == "index" else case.out
    params = [f"%A{i}: memref<?x{t}>" for i, t in enumerate(case.ins)]
    params += [f"%R: memref<?x{store}>", "%N: index"]
    lines = [f"    %a{i} = krnl.load %A{i}[%i] : memref<?x{t}>" for i, t in enumerate(case.ins)]
    lines.append(f"    {case.op}")
    result = "%r"
    if case.out == "index":  # stored as i64: compared modulo 2**64
        lines.append("    %r64 = arith.index_cast %r : index to i64")
        result = "%r64"
    lines.append(f"    krnl.store {result}, %R[%i] : memref<?x{store}>")
    body = "\n".join(lines)
    text = f"""func.func @f({", ".join(params)}) {{
  %ii = krnl.define_loops 1
  krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {{
{body}
  }}
  return
}}"""
    fn = pk.parse(text, case.id)["f"]
    op = next(o for o in fn.op.walk() if o.results and o.results[0].name_hint == "r")
    return fn, op


def helper_closure(names: set[str]) -> list[str]:
    out: list[str] = []
    todo = sorted(names)
    while todo:
        h = todo.pop()
        if h not in out:
            out.append(h)
            todo += HELPER_DEPS.get(h, ())
    return out


def namespace(helpers: set[str]) -> dict[str, Any]:
    env: dict[str, Any] = {"np": np}
    for h in helper_closure(helpers):
        exec(PRELUDE[h], env)
    return env


def compiled(op: Operation) -> tuple[Any, dict[str, Any], str]:
    """The emitted expression of op's result on x0, x1, ...: code, globals, source."""
    args: list[ast.expr] = [ast.Name(f"x{i}", ast.Load()) for i in range(len(op.operands))]
    helpers: set[str] = set()
    (expr,) = emit(op, args, helpers)
    source = ast.unparse(expr)
    # the source must say what the AST says (unparse of negative literals, precedence)
    assert ast.dump(ast.parse(source, mode="eval").body) == ast.dump(expr), source
    tree = ast.fix_missing_locations(ast.Expression(expr))
    return compile(tree, f"<{op.name}>", "eval"), namespace(helpers), source


# ------------------------------------------------------------------ comparing


def column(t: str, xs: Sequence[Any]) -> np.ndarray[Any, Any]:
    if t == "!krnl.string":
        a = np.empty(len(xs), dtype=object)
        a[:] = list(xs)
        return a
    if t.startswith("ui"):
        return np.array([int(x) % (1 << width(t)) for x in xs], dtype=DTYPES[t])
    return np.array(xs, dtype=DTYPES[t])


def row(case: Case, cols: Sequence[np.ndarray[Any, Any]], j: int) -> dict[str, Any]:
    """The operands x0, x1, ... of element j, as generated code holds scalars."""
    return {f"x{i}": scalar(t, c[j]) for i, (t, c) in enumerate(zip(case.ins, cols, strict=True))}


def scalar(t: str, x: Any) -> Any:
    """An element as generated code holds it: index as a Python int, str as str."""
    if t == "index":
        return int(x)
    if t == "!krnl.string":
        return str(x)
    return x


def bits(a: np.ndarray[Any, Any], t: str) -> np.ndarray[Any, Any]:
    """Comparable values: float bits with every NaN alike, index modulo 2**64."""
    if t in FLOATS:
        u = a.astype(DTYPES[t]).view(f"u{DTYPES[t].itemsize}").astype(np.uint64)
        return np.where(np.isnan(a.astype(DTYPES[t])), np.uint64(1), u)
    if t == "index":
        return np.array([int(x) & ((1 << 64) - 1) for x in a.ravel()], dtype=np.uint64)
    return a.astype(DTYPES[t])


def check_type(got: Any, t: str, array: bool, what: str) -> None:
    if array:
        assert isinstance(got, np.ndarray), f"{what}: {type(got).__name__}, not an array"
        assert got.dtype == DTYPES[t], f"{what}: dtype {got.dtype}, expected {DTYPES[t]}"
    elif t == "index":
        assert type(got) is int, f"{what}: {type(got).__name__}, not a Python int"
    else:
        assert type(got) is DTYPES[t].type, f"{what}: {type(got).__name__}, not {DTYPES[t]}"


def mismatches(got: Any, want: np.ndarray[Any, Any], t: str) -> np.ndarray[Any, Any]:
    g = np.asarray(got, dtype=object if t == "index" else DTYPES[t])
    return bits(np.broadcast_to(g, want.shape), t) != bits(want, t)


def zero_tie(kind: str, a: Any, b: Any) -> Any:
    """max/min of two equal values with -0.0 < +0.0."""
    if kind == "max":
        return b if np.signbit(a) else a
    return a if np.signbit(a) else b


# ------------------------------------------------------------------ the test


# Cases whose operands and result are all of middle widths (f32, i16, i32, ui16, ui32) take
# the paths of the narrowest and widest types (f16, f64, i1, i8, i64, index, ui8) and run in
# the full suite only; the fast tier keeps every op on those, comparisons and conversions.
MIDDLE = {"f32", "i16", "i32", "ui16", "ui32"}


def _param(case: Case) -> Any:
    middle = {*case.ins, case.out} <= MIDDLE
    return pytest.param(case, id=case.id, marks=[pytest.mark.slow] if middle else [])


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_op_matches_interpreter(case: Case) -> None:
    fn, op = program(case)
    assert supported(op), f"{case.id}: supported() is False"
    code, env, source = compiled(op)
    out = case.out
    rows = case.inputs
    ok = np.array([case.defined(*r) for r in rows], dtype=bool)
    good = [r for r, d in zip(rows, ok, strict=True) if d]
    assert good, f"{case.id}: no defined input"
    cols = [column(t, [r[i] for r in good]) for i, t in enumerate(case.ins)]
    n = len(good)

    # the oracle
    store_t = "i64" if out == "index" else out
    want = np.zeros(n, dtype=DTYPES[store_t])
    pk.run_reference(fn, **{f"A{i}": c for i, c in enumerate(cols)}, R=want, N=n)
    if case.zero_ties:  # +-0.0 against +-0.0: -0.0 < +0.0 (the interpreter's pick differs)
        a, b = cols
        for j in np.flatnonzero((a == b) & (a == 0)):
            want[j] = zero_tie(case.zero_ties, a[j], b[j])

    # Float results may overflow or be invalid (kernels ignore those warnings, as the
    # interpreter does); everything else must not warn on defined inputs: integer ops
    # wrap silently.
    errors = np.errstate(all="ignore") if out in FLOATS else np.errstate(all="raise")
    with errors:
        check_defined(case, code, env, source, cols, want)
    undefined = [r for r, d in zip(rows, ok, strict=True) if not d]
    check_undefined(case, fn, code, env, source, undefined)


def check_defined(
    case: Case,
    code: Any,
    env: dict[str, Any],
    source: str,
    cols: list[np.ndarray[Any, Any]],
    want: np.ndarray[Any, Any],
) -> None:
    out, n = case.out, len(want)
    # (a) element by element on scalars
    got_s = []
    for j in range(n):
        g = eval(code, env, row(case, cols, j))
        check_type(g, out, False, f"{case.id}: {source}")
        got_s.append(g)
    bad = mismatches(np.array(got_s, dtype=object), want, out)
    assert not bad.any(), report(case, source, cols, got_s, want, bad)

    # (b) on whole arrays, contiguous and strided (every other element of a bigger buffer)
    g = eval(code, env, {f"x{i}": c for i, c in enumerate(cols)})
    check_type(g, out, True, f"{case.id} (arrays): {source}")
    bad = mismatches(g, want, out)
    assert not bad.any(), report(case, source, cols, list(g), want, bad, "arrays")
    strided = []
    for c in cols:
        buf = np.empty(2 * n, dtype=c.dtype)
        buf[1::2] = c
        buf[::2] = c[::-1]
        strided.append(buf[1::2])
    g = eval(code, env, {f"x{i}": c for i, c in enumerate(strided)})
    bad = mismatches(g, want, out)
    assert not bad.any(), report(case, source, cols, list(g), want, bad, "strided arrays")

    # (c) broadcasting, against the same operands made into full arrays (checked above):
    # each operand a scalar against arrays of the others, and a 2-D outer broadcast
    if len(case.ins) >= 2:
        for k in range(len(case.ins)):
            for j in (0, n // 2, n - 1):
                env_b = {f"x{i}": c for i, c in enumerate(cols)}
                env_b[f"x{k}"] = scalar(case.ins[k], cols[k][j])
                g = eval(code, env, env_b)
                check_type(g, out, True, f"{case.id} (broadcast): {source}")
                env_b[f"x{k}"] = np.full(n, cols[k][j], dtype=cols[k].dtype)
                bad = mismatches(g, eval(code, env, env_b), out)
                assert not bad.any(), f"{case.id}: broadcasting operand {k} differs: {source}"
        m = min(n, 12)
        shapes = [(m, 1), (1, m), (1, 1, m)][: len(case.ins)]
        parts = [c[:m].reshape(s) for c, s in zip(cols, shapes, strict=True)]
        g = eval(code, env, {f"x{i}": c for i, c in enumerate(parts)})
        full = np.broadcast_arrays(*parts)
        expect = eval(code, env, {f"x{i}": c.copy() for i, c in enumerate(full)})
        assert g.shape == expect.shape
        assert not mismatches(g, expect, out).any(), f"{case.id}: outer broadcast: {source}"


def check_undefined(
    case: Case,
    fn: pk.Function,
    code: Any,
    env: dict[str, Any],
    source: str,
    undefined: list[tuple[Any, ...]],
) -> None:
    """The interpreter raises on these inputs; the expression returns without hanging."""
    store_t = "i64" if case.out == "index" else case.out
    out = case.out
    if undefined:
        ucols = [column(t, [r[i] for r in undefined]) for i, t in enumerate(case.ins)]
        for j in range(min(2, len(undefined))):
            one = [c[j : j + 1] for c in ucols]
            with pytest.raises(pk.InterpretError):
                pk.run_reference(
                    fn,
                    **{f"A{i}": c for i, c in enumerate(one)},
                    R=np.zeros(1, DTYPES[store_t]),
                    N=1,
                )
        with np.errstate(all="ignore"):
            for j in range(len(undefined)):
                try:
                    eval(code, env, row(case, ucols, j))
                except (ZeroDivisionError, ValueError, OverflowError):
                    assert out == "index", f"{case.id}: raises on scalars: {source}"
            eval(code, env, {f"x{i}": c for i, c in enumerate(ucols)})


def report(
    case: Case,
    source: str,
    cols: Sequence[np.ndarray[Any, Any]],
    got: Sequence[Any],
    want: np.ndarray[Any, Any],
    bad: np.ndarray[Any, Any],
    how: str = "scalars",
) -> str:
    j = np.flatnonzero(bad)
    lines = [f"{case.id} ({how}): {source}: {len(j)} of {len(want)} differ"]
    for m in j[:5]:
        operands = ", ".join(repr(c[m]) for c in cols)
        lines.append(f"  ({operands}) -> {got[m]!r}, interpreter {want[m]!r}")
    return "\n".join(lines)


# ------------------------------------------------------------------ constants

CONSTANTS = [
    ("1.5", "f32"),
    ("-0.0", "f32"),
    ("0.1", "f32"),
    ("0.1", "f64"),
    ("0.1", "f16"),
    ("65504.0", "f16"),
    ("1.0e-45", "f32"),
    ("-3.4028234663852886e+38", "f32"),
    ("0x7FC00000", "f32"),
    ("0xFF800000", "f32"),
    ("0x7FF0000000000000", "f64"),
    ("4.9406564584124654e-324", "f64"),
    ("-3", "i32"),
    ("-128", "i8"),
    ("127", "i8"),
    ("-1", "i64"),
    ("9223372036854775807", "i64"),
    ("-9223372036854775808", "i64"),
    ("32767", "i16"),
    ("0", "index"),
    ("-5", "index"),
    ("4096", "index"),
    ("true", "i1"),
    ("false", "i1"),
]


@pytest.mark.parametrize(("value", "t"), CONSTANTS, ids=[f"{v}:{t}" for v, t in CONSTANTS])
def test_constant(value: str, t: str) -> None:
    text = f"%r = arith.constant {value}" + ("" if t == "i1" else f" : {t}")
    case = Case(f"const:{value}:{t}", text, (), t, [()])
    fn, op = program(case)
    assert supported(op)
    code, env, source = compiled(op)
    want = np.zeros(1, dtype=DTYPES["i64" if t == "index" else t])
    pk.run_reference(fn, R=want, N=1)
    got = eval(code, env, {})
    check_type(got, t, False, source)
    assert not mismatches(np.array([got], dtype=object), want, t).any(), (source, got, want)
    # readable: np.float32(1.5), np.int32(-3), a plain int for index, np.True_ for i1
    if t == "index":
        assert source == value
    elif t == "i1":
        assert source == f"np.{value.capitalize()}_"
    else:
        assert source.startswith(f"np.{DTYPES[t].name}(")
    if t in FLOATS and not np.isnan(got):
        # exact: the literal of the source gives back the same bits
        assert eval(source, {"np": np}).tobytes() == np.asarray(got).tobytes()


# ------------------------------------------------------------------ coverage and contract

# Ops of the interpreter that are not pure value ops on scalars: memory, loops,
# control flow, calls, I/O.
NOT_PURE = {
    "affine.for",
    "affine.if",
    "affine.load",
    "affine.store",
    "func.call",
    "krnl.call",
    "krnl.copy_from_tile_buffer",
    "krnl.copy_to_tile_buffer",
    "krnl.dim",
    "krnl.find_index",
    "krnl.get_induction_var_value",
    "krnl.getref",
    "krnl.global",
    "krnl.load",
    "krnl.matmul",
    "krnl.memcpy",
    "krnl.memset",
    "krnl.print",
    "krnl.print_tensor",
    "krnl.random_normal",
    "krnl.seqalloc",
    "krnl.seqdealloc",
    "krnl.seqextract",
    "krnl.seqstore",
    "krnl.shape",
    "krnl.store",
    "krnl.vector_type_cast",
    "memref.alloc",
    "memref.alloca",
    "memref.assume_alignment",
    "memref.cast",
    "memref.copy",
    "memref.dealloc",
    "memref.dim",
    "memref.get_global",
    "memref.load",
    "memref.rank",
    "memref.store",
    "memref.subview",
    "scf.execute_region",
    "scf.for",
    "scf.if",
    "scf.while",
    "vector.load",
    "vector.store",
    # Memory ops with helpers (codegen/memory_ops.py; tests/codegen/test_vector_numpy.py).
    "vector.transfer_read",
    "vector.transfer_write",
    "vector.maskedload",
    "vector.maskedstore",
}
RECIPE = {
    "krnl.block",
    "krnl.define_loops",
    "krnl.entry_point",
    "krnl.iterate",
    "krnl.movable",
    "krnl.parallel",
    "krnl.permute",
    "krnl.prefetch",  # a cache hint: no value, no part in the statements
    "krnl.region",
    "krnl.runtime_instrument",
    "krnl.specialized_kernel",
    "krnl.unroll",
}


def test_every_pure_op_of_the_interpreter_is_translated() -> None:
    pure = set(supported_ops()) - NOT_PURE - RECIPE
    assert pure - set(numpy_ops.op_names()) == set()
    assert set(numpy_ops.op_names()) - set(supported_ops()) == set()


def test_every_translated_op_is_tested() -> None:
    tested = {
        c.id.split(":")[0].rsplit(".", 1)[0] if c.id.startswith("arith.cmp") else c.id.split(":")[0]
        for c in CASES
    }
    tested |= {"arith.constant", "affine.apply", "affine.min", "affine.max"}
    # Views and sizes: tests/interpreter/test_onnx_shaped_functions.py (kernel == interpreter
    # == NumPy) and the differential test over tests/corpus/onnx_*.mlir.
    tested |= {"memref.cast", "memref.dim", "krnl.dim", "memref.reshape", "memref.view"}
    tested |= {"memref.reinterpret_cast", "builtin.unrealized_conversion_cast"}
    # tests/reader/test_parse_onnx_mlir_syntax.py: kernel == interpreter == NumPy.
    tested |= {"krnl.get_linear_offset_index"}
    # Vector ops (lanes): tests/interpreter/test_vector_ops.py, kernel == interpreter == NumPy.
    tested |= {n for n in numpy_ops.op_names() if n.startswith("vector.")}
    assert set(numpy_ops.op_names()) - tested == set()


def test_helpers_use_only_numpy_and_their_declared_dependencies() -> None:
    import builtins

    for name, source in PRELUDE.items():
        tree = ast.parse(source)
        (fn,) = tree.body
        assert isinstance(fn, ast.FunctionDef) and fn.name == name
        local = {a.arg for a in ast.walk(fn) if isinstance(a, ast.arg)}
        local |= {
            n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        local |= {f.name for f in ast.walk(fn) if isinstance(f, ast.FunctionDef)}
        used = {
            n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
        free = used - local - set(dir(builtins))
        assert free - {"np"} <= set(HELPER_DEPS.get(name, ())), (name, free)
        assert set(HELPER_DEPS.get(name, ())) <= free, (name, "declares unused dependencies")
        assert not any(isinstance(n, ast.Import | ast.ImportFrom) for n in ast.walk(fn))


def one_op(text: str, args: str) -> Operation:
    fn = pk.parse(f"func.func @f({args}) {{\n  {text}\n  return\n}}")["f"]
    return next(o for o in fn.op.walk() if o.results and o.results[0].name_hint == "r")


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ("%r = arith.addf %a, %a : vector<4xf32>", "%a: vector<4xf32>"),
        ("%r = arith.cmpi slt, %a, %a : vector<4xi32>", "%a: vector<4xi32>"),
        ("%r = arith.addf %a, %a : bf16", "%a: bf16"),
        ("%r = arith.addi %a, %a : i4", "%a: i4"),
        ("%r = krnl.load %a[%c] : memref<?xf32>", "%a: memref<?xf32>, %c: index"),
        ("%r = arith.select %c, %a, %a : vector<4xf32>", "%c: i1, %a: vector<4xf32>"),
        ("%r = arith.constant dense<1.0> : vector<4xf32>", ""),
    ],
)
def test_unsupported_ops(text: str, args: str) -> None:
    op = one_op(text, args)
    assert not supported(op)
    helpers: set[str] = set()
    with pytest.raises(pk.UnsupportedError, match="no NumPy expression"):
        emit(op, [ast.Name(f"x{i}", ast.Load()) for i in range(len(op.operands))], helpers)
    assert helpers == set()


@pytest.mark.parametrize(
    ("text", "args", "expected"),
    [
        ("%r = arith.addf %a, %b : f32", "%a: f32, %b: f32", "x0 + x1"),
        ("%r = arith.addi %a, %b : i32", "%a: i32, %b: i32", "np.add(x0, x1)"),
        ("%r = arith.addi %a, %b : index", "%a: index, %b: index", "x0 + x1"),
        ("%r = arith.cmpf olt, %a, %b : f32", "%a: f32, %b: f32", "x0 < x1"),
        ("%r = arith.cmpi ult, %a, %b : i32", "%a: i32, %b: i32", "_unsigned(x0) < _unsigned(x1)"),
        (
            "%r = arith.select %c, %a, %b : f32",
            "%c: i1, %a: f32, %b: f32",
            "np.where(x0, x1, x2)[()]",
        ),
        ("%r = math.exp %a : f32", "%a: f32", "np.exp(x0, dtype=np.float64).astype(np.float32)"),
        ("%r = math.exp %a : f64", "%a: f64", "np.exp(x0)"),
        ("%r = math.sqrt %a : f32", "%a: f32", "np.sqrt(x0)"),
        ("%r = arith.divsi %a, %b : index", "%a: index, %b: index", "_index(_divsi(x0, x1))"),
        ("%r = arith.sitofp %a : i32 to f32", "%a: i32", "x0.astype(np.float32)"),
        ("%r = arith.index_cast %a : index to i32", "%a: index", "np.int64(x0).astype(np.int32)"),
        ("%r = arith.extsi %a : i1 to i32", "%a: i1", "-x0.astype(np.int32)"),
        (
            "%r = affine.apply affine_map<(d0, d1) -> (d0 * 4 - d1 + 1)>(%a, %b)",
            "%a: index, %b: index",
            "x0 * 4 - x1 + 1",
        ),
    ],
)
def test_readable_expressions(text: str, args: str, expected: str) -> None:
    op = one_op(text, args)
    (e,) = emit(op, [ast.Name(f"x{i}", ast.Load()) for i in range(len(op.operands))], set())
    assert ast.unparse(e) == expected


def test_index_offsets_by_negative_constants_subtract() -> None:
    # the kernel generator recognises `i - 1` (an iterator plus a constant) for slices
    op = one_op("%r = arith.addi %a, %b : index", "%a: index, %b: index")
    minus_one = ast.UnaryOp(ast.USub(), ast.Constant(1))
    (e,) = emit(op, [ast.Name("i", ast.Load()), minus_one], set())
    assert ast.unparse(e) == "i - 1"
    op = one_op("%r = arith.subi %a, %b : index", "%a: index, %b: index")
    (e,) = emit(op, [ast.Name("i", ast.Load()), ast.Constant(-2)], set())
    assert ast.unparse(e) == "i + 2"


def test_operands_used_twice_are_copied() -> None:
    # arith.cmpf one: (a < b) | (a > b); the kernel generator may rewrite the tree in place
    op = one_op("%r = arith.cmpf one, %a, %b : f32", "%a: f32, %b: f32")
    a, b = ast.Name("a", ast.Load()), ast.Name("b", ast.Load())
    (e,) = emit(op, [a, b], set())
    assert ast.unparse(e) == "(a < b) | (a > b)"
    nodes = [id(n) for n in ast.walk(e)]
    assert len(nodes) == len(set(nodes))


def test_helpers_reported_with_their_dependencies() -> None:
    op = one_op("%r = math.ctpop %a : i32", "%a: i32")
    helpers: set[str] = set()
    emit(op, [ast.Name("x", ast.Load())], helpers)
    assert helpers == {"_ctpop"}
    assert set(helper_closure(helpers)) == {"_ctpop", "_popcount", "_signed", "_unsigned"}
