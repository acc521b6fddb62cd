"""The PTO leg of the differential campaign: random tiled elementwise programs that the
PTO backend lowers, simulated with polykrnl's NumPy model of the tile instructions and
compared with the reference interpreter.

The random programs of tools/differential_programs.py are never PTO-lowerable (0 of
150: a scalar bound, imperfect nests, i64), so this leg draws its own, in the shape the
backend documents: a 2-D nest over `%N x %M` (f32, or f16 for add/mul/max/min),
blocked by a random tile (1 to 16 rows, 8 to 64 columns, the columns a multiple of 32
bytes), the tile loops outside the point loops, one statement storing a random
expression tree of 1 to 5 ops over 1 to 3 input arrays and constants. Sizes include
partial tiles at the edges and sizes below one tile. Oracles: a lowering refused with
a polykrnl error is counted as refused (with its reason); a lowered kernel, simulated
for both architectures, must give the interpreter's array, bit for bit for add, sub,
mul, max, min, abs and neg, within rounding (`_atol`) where it divides or takes exp /
sqrt. Anything outside polykrnl's error hierarchy is a failure.

    python tools/differential_pto.py --seed 0 --programs 300
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import polykrnl as pk

BINARY = {"add": "arith.addf", "sub": "arith.subf", "mul": "arith.mulf", "max": "arith.maximumf",
          "min": "arith.minimumf", "div": "arith.divf"}  # fmt: skip
UNARY = {"exp": "math.exp", "sqrt": "math.sqrt", "abs": "math.absf", "neg": "arith.negf"}
# Ops whose tile instruction may round differently from the interpreter's scalar op.
INEXACT = {"div", "exp", "sqrt"}


@dataclass
class Program:
    text: str
    dtype: str
    inexact: bool
    inputs: int


@dataclass
class Results:
    programs: int = 0
    lowered: int = 0
    compared: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    findings: list[str] = field(default_factory=list)
    elapsed: float = 0.0


def generate(rng: random.Random) -> Program:
    dtype = rng.choice(["f32", "f32", "f32", "f16"])
    n_in = rng.randint(1, 3)
    ops = list(BINARY) if dtype == "f32" else ["add", "mul", "max", "min"]
    unary = list(UNARY) if dtype == "f32" else ["abs", "neg"]
    lines: list[str] = []
    values = [f"%x{k}" for k in range(n_in)]
    inexact = False
    for k in range(rng.randint(1, 5)):
        if rng.random() < 0.25:
            op = rng.choice(unary)
            a = rng.choice(values)
            if op == "sqrt":  # of |a|: the interpreter and the model agree on NaN anyway
                lines.append(f"      %q{k} = math.absf {a} : {dtype}")
                a = f"%q{k}"
            lines.append(f"      %v{k} = {UNARY[op]} {a} : {dtype}")
        else:
            op = rng.choice(ops)
            a = rng.choice(values)
            if rng.random() < 0.3:
                c = rng.choice(["2.0", "0.5", "-1.5", "3.0"])
                lines.append(f"      %c{k} = arith.constant {c} : {dtype}")
                b = f"%c{k}"
            else:
                b = rng.choice(values)
            if op == "div":  # divide by 1 + |b|: no division by (near) zero
                lines.append(f"      %d{k} = math.absf {b} : {dtype}")
                lines.append(f"      %one{k} = arith.constant 1.0 : {dtype}")
                lines.append(f"      %e{k} = arith.addf %d{k}, %one{k} : {dtype}")
                b = f"%e{k}"
            lines.append(f"      %v{k} = {BINARY[op]} {a}, {b} : {dtype}")
        inexact |= op in INEXACT
        values.append(f"%v{k}")
    rows = rng.choice([1, 2, 4, 8, 16])
    # a whole number of 32-byte blocks per tile row: 8 f32 or 16 f16 elements
    cols = 8 * rng.choice([1, 2, 4, 8]) if dtype == "f32" else 16 * rng.choice([1, 2, 4])
    args = ", ".join(f"%X{k}: memref<?x?x{dtype}>" for k in range(n_in))
    loads = "\n".join(
        f"      %x{k} = krnl.load %X{k}[%i, %j] : memref<?x?x{dtype}>" for k in range(n_in)
    )
    text = f"""func.func @f(%N: index, %M: index, {args}, %Y: memref<?x?x{dtype}>) {{
  %ii, %jj = krnl.define_loops 2
  %ib, %il = krnl.block %ii {rows} : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  %jb, %jl = krnl.block %jj {cols} : (!krnl.loop) -> (!krnl.loop, !krnl.loop)
  krnl.permute(%ib, %il, %jb, %jl) [0, 2, 1, 3] : !krnl.loop, !krnl.loop, !krnl.loop, !krnl.loop
  krnl.iterate(%ib, %jb) with (%ii -> %i = 0 to %N, %jj -> %j = 0 to %M) {{
    krnl.iterate(%il, %jl) with () {{
{loads}
{chr(10).join(lines)}
      krnl.store {values[-1]}, %Y[%i, %j] : memref<?x?x{dtype}>
    }}
  }}
  return
}}
"""
    return Program(text, dtype, inexact, n_in)


def _atol(want: np.ndarray[Any, Any]) -> float:
    """The rounding an exp, sqrt or division may differ by (the interpreter rounds the
    float64 result once, the tile model computes in the element type), carried through
    at most 5 ops of factors <= 3: 64 ulps of the largest magnitude involved (inputs in
    [-2, 2], exp up to e^2)."""
    finite = np.abs(want[np.isfinite(want)].astype(np.float64))
    scale = max(8.0, float(finite.max(initial=0.0)))
    return 64 * float(np.finfo(want.dtype).eps) * scale


def run_program(seed: int, number: int, res: Results) -> None:
    rng = random.Random(f"pto:{seed}:{number}")
    prog = generate(rng)
    res.programs += 1
    fn = pk.parse(prog.text)["f"]
    pk.verify(fn.module)
    sched = pk.schedule(fn)
    np_dtype = np.float32 if prog.dtype == "f32" else np.float16
    data = np.random.default_rng(rng.randrange(1 << 30))
    n, m = rng.randint(1, 40), rng.randint(1, 100)
    args: dict[str, Any] = {"N": n, "M": m}
    for k in range(prog.inputs):
        args[f"X{k}"] = data.uniform(-2, 2, (n, m)).astype(np_dtype)
    args["Y"] = np.full((n, m), np.nan, np_dtype)
    want = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
    pk.run_reference(fn, **want)
    lowered = False
    for arch in ("a2a3", "a5"):
        try:
            kernel = sched.to_pto(arch)
        except pk.PolykrnlError as e:
            res.refused[f"{arch}: {re.sub(r'line [0-9]+', 'line L', e.message)[:110]}"] += 1
            continue
        lowered = True
        got = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
        kernel.simulate(**got)
        res.compared += 1
        ok = (
            np.allclose(got["Y"], want["Y"], rtol=0, atol=_atol(want["Y"]), equal_nan=True)
            if prog.inexact
            else np.array_equal(got["Y"], want["Y"], equal_nan=True)
        )
        if not ok:
            diff = np.abs(got["Y"].astype(float) - want["Y"].astype(float))
            res.findings.append(
                f"pto:{seed}:{number} {arch} N={n} M={m}: the simulated kernel differs "
                f"(max |diff| {np.nanmax(diff):.3g})\n{prog.text}"
            )
    res.lowered += lowered


def campaign(seed: int, programs: int) -> Results:
    res = Results()
    start = time.perf_counter()
    for number in range(programs):
        try:
            run_program(seed, number, res)
        except pk.PolykrnlError as e:
            res.findings.append(f"pto:{seed}:{number}: unexpected {type(e).__name__}: {e}")
        except Exception:
            res.findings.append(f"pto:{seed}:{number}: traceback\n{traceback.format_exc()}")
    res.elapsed = time.perf_counter() - start
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--programs", type=int, default=300)
    a = ap.parse_args(argv)
    res = campaign(a.seed, a.programs)
    print(
        f"programs {res.programs}, lowered {res.lowered}, kernels simulated and compared "
        f"{res.compared}, findings {len(res.findings)}, elapsed {res.elapsed:.1f} s"
    )
    for reason, count in res.refused.most_common(8):
        print(f"  refused {count}x: {reason}")
    for f in res.findings[:10]:
        print("==", f)
    return 1 if res.findings else 0


if __name__ == "__main__":
    sys.exit(main())
