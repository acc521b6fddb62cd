"""Op tables: what each pipeline stage does with each op, found by the op's class.

Every stage that treats ops one by one (the reference interpreter, the
polyhedral model, NumPy code generation) keeps one :class:`OpTable`. Each
dialect fills the table of a stage from one module of that stage (for the
interpreter, ``polykrnl/model/interpret/arith.py`` holds the meaning of every
``arith`` op), so adding an op means adding its class to the dialect and one
entry per stage, next to its siblings. A stage asks its table with
:meth:`OpTable.require`, which raises one located :class:`UnsupportedError`
worded the same way for every stage; ``polykrnl ops`` prints the tables side
by side (:func:`polykrnl.ops.supported_ops`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from xdsl.ir import Operation

from polykrnl.errors import SourceLocation, UnsupportedError

T = TypeVar("T")

OpClass = type[Operation]


class OpTable(Generic[T]):
    """One stage's implementations, keyed by op class (subclasses do not inherit them)."""

    def __init__(self, stage: str, doing: str, hint: str) -> None:
        #: the stage's short name, a column of `polykrnl ops` ("interpret", "numpy")
        self.stage = stage
        #: what the stage does, as the end of "`op` is not supported by ..."
        self.doing = doing
        #: how to get past a missing entry
        self.hint = hint
        self._impls: dict[OpClass, T] = {}
        TABLES.append(self)

    def register(self, *ops: OpClass) -> Callable[[T], T]:
        """A decorator giving the decorated implementation to each of `ops`."""

        def deco(impl: T) -> T:
            self.add(impl, *ops)
            return impl

        return deco

    def add(self, impl: T, *ops: OpClass) -> None:
        for op in ops:
            assert op not in self._impls, f"{op.name} has two {self.stage} entries"
            self._impls[op] = impl

    def get(self, op: Operation) -> T | None:
        return self._impls.get(type(op))

    def __contains__(self, op: OpClass) -> bool:
        return op in self._impls

    def __iter__(self) -> Iterator[OpClass]:
        return iter(self._impls)

    def missing_text(self, op: Operation) -> tuple[str, str]:
        """The message and hint for an op this stage has no entry for."""
        return (
            f"`{op.name}` is not supported by {self.doing} yet",
            f"{self.hint} (`polykrnl ops` lists what each stage supports)",
        )

    def missing(self, op: Operation, location: SourceLocation | None) -> UnsupportedError:
        """The error for an op this stage has no entry for."""
        message, hint = self.missing_text(op)
        return UnsupportedError(message, location=location, hint=hint)

    def require(self, op: Operation, location: SourceLocation | None) -> T:
        impl = self._impls.get(type(op))
        if impl is None:
            raise self.missing(op, location)
        return impl


#: every stage's table, in pipeline order (each is added when its stage's module loads)
TABLES: list[OpTable[Any]] = []
