"""The interpreter of tile programs: runs a :class:`~polykrnl.targets.pto.program.Program` on
NumPy arrays with the instruction semantics of :mod:`polykrnl.targets.pto.sim`, and checks races
(:mod:`.races`) and times the pipes (:mod:`.timeline`) on the way.

Loops run in order; a double-buffered tile is the copy of the parity of the iterations run
so far over its loop variable (the C++ counts them the same way); flags and barriers are
handed to the race checker and the clock, the model itself runs one instruction at a time.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import sympy  # type: ignore[import-untyped]

from polykrnl.errors import PtoError, TileConstraintError
from polykrnl.targets.pto import tmp_rules
from polykrnl.targets.pto.dtypes import ALIGN_BYTES, DType
from polykrnl.targets.pto.program import (
    Barrier,
    ConvForm,
    GlobalView,
    Instr,
    Item,
    Loop,
    Program,
    Scalar,
    SetFlag,
    SetValid,
    WaitFlag,
    eval_expr,
)
from polykrnl.targets.pto.races import RaceChecker
from polykrnl.targets.pto.sim import (
    SimTile,
    tbinary,
    tcolexpand_binary,
    texpands,
    tfillpad,
    tload,
    tmatmul,
    tmov,
    trowexpand,
    trowexpand_binary,
    trowreduce,
    tscalar,
    tstore,
    ttrans,
    ttrans_conv,
    tunary,
    window,
)
from polykrnl.targets.pto.timeline import CostModel, PipeClock, Timeline

__all__ = ["elements", "run_instr", "simulate", "timeline"]

Array = np.ndarray[Any, Any]


def _parity(var: str) -> str:
    """The environment key of the copy in use for tiles double-buffered over `var`: the parity
    of the iterations over `var` run so far, in any loop (not an identifier, so it never meets
    a name of the program)."""
    return f"{var}%2"


class _Machine:
    def __init__(
        self,
        prog: Program,
        arrays: Mapping[str, Array],
        params: Mapping[str, int],
        check_races: bool = True,
        clock: PipeClock | None = None,
    ) -> None:
        self.prog = prog
        self.clock = clock
        self.tiles = {d.name: SimTile.new(d.name, d.type) for d in prog.tiles}
        # the second copy of each double-buffered tile, and the loop whose parity picks it
        self.pong = {
            d.name: SimTile.new(d.name, d.type) for d in prog.tiles if d.pingpong is not None
        }
        self.pingpong = {d.name: d.pingpong for d in prog.tiles if d.pingpong is not None}
        self.count: dict[str, int] = {}  # iterations run so far, per loop variable
        self.races = RaceChecker(prog.name) if check_races else None
        env = {n: int(params[n]) for n in prog.params if n in params}
        missing = [n for n in prog.params if n not in params]
        if missing:
            raise PtoError(
                f"kernel {prog.name}: no value for problem size(s) {', '.join(missing)}",
                hint="pass them in params",
            )
        self.flat: dict[str, Array] = {}
        for t in prog.tensors:
            if t.name not in arrays:
                raise PtoError(f"kernel {prog.name}: no array for tensor argument {t.name}")
            a = arrays[t.name]
            n = eval_expr(t.numel, env)
            if not isinstance(a, np.ndarray) or not a.flags.c_contiguous or a.size != n:
                raise PtoError(
                    f"kernel {prog.name}: {t.name} must be a C-contiguous NumPy array of {n} "
                    f"elements, got {getattr(a, 'shape', type(a).__name__)}",
                    hint=f"pass an array of shape {tuple(str(s) for s in t.shape)}",
                )
            if a.dtype != t.dtype.np_dtype:
                raise PtoError(
                    f"kernel {prog.name}: {t.name} has dtype {a.dtype}, the kernel takes "
                    f"{t.dtype} ({t.dtype.np_dtype})",
                    hint=f"convert with .astype(np.{t.dtype.np_dtype})",
                )
            self.flat[t.name] = a.reshape(-1)
        self.env = env

    def run(self, items: tuple[Item, ...], env: dict[str, int]) -> None:
        for it in items:
            if isinstance(it, Loop):
                start, stop, step = (eval_expr(e, env) for e in (it.start, it.stop, it.step))
                if step <= 0:
                    raise PtoError(f"loop {it.var}: step {step} is not positive")
                for v in range(start, stop, step):
                    # iterations of loops over one variable alternate copies, wherever the
                    # loops are (the C++ counts them the same way)
                    k = self.count.get(it.var, 0)
                    self.count[it.var] = k + 1
                    self.run(it.body, {**env, it.var: v, _parity(it.var): k % 2})
            elif isinstance(it, SetValid):
                rows = None if it.rows is None else eval_expr(it.rows, env)
                cols = None if it.cols is None else eval_expr(it.cols, env)
                self.tile(it.tile, env).set_valid(rows, cols)
            elif isinstance(it, SetFlag | WaitFlag | Barrier):
                # the model runs one instruction at a time; the race checker and the clock
                # follow the flags
                self.sync(it, env)
            else:
                if self.races is not None:
                    self.check(it, env)
                if self.clock is not None:
                    self.time(it, env)
                try:
                    self.instr(it, env)
                except TileConstraintError as e:
                    what = f" ({it.comment})" if it.comment else ""
                    raise TileConstraintError(
                        f"{e.message}{what} at {self.where(env)}", hint=e.hint
                    ) from None

    def where(self, env: Mapping[str, int], *, sizes: bool = True) -> str:
        """`k=v, ...` of the loop iterators (and of the problem sizes, with `sizes`)."""
        return ", ".join(
            f"{k}={v}" for k, v in env.items() if k.isidentifier() and (sizes or k not in self.env)
        )

    def tile(self, name: str, env: Mapping[str, int]) -> SimTile:
        """The tile `name` in this iteration (a double-buffered tile: the copy of the parity)."""
        var = self.pingpong.get(name)
        return self.pong[name] if var is not None and env[_parity(var)] else self.tiles[name]

    def blocks(self, name: str, env: Mapping[str, int]) -> tuple[str, Array, str]:
        """The buffer a tile (its copy in use) lives in, its 32-byte blocks there, a label."""
        decl = self.prog.tile(name)
        var = self.pingpong.get(name)
        copy = 0 if var is None else env[_parity(var)]
        start = decl.copy_offset(copy)
        end = start + decl.type.bytes
        label = name if var is None else f"{name}[{copy}]"
        blocks = np.arange(start // ALIGN_BYTES, -(-end // ALIGN_BYTES), dtype=np.int64)
        return f"%{decl.buffer.value}", blocks, label

    def sync(self, it: SetFlag | WaitFlag | Barrier, env: Mapping[str, int]) -> None:
        r, c = self.races, self.clock
        if isinstance(it, Barrier):
            if r is not None:
                r.barrier(it.pipe)
            if c is not None:
                c.barrier(it.pipe)
            return
        event = it.event + (env[_parity(it.pingpong)] if it.pingpong else 0)
        if isinstance(it, SetFlag):
            if r is not None:
                r.set_flag(it.src, it.dst, event, self.where(env, sizes=False))
            if c is not None:
                c.set_flag(it.src, it.dst, event)
        else:
            if r is not None:
                r.wait_flag(it.src, it.dst, event, self.where(env, sizes=False))
            if c is not None:
                c.wait_flag(it.src, it.dst, event)

    def time(self, ins: Instr, env: Mapping[str, int]) -> None:
        """Hand the instruction to the clock: its bytes (the largest tile operand's valid
        region) and, for a matmul, m x k x n."""
        assert self.clock is not None
        tiles = [self.tile(n, env) for n in {*ins.tiles_read(), *ins.tiles_written()}]
        nbytes = max((math.prod(t.valid) * t.dtype.size for t in tiles), default=0)
        mkn = None
        if ins.info.kind in ("matmul", "matmul_acc"):
            a, b = (self.tile(_t(x), env) for x in ins.srcs)
            mkn = (a.valid_row, a.valid_col, b.valid_col)
        self.clock.instr(ins, self.prog.pipe_of(ins), nbytes, mkn)

    def check(self, ins: Instr, env: Mapping[str, int]) -> None:
        """Hand the instruction's accesses to the race checker (before running it, so that
        a window outside its tensor is reported by the instruction itself)."""
        assert self.races is not None
        reads = [self.blocks(n, env) for n in ins.tiles_read()]
        writes = [self.blocks(n, env) for n in ins.tiles_written()]
        accessed = [(x, reads) for x in ins.srcs] + [(ins.dst, writes)]
        if ins.atomic_add:  # it reads the window it adds to
            accessed.append((ins.dst, reads))
        for view, into in accessed:
            if isinstance(view, GlobalView):
                into.append(
                    (f"@{view.tensor}", elements(view, env), f"global memory of {view.tensor}")
                )
        self.races.access(ins, self.prog.pipe_of(ins), reads, writes, self.where(env, sizes=False))

    def scalar(self, s: Scalar, env: Mapping[str, int]) -> float | int:
        v = s.value
        return eval_expr(v, env) if isinstance(v, sympy.Expr) else v

    def instr(self, ins: Instr, env: Mapping[str, int]) -> None:
        kind, op, T = ins.info.kind, ins.op, _Current(self, env)
        srcs = ins.srcs
        if kind == "store":
            assert isinstance(ins.dst, GlobalView) and isinstance(srcs[0], str)
            tstore(
                window(self.flat[ins.dst.tensor], ins.dst, env, op), T[srcs[0]], op, ins.atomic_add
            )
            return
        assert isinstance(ins.dst, str)
        dst = T[ins.dst]
        if kind == "load":
            assert isinstance(srcs[0], GlobalView)
            tload(dst, window(self.flat[srcs[0].tensor], srcs[0], env, op))
        elif kind == "unary":
            tunary(op, dst, T[_t(srcs[0])])
        elif kind == "binary":
            tbinary(op, dst, T[_t(srcs[0])], T[_t(srcs[1])])
        elif kind == "scalar":
            first = isinstance(srcs[0], Scalar)
            s, t = (srcs[0], srcs[1]) if first else (srcs[1], srcs[0])
            assert isinstance(s, Scalar)
            tscalar(op, dst, T[_t(t)], self.scalar(s, env), first)
        elif kind == "expands":
            assert isinstance(srcs[0], Scalar)
            texpands(dst, self.scalar(srcs[0], env))
        elif kind == "rowreduce":
            src = T[_t(srcs[0])]
            self.check_tmp(ins, src.dtype, valid_row=src.valid_row, valid_col=src.valid_col)
            trowreduce(op, dst, src)
        elif kind == "rowexpand":
            trowexpand(dst, T[_t(srcs[0])])
        elif kind == "rowexpand_bin":
            if ins.tmp is not None:
                self.check_tmp(ins, dst.dtype, valid_row=dst.valid_row)
            trowexpand_binary(op, dst, T[_t(srcs[0])], T[_t(srcs[1])])
        elif kind == "colexpand_bin":
            tcolexpand_binary(op, dst, T[_t(srcs[0])], T[_t(srcs[1])])
        elif kind == "trans" and ins.conv is not None:
            src = T[_t(srcs[0])]
            self.check_conv_tmp(ins, ins.conv, src.dtype)
            ttrans_conv(ins.conv, dst, src)
        elif kind == "trans":
            src = T[_t(srcs[0])]
            self.check_tmp(ins, src.dtype, valid_row=src.valid_row, valid_col=src.valid_col)
            ttrans(dst, src, self.prog.arch.name)
        elif kind == "mov":
            tmov(dst, T[_t(srcs[0])])
        elif kind in ("matmul", "matmul_acc"):
            tmatmul(dst, T[_t(srcs[0])], T[_t(srcs[1])], kind == "matmul_acc")
        elif kind == "fillpad":
            tfillpad(dst, T[_t(srcs[0])])
        else:  # pragma: no cover - the table's kinds and this dispatch are kept in step
            raise AssertionError(kind)

    def check_conv_tmp(self, ins: Instr, conv: ConvForm, dt: DType) -> None:
        assert ins.tmp is not None
        tmp = self.prog.tile(ins.tmp).type
        tmp_rules.check(conv.rule, self.prog.arch, dtype=dt, tmp=tmp, **conv.tmp_sizes())

    def check_tmp(self, ins: Instr, dt: DType, **sizes: int) -> None:
        assert ins.tmp is not None
        tmp = self.prog.tile(ins.tmp).type
        tmp_rules.check(ins.op, self.prog.arch, dtype=dt, tmp=tmp, **sizes)


class _Current(Mapping[str, SimTile]):
    """The tiles as one instruction sees them (double-buffered ones: the current copy)."""

    def __init__(self, m: _Machine, env: Mapping[str, int]) -> None:
        self.m, self.env = m, env

    def __getitem__(self, name: str) -> SimTile:
        return self.m.tile(name, self.env)

    def __iter__(self) -> Iterator[str]:
        return iter(self.m.tiles)

    def __len__(self) -> int:
        return len(self.m.tiles)


def elements(view: GlobalView, env: Mapping[str, int]) -> Array:
    """The flat element indices of a global window (for the race checker)."""
    off = eval_expr(view.offset, env)
    rows, cols = eval_expr(view.rows, env), eval_expr(view.cols, env)
    ld = eval_expr(view.row_stride, env)
    if rows < 1 or cols < 1:
        return np.zeros(0, np.int64)
    idx = off + np.add.outer(np.arange(rows, dtype=np.int64) * ld, np.arange(cols))
    return np.clip(idx.reshape(-1), 0, None)


def _t(x: object) -> str:
    assert isinstance(x, str)
    return x


def run_instr(
    prog: Program, ins: Instr, tiles: Mapping[str, SimTile], env: Mapping[str, int]
) -> None:
    """Run one instruction on given tile states (for tests of single instructions)."""
    m = _Machine.__new__(_Machine)
    m.prog, m.tiles, m.flat, m.env = prog, dict(tiles), {}, dict(env)
    m.pong, m.pingpong, m.races, m.clock, m.count = {}, {}, None, None, {}
    m.instr(ins, env)


def simulate(
    prog: Program,
    arrays: Mapping[str, Array],
    params: Mapping[str, int] | None = None,
    *,
    check_races: bool = True,
) -> dict[str, SimTile]:
    """Run ``prog`` on NumPy arrays (one per tensor argument, updated in place) with the given
    problem sizes; returns the final tile states (the second copy of a double-buffered tile
    ``t`` as ``t#1``).

    With ``check_races`` (the default), also checks that the program's flags order every
    pair of conflicting accesses on different pipes (:mod:`polykrnl.targets.pto.races`) and raises
    RaceError at the first one that they do not."""
    m = _Machine(prog, arrays, params or {}, check_races)
    m.run(prog.body, dict(m.env))
    if m.races is not None:
        m.races.finish()
    return {**m.tiles, **{f"{n}#1": t for n, t in m.pong.items()}}


def timeline(
    prog: Program,
    arrays: Mapping[str, Array],
    params: Mapping[str, int] | None = None,
    cost: CostModel | None = None,
) -> Timeline:
    """Run ``prog`` like :func:`simulate` (races checked) and time it with the pipes in
    parallel under ``cost`` (:mod:`polykrnl.targets.pto.timeline`)."""
    clock = PipeClock(cost or CostModel())
    m = _Machine(prog, arrays, params or {}, True, clock)
    m.run(prog.body, dict(m.env))
    assert m.races is not None
    m.races.finish()
    return clock.timeline(prog.name)
