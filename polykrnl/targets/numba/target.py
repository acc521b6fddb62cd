"""The Numba target: the NumPy target's statements as scalar loops compiled by Numba."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from xdsl.ir import Operation

from polykrnl.codegen.structural_ops import written
from polykrnl.targets.numba.form import NUMBA_REFUSED
from polykrnl.targets.numba.kernel import INSTALL_HINT, NumbaKernel, numba_missing, to_numba
from polykrnl.transforms.core import Schedule


@dataclass(frozen=True)
class NumbaTarget:
    name: str = "numba"
    label: str = "Numba"
    # the options `build` takes, with their defaults
    defaults: Mapping[str, Any] = field(
        default_factory=lambda: MappingProxyType(
            {"parallel": True, "boundscheck": None, "cache": True, "check_bounds": True}
        )
    )
    install_hint: str = INSTALL_HINT

    def supports(self, op: type[Operation]) -> bool:
        # The Python writer's translations, less the ops Numba cannot compile.
        return written(op) and not issubclass(op, NUMBA_REFUSED)

    def missing(self) -> str | None:
        return numba_missing()

    def build(self, sched: Schedule, **options: Any) -> NumbaKernel:
        return to_numba(sched, **options)


TARGET = NumbaTarget()
