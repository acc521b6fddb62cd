"""Reference execution of a PolyProgram's statement instances in a given order.

This is the oracle for transformed schedules: ``run_reference(fn,
schedule=s, ...)`` runs every statement instance in the order of ``s``,
each with the reference interpreter's op semantics. A statement sees the
original induction variables of its instance, the values of the concrete
loops around it (for krnl.get_induction_var_value) as the program's nest
defines them, and values of other statements through their virtual arrays
(one element per iteration of the loops around the definition).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import islpy as isl
import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from polykrnl.dialect import krnl as k
from polykrnl.errors import InterpretError, UnsupportedError
from polykrnl.interpreter.core import Frame, Interpreter
from polykrnl.interpreter.values import Fail, handed_back
from polykrnl.ir import Function
from polykrnl.poly import DimParam, PolyProgram, Statement, is_pure

Instance = tuple[str, dict[str, int]]


class Ordered(Protocol):
    """A schedule: its program and its instance order for given parameters."""

    @property
    def program(self) -> PolyProgram: ...

    def trace(self, **params: int) -> list[Instance]: ...


def run_schedule(fn: Function, schedule: Ordered, arguments: Mapping[str, Any]) -> Any:
    program = schedule.program
    if program.function.op is not fn.op:
        raise UnsupportedError(
            f"the schedule is for @{program.function.name}, not @{fn.name}",
            location=fn.location(fn.op),
            hint="pass a schedule built from this function",
        )
    it = Interpreter(fn.module)
    values, writeback = it.bind_arguments(fn, arguments)
    args: dict[SSAValue, Any] = dict(zip(fn.op.body.block.args, values, strict=True))
    params = _params(program, fn, args)
    order = schedule.trace(**params)
    runner = _Runner(it, fn, program, args, params)
    with _errstate():
        for name, point in order:
            runner.run(name, point)
        results = runner.results()
    return handed_back(fn, results, writeback)


def _errstate() -> Any:
    return np.errstate(all="ignore")


def _params(program: PolyProgram, fn: Function, args: Mapping[SSAValue, Any]) -> dict[str, int]:
    """Parameter values (as users name them) from the arguments of the call."""
    by_value = {p: v for v, p in program.symbols.items()}
    out: dict[str, int] = {}
    used = set(program.domain_params())
    for p, src in program.param_sources.items():
        if p not in used:
            continue
        disp = str(src)
        v = by_value.get(p)
        if v is not None and v in args:
            out[disp] = int(args[v])
            continue
        if isinstance(src, DimParam) and src.array in args:
            out[disp] = int(args[src.array].shape[src.dim])
            continue
        raise UnsupportedError(
            f"the loop bounds of @{fn.name} depend on {disp}, a value computed inside the "
            "function: polykrnl cannot order the instances before running it",
            location=fn.location(fn.op),
            hint="run it without a schedule, or pass the size as an index argument",
        )
    return out


class _Runner:
    def __init__(
        self,
        it: Interpreter,
        fn: Function,
        program: PolyProgram,
        args: Mapping[SSAValue, Any],
        params: Mapping[str, int],
    ) -> None:
        self.it = it
        self.fn = fn
        self.program = program
        self.frame = Frame(fn, it.nest_of(fn))
        # krnl.get_induction_var_value looks its loop up in the program's own nest.
        self.frame.nest = program.nest
        self.base = dict(args)
        self.stmts = {s.name: s for s in program.statements}
        self.loop_of = {name: lp for lp, name in program.loop_names.items()}
        self.by_anchor = {s.anchor: s for s in program.statements}
        self.store: dict[tuple[Any, tuple[int, ...]], Any] = {}
        self.values_at: dict[str, dict[tuple[int, ...], tuple[int, ...]]] = {}
        self.params = {p: params[d] for p, d in program.param_display.items() if d in params}

    def loop_values(self, s: Statement, point: tuple[int, ...]) -> tuple[int, ...]:
        table = self.values_at.get(s.name)
        if table is None:
            table = self.values_at[s.name] = {}
            m = s.loop_values
            if self.params:
                names = list(self.params)
                cons = " and ".join(f"{n} = {self.params[n]}" for n in names)
                m = m.intersect_params(isl.Set(f"[{', '.join(names)}] -> {{ : {cons} }}"))
            m = m.project_out_all_params()
            n_in = m.dim(isl.dim_type.in_)
            n_out = m.dim(isl.dim_type.out)

            def on_point(p: isl.Point) -> None:
                c = [
                    int(p.get_coordinate_val(isl.dim_type.set, i).to_python())
                    for i in range(n_in + n_out)
                ]
                table[tuple(c[:n_in])] = tuple(c[n_in:])

            m.wrap().foreach_point(on_point)
        return table[point]

    def key(
        self, s: Statement, loops_now: tuple[int, ...], def_loops: tuple[str, ...]
    ) -> tuple[int, ...]:
        return tuple(loops_now[s.loops.index(n)] for n in def_loops)

    def run(self, name: str, point_dict: dict[str, int]) -> None:
        s = self.stmts[name]
        point = tuple(point_dict[d] for d in s.dims)
        loops_now = self.loop_values(s, point)
        fr = self.frame
        fr.env = dict(self.base)
        fr.ivs = {}
        for lname, value in zip(s.loops, loops_now, strict=True):
            lp = self.loop_of[lname]
            fr.ivs[lp] = value
            if lp.origin.carrier is lp:
                fr.env[lp.origin.entry.iv] = value
        for v, _ in s.imports:
            arr, def_loops = self.program.virtual[v]
            fr.env[v] = self.store[(arr, self.key(s, loops_now, def_loops))]
        inside = set(s.ops)
        for op in s.ops:
            self.ensure_operands(op, inside, s, loops_now)
            if isinstance(op, k.YieldOp):
                continue
            self.it.exec_op(op, fr)
        own = loops_now
        if s.kind == "init":
            assert s.iterate is not None
            for a, init in zip(s.iterate.iter_args, s.iterate.iter_inits, strict=True):
                self.ensure(init, s, loops_now)
                arr, def_loops = self.program.virtual[a]
                self.store[(arr, self.key(s, own, def_loops))] = fr.env[init]
        elif s.kind == "yield":
            assert s.iterate is not None
            term = s.iterate.body.block.last_op
            assert term is not None
            for a, y in zip(s.iterate.iter_args, term.operands, strict=True):
                arr, def_loops = self.program.virtual[a]
                self.store[(arr, self.key(s, own, def_loops))] = fr.env[y]
        else:
            for v, arr in s.exports:
                _, def_loops = self.program.virtual[v]
                self.store[(arr, self.key(s, own, def_loops))] = fr.env[v]
            for r in s.anchor.results:
                if isinstance(r.type, MemRefType) and r in fr.env:
                    self.store[(r, self.key(s, own, s.dim_loops))] = fr.env[r]

    def ensure_operands(
        self, op: Operation, inside: set[Operation], s: Statement, loops_now: tuple[int, ...]
    ) -> None:
        for region in op.regions:
            for inner in region.walk():
                for v in inner.operands:
                    d = v.owner
                    if isinstance(d, Operation) and (d in inside or _within(d, op)):
                        continue
                    if not (isinstance(v, BlockArgument) and _within_block(v, op)):
                        self.ensure(v, s, loops_now)
        for v in op.operands:
            d = v.owner
            if isinstance(d, Operation) and d in inside:
                continue
            self.ensure(v, s, loops_now)

    def ensure(self, v: SSAValue, s: Statement | None, loops_now: tuple[int, ...]) -> None:
        """Make `v` available: recompute an index computation, or fetch a kept value.

        `s` is the statement that needs it (None: the function's results, of a
        function without statements, which has no kept values).
        """
        fr = self.frame
        if v in fr.env or isinstance(v.type, k.LoopType):
            return
        if isinstance(v, OpResult):
            op = v.op
            if v in self.program.virtual and s is not None:
                arr, def_loops = self.program.virtual[v]
                fr.env[v] = self.store[(arr, self.key(s, loops_now, def_loops))]
                return
            if is_pure(op) and not isinstance(op, k.IterateOp):
                for x in op.operands:
                    self.ensure(x, s, loops_now)
                self.it.exec_op(op, fr)
                return
            d = self.by_anchor.get(op)
            if (
                d is not None
                and s is not None
                and (v, self.key(s, loops_now, d.dim_loops)) in self.store
            ):
                fr.env[v] = self.store[(v, self.key(s, loops_now, d.dim_loops))]
                return
        raise InterpretError(
            f"{_describe(v)} is not available to "
            + (f"statement {s.label}" if s is not None else "the results")
            + " in this order",
            location=s.location if s is not None else None,
            hint="the schedule runs this statement before the one that computes the value",
        )

    def results(self) -> list[Any]:
        term = self.fn.op.body.block.last_op
        if term is None or not isinstance(term, func.ReturnOp):
            return []
        fr = self.frame
        fr.env = dict(self.base)
        fr.ivs = {}
        out = []
        for v in term.operands:
            if isinstance(v, OpResult) and v in self.program.virtual:
                arr, _ = self.program.virtual[v]
                out.append(self.store[(arr, ())])
                continue
            try:
                self.ensure(v, self.program.statements[0] if self.program.statements else None, ())
            except (InterpretError, Fail, ValueError):
                raise UnsupportedError(
                    f"cannot compute the result {_describe(v)} of @{self.fn.name} "
                    "after a scheduled run",
                    location=self.fn.location(term),
                    hint="return values computed by krnl.iterate iter_args or function "
                    "arguments, or run without a schedule",
                ) from None
            out.append(fr.env[v])
        return out


def _within(op: Operation, outer: Operation) -> bool:
    p = op.parent_op()
    while p is not None:
        if p is outer:
            return True
        p = p.parent_op()
    return False


def _within_block(v: BlockArgument, outer: Operation) -> bool:
    p = v.block.parent_op()
    return p is outer or (p is not None and _within(p, outer))


def _describe(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else "a value"
