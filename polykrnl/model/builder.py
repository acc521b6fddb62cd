"""Build Krnl programs from Python, without writing MLIR text.

The builder makes the same xDSL IR as parsing the equivalent hand-written
text: ``mb.module().print() == pk.parse(text).print()``. Each op it creates is
located at the Python line that asked for it, so later errors (verifier,
schedules, interpreter) point at the user's code.

Example::

    from polykrnl.model.builder import ModuleBuilder

    mb = ModuleBuilder()
    with mb.function("copy", [("A", "memref<40xf32>"), ("B", "memref<40xf32>")]) as f:
        A, B = f.args
        (ii,) = f.define_loops(1, names=("ii",))
        with f.iterate([ii], [(ii, "i", 0, 40)]) as (i,):
            f.store(f.load(A, [i], name="a"), B, [i])
    mod = mb.module()

Values are plain xDSL ``SSAValue`` objects; loop handles are values of type
``!krnl.loop``. Scoped ops (``iterate``, ``movable``, ``region``) are context
managers: the ops made inside the ``with`` block go into their body.

Misuse raises :class:`polykrnl.errors.BuilderError` located at the offending
Python line. The checks run before the IR changes, so a caught error leaves
the builder usable; an exception that leaves a function's ``with`` block drops
that half-built function from the module.
"""

from __future__ import annotations

import linecache
import sys
from collections.abc import Iterator, Mapping, Sequence
from types import TracebackType
from typing import TypeAlias, overload

from xdsl.dialects import affine, arith, func, math, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    AnyFloat,
    ArrayAttr,
    BoolAttr,
    FileLineColLoc,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.irdl import IRDLOperation
from xdsl.parser import Parser
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import ParseError as XParseError
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.mlir_lexer import MLIRTokenKind

from polykrnl.errors import BuilderError, SourceLocation
from polykrnl.model import dialect as krnl
from polykrnl.model.ir import Module
from polykrnl.model.parser import context

__all__ = [
    "AffineBound",
    "Bound",
    "Entry",
    "FunctionBuilder",
    "IterArg",
    "Loop",
    "ModuleBuilder",
    "Scope",
    "TypeLike",
    "Value",
]

Value: TypeAlias = SSAValue
"""An SSA value (xDSL ``SSAValue``): function argument, op result, IV or iter_arg."""

TypeLike: TypeAlias = str | Attribute
"""An MLIR type: text such as ``"memref<?x8xf32>"`` or an xDSL type attribute."""

Names: TypeAlias = Sequence[str | None]

# ------------------------------------------------------------------ call sites


def _user_frame() -> tuple[str, int]:
    """File and line of the innermost frame outside this module (the user's call)."""
    here = _user_frame.__code__.co_filename
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename == here:
        frame = frame.f_back
    return frame.f_code.co_filename, frame.f_lineno


def _op_location() -> FileLineColLoc:
    # Column 1 on purpose: the op name, which a caret would underline, is not in the Python text.
    file, line = _user_frame()
    return FileLineColLoc(StringAttr(file), IntAttr(line), IntAttr(1))


def _error(message: str, hint: str) -> BuilderError:
    """A BuilderError located at the user's call, underlining the statement."""
    file, line = _user_frame()
    text = linecache.getline(file, line).rstrip("\n")
    stripped = text.strip()
    column = len(text) - len(text.lstrip()) + 1 if stripped else 1
    loc = SourceLocation(file, line, column, text or None, max(1, len(stripped)))
    return BuilderError(message, location=loc, hint=hint)


# ------------------------------------------------------------------ parsing helpers


def _at_eof(parser: Parser) -> bool:
    return parser._current_token.kind == MLIRTokenKind.EOF


def _parse_type(t: TypeLike) -> Attribute:
    if isinstance(t, Attribute):
        return t
    if not isinstance(t, str):
        raise _error(
            f"expected an MLIR type, got {type(t).__name__} {t!r}",
            'write the type as text ("memref<?x8xf32>", "index", "f32") or pass an '
            "xDSL type attribute",
        )
    try:
        parser = Parser(context(), t, "<type>")
        parsed = parser.parse_type()
        ok = _at_eof(parser)
    except XParseError:
        ok = False
    if not ok:
        raise _error(
            f"cannot parse the type '{t}'",
            "write an MLIR type such as memref<?x8xf32>, index, f32, i64 or !krnl.loop",
        )
    return parsed


def _parse_attribute(a: Attribute | str, what: str) -> Attribute:
    if isinstance(a, Attribute):
        return a
    try:
        parser = Parser(context(), a, "<attribute>")
        parsed = parser.parse_attribute()
        ok = _at_eof(parser)
    except XParseError:
        ok = False
    if not ok:
        raise _error(
            f"cannot parse the attribute '{a}' given for {what}",
            'write an MLIR attribute such as 4 : i64, [1, 2], "spread" or true',
        )
    return parsed


def _parse_map(m: str | AffineMap) -> AffineMap:
    if isinstance(m, AffineMap):
        return m
    text = m.strip()
    result: AffineMap | None = None
    try:
        parser = Parser(context(), text, "<affine map>")
        if text.startswith("affine_map"):
            attr = parser.parse_attribute()
            result = attr.data if isinstance(attr, AffineMapAttr) else None
        else:
            result = parser.parse_affine_map()
        if not _at_eof(parser):
            result = None
    except XParseError:
        result = None
    if result is None:
        raise _error(
            f"cannot parse the affine map '{m}'",
            'write it as "(d0)[s0] -> (d0 + 4, s0)" (optionally inside affine_map<...>)',
        )
    return result


def _describe(v: SSAValue) -> str:
    name = f"%{v.name_hint}" if v.name_hint else "an unnamed value"
    return f"{name} of type {v.type}"


def _is_value(v: object) -> bool:
    return isinstance(v, SSAValue)


# ------------------------------------------------------------------ loop bounds


class AffineBound:
    """An affine loop bound: ``affine_map<(d0)[s0] -> (d0 + 4, s0)>(%i)[%N]``.

    ``map`` is the map text (``"(d0)[s0] -> (d0 + 4, s0)"``, with or without
    ``affine_map<...>``) or an xDSL ``AffineMap``; ``dims`` and ``symbols`` are
    the index values bound to its dimensions and symbols. A map with several
    results means their max as a lower bound and their min as an upper bound,
    as in Krnl.
    """

    __slots__ = ("dims", "map", "symbols")

    def __init__(
        self,
        map: str | AffineMap,
        dims: Sequence[Value] = (),
        symbols: Sequence[Value] = (),
    ) -> None:
        self.map: AffineMap = _parse_map(map)
        self.dims: tuple[Value, ...] = tuple(dims)
        self.symbols: tuple[Value, ...] = tuple(symbols)
        if len(self.dims) != self.map.num_dims or len(self.symbols) != self.map.num_symbols:
            raise _error(
                f"the affine map {self.map} has {self.map.num_dims} dims and "
                f"{self.map.num_symbols} symbols, but {len(self.dims)} dims and "
                f"{len(self.symbols)} symbols were given",
                "pass one index value per d<k> in dims=[...] and per s<k> in symbols=[...]",
            )
        if not self.map.results:
            raise _error(
                f"the affine map {self.map} has no results", "a loop bound needs one result"
            )

    def __repr__(self) -> str:
        return f"AffineBound({str(self.map)!r}, dims={self.dims!r}, symbols={self.symbols!r})"


Bound: TypeAlias = int | Value | AffineBound
"""A loop bound: an integer, an index value, or an :class:`AffineBound`."""

Entry: TypeAlias = tuple[Value, str | None, Bound, Bound]
"""One ``with`` entry of ``krnl.iterate``: (original handle, IV name, lb, ub)."""

IterArg: TypeAlias = tuple[str | None, Value] | Value

_SYMBOL_MAP = AffineMap(0, 1, (AffineExpr.symbol(0),))

_CMPI = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
_CMPF = (
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
)  # fmt: skip


# ------------------------------------------------------------------ scopes


class Scope:
    """The body of a scoped op (``krnl.iterate``, ``krnl.movable``, ``krnl.region``).

    Returned by the builder call; use it in a ``with`` statement, which fills
    the body and closes it.
    """

    def __init__(self, builder: FunctionBuilder, op: Operation, block: Block) -> None:
        self.op = op
        self.block = block
        self._builder = builder
        self._state = "pending"

    def __enter__(self) -> Scope:
        self._builder._enter_scope(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._builder._exit_scope(self, failed=exc_type is not None)

    def _finish(self) -> None:
        """Terminate the body; raise BuilderError if it cannot be closed."""


class _MovableScope(Scope):
    def _finish(self) -> None:
        self._builder._insert(krnl.TerminateOp())


class _RegionScope(Scope):
    pass


class Loop(Scope):
    """A ``krnl.iterate`` being built.

    Iterating over it gives the body's block arguments, i.e. the induction
    variables followed by the iter_args, so ``with f.iterate(...) as (i, j):``
    unpacks the IVs. ``results`` are the values the loop yields, usable after
    the ``with`` block.
    """

    op: krnl.IterateOp

    def __init__(self, builder: FunctionBuilder, op: krnl.IterateOp) -> None:
        super().__init__(builder, op, op.body.block)

    def __enter__(self) -> Loop:
        self._builder._enter_scope(self)
        return self

    @property
    def ivs(self) -> tuple[Value, ...]:
        """The induction variables, in ``with`` order."""
        return tuple(self.op.induction_vars)

    @property
    def iter_args(self) -> tuple[Value, ...]:
        """The loop-carried values inside the body."""
        return tuple(self.op.iter_args)

    @property
    def results(self) -> tuple[Value, ...]:
        """The final values of the iter_args (use them after the ``with`` block)."""
        return tuple(self.op.results)

    @property
    def result(self) -> Value:
        """The single result of a loop with exactly one iter_arg."""
        if len(self.op.results) != 1:
            raise _error(
                f"this krnl.iterate has {len(self.op.results)} results, not one",
                "use loop.results",
            )
        return self.op.results[0]

    def __iter__(self) -> Iterator[Value]:
        return iter(self.op.body.block.args)

    def __len__(self) -> int:
        return len(self.op.body.block.args)

    def __getitem__(self, k: int) -> Value:
        return self.op.body.block.args[k]

    def _finish(self) -> None:
        last = self.block.last_op
        if isinstance(last, krnl.YieldOp):
            return
        if self.op.results:
            raise _error(
                f"the krnl.iterate carries {len(self.op.results)} iter_args but its body "
                "does not end with a yield",
                "end the body with f.yield_([...]) giving the next value of each iter_arg",
            )
        self._builder._insert(krnl.YieldOp())


# ------------------------------------------------------------------ functions


class FunctionBuilder:
    """Builds one ``func.func``; use it as ``with mb.function(...) as f:``.

    Every method that creates a value takes ``name=`` (or ``names=`` for
    several values): the SSA name it prints with, e.g. ``name="a"`` gives
    ``%a``. Without a name the printer numbers the value.
    """

    def __init__(
        self,
        module: ModuleBuilder,
        name: str,
        args: Sequence[tuple[str | None, TypeLike]],
        results: Sequence[TypeLike],
    ) -> None:
        arg_specs: list[tuple[str | None, Attribute]] = []
        for spec in args:
            if not (isinstance(spec, tuple) and len(spec) == 2):
                raise _error(
                    f"a function argument must be a (name, type) pair, got {spec!r}",
                    'write args as [("A", "memref<40x60xf32>"), ("N", "index")]',
                )
            arg_specs.append((spec[0], _parse_type(spec[1])))
        _check_names([n for n, _ in arg_specs], len(arg_specs), "function arguments")
        result_types = [_parse_type(t) for t in results]
        block = Block(arg_types=[t for _, t in arg_specs])
        for a, (n, _) in zip(block.args, arg_specs, strict=True):
            a.name_hint = n
        self.func_op = func.FuncOp(name, ([t for _, t in arg_specs], result_types), Region(block))
        self.func_op.location = _op_location()
        self.name = name
        self._module = module
        self._state = "new"
        self._root = Scope(self, self.func_op, block)
        self._stack: list[Scope] = [self._root]
        self._pending: Scope | None = None

    # --- the function itself

    @property
    def args(self) -> tuple[Value, ...]:
        """The function arguments, in order."""
        return tuple(self.func_op.body.block.args)

    def __enter__(self) -> FunctionBuilder:
        if self._state != "new":
            raise _error(
                f"the builder of function '{self.name}' was already used",
                "call mb.function(...) again for a new function",
            )
        self._module._open(self)
        self._state = "open"
        self._root._state = "open"
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            # Drop the half-built function so a caught error leaves a sound module.
            self._state = "closed"
            self._module._close(self, keep=False)
            return
        try:
            self._check_no_pending()
            assert len(self._stack) == 1, "with blocks of scoped ops close before the function"
            if not isinstance(self.func_op.body.block.last_op, func.ReturnOp):
                if self.func_op.function_type.outputs.data:
                    raise _error(
                        f"function '{self.name}' returns values but has no return",
                        "end the function with f.return_([...])",
                    )
                self._insert(func.ReturnOp())
            self._verify(self.func_op)
        except BuilderError:
            self._state = "closed"
            self._module._close(self, keep=False)
            raise
        self._state = "closed"
        self._module._close(self, keep=True)

    def return_(self, values: Sequence[Value] = ()) -> None:
        """``func.return``; added automatically for functions without results."""
        self._check_ready()
        if self._stack[-1] is not self._root:
            raise _error(
                "f.return_() must be at the top level of the function body",
                "call it after the with blocks of the loops",
            )
        vals = [self._value(v, "a returned value") for v in values]
        want = list(self.func_op.function_type.outputs.data)
        got = [v.type for v in vals]
        if got != want:
            raise _error(
                f"function '{self.name}' returns ({', '.join(map(str, want))}), "
                f"f.return_ gives ({', '.join(map(str, got))})",
                "return one value per declared result type, in order",
            )
        self._insert(func.ReturnOp(*vals))

    # --- the loop recipe

    def define_loops(self, count: int, *, names: Names = ()) -> tuple[Value, ...]:
        """``%a, %b = krnl.define_loops 2``: ``count`` new loop handles."""
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise _error(
                f"krnl.define_loops needs a non-negative loop count, got {count!r}",
                "pass the number of loop handles to define, e.g. f.define_loops(2)",
            )
        op = self._insert(krnl.DefineLoopsOp(count), names=names)
        return tuple(op.results)

    def block(self, loop: Value, tile_size: int, *, names: Names = ()) -> tuple[Value, Value]:
        """``%t, %p = krnl.block %L 4``: the tile and point handles of ``loop``."""
        h = self._handle(loop)
        if isinstance(tile_size, bool) or not isinstance(tile_size, int) or tile_size <= 0:
            raise _error(
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
            raise _error(
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
                raise _error(
                    f"num_threads must be an i32 value, got {_describe(nt)}",
                    'make it with f.constant(8, "i32") or f.index_cast(n, "i32")',
                )
        if proc_bind is not None and proc_bind not in krnl.ParallelOp.PROC_BINDS:
            raise _error(
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
                raise _error(
                    f"a krnl.iterate entry must be (handle, iv_name, lb, ub), got {entry!r}",
                    'write entries as [(ii, "i", 0, 40), (jj, "j", 0, N)]',
                )
            handle, iv_name, lb, ub = entry
            h = self._handle(handle)
            lb_map, lb_ops = self._bound(lb)
            ub_map, ub_ops = self._bound(ub)
            built.append((h, lb_map, lb_ops, ub_map, ub_ops))
            iv_names.append(iv_name)
        _check_names(iv_names, len(iv_names), "induction variables")
        init_names: list[str | None] = []
        inits: list[SSAValue] = []
        for ia in iter_args:
            if isinstance(ia, tuple) and len(ia) == 2:
                n, init = ia
            elif _is_value(ia):
                n, init = None, ia
            else:
                raise _error(
                    f"an iter_arg must be (name, initial value) or a value, got {ia!r}",
                    'write iter_args=[("acc", f0)]',
                )
            init_names.append(n)
            inits.append(self._value(init, "an iter_args initial value"))
        _check_names(init_names, len(init_names), "iter_args")
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
            raise _error(
                "f.yield_() must be directly inside a krnl.iterate body",
                "call it last in the with f.iterate(...) block (not in a movable or region)",
            )
        vals = [self._value(v, "a yielded value") for v in values]
        want = list(scope.op.result_types)
        if len(vals) != len(want):
            raise _error(
                f"krnl.yield gives {len(vals)} values, the krnl.iterate carries "
                f"{len(want)} iter_args",
                "yield exactly one value per iter_arg",
            )
        got = [v.type for v in vals]
        if got != want:
            raise _error(
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

    # --- memory

    def load(self, memref_: Value, indices: Sequence[Value], *, name: str | None = None) -> Value:
        """``%v = krnl.load %m[%i, %j]``."""
        m, idx = self._access(memref_, indices, "krnl.load")
        return self._insert(krnl.LoadOp(m, idx), names=[name]).results[0]

    def store(self, value: Value, memref_: Value, indices: Sequence[Value]) -> None:
        """``krnl.store %v, %m[%i, %j]``."""
        v = self._value(value, "the stored value")
        m, idx = self._access(memref_, indices, "krnl.store")
        elem = _memref_type(m).element_type
        if v.type != elem:
            raise _error(
                f"krnl.store of {_describe(v)} into a memref of {elem}",
                f"convert the value to {elem} first (e.g. f.extf / f.truncf / f.sitofp)",
            )
        self._insert(krnl.StoreOp(v, m, idx))

    def memset(self, dest: Value, value: Value, *, delayed: bool | None = None) -> None:
        """``krnl.memset %m, %v``: fill the whole memref."""
        m = self._memref(dest, "krnl.memset")
        v = self._value(value, "the memset value")
        op = krnl.MemsetOp(m, v)
        if delayed is not None:
            op.properties["delayed"] = BoolAttr.from_bool(delayed)
        self._insert(op)

    def memcpy(
        self,
        dest: Value,
        src: Value,
        num_elems: Value,
        dest_offset: Value,
        src_offset: Value,
    ) -> None:
        """``krnl.memcpy``: flat copy of ``num_elems`` (i64) elements at index offsets."""
        ops = [
            self._memref(dest, "krnl.memcpy"),
            self._memref(src, "krnl.memcpy"),
            self._value(num_elems, "num_elems"),
            self._index(dest_offset, "dest_offset"),
            self._index(src_offset, "src_offset"),
        ]
        self._insert(krnl.MemcpyOp.build(operands=ops))

    def copy_to_tile_buffer(
        self,
        buffer: Value,
        source: Value,
        starts: Sequence[Value],
        pad_value: Value,
        *,
        tile_size: Sequence[int] | None = None,
        pad_to_next: Sequence[int] | None = None,
        transpose: bool | None = None,
    ) -> None:
        """``krnl.copy_to_tile_buffer %buf, %src[%starts], %pad {...}``."""
        props: dict[str, Attribute] = {}
        if tile_size is not None:
            props["tileSize"] = _i64_array(tile_size)
        if pad_to_next is not None:
            props["padToNext"] = _i64_array(pad_to_next)
        if transpose is not None:
            props["transpose"] = BoolAttr.from_bool(transpose)
        ops: list[SSAValue | list[SSAValue]] = [
            self._memref(buffer, "krnl.copy_to_tile_buffer"),
            self._memref(source, "krnl.copy_to_tile_buffer"),
            [self._index(s, "a tile start") for s in starts],
            self._value(pad_value, "the pad value"),
        ]
        self._insert(krnl.CopyToTileBufferOp.build(operands=ops, properties=props))

    def copy_from_tile_buffer(
        self,
        buffer: Value,
        dest: Value,
        starts: Sequence[Value],
        *,
        tile_size: Sequence[int] | None = None,
    ) -> None:
        """``krnl.copy_from_tile_buffer %buf, %dest[%starts] {...}``."""
        props: dict[str, Attribute] = {}
        if tile_size is not None:
            props["tileSize"] = _i64_array(tile_size)
        ops: list[SSAValue | list[SSAValue]] = [
            self._memref(buffer, "krnl.copy_from_tile_buffer"),
            self._memref(dest, "krnl.copy_from_tile_buffer"),
            [self._index(s, "a tile start") for s in starts],
        ]
        self._insert(krnl.CopyFromTileBufferOp.build(operands=ops, properties=props))

    def matmul(
        self,
        a: Value,
        a_starts: Sequence[Value],
        b: Value,
        b_starts: Sequence[Value],
        c: Value,
        c_starts: Sequence[Value],
        loops: Sequence[Value],
        compute_starts: Sequence[Value],
        global_ubs: Sequence[Value],
        *,
        compute_tile_size: Sequence[int] | None = None,
        a_tile_size: Sequence[int] | None = None,
        b_tile_size: Sequence[int] | None = None,
        c_tile_size: Sequence[int] | None = None,
        simdize: bool | None = None,
        unroll: bool | None = None,
        overcompute: bool | None = None,
    ) -> None:
        """``krnl.matmul %A[..], %B[..], %C[..], (%i, %j, %k), (starts), (ubs) {...}``.

        ``compute_starts`` and ``global_ubs`` are the (i, j, k) triples.
        """
        for what, triple in (("compute_starts", compute_starts), ("global_ubs", global_ubs)):
            if len(triple) != 3:
                raise _error(
                    f"krnl.matmul {what} needs 3 values (i, j, k), got {len(triple)}",
                    "give the i, j and k values in that order",
                )
        props: dict[str, Attribute] = {}
        for key, sizes in (
            ("computeTileSize", compute_tile_size),
            ("aTileSize", a_tile_size),
            ("bTileSize", b_tile_size),
            ("cTileSize", c_tile_size),
        ):
            if sizes is not None:
                props[key] = _i64_array(sizes)
        for key, flag in (("simdize", simdize), ("unroll", unroll), ("overcompute", overcompute)):
            if flag is not None:
                props[key] = BoolAttr.from_bool(flag)
        operands: list[SSAValue | list[SSAValue]] = [
            self._memref(a, "krnl.matmul"),
            [self._index(s, "a start index") for s in a_starts],
            self._memref(b, "krnl.matmul"),
            [self._index(s, "a start index") for s in b_starts],
            self._memref(c, "krnl.matmul"),
            [self._index(s, "a start index") for s in c_starts],
            [self._handle(h) for h in loops],
            *[self._index(s, "a compute start") for s in compute_starts],
            *[self._index(s, "a global upper bound") for s in global_ubs],
        ]
        self._insert(krnl.MatMulOp.build(operands=operands, properties=props))

    def alloc(
        self,
        type: TypeLike,
        dynamic_sizes: Sequence[Value] = (),
        *,
        alignment: int | None = None,
        name: str | None = None,
    ) -> Value:
        """``memref.alloc(%sizes) : memref<...>`` (one index value per ``?``)."""
        return self._alloc(memref.AllocOp, type, dynamic_sizes, alignment, name)

    def alloca(
        self,
        type: TypeLike,
        dynamic_sizes: Sequence[Value] = (),
        *,
        alignment: int | None = None,
        name: str | None = None,
    ) -> Value:
        """``memref.alloca(%sizes) : memref<...>``."""
        return self._alloc(memref.AllocaOp, type, dynamic_sizes, alignment, name)

    def dealloc(self, memref_: Value) -> None:
        """``memref.dealloc %m``."""
        self._insert(memref.DeallocOp.get(self._memref(memref_, "memref.dealloc")))

    def dim(self, memref_: Value, index: Value, *, name: str | None = None) -> Value:
        """``%d = memref.dim %m, %k``: the size of dimension ``%k`` (an index value)."""
        m = self._memref(memref_, "memref.dim")
        k = self._index(index, "the dimension number")
        return self._insert(memref.DimOp(m, k), names=[name]).results[0]

    # --- arith

    def constant(
        self, value: int | float | bool, type: TypeLike | None = None, *, name: str | None = None
    ) -> Value:
        """``arith.constant``; the type defaults to i1 for bool, index for int, f32 for float."""
        if type is None:
            type = (
                i1 if isinstance(value, bool) else IndexType() if isinstance(value, int) else "f32"
            )
        t = _parse_type(type)
        attr: Attribute
        try:
            if isinstance(value, bool) and t != i1:
                raise ValueError
            if isinstance(t, AnyFloat) and isinstance(value, int | float):
                attr = FloatAttr(float(value), t)
            elif isinstance(t, IntegerType | IndexType) and isinstance(value, int):
                attr = IntegerAttr(int(value), t)
            else:
                raise ValueError
        except (ValueError, VerifyException, OverflowError):
            raise _error(
                f"arith.constant cannot hold {value!r} as {t}",
                "use True/False for i1, an integer for integer and index types, a number "
                "for float types, and a value that fits the type's width",
            ) from None
        return self._insert(arith.ConstantOp(attr, t), names=[name]).results[0]

    def addf(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.AddfOp, a, b, name)

    def subf(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.SubfOp, a, b, name)

    def mulf(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.MulfOp, a, b, name)

    def divf(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.DivfOp, a, b, name)

    def maxnumf(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.MaxnumfOp, a, b, name)

    def minnumf(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.MinnumfOp, a, b, name)

    def maximumf(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.MaximumfOp, a, b, name)

    def minimumf(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.MinimumfOp, a, b, name)

    def negf(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(arith.NegfOp, a, name)

    def addi(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.AddiOp, a, b, name)

    def subi(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.SubiOp, a, b, name)

    def muli(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.MuliOp, a, b, name)

    def divsi(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.DivSIOp, a, b, name)

    def divui(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.DivUIOp, a, b, name)

    def remsi(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.RemSIOp, a, b, name)

    def remui(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.RemUIOp, a, b, name)

    def floordivsi(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.FloorDivSIOp, a, b, name)

    def ceildivsi(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.CeilDivSIOp, a, b, name)

    def minsi(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.MinSIOp, a, b, name)

    def maxsi(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.MaxSIOp, a, b, name)

    def andi(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.AndIOp, a, b, name)

    def ori(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.OrIOp, a, b, name)

    def xori(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(arith.XOrIOp, a, b, name)

    def cmpf(self, predicate: str, a: Value, b: Value, *, name: str | None = None) -> Value:
        """``arith.cmpf <predicate>, %a, %b`` (``olt``, ``oge``, ``une``, ...)."""
        return self._compare(arith.CmpfOp, _CMPF, predicate, a, b, name)

    def cmpi(self, predicate: str, a: Value, b: Value, *, name: str | None = None) -> Value:
        """``arith.cmpi <predicate>, %a, %b`` (``slt``, ``eq``, ``uge``, ...)."""
        return self._compare(arith.CmpiOp, _CMPI, predicate, a, b, name)

    def select(self, cond: Value, a: Value, b: Value, *, name: str | None = None) -> Value:
        """``arith.select %cond, %a, %b``."""
        c = self._value(cond, "the select condition")
        x, y = self._same_type("arith.select", a, b)
        if c.type != i1:
            raise _error(
                f"the arith.select condition must be i1, got {_describe(c)}",
                "compare with f.cmpf / f.cmpi to get an i1",
            )
        return self._insert(arith.SelectOp(c, x, y), names=[name]).results[0]

    def index_cast(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.IndexCastOp, a, type, name)

    def sitofp(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.SIToFPOp, a, type, name)

    def uitofp(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.UIToFPOp, a, type, name)

    def fptosi(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.FPToSIOp, a, type, name)

    def fptoui(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.FPToUIOp, a, type, name)

    def extf(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.ExtFOp, a, type, name)

    def truncf(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.TruncFOp, a, type, name)

    def extsi(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.ExtSIOp, a, type, name)

    def extui(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.ExtUIOp, a, type, name)

    def trunci(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.TruncIOp, a, type, name)

    def bitcast(self, a: Value, type: TypeLike, *, name: str | None = None) -> Value:
        return self._cast(arith.BitcastOp, a, type, name)

    # --- math

    def exp(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.ExpOp, a, name)

    def exp2(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.Exp2Op, a, name)

    def log(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.LogOp, a, name)

    def log2(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.Log2Op, a, name)

    def log10(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.Log10Op, a, name)

    def log1p(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.Log1pOp, a, name)

    def sqrt(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.SqrtOp, a, name)

    def rsqrt(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.RsqrtOp, a, name)

    def tanh(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.TanhOp, a, name)

    def sin(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.SinOp, a, name)

    def cos(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.CosOp, a, name)

    def tan(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.TanOp, a, name)

    def atan(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.AtanOp, a, name)

    def erf(self, a: Value, *, name: str | None = None) -> Value:
        """``math.erf`` (for ``krnl.erf`` use :meth:`krnl_erf`)."""
        return self._unary(math.ErfOp, a, name)

    def absf(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.AbsFOp, a, name)

    def ceil(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.CeilOp, a, name)

    def floor(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.FloorOp, a, name)

    def round(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(math.RoundOp, a, name)

    def powf(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(math.PowFOp, a, b, name)

    def atan2(self, a: Value, b: Value, *, name: str | None = None) -> Value:
        return self._binary(math.Atan2Op, a, b, name)

    # --- krnl scalar ops: prefixed because math has ops of the same names

    def krnl_acos(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(krnl.AcosOp, a, name)

    def krnl_acosh(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(krnl.AcoshOp, a, name)

    def krnl_asin(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(krnl.AsinOp, a, name)

    def krnl_asinh(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(krnl.AsinhOp, a, name)

    def krnl_atan(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(krnl.AtanOp, a, name)

    def krnl_atanh(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(krnl.AtanhOp, a, name)

    def krnl_tan(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(krnl.TanOp, a, name)

    def krnl_erf(self, a: Value, *, name: str | None = None) -> Value:
        return self._unary(krnl.ErfOp, a, name)

    def krnl_isinf(self, a: Value, *, name: str | None = None) -> Value:
        return self._predicate(krnl.IsInfOp, a, name)

    def krnl_isnan(self, a: Value, *, name: str | None = None) -> Value:
        return self._predicate(krnl.IsNaNOp, a, name)

    # --- affine

    def affine_apply(
        self,
        map: str | AffineMap,
        dims: Sequence[Value] = (),
        symbols: Sequence[Value] = (),
        *,
        name: str | None = None,
    ) -> Value:
        """``affine.apply affine_map<...>(%dims)[%symbols]`` (a single-result map)."""
        bound = AffineBound(map, dims, symbols)
        if len(bound.map.results) != 1:
            raise _error(
                f"affine.apply needs a single-result map, got {bound.map}",
                "apply each result with its own f.affine_apply",
            )
        ops = [self._index(v, "an affine.apply operand") for v in (*bound.dims, *bound.symbols)]
        op = affine.ApplyOp(ops, AffineMapAttr(bound.map))
        return self._insert(op, names=[name]).results[0]

    # --- anything else

    def op(
        self,
        op: str | type[Operation],
        operands: Sequence[Value] = (),
        result_types: Sequence[TypeLike] = (),
        *,
        properties: Mapping[str, Attribute | str] | None = None,
        attributes: Mapping[str, Attribute | str] | None = None,
        names: Names = (),
    ) -> Operation:
        """Any registered op, as its generic form says it.

        ``f.op("krnl.erf", [x], ["f32"])`` is ``"krnl.erf"(%x) : (f32) -> f32``.
        Operands are the flat list of the generic form (for ops with operand
        segments give ``operandSegmentSizes`` in ``properties``); string
        attributes are parsed as MLIR attributes. Returns the op (its values
        are ``.results``).
        """
        if isinstance(op, str):
            cls = context().get_optional_op(op)
            if cls is None:
                raise _error(
                    f"the op '{op}' is not registered",
                    "polykrnl knows the builtin, func, arith, math, memref, affine, scf and "
                    "krnl dialects: check the op name",
                )
        else:
            cls = op
        vals = [self._value(v, f"an operand of {cls.name}") for v in operands]
        types = [_parse_type(t) for t in result_types]
        props = {k: _parse_attribute(v, k) for k, v in (properties or {}).items()}
        attrs = {k: _parse_attribute(v, k) for k, v in (attributes or {}).items()}
        created = cls.create(operands=vals, result_types=types, properties=props, attributes=attrs)
        return self._insert(created, names=names)

    # ------------------------------------------------------------- internals

    def _check_ready(self) -> None:
        if self._state != "open":
            where = "before its with block" if self._state == "new" else "after it was closed"
            raise _error(
                f"function '{self.name}' is used {where}: ops must be built inside a function",
                "build ops inside `with mb.function(...) as f:`",
            )
        self._check_no_pending()

    def _check_no_pending(self) -> None:
        if self._pending is not None:
            kind = self._pending.op.name
            # Drop the never-filled op: an empty body would not verify later.
            self._pending.op.detach()
            self._pending.op.erase()
            self._pending = None
            raise _error(
                f"the {kind} made by the previous scoped call was not opened with `with`",
                f"write `with f.{kind.split('.')[-1]}(...):` and build its body inside",
            )

    def _insert(self, op: Operation, *, names: Names = ()) -> Operation:
        """Append `op` to the current body, named and located, or raise without changing it."""
        try:
            self._check_ready()
            block = self._stack[-1].block
            last = block.last_op
            if last is not None and last.has_trait(IsTerminator):
                raise _error(
                    f"nothing may follow {last.name}: the body already ended",
                    "build this op before f.yield_() / f.return_()",
                )
            if names:
                _check_names(names, len(op.results), f"results of {op.name}")
        except BuilderError:
            # A rejected op must not stay registered as a use of its operands:
            # analyses count the uses of loop handles.
            op.erase()
            raise
        for r, n in zip(op.results, names, strict=False):
            r.name_hint = n
        op.location = _op_location()
        block.add_op(op)
        if not op.regions:
            try:
                self._verify(op)
            except BuilderError:
                op.detach()
                op.erase()
                raise
        return op

    def _verify(self, op: Operation) -> None:
        # verify_ (not verify): the op may be the last of a body still being filled,
        # which the structural check would take for a missing terminator.
        try:
            op.verify_()
        except (VerifyException, ValueError, TypeError) as e:
            raise _error(
                f"{op.name} is invalid: {e}",
                "check the operand and result types against the op's definition",
            ) from None

    def _enter_scope(self, scope: Scope) -> None:
        if self._pending is not scope:
            raise _error(
                f"this {scope.op.name} scope was already used",
                "make a new one for each with block",
            )
        self._pending = None
        scope._state = "open"
        self._stack.append(scope)

    def _exit_scope(self, scope: Scope, *, failed: bool) -> None:
        assert self._stack[-1] is scope, "with blocks close in order"
        try:
            if not failed:
                self._check_no_pending()
                scope._finish()
                self._verify(scope.op)
        finally:
            self._stack.pop()
            scope._state = "closed"

    def _value(self, v: object, what: str) -> SSAValue:
        """`v` as an SSA value usable at the current insertion point."""
        if not isinstance(v, SSAValue):
            hint = "pass a value made by this builder (an argument, op result or IV)"
            if isinstance(v, int | float):
                hint = f"make a constant first, e.g. f.constant({v!r}, ...)"
            raise _error(f"{what} must be an SSA value, got {type(v).__name__} {v!r}", hint)
        if isinstance(v, OpResult):
            owner_block = v.op.parent_block()
        else:
            assert isinstance(v, BlockArgument)
            owner_block = v.block
        fn = _function_of(owner_block)
        if fn is not self.func_op:
            other = f"function '{fn.sym_name.data}'" if fn is not None else "no function"
            raise _error(
                f"{_describe(v)} belongs to {other}, not to '{self.name}'",
                "values cannot cross functions: pass it as an argument or rebuild it here",
            )
        if isinstance(v, OpResult) and any(s.op is v.op for s in self._stack):
            raise _error(
                f"{_describe(v)} is a result of the {v.op.name} being built",
                "use loop results after the with block of their loop",
            )
        if not any(s.block is owner_block for s in self._stack):
            raise _error(
                f"{_describe(v)} is defined in a body that is closed and is not visible here",
                "values of a loop, movable or region body are only usable inside it",
            )
        return v

    def _handle(self, v: object) -> SSAValue:
        h = self._value(v, "a loop handle")
        if not isinstance(h.type, krnl.LoopType):
            raise _error(
                f"expected a loop handle (!krnl.loop), got {_describe(h)}",
                "loop handles come from f.define_loops or f.block",
            )
        return h

    def _index(self, v: object, what: str) -> SSAValue:
        x = self._value(v, what)
        if not isinstance(x.type, IndexType):
            raise _error(
                f"{what} must be an index value, got {_describe(x)}",
                "convert it with f.index_cast(x, 'index')",
            )
        return x

    def _memref(self, v: object, opname: str) -> SSAValue:
        m = self._value(v, f"the memref of {opname}")
        if not isinstance(m.type, MemRefType):
            raise _error(
                f"{opname} needs a memref, got {_describe(m)}",
                "pass a memref argument or the result of f.alloc / f.alloca",
            )
        return m

    def _access(
        self, memref_: object, indices: Sequence[object], opname: str
    ) -> tuple[SSAValue, list[SSAValue]]:
        m = self._memref(memref_, opname)
        idx = [self._index(i, f"an index of {opname}") for i in indices]
        rank = len(_memref_type(m).shape)
        if len(idx) != rank:
            raise _error(
                f"{opname} of a rank-{rank} memref needs {rank} indices, got {len(idx)}",
                "give one index value per memref dimension",
            )
        return m, idx

    def _bound(self, b: object) -> tuple[AffineMap, list[SSAValue]]:
        if isinstance(b, int) and not isinstance(b, bool):
            return AffineMap.constant_map(b), []
        if isinstance(b, SSAValue):
            return _SYMBOL_MAP, [self._index(b, "a loop bound")]
        if isinstance(b, AffineBound):
            ops = [self._index(v, "an affine bound operand") for v in (*b.dims, *b.symbols)]
            return b.map, ops
        raise _error(
            f"a loop bound must be an int, an index value or an AffineBound, got {b!r}",
            'e.g. 0, N, or AffineBound("(d0) -> (d0 + 1)", dims=[i])',
        )

    def _same_type(self, opname: str, a: object, b: object) -> tuple[SSAValue, SSAValue]:
        x = self._value(a, f"an operand of {opname}")
        y = self._value(b, f"an operand of {opname}")
        if x.type != y.type:
            raise _error(
                f"the operands of {opname} have different types: {_describe(x)}, {_describe(y)}",
                "convert one of them first (f.index_cast, f.extf, f.sitofp, ...)",
            )
        return x, y

    def _binary(self, cls: type[IRDLOperation], a: object, b: object, name: str | None) -> SSAValue:
        x, y = self._same_type(cls.name, a, b)
        op = cls.build(operands=[x, y], result_types=[x.type])
        return self._insert(op, names=[name]).results[0]

    def _unary(self, cls: type[IRDLOperation], a: object, name: str | None) -> SSAValue:
        x = self._value(a, f"the operand of {cls.name}")
        op = cls.build(operands=[x], result_types=[x.type])
        return self._insert(op, names=[name]).results[0]

    def _predicate(self, cls: type[IRDLOperation], a: object, name: str | None) -> SSAValue:
        x = self._value(a, f"the operand of {cls.name}")
        op = cls.build(operands=[x], result_types=[i1])
        return self._insert(op, names=[name]).results[0]

    def _cast(
        self, cls: type[IRDLOperation], a: object, type: TypeLike, name: str | None
    ) -> SSAValue:
        x = self._value(a, f"the operand of {cls.name}")
        op = cls.build(operands=[x], result_types=[_parse_type(type)])
        return self._insert(op, names=[name]).results[0]

    def _compare(
        self,
        cls: type[arith.CmpfOp] | type[arith.CmpiOp],
        valid: tuple[str, ...],
        predicate: str,
        a: object,
        b: object,
        name: str | None,
    ) -> SSAValue:
        if predicate not in valid:
            raise _error(
                f"unknown {cls.name} predicate {predicate!r}",
                f"use one of {', '.join(valid)}",
            )
        x, y = self._same_type(cls.name, a, b)
        return self._insert(cls(x, y, predicate), names=[name]).results[0]

    def _alloc(
        self,
        cls: type[memref.AllocOp] | type[memref.AllocaOp],
        type: TypeLike,
        dynamic_sizes: Sequence[Value],
        alignment: int | None,
        name: str | None,
    ) -> SSAValue:
        t = _parse_type(type)
        if not isinstance(t, MemRefType):
            raise _error(f"{cls.name} needs a memref type, got {t}", "e.g. memref<?x8xf32>")
        sizes = [self._index(s, f"a dynamic size of {cls.name}") for s in dynamic_sizes]
        n_dyn = sum(1 for d in t.get_shape() if d == DYNAMIC_INDEX)
        if len(sizes) != n_dyn:
            raise _error(
                f"{cls.name} of {t} needs {n_dyn} dynamic sizes, got {len(sizes)}",
                "give one index value per `?` in the memref type",
            )
        props: dict[str, Attribute] = {}
        if alignment is not None:
            props["alignment"] = IntegerAttr(alignment, i64)
        op = cls.build(operands=[sizes, []], result_types=[t], properties=props)
        return self._insert(op, names=[name]).results[0]


# ------------------------------------------------------------------ modules


class ModuleBuilder:
    """Builds a module of functions; ``module()`` returns the finished :class:`Module`.

    ``filename`` names the module in messages; it defaults to the Python file
    that creates the builder.
    """

    def __init__(self, filename: str | None = None) -> None:
        self.op = ModuleOp([])
        self.filename = filename if filename is not None else _user_frame()[0]
        self._open_function: FunctionBuilder | None = None
        self._module: Module | None = None

    def function(
        self,
        name: str,
        args: Sequence[tuple[str | None, TypeLike]] = (),
        results: Sequence[TypeLike] = (),
    ) -> FunctionBuilder:
        """A new ``func.func @name(args) -> results``; use it in a ``with`` statement."""
        self._check_can_add(name)
        return FunctionBuilder(self, name, args, results)

    def module(self) -> Module:
        """The finished module (the same object on later calls)."""
        if self._module is not None:
            return self._module
        if self._open_function is not None:
            raise _error(
                f"function '{self._open_function.name}' is still being built",
                "call mb.module() after the with block of every function",
            )
        # No final verify: every op was verified when it was added or closed.
        self._module = Module(self.op, source=None, filename=self.filename)
        return self._module

    def _check_can_add(self, name: str) -> None:
        if self._module is not None:
            raise _error(
                "the module was already finished by mb.module()",
                "add every function before calling mb.module(), or use a new ModuleBuilder",
            )
        if self._open_function is not None:
            raise _error(
                f"function '{self._open_function.name}' is still being built",
                "functions do not nest: close one with block before opening the next",
            )
        if any(isinstance(f, func.FuncOp) and f.sym_name.data == name for f in self.op.body.ops):
            raise _error(
                f"the module already has a function named '{name}'",
                "give each function a distinct name",
            )

    def _open(self, fb: FunctionBuilder) -> None:
        # Checked again: another function may have been added since mb.function(...).
        self._check_can_add(fb.name)
        self._open_function = fb
        self.op.body.block.add_op(fb.func_op)

    def _close(self, fb: FunctionBuilder, *, keep: bool) -> None:
        assert self._open_function is fb
        self._open_function = None
        if not keep:
            fb.func_op.detach()


# ------------------------------------------------------------------ small helpers


def _as_list(v: Value | Sequence[Value]) -> list[Value]:
    return [v] if isinstance(v, SSAValue) else list(v)


def _memref_type(v: SSAValue) -> MemRefType:
    assert isinstance(v.type, MemRefType)
    return v.type


def _i64_array(values: Sequence[int]) -> ArrayAttr[IntegerAttr[IntegerType]]:
    return ArrayAttr([IntegerAttr(int(v), i64) for v in values])


def _function_of(block: Block | None) -> func.FuncOp | None:
    op = block.parent_op() if block is not None else None
    while op is not None and not isinstance(op, func.FuncOp):
        op = op.parent_op()
    return op


def _check_names(names: Names, count: int, what: str) -> None:
    names = list(names)
    if len(names) != count:
        raise _error(
            f"{len(names)} names given for {count} {what}",
            f"give exactly {count} names (None leaves a value unnamed)",
        )
    for n in names:
        if n is not None and not (isinstance(n, str) and SSAValue.is_valid_name(n)):
            raise _error(
                f"{n!r} is not a valid SSA name",
                "use letters, digits, _ $ . - and do not start with a digit (no leading %)",
            )
