"""The Target protocol and the registry of targets by name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from xdsl.ir import Operation

from polykrnl.errors import ScheduleError
from polykrnl.transforms.core import Schedule


class Target(Protocol):
    """What every code generation target provides."""

    @property
    def name(self) -> str:
        """The name users pass (`pk.compile(fn, target="numba")`, `--target numba`)."""
        ...

    @property
    def label(self) -> str:
        """How output and errors name it ("Numba")."""
        ...

    @property
    def defaults(self) -> Mapping[str, Any]:
        """The keyword options `build` takes, with their defaults."""
        ...

    @property
    def install_hint(self) -> str:
        """How to get what `missing` names."""
        ...

    def supports(self, op: type[Operation]) -> bool:
        """Whether the target translates ops of this class (its op table, its refusals)."""
        ...

    def missing(self) -> str | None:
        """Why the target cannot run here (a missing dependency), or None."""
        ...

    def build(self, sched: Schedule, **options: Any) -> Any:
        """The kernel of `sched` (options are the target's own keyword arguments)."""
        ...


#: every target, by name, in the order `polykrnl ops` shows them
TARGETS: dict[str, Target] = {}


def register(t: Target) -> Target:
    assert t.name not in TARGETS, f"two targets named {t.name}"
    TARGETS[t.name] = t
    return t


def target(name: str) -> Target:
    """The target named `name`, or a ScheduleError listing the names there are."""
    found = TARGETS.get(name)
    if found is None:
        raise ScheduleError(
            f"unknown target {name!r}",
            hint="targets: " + ", ".join(repr(n) for n in TARGETS),
        )
    return found
