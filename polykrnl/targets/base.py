"""The Target protocol and the registry of targets by name."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
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


#: the module of each target, in the order `polykrnl ops` shows them; each defines `TARGET`.
#: Adding a target is adding a package with such a module and its line here.
ENTRIES = (
    "polykrnl.targets.numpy.target",
    "polykrnl.targets.numba.target",
    "polykrnl.targets.pto.target",
    "polykrnl.targets.mlir.target",
)


@cache
def registry() -> Mapping[str, Target]:
    """Every target by name, in the order of ENTRIES (their modules load on first use, so
    that a target's kernel module imports no other target)."""
    found: list[Target] = [importlib.import_module(m).TARGET for m in ENTRIES]
    names = [t.name for t in found]
    assert len(set(names)) == len(names), f"two targets share a name: {names}"
    return MappingProxyType({t.name: t for t in found})


def target(name: str) -> Target:
    """The target named `name`, or a ScheduleError listing the names there are."""
    found = registry().get(name)
    if found is None:
        raise ScheduleError(
            f"unknown target {name!r}",
            hint="targets: " + ", ".join(repr(n) for n in registry()),
        )
    return found
