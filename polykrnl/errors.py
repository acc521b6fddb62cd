"""The one error hierarchy of polykrnl.

Every error a user can see subclasses :class:`PolykrnlError` and carries what
is needed to fix it: a message, the source location (file, line, column and
the text of the line, so it can be shown with a caret), and a hint.
Internal invariants use ``assert`` instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLocation:
    """A point in a source: 1-based line and column, and the line's text if known."""

    file: str
    line: int
    column: int
    line_text: str | None = None
    length: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    def caret_lines(self) -> list[str]:
        """The source line and a caret line under the offending token."""
        if self.line_text is None:
            return []
        text = self.line_text.rstrip("\n").expandtabs(1)
        pad = " " * (self.column - 1)
        return [f"  {text}", f"  {pad}{'^' * max(1, self.length)}"]


@dataclass(frozen=True)
class Diagnostic:
    """One problem: what, where, and how to fix it."""

    message: str
    location: SourceLocation | None = None
    hint: str | None = None

    def render(self, default_file: str = "<input>") -> str:
        where = str(self.location) if self.location else default_file
        lines = [f"error: {where}: {self.message}"]
        if self.location:
            lines += self.location.caret_lines()
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)


class PolykrnlError(Exception):
    """Base of every user-facing polykrnl error.

    Attributes: `message`, `location` (a `SourceLocation`: file, line, column and the
    line's text, or None), `hint` (how to fix it) and `cli_hint` (the hint the
    `polykrnl` command shows instead, where the hint names something only Python
    has). `str(err)` is `FILE:LINE:COL: message (hint: ...)`; `err.render()` is what
    the command prints: the message, the source line with a caret, and the hint.

    Examples
    --------
    >>> import polykrnl as pk
    >>> try:
    ...     pk.parse("func.func @f(")
    ... except pk.PolykrnlError as err:
    ...     print(err.render())
    error: <string>:1:13: Expected argument or type
      func.func @f(
                  ^
    hint: compare the line with the syntax in the Krnl op reference
    """

    def __init__(
        self,
        message: str,
        *,
        location: SourceLocation | None = None,
        hint: str | None = None,
        cli_hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.location = location
        self.hint = hint
        # The hint for the command line, where it differs: a hint that names a keyword
        # argument (force=True) or a method would send a CLI user to something that
        # does not exist there.
        self.cli_hint = cli_hint

    @property
    def diagnostic(self) -> Diagnostic:
        return Diagnostic(self.message, self.location, self.hint)

    def render(self, default_file: str = "<input>") -> str:
        """The full text the CLI prints: `error: FILE:LINE:COL: message`, caret, hint
        (`cli_hint` where there is one)."""
        return Diagnostic(self.message, self.location, self.cli_hint or self.hint).render(
            default_file
        )

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        hint = f" (hint: {self.hint})" if self.hint else ""
        return f"{where}{self.message}{hint}"


class ParseError(PolykrnlError):
    """The text is not valid MLIR, or not valid Krnl (raised by `pk.parse`, `pk.load`).

    Examples
    --------
    >>> import polykrnl as pk
    >>> pk.parse("func.func @f(")
    Traceback (most recent call last):
      ...
    polykrnl.errors.ParseError: <string>:1:13: Expected argument or type (hint: ...)
    """


class VerifyError(PolykrnlError):
    """The program breaks a structural or scoping rule.

    Raised on the first problem; ``errors`` lists every problem found, in
    program order.

    Examples
    --------
    >>> import polykrnl as pk
    >>> mod = pk.parse('''
    ... func.func @f(%A: memref<4xf32>) {
    ...   %ii = krnl.define_loops 1
    ...   krnl.iterate(%ii) with (%ii -> %i = 0 to 4) {
    ...   }
    ...   krnl.iterate(%ii) with (%ii -> %j = 0 to 4) {
    ...   }
    ...   return
    ... }''')
    >>> pk.verify(mod)
    Traceback (most recent call last):
      ...
    polykrnl.errors.VerifyError: <string>:6:3: loop handle %ii is bound by more than one ...
    """

    def __init__(self, errors: Sequence[Diagnostic]) -> None:
        assert errors, "VerifyError needs at least one diagnostic"
        first = errors[0]
        super().__init__(first.message, location=first.location, hint=first.hint)
        self.errors: tuple[Diagnostic, ...] = tuple(errors)

    def render(self, default_file: str = "<input>") -> str:
        return "\n".join(d.render(default_file) for d in self.errors)


class UnknownFunctionError(PolykrnlError, KeyError):
    """A function name that the module does not define (also a `KeyError`).

    Examples
    --------
    >>> import polykrnl as pk
    >>> pk.parse("func.func @f() { return }")["g"]
    Traceback (most recent call last):
      ...
    polykrnl.errors.UnknownFunctionError: no function named 'g' in <string> (hint: ...)
    """

    def __str__(self) -> str:
        return PolykrnlError.__str__(self)


class ArgumentError(PolykrnlError):
    """Arguments given to run a function do not match its signature (a missing
    argument, a wrong dtype, a static dimension of another size).

    Examples
    --------
    >>> import polykrnl as pk
    >>> fn = pk.parse('''
    ... func.func @inc(%X: memref<?xf32>, %N: index) {
    ...   %ii = krnl.define_loops 1
    ...   krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    ...     %x = krnl.load %X[%i] : memref<?xf32>
    ...     %y = arith.addf %x, %x : f32
    ...     krnl.store %y, %X[%i] : memref<?xf32>
    ...   }
    ...   return
    ... }''')["inc"]
    >>> pk.run_reference(fn, N=4)
    Traceback (most recent call last):
      ...
    polykrnl.errors.ArgumentError: <string>:2:1: missing argument 'X' of @inc (hint: ...)
    """


class BoundsError(ArgumentError, IndexError):
    """Arrays that do not fit a generated kernel's accesses, refused before any access
    (or a subscript read from data that leaves its array): names the array, the
    dimension, the extent needed and the one given.

    Examples
    --------
    >>> import numpy as np
    >>> import polykrnl as pk
    >>> fn = pk.parse('''
    ... func.func @inc(%X: memref<?xf32>, %N: index) {
    ...   %ii = krnl.define_loops 1
    ...   krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    ...     %x = krnl.load %X[%i] : memref<?xf32>
    ...     %y = arith.addf %x, %x : f32
    ...     krnl.store %y, %X[%i] : memref<?xf32>
    ...   }
    ...   return
    ... }''')["inc"]
    >>> kernel = pk.compile(fn)
    >>> kernel(X=np.zeros(3, dtype=np.float32), N=5)
    Traceback (most recent call last):
      ...
    polykrnl.errors.BoundsError: <string>:5:10: @inc: S0 (krnl.load, line 5) addresses X up to ...
    >>> kernel(X=np.zeros(5, dtype=np.float32), N=5)  # fits
    """


class InterpretError(PolykrnlError):
    """The reference interpreter met a run-time problem (out of bounds, unknown call...).

    Examples
    --------
    >>> import numpy as np
    >>> import polykrnl as pk
    >>> fn = pk.parse('''
    ... func.func @inc(%X: memref<?xf32>, %N: index) {
    ...   %ii = krnl.define_loops 1
    ...   krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    ...     %x = krnl.load %X[%i] : memref<?xf32>
    ...     %y = arith.addf %x, %x : f32
    ...     krnl.store %y, %X[%i] : memref<?xf32>
    ...   }
    ...   return
    ... }''')["inc"]
    >>> pk.run_reference(fn, X=np.zeros(3, dtype=np.float32), N=5)
    Traceback (most recent call last):
      ...
    polykrnl.errors.InterpretError: <string>:5:10: krnl.load out of bounds: index 3 ...
    """


class BuilderError(PolykrnlError):
    """The Python builder was misused; located at the offending line of the user's code.

    Examples
    --------
    >>> import polykrnl as pk
    >>> mb = pk.ModuleBuilder()
    >>> with mb.function("f", [("A", "memref<4xf32>")]) as f:
    ...     f.load(f.args[0], [])
    Traceback (most recent call last):
      ...
    polykrnl.errors.BuilderError: ...: krnl.load of a rank-1 memref needs 1 indices, got 0 ...
    """


class UnsupportedError(PolykrnlError):
    """A construct that polykrnl does not handle (yet); the message says which and where.

    `pk.supported_ops()` (`polykrnl ops`) lists which stages support each op.

    Examples
    --------
    A memref taken out of a sequence may be any of its buffers, so the polyhedral model
    refuses accesses through it:

    >>> import polykrnl as pk
    >>> fn = pk.parse('''
    ... func.func @f(%S: memref<2xmemref<4xf32>>) {
    ...   %c0 = arith.constant 0 : index
    ...   %m = "krnl.seqextract"(%S, %c0) {copy = 0 : ui1}
    ...       : (memref<2xmemref<4xf32>>, index) -> memref<4xf32>
    ...   %f = arith.constant 1.0 : f32
    ...   krnl.store %f, %m[%c0] : memref<4xf32>
    ...   return
    ... }''')["f"]
    >>> pk.schedule(fn)
    Traceback (most recent call last):
      ...
    polykrnl.errors.UnsupportedError: ...
    """


class ComplexityError(PolykrnlError):
    """The polyhedral computation for a function exceeded polykrnl's budget of isl
    operations (domains, maps or a schedule too complex to analyse in bounded time).

    The budget bounds work, not time: at most 2^25 isl operations per call of the
    public API. The `polykrnl` command's `--time-limit` bounds time.

    Examples
    --------
    >>> import polykrnl as pk
    >>> issubclass(pk.ComplexityError, pk.PolykrnlError)
    True
    """


class ScheduleError(PolykrnlError):
    """A schedule primitive was misused (unknown loop, not a perfect nest, ...).

    Examples
    --------
    >>> import polykrnl as pk
    >>> fn = pk.parse('''
    ... func.func @inc(%X: memref<?xf32>, %N: index) {
    ...   %ii = krnl.define_loops 1
    ...   krnl.iterate(%ii) with (%ii -> %i = 0 to %N) {
    ...     %x = krnl.load %X[%i] : memref<?xf32>
    ...     %y = arith.addf %x, %x : f32
    ...     krnl.store %y, %X[%i] : memref<?xf32>
    ...   }
    ...   return
    ... }''')["inc"]
    >>> pk.schedule(fn).block("k", 4)
    Traceback (most recent call last):
      ...
    polykrnl.errors.ScheduleError: no loop named 'k' in the schedule of @inc ...
    """


class IllegalTransformError(ScheduleError):
    """A transformation would break a dependence; `report` says which, with a witness.

    `report` is the `LegalityReport` of the refused schedule; the primitive's
    `force=True` applies it anyway.

    Examples
    --------
    >>> import polykrnl as pk
    >>> fn = pk.parse('''
    ... func.func @prefix(%A: memref<8xf32>) {
    ...   %ii = krnl.define_loops 1
    ...   krnl.iterate(%ii) with (%ii -> %i = 1 to 8) {
    ...     %p = affine.apply affine_map<(d0) -> (d0 - 1)>(%i)
    ...     %a = krnl.load %A[%p] : memref<8xf32>
    ...     %b = krnl.load %A[%i] : memref<8xf32>
    ...     %s = arith.addf %a, %b : f32
    ...     krnl.store %s, %A[%i] : memref<8xf32>
    ...   }
    ...   return
    ... }''')["prefix"]
    >>> try:
    ...     pk.schedule(fn).parallel("i")
    ... except pk.IllegalTransformError as err:
    ...     print(err.report.violations[0])
    RAW dependence on A from S0(i=1) to S0(i=2) (distance i: +1): loop 'i' is parallel ...
    """

    def __init__(
        self,
        message: str,
        report: object,
        *,
        location: SourceLocation | None = None,
        hint: str | None = None,
        cli_hint: str | None = None,
    ) -> None:
        super().__init__(message, location=location, hint=hint, cli_hint=cli_hint)
        self.report = report

    def render(self, default_file: str = "<input>") -> str:
        return super().render(default_file) + "\n" + str(self.report)


class UnprovenTransformError(ScheduleError):
    """polykrnl cannot prove a transformation legal: it breaks only may-dependences, each
    through an access the model over-approximates (an opaque call, a loop of unknown trip
    count, a branch on a value). Not a proof of illegality: `report` names the
    approximated statements, and force=True applies the transformation anyway.

    Examples
    --------
    >>> import polykrnl as pk
    >>> issubclass(pk.UnprovenTransformError, pk.ScheduleError)
    True
    """

    def __init__(
        self,
        message: str,
        report: object,
        *,
        location: SourceLocation | None = None,
        hint: str | None = None,
        cli_hint: str | None = None,
    ) -> None:
        super().__init__(message, location=location, hint=hint, cli_hint=cli_hint)
        self.report = report

    def render(self, default_file: str = "<input>") -> str:
        return super().render(default_file) + "\n" + str(self.report)


class TileConstraintError(PolykrnlError):
    """A PTO tile, tensor or instruction breaks a rule of the ISA; the message names the
    rule and the numbers (e.g. a row-major f32 tile of 15 columns: 60 bytes per row is
    not a multiple of 32).

    Examples
    --------
    >>> import polykrnl as pk
    >>> issubclass(pk.TileConstraintError, pk.PolykrnlError)
    True
    """


class PtoError(PolykrnlError):
    """A Krnl program cannot be emitted for PTO: no instruction pattern matches a
    statement, or its tiles do not fit a buffer. Names the statement and the reason.

    Examples
    --------
    >>> import polykrnl as pk
    >>> fn = pk.parse('''
    ... func.func @f(%A: memref<16xf32>) {
    ...   %ii = krnl.define_loops 1
    ...   krnl.iterate(%ii) with (%ii -> %i = 0 to 16) {
    ...     %a = krnl.load %A[%i] : memref<16xf32>
    ...     %b = arith.remf %a, %a : f32
    ...     krnl.store %b, %A[%i] : memref<16xf32>
    ...   }
    ...   return
    ... }''')["f"]
    >>> pk.schedule(fn).to_pto("a2a3")
    Traceback (most recent call last):
      ...
    polykrnl.errors.PtoError: ...
    """


class RaceError(PtoError):
    """Two instructions of a tile program on different pipes touch the same tile or the same
    global memory, one of them writing, and no set_flag/wait_flag chain orders them; or a
    flag is waited for without being set, set twice, or left set at the end.

    Raised by the checked run of a PTO program (`PtoKernel.simulate`, `timeline`);
    polykrnl's own programs carry the flags that prevent it.

    Examples
    --------
    >>> import polykrnl as pk
    >>> issubclass(pk.RaceError, pk.PtoError)
    True
    """
