"""The Krnl loop recipe: loop handles, their transformations, krnl.iterate and the scoped ops."""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

from xdsl.dialects.builtin import IntegerType, StringAttr
from xdsl.ir import Block, Region, SSAValue
from xdsl.ir.affine import AffineMap

from polykrnl.builder.core import (
    Entry,
    FunctionCore,
    IterArg,
    Loop,
    Names,
    Scope,
    Value,
    builder_error,
    check_names,
    describe,
)
from polykrnl.dialect import krnl as krnl


class _MovableScope(Scope):
    def _finish(self) -> None:
        self._builder._insert(krnl.TerminateOp())


class _RegionScope(Scope):
    pass


def _is_value(v: object) -> bool:
    return isinstance(v, SSAValue)


def _as_list(v: Value | Sequence[Value]) -> list[Value]:
    return [v] if isinstance(v, SSAValue) else list(v)


class KrnlLoopOps(FunctionCore):
    """Loop handles (``krnl.define_loops``, ``krnl.block``, ``krnl.permute``, ...) and the
    scoped ops (``krnl.iterate``, ``krnl.movable``, ``krnl.region``)."""

    def define_loops(self, count: int, *, names: Names = ()) -> tuple[Value, ...]:
        """``%a, %b = krnl.define_loops 2``: ``count`` new loop handles."""
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise builder_error(
                f"krnl.define_loops needs a non-negative loop count, got {count!r}",
                "pass the number of loop handles to define, e.g. f.define_loops(2)",
            )
        op = self._insert(krnl.DefineLoopsOp(count), names=names)
        return tuple(op.results)

    def block(self, loop: Value, tile_size: int, *, names: Names = ()) -> tuple[Value, Value]:
        """``%t, %p = krnl.block %L 4``: the tile and point handles of ``loop``."""
        h = self._handle(loop)
        if isinstance(tile_size, bool) or not isinstance(tile_size, int) or tile_size <= 0:
            raise builder_error(
                f"krnl.block needs a positive integer tile size, got {tile_size!r}",
                "pass a constant tile size such as 4 or 32",
            )
        op = self._insert(krnl.BlockOp(h, tile_size), names=names)
        return op.results[0], op.results[1]

    def permute(self, loops: Sequence[Value], perm: Sequence[int]) -> None:
        """``krnl.permute(%a, %b) [1, 0]``: loop k moves to position ``perm[k]``."""
        hs = [self._handle(h) for h in loops]
        p = list(perm)
        if sorted(p) != list(range(len(hs))) or any(isinstance(x, bool) for x in p):
            raise builder_error(
                f"krnl.permute of {len(hs)} loops needs a permutation of 0..{len(hs) - 1}, got {p}",
                "map[k] is the new position of the k-th loop; every position appears once",
            )
        self._insert(krnl.PermuteOp(hs, p))

    def parallel(
        self,
        loops: Value | Sequence[Value],
        *,
        num_threads: Value | None = None,
        proc_bind: str | None = None,
    ) -> None:
        """``krnl.parallel(%h...) [, num_threads(%n)] {proc_bind = "..."}``."""
        hs = [self._handle(h) for h in _as_list(loops)]
        nt = None
        if num_threads is not None:
            nt = self._value(num_threads, "num_threads")
            if nt.type != IntegerType(32):
                raise builder_error(
                    f"num_threads must be an i32 value, got {describe(nt)}",
                    'make it with f.constant(8, "i32") or f.index_cast(n, "i32")',
                )
        if proc_bind is not None and proc_bind not in krnl.ParallelOp.PROC_BINDS:
            raise builder_error(
                f"proc_bind must be one of {', '.join(krnl.ParallelOp.PROC_BINDS)}, "
                f"got {proc_bind!r}",
                'use proc_bind="spread", "close" or "primary"',
            )
        op = krnl.ParallelOp(hs, nt)
        # Set after construction, as the parser does, so the generic forms match too.
        if proc_bind is not None:
            op.properties["proc_bind"] = StringAttr(proc_bind)
        self._insert(op)

    def unroll(self, loop: Value) -> None:
        """``krnl.unroll %h``: fully unroll the final loop of ``%h``."""
        self._insert(krnl.UnrollOp(self._handle(loop)))

    @overload
    def get_induction_var_value(self, loops: Value, *, name: str | None = None) -> Value: ...

    @overload
    def get_induction_var_value(
        self, loops: Sequence[Value], *, names: Names = ()
    ) -> tuple[Value, ...]: ...

    def get_induction_var_value(
        self,
        loops: Value | Sequence[Value],
        *,
        name: str | None = None,
        names: Names = (),
    ) -> Value | tuple[Value, ...]:
        """``krnl.get_induction_var_value(%h...)``.

        One handle gives one value (named by ``name``); a list gives a tuple
        (named by ``names``).
        """
        single = isinstance(loops, SSAValue)
        hs = [self._handle(h) for h in _as_list(loops)]
        op = self._insert(
            krnl.GetInductionVarValueOp(hs),
            names=[name] if single and name is not None else names,
        )
        return op.results[0] if single else tuple(op.results)

    def iterate(
        self,
        loops: Value | Sequence[Value],
        entries: Sequence[Entry],
        *,
        iter_args: Sequence[IterArg] = (),
        names: Names = (),
    ) -> Loop:
        """``krnl.iterate(loops) with (entries) [iter_args(...)] { body }``.

        ``loops`` are the optimized handles (the body goes into the loop of
        the last one); each entry is ``(original_handle, iv_name, lb, ub)``
        with bounds as int, index value or :class:`AffineBound`. ``entries``
        may be empty (``with ()``). ``iter_args`` are ``(name, init)`` pairs
        (or bare initial values); ``names`` name the loop's results. Use the
        returned :class:`Loop` in a ``with`` statement.
        """
        self._check_ready()
        optimized = [self._handle(h) for h in _as_list(loops)]
        built: list[tuple[SSAValue, AffineMap, Sequence[SSAValue], AffineMap, Sequence[SSAValue]]]
        built = []
        iv_names: list[str | None] = []
        for entry in entries:
            if not (isinstance(entry, tuple | list) and len(entry) == 4):
                raise builder_error(
                    f"a krnl.iterate entry must be (handle, iv_name, lb, ub), got {entry!r}",
                    'write entries as [(ii, "i", 0, 40), (jj, "j", 0, N)]',
                )
            handle, iv_name, lb, ub = entry
            h = self._handle(handle)
            lb_map, lb_ops = self._bound(lb)
            ub_map, ub_ops = self._bound(ub)
            built.append((h, lb_map, lb_ops, ub_map, ub_ops))
            iv_names.append(iv_name)
        check_names(iv_names, len(iv_names), "induction variables")
        init_names: list[str | None] = []
        inits: list[SSAValue] = []
        for ia in iter_args:
            if isinstance(ia, tuple) and len(ia) == 2:
                n, init = ia
            elif _is_value(ia):
                n, init = None, ia
            else:
                raise builder_error(
                    f"an iter_arg must be (name, initial value) or a value, got {ia!r}",
                    'write iter_args=[("acc", f0)]',
                )
            init_names.append(n)
            inits.append(self._value(init, "an iter_args initial value"))
        check_names(init_names, len(init_names), "iter_args")
        op = krnl.IterateOp.make(optimized, built, inits)
        for a, n in zip(op.body.block.args, [*iv_names, *init_names], strict=True):
            a.name_hint = n
        self._insert(op, names=names)
        loop = Loop(self, op)
        self._pending = loop
        return loop

    def yield_(self, values: Sequence[Value] = ()) -> None:
        """``krnl.yield``: the next values of the iter_args, ending the iterate body."""
        self._check_ready()
        scope = self._stack[-1]
        if not isinstance(scope, Loop):
            raise builder_error(
                "f.yield_() must be directly inside a krnl.iterate body",
                "call it last in the with f.iterate(...) block (not in a movable or region)",
            )
        vals = [self._value(v, "a yielded value") for v in values]
        want = list(scope.op.result_types)
        if len(vals) != len(want):
            raise builder_error(
                f"krnl.yield gives {len(vals)} values, the krnl.iterate carries "
                f"{len(want)} iter_args",
                "yield exactly one value per iter_arg",
            )
        got = [v.type for v in vals]
        if got != want:
            raise builder_error(
                f"krnl.yield gives ({', '.join(map(str, got))}), the iter_args are "
                f"({', '.join(map(str, want))})",
                "yield values of the iter_args' types, in order",
            )
        self._insert(krnl.YieldOp(vals))

    def movable(self) -> Scope:
        """``krnl.movable { ... }``: use as ``with f.movable():``."""
        self._check_ready()
        op = krnl.MovableOp(Region(Block()))
        self._insert(op)
        scope = _MovableScope(self, op, op.region.block)
        self._pending = scope
        return scope

    def region(self) -> Scope:
        """``krnl.region { ... }`` (an affine scope): use as ``with f.region():``."""
        self._check_ready()
        op = krnl.RegionOp()
        self._insert(op)
        scope = _RegionScope(self, op, op.body_region.block)
        self._pending = scope
        return scope
