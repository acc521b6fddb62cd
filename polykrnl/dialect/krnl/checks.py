"""Structural checks an op makes of itself, written once for both verifiers.

xDSL calls an op's `verify_` (and raises the first problem); polykrnl's
verifier (:mod:`polykrnl.verifier`) asks for every problem, with the
names the source gives the values, and reports each with its hint.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, MemRefType
from xdsl.ir import Attribute, SSAValue
from xdsl.utils.exceptions import VerifyException

from polykrnl.ir import value_name

#: how a problem names a value (the verifier passes one that reads the source's names)
Namer = Callable[[SSAValue], str]


class SelfChecks:
    """A mixin for op classes: `problems` says what is wrong, `verify_` raises the first."""

    def problems(self, name: Namer = value_name) -> Iterator[tuple[str, str]]:
        """(message, hint) for each problem of the op itself."""
        return iter(())

    def verify_(self) -> None:
        for message, _ in self.problems():
            raise VerifyException(message)


def rank_of(t: Attribute) -> int | None:
    return len(t.get_shape()) if isinstance(t, MemRefType) else None


def ints(attr: Attribute | None) -> list[int] | None:
    if not isinstance(attr, ArrayAttr):
        return None
    return [a.value.data for a in attr.data if isinstance(a, IntegerAttr)]
