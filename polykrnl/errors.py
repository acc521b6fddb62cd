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
    """Base of every user-facing polykrnl error."""

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
    """The text is not valid MLIR, or not valid Krnl."""


class VerifyError(PolykrnlError):
    """The program breaks a structural or scoping rule.

    Raised on the first problem; ``errors`` lists every problem found, in
    program order.
    """

    def __init__(self, errors: Sequence[Diagnostic]) -> None:
        assert errors, "VerifyError needs at least one diagnostic"
        first = errors[0]
        super().__init__(first.message, location=first.location, hint=first.hint)
        self.errors: tuple[Diagnostic, ...] = tuple(errors)

    def render(self, default_file: str = "<input>") -> str:
        return "\n".join(d.render(default_file) for d in self.errors)


class UnknownFunctionError(PolykrnlError, KeyError):
    """A function name that the module does not define."""

    def __str__(self) -> str:
        return PolykrnlError.__str__(self)


class ArgumentError(PolykrnlError):
    """Arguments given to run a function do not match its signature."""


class BoundsError(ArgumentError, IndexError):
    """Arrays that do not fit a generated kernel's accesses, refused before any access
    (or a subscript read from data that leaves its array): names the array, the
    dimension, the extent needed and the one given."""


class InterpretError(PolykrnlError):
    """The reference interpreter met a run-time problem (out of bounds, unknown call...)."""


class BuilderError(PolykrnlError):
    """The Python builder was misused; located at the offending line of the user's code."""


class UnsupportedError(PolykrnlError):
    """A construct that polykrnl does not handle (yet); the message says which and where."""


class ComplexityError(PolykrnlError):
    """The polyhedral computation for a function exceeded polykrnl's budget of isl
    operations (domains, maps or a schedule too complex to analyse in bounded time)."""


class ScheduleError(PolykrnlError):
    """A schedule primitive was misused (unknown loop, not a perfect nest, ...)."""


class IllegalTransformError(ScheduleError):
    """A transformation would break a dependence; `report` says which, with a witness."""

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
    approximated statements, and force=True applies the transformation anyway."""

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
    not a multiple of 32)."""


class PtoError(PolykrnlError):
    """A Krnl program cannot be emitted for PTO: no instruction pattern matches a
    statement, or its tiles do not fit a buffer. Names the statement and the reason."""


class RaceError(PtoError):
    """Two instructions of a tile program on different pipes touch the same tile or the same
    global memory, one of them writing, and no set_flag/wait_flag chain orders them; or a
    flag is waited for without being set, set twice, or left set at the end."""
