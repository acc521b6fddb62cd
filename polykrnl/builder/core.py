"""What every builder method shares: call-site locations, type and attribute parsing,
loop bounds, scopes, and the function state the dialect mixins build into."""

from __future__ import annotations

import linecache
import os
import sys
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Protocol, Self, TypeAlias

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    AffineMapAttr,
    FileLineColLoc,
    IndexType,
    IntAttr,
    MemRefType,
    StringAttr,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.irdl import IRDLOperation
from xdsl.parser import Parser
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import ParseError as XParseError
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.mlir_lexer import MLIRTokenKind

from polykrnl.dialect import krnl as krnl
from polykrnl.errors import BuilderError, SourceLocation
from polykrnl.reader.affine_text import SemiAffineReading
from polykrnl.reader.parser import context

Value: TypeAlias = SSAValue
"""An SSA value (xDSL ``SSAValue``): function argument, op result, IV or iter_arg."""

TypeLike: TypeAlias = str | Attribute
"""An MLIR type: text such as ``"memref<?x8xf32>"`` or an xDSL type attribute."""

Names: TypeAlias = Sequence[str | None]

# ------------------------------------------------------------------ call sites


_PACKAGE_DIR = os.path.dirname(__file__)


def user_frame() -> tuple[str, int]:
    """File and line of the innermost frame outside this package (the user's call)."""
    frame = sys._getframe(1)
    while frame.f_back is not None and _in_package(frame.f_code.co_filename):
        frame = frame.f_back
    return frame.f_code.co_filename, frame.f_lineno


def _in_package(filename: str) -> bool:
    # The whole package counts: a user call reaches the core through a dialect mixin.
    return os.path.dirname(filename) == _PACKAGE_DIR


def op_location() -> FileLineColLoc:
    # Column 1 on purpose: the op name, which a caret would underline, is not in the Python text.
    file, line = user_frame()
    return FileLineColLoc(StringAttr(file), IntAttr(line), IntAttr(1))


def builder_error(message: str, hint: str) -> BuilderError:
    """A BuilderError located at the user's call, underlining the statement."""
    file, line = user_frame()
    text = linecache.getline(file, line).rstrip("\n")
    stripped = text.strip()
    column = len(text) - len(text.lstrip()) + 1 if stripped else 1
    loc = SourceLocation(file, line, column, text or None, max(1, len(stripped)))
    return BuilderError(message, location=loc, hint=hint)


# ------------------------------------------------------------------ parsing helpers


def _at_eof(parser: Parser) -> bool:
    return parser._current_token.kind == MLIRTokenKind.EOF


def parse_type(t: TypeLike) -> Attribute:
    if isinstance(t, Attribute):
        return t
    if not isinstance(t, str):
        raise builder_error(
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
        raise builder_error(
            f"cannot parse the type '{t}'",
            "write an MLIR type such as memref<?x8xf32>, index, f32, i64 or !krnl.loop",
        )
    return parsed


def parse_attribute(a: Attribute | str, what: str) -> Attribute:
    if isinstance(a, Attribute):
        return a
    try:
        parser = Parser(context(), a, "<attribute>")
        parsed = parser.parse_attribute()
        ok = _at_eof(parser)
    except XParseError:
        ok = False
    if not ok:
        raise builder_error(
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
        parser = SemiAffineReading(context(), text, "<affine map>")
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
        raise builder_error(
            f"cannot parse the affine map '{m}'",
            'write it as "(d0)[s0] -> (d0 + 4, s0)" (optionally inside affine_map<...>)',
        )
    return result


def describe(v: SSAValue) -> str:
    name = f"%{v.name_hint}" if v.name_hint else "an unnamed value"
    return f"{name} of type {v.type}"


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
            raise builder_error(
                f"the affine map {self.map} has {self.map.num_dims} dims and "
                f"{self.map.num_symbols} symbols, but {len(self.dims)} dims and "
                f"{len(self.symbols)} symbols were given",
                "pass one index value per d<k> in dims=[...] and per s<k> in symbols=[...]",
            )
        if not self.map.results:
            raise builder_error(
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


# ------------------------------------------------------------------ scopes


class Scope:
    """The body of a scoped op (``krnl.iterate``, ``krnl.movable``, ``krnl.region``).

    Returned by the builder call; use it in a ``with`` statement, which fills
    the body and closes it.
    """

    def __init__(self, builder: FunctionCore, op: Operation, block: Block) -> None:
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


class Loop(Scope):
    """A ``krnl.iterate`` being built.

    Iterating over it gives the body's block arguments, i.e. the induction
    variables followed by the iter_args, so ``with f.iterate(...) as (i, j):``
    unpacks the IVs. ``results`` are the values the loop yields, usable after
    the ``with`` block.
    """

    op: krnl.IterateOp

    def __init__(self, builder: FunctionCore, op: krnl.IterateOp) -> None:
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
            raise builder_error(
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
            raise builder_error(
                f"the krnl.iterate carries {len(self.op.results)} iter_args but its body "
                "does not end with a yield",
                "end the body with f.yield_([...]) giving the next value of each iter_arg",
            )
        self._builder._insert(krnl.YieldOp())


# ------------------------------------------------------------------ functions


class FunctionHost(Protocol):
    """What a function needs of the module it is built into (the ModuleBuilder)."""

    def _open(self, fb: FunctionCore) -> None: ...

    def _close(self, fb: FunctionCore, *, keep: bool) -> None: ...


class FunctionCore:
    """The state of one ``func.func`` being built and the checks every op goes through.

    The dialect mixins add the op-building methods; FunctionBuilder combines them.
    """

    def __init__(
        self,
        module: FunctionHost,
        name: str,
        args: Sequence[tuple[str | None, TypeLike]],
        results: Sequence[TypeLike],
    ) -> None:
        arg_specs: list[tuple[str | None, Attribute]] = []
        for spec in args:
            if not (isinstance(spec, tuple) and len(spec) == 2):
                raise builder_error(
                    f"a function argument must be a (name, type) pair, got {spec!r}",
                    'write args as [("A", "memref<40x60xf32>"), ("N", "index")]',
                )
            arg_specs.append((spec[0], parse_type(spec[1])))
        check_names([n for n, _ in arg_specs], len(arg_specs), "function arguments")
        result_types = [parse_type(t) for t in results]
        block = Block(arg_types=[t for _, t in arg_specs])
        for a, (n, _) in zip(block.args, arg_specs, strict=True):
            a.name_hint = n
        self.func_op = func.FuncOp(name, ([t for _, t in arg_specs], result_types), Region(block))
        self.func_op.location = op_location()
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

    def __enter__(self) -> Self:
        if self._state != "new":
            raise builder_error(
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
                    raise builder_error(
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
            raise builder_error(
                "f.return_() must be at the top level of the function body",
                "call it after the with blocks of the loops",
            )
        vals = [self._value(v, "a returned value") for v in values]
        want = list(self.func_op.function_type.outputs.data)
        got = [v.type for v in vals]
        if got != want:
            raise builder_error(
                f"function '{self.name}' returns ({', '.join(map(str, want))}), "
                f"f.return_ gives ({', '.join(map(str, got))})",
                "return one value per declared result type, in order",
            )
        self._insert(func.ReturnOp(*vals))

    # ------------------------------------------------------------- internals

    def _check_ready(self) -> None:
        if self._state != "open":
            where = "before its with block" if self._state == "new" else "after it was closed"
            raise builder_error(
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
            raise builder_error(
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
                raise builder_error(
                    f"nothing may follow {last.name}: the body already ended",
                    "build this op before f.yield_() / f.return_()",
                )
            if names:
                check_names(names, len(op.results), f"results of {op.name}")
        except BuilderError:
            # A rejected op must not stay registered as a use of its operands:
            # analyses count the uses of loop handles.
            op.erase()
            raise
        for r, n in zip(op.results, names, strict=False):
            r.name_hint = n
        op.location = op_location()
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
            raise builder_error(
                f"{op.name} is invalid: {e}",
                "check the operand and result types against the op's definition",
            ) from None

    def _enter_scope(self, scope: Scope) -> None:
        if self._pending is not scope:
            raise builder_error(
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
            raise builder_error(f"{what} must be an SSA value, got {type(v).__name__} {v!r}", hint)
        if isinstance(v, OpResult):
            owner_block = v.op.parent_block()
        else:
            assert isinstance(v, BlockArgument)
            owner_block = v.block
        fn = _function_of(owner_block)
        if fn is not self.func_op:
            other = f"function '{fn.sym_name.data}'" if fn is not None else "no function"
            raise builder_error(
                f"{describe(v)} belongs to {other}, not to '{self.name}'",
                "values cannot cross functions: pass it as an argument or rebuild it here",
            )
        if isinstance(v, OpResult) and any(s.op is v.op for s in self._stack):
            raise builder_error(
                f"{describe(v)} is a result of the {v.op.name} being built",
                "use loop results after the with block of their loop",
            )
        if not any(s.block is owner_block for s in self._stack):
            raise builder_error(
                f"{describe(v)} is defined in a body that is closed and is not visible here",
                "values of a loop, movable or region body are only usable inside it",
            )
        return v

    def _handle(self, v: object) -> SSAValue:
        h = self._value(v, "a loop handle")
        if not isinstance(h.type, krnl.LoopType):
            raise builder_error(
                f"expected a loop handle (!krnl.loop), got {describe(h)}",
                "loop handles come from f.define_loops or f.block",
            )
        return h

    def _index(self, v: object, what: str) -> SSAValue:
        x = self._value(v, what)
        if not isinstance(x.type, IndexType):
            raise builder_error(
                f"{what} must be an index value, got {describe(x)}",
                "convert it with f.index_cast(x, 'index')",
            )
        return x

    def _memref(self, v: object, opname: str) -> SSAValue:
        m = self._value(v, f"the memref of {opname}")
        if not isinstance(m.type, MemRefType):
            raise builder_error(
                f"{opname} needs a memref, got {describe(m)}",
                "pass a memref argument or the result of f.alloc / f.alloca",
            )
        return m

    def _access(
        self, memref_: object, indices: Sequence[object], opname: str
    ) -> tuple[SSAValue, list[SSAValue]]:
        m = self._memref(memref_, opname)
        idx = [self._index(i, f"an index of {opname}") for i in indices]
        rank = len(memref_type(m).shape)
        if len(idx) != rank:
            raise builder_error(
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
        raise builder_error(
            f"a loop bound must be an int, an index value or an AffineBound, got {b!r}",
            'e.g. 0, N, or AffineBound("(d0) -> (d0 + 1)", dims=[i])',
        )

    def _same_type(self, opname: str, a: object, b: object) -> tuple[SSAValue, SSAValue]:
        x = self._value(a, f"an operand of {opname}")
        y = self._value(b, f"an operand of {opname}")
        if x.type != y.type:
            raise builder_error(
                f"the operands of {opname} have different types: {describe(x)}, {describe(y)}",
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


# ------------------------------------------------------------------ small helpers


def memref_type(v: SSAValue) -> MemRefType:
    assert isinstance(v.type, MemRefType)
    return v.type


def _function_of(block: Block | None) -> func.FuncOp | None:
    op = block.parent_op() if block is not None else None
    while op is not None and not isinstance(op, func.FuncOp):
        op = op.parent_op()
    return op


def check_names(names: Names, count: int, what: str) -> None:
    names = list(names)
    if len(names) != count:
        raise builder_error(
            f"{len(names)} names given for {count} {what}",
            f"give exactly {count} names (None leaves a value unnamed)",
        )
    for n in names:
        if n is not None and not (isinstance(n, str) and SSAValue.is_valid_name(n)):
            raise builder_error(
                f"{n!r} is not a valid SSA name",
                "use letters, digits, _ $ . - and do not start with a digit (no leading %)",
            )
